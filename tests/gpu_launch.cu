// common/launch: one kernel launched with different amounts of dynamic shared memory. The limit
// prepare_kernel raises must follow the largest request, not the first (loads_ceiling's kernel
// takes its shared memory from the configuration of each shape).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/device.hpp"
#include "common/launch.hpp"
#include "tests/gpu.hpp"

namespace gemm {
namespace {

// Writes its shared memory's size, as the CTA sees it, then reads the last word back.
__global__ void touch_shared(uint32_t* out) {
  extern __shared__ uint32_t smem[];
  uint32_t bytes = 0;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  const uint32_t last = bytes / 4 - 1;
  if (threadIdx.x == 0) smem[last] = bytes;
  __syncthreads();
  if (threadIdx.x == 0) *out = smem[last];
}

TEST(Launch, SharedMemoryLimitFollowsTheLargestRequest) {
  SKIP_WITHOUT_HOPPER();
  DeviceBuffer<uint32_t> out(1);
  for (uint32_t kb : {64u, 200u, 100u, 227u, 48u}) {
    const uint32_t bytes = kb * 1024;
    CUDA_CHECK(cudaMemset(out.get(), 0, out.bytes()));
    launch("touch_shared", touch_shared, LaunchConfig{dim3(1), dim3(32), bytes}, out.get());
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(out.download()[0], bytes) << kb << " KB";
  }
}

}  // namespace
}  // namespace gemm
