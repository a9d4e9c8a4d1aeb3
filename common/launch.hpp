// One way to launch a chapter's kernel: the shared-memory opt-in check, the one-time
// cudaFuncSetAttribute, and cudaLaunchKernelEx (or, under chapter 13's ScopedSubstitution, the
// driver's cuLaunchKernelEx of a stand-in). Chapters change the LaunchConfig they pass, never this
// code: chapter 10's cluster launch sets cluster_size and nothing else.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <tuple>
#include <utility>

#include "common/check.hpp"

namespace gemm {

struct LaunchConfig {
  dim3 grid;
  dim3 block;
  uint32_t smem_bytes = 0;  // dynamic shared memory per CTA
  cudaStream_t stream = nullptr;
  unsigned cluster_size = 1;  // CTAs per cluster along grid x (thread block clusters, sm_90)
};

// The current device's SM count (cudaDevAttrMultiProcessorCount): the size of a persistent grid.
int multiprocessor_count();
// The same, or `fallback` where no device can be asked (the error is cleared): for choosing a
// tile before the arguments are checked, so that a bad argument is still refused with its own
// message on a machine without a GPU.
int multiprocessor_count_or(int fallback);

namespace detail {
// Throws UnsupportedError (naming `who`) when the current device cannot give a CTA smem_bytes of
// shared memory; otherwise raises the kernel's dynamic shared-memory limit to smem_bytes where it
// is lower (once per kernel, device and larger size: a kernel's launches may ask for different
// sizes). Safe when several host threads launch the same kernel for the first time together.
void prepare_kernel(const void* kernel, uint32_t smem_bytes, const char* who);
int max_active_clusters(const void* kernel, const LaunchConfig& cfg);
}  // namespace detail

namespace detail {
// cfg as the runtime takes it; attributes must outlive the returned value.
inline cudaLaunchConfig_t to_cuda(const LaunchConfig& cfg, cudaLaunchAttribute (&attributes)[1]) {
  cudaLaunchConfig_t config = {};
  config.gridDim = cfg.grid;
  config.blockDim = cfg.block;
  config.dynamicSmemBytes = cfg.smem_bytes;
  config.stream = cfg.stream;
  config.attrs = attributes;
  config.numAttrs = 0;
  if (cfg.cluster_size > 1) {
    attributes[0].id = cudaLaunchAttributeClusterDimension;
    attributes[0].val.clusterDim.x = cfg.cluster_size;
    attributes[0].val.clusterDim.y = 1;
    attributes[0].val.clusterDim.z = 1;
    config.numAttrs = 1;
  }
  return config;
}
}  // namespace detail

// A kernel's stand-in (chapter 13): the same kernel's machine code, rewritten and loaded at run
// time through the driver API. While a ScopedSubstitution lives, launch() on the same thread asks
// its lookup for each kernel it launches, and launches the CUfunction it returns instead, with the
// same configuration and arguments; a lookup that returns nullptr leaves the kernel as it is.
class ScopedSubstitution {
 public:
  using Lookup = std::function<CUfunction(const void* kernel)>;
  explicit ScopedSubstitution(Lookup lookup);
  ~ScopedSubstitution();
  ScopedSubstitution(const ScopedSubstitution&) = delete;
  ScopedSubstitution& operator=(const ScopedSubstitution&) = delete;

 private:
  Lookup lookup_;
  const Lookup* previous_;
};

namespace detail {
// The installed lookup's answer for `kernel`, or nullptr.
CUfunction substitute_for(const void* kernel);
// cuLaunchKernelEx of `function` with cfg (the cluster size included); params as cuLaunchKernel
// takes them, one pointer per argument. Raises the function's shared-memory limit as
// prepare_kernel does.
void launch_function(CUfunction function, const LaunchConfig& cfg, void** params);
}  // namespace detail

template <class... Params, class... Args>
void launch(const char* who, void (*kernel)(Params...), const LaunchConfig& cfg, Args&&... args) {
  detail::prepare_kernel(reinterpret_cast<const void*>(kernel), cfg.smem_bytes, who);
  if (const CUfunction f = detail::substitute_for(reinterpret_cast<const void*>(kernel))) {
    std::tuple<Params...> values(std::forward<Args>(args)...);
    std::apply(
        [&](auto&... v) {
          void* params[] = {static_cast<void*>(&v)...};
          detail::launch_function(f, cfg, params);
        },
        values);
    return;
  }
  cudaLaunchAttribute attributes[1];
  const cudaLaunchConfig_t config = detail::to_cuda(cfg, attributes);
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

// How many clusters of cfg's size, block and shared memory can run at once on the current device
// (cudaOccupancyMaxActiveClusters): what a persistent grid of clusters should not exceed. Asked
// once per kernel, device and configuration, then remembered (thread-safe).
template <class... Params>
int max_active_clusters(const char* who, void (*kernel)(Params...), const LaunchConfig& cfg) {
  detail::prepare_kernel(reinterpret_cast<const void*>(kernel), cfg.smem_bytes, who);
  return detail::max_active_clusters(reinterpret_cast<const void*>(kernel), cfg);
}

}  // namespace gemm
