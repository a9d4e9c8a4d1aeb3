// Chapter 00: the reference kernel.
//
// One thread computes one element of D by walking the whole of K, dequantising every value
// (fp8 * its scale) and accumulating in fp32. No shared memory, no tensor cores, no tricks: this
// is the kernel every later chapter is checked against on shapes too large for the CPU.
#include "chapters/registry.hpp"
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/launch.hpp"
#include "common/problem.hpp"
#include "common/ptx/base.cuh"  // kWarpSize

namespace ch00 {

using gemm::kScaleBlock;

constexpr int BLOCK_N = ptx::kWarpSize;  // threadIdx.x walks N: one warp covers 32 columns of a row
constexpr int BLOCK_M = 8;               // threadIdx.y walks M
constexpr int kNumThreads = BLOCK_N * BLOCK_M;

__global__ void __launch_bounds__(kNumThreads) reference_gemm_kernel(gemm::GemmArgs args) {
  const int m = blockIdx.y * BLOCK_M + threadIdx.y;
  const int n = blockIdx.x * BLOCK_N + threadIdx.x;
  const auto [M, N, K] = args.shape;
  if (m >= M || n >= N) return;

  const __nv_fp8_e4m3* a_row = args.a + int64_t(m) * K;
  const __nv_fp8_e4m3* b_row = args.b + int64_t(n) * K;
  float acc = 0.0f;
  for (int kb = 0; kb < K / kScaleBlock; ++kb) {
    const float sa = args.sa[int64_t(kb) * args.shape.sa_ld() + m];
    const float sb = args.sb[int64_t(n / kScaleBlock) * (K / kScaleBlock) + kb];
    // 16 fp8 values of each row per step: one 16-byte load each (rows are 16-byte aligned
    // because K is a multiple of 128).
    for (int k = kb * kScaleBlock; k < (kb + 1) * kScaleBlock; k += 16) {
      const uint4 av = *reinterpret_cast<const uint4*>(a_row + k);
      const uint4 bv = *reinterpret_cast<const uint4*>(b_row + k);
      const auto* a2 = reinterpret_cast<const __nv_fp8x2_e4m3*>(&av);
      const auto* b2 = reinterpret_cast<const __nv_fp8x2_e4m3*>(&bv);
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const float2 x = float2(a2[i]), y = float2(b2[i]);
        acc = fmaf(x.x * sa, y.x * sb, acc);
        acc = fmaf(x.y * sa, y.y * sb, acc);
      }
    }
  }
  args.d[int64_t(m) * N + n] = __float2bfloat16(acc);  // round to nearest even
}

void gemm(const gemm::GemmArgs& args, cudaStream_t stream) {
  // 16-byte loads of A and B, one float per scale, one bf16 store per thread.
  gemm::check_arguments(args, {.who = "chapter 00",
                               .align_a = 16,
                               .align_b = 16,
                               .align_sa = 4,
                               .align_sb = 4,
                               .align_d = 2,
                               .block_m = BLOCK_M,
                               .block_n = BLOCK_N});
  const dim3 block(BLOCK_N, BLOCK_M);
  const dim3 grid = gemm::tile_grid(args.shape, BLOCK_M, BLOCK_N, "chapter 00");
  gemm::launch("chapter 00", reference_gemm_kernel, {grid, block, 0, stream}, args);
}

}  // namespace ch00
