#include "common/launch.hpp"

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

namespace gemm {

int multiprocessor_count() {
  int device = 0, count = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

int multiprocessor_count_or(int fallback) {
  int device = 0, count = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    cudaGetLastError();  // clear the error: the launch, if it comes, reports its own
    return fallback;
  }
  return count;
}

namespace detail {

namespace {
// Raises the dynamic shared-memory limit recorded for `key` (a kernel and device, or a driver
// function) to smem_bytes where it is lower, with set(smem_bytes): once per key and larger size,
// under one lock (the first launches may come from several host threads at once, and one kernel's
// launches may ask for different sizes, as loads_ceiling's do); never lowered.
template <class Key, class Set>
void raise_shared_memory_limit(const Key& key, uint32_t smem_bytes, Set set) {
  static std::mutex mutex;
  static std::map<Key, uint32_t> limits;
  const std::lock_guard<std::mutex> lock(mutex);
  uint32_t& limit = limits[key];
  if (limit >= smem_bytes) return;
  set(smem_bytes);
  limit = smem_bytes;
}
}  // namespace

void prepare_kernel(const void* kernel, uint32_t smem_bytes, const char* who) {
  constexpr uint32_t kDefaultLimit = 48 * 1024;  // what a CTA gets without opting in
  if (smem_bytes <= kDefaultLimit) return;
  int device = 0, optin = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (uint32_t(optin) < smem_bytes)
    throw UnsupportedError(std::string(who) + " needs " + std::to_string(smem_bytes) +
                           " bytes of shared memory per block; this device allows " +
                           std::to_string(optin));
  raise_shared_memory_limit(std::pair{kernel, device}, smem_bytes, [&](uint32_t bytes) {
    CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  });
}

int max_active_clusters(const void* kernel, const LaunchConfig& cfg) {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  using Key = std::tuple<const void*, int, unsigned, uint32_t, unsigned>;
  const Key key{kernel, device, cfg.block.x * cfg.block.y * cfg.block.z, cfg.smem_bytes,
                cfg.cluster_size};
  static std::mutex mutex;
  static std::map<Key, int> known;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto it = known.find(key); it != known.end()) return it->second;
  }
  cudaLaunchAttribute attributes[1];
  const cudaLaunchConfig_t config = to_cuda(cfg, attributes);
  int clusters = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
  const std::lock_guard<std::mutex> lock(mutex);
  known[key] = clusters;
  return clusters;
}

namespace {
thread_local const ScopedSubstitution::Lookup* installed = nullptr;
}  // namespace

CUfunction substitute_for(const void* kernel) {
  return installed ? (*installed)(kernel) : nullptr;
}

void launch_function(CUfunction function, const LaunchConfig& cfg, void** params) {
  using SetAttribute = CUresult (*)(CUfunction, CUfunction_attribute, int);
  using LaunchKernelEx = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);
  static const auto set_attribute =
      reinterpret_cast<SetAttribute>(driver_entry_point("cuFuncSetAttribute"));
  static const auto launch_kernel_ex =
      reinterpret_cast<LaunchKernelEx>(driver_entry_point("cuLaunchKernelEx"));
  raise_shared_memory_limit(function, cfg.smem_bytes, [&](uint32_t bytes) {
    CU_CHECK(set_attribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(bytes)));
  });
  CUlaunchAttribute attributes[1] = {};
  CUlaunchConfig config = {};
  config.gridDimX = cfg.grid.x, config.gridDimY = cfg.grid.y, config.gridDimZ = cfg.grid.z;
  config.blockDimX = cfg.block.x, config.blockDimY = cfg.block.y, config.blockDimZ = cfg.block.z;
  config.sharedMemBytes = cfg.smem_bytes;
  config.hStream = cfg.stream;
  config.attrs = attributes;
  if (cfg.cluster_size > 1) {
    attributes[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attributes[0].value.clusterDim.x = cfg.cluster_size;
    attributes[0].value.clusterDim.y = 1;
    attributes[0].value.clusterDim.z = 1;
    config.numAttrs = 1;
  }
  CU_CHECK(launch_kernel_ex(&config, function, params, nullptr));
}

}  // namespace detail

ScopedSubstitution::ScopedSubstitution(Lookup lookup)
    : lookup_(std::move(lookup)), previous_(detail::installed) {
  detail::installed = &lookup_;
}

ScopedSubstitution::~ScopedSubstitution() {
  detail::installed = previous_;
}

}  // namespace gemm
