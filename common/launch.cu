#include "common/launch.hpp"

#include <map>
#include <mutex>
#include <set>
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
  static std::mutex mutex;
  static std::set<std::pair<const void*, int>> prepared;
  const std::lock_guard<std::mutex> lock(mutex);
  if (prepared.count({kernel, device})) return;
  CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_bytes)));
  prepared.insert({kernel, device});
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

}  // namespace detail
}  // namespace gemm
