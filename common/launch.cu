#include "common/launch.hpp"

#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace gemm {

int multiprocessor_count() {
  int device = 0, count = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
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

}  // namespace detail
}  // namespace gemm
