// Chapter 03: the Tensor Memory Accelerator and the mbarrier.
//
// Chapter 02 spent all 256 threads copying tiles, 16 bytes at a time, through registers. Here one
// thread asks the TMA unit for each tile with a single instruction; the copy engine writes shared
// memory on its own and reports on an mbarrier how many bytes have landed. The other threads just
// wait for the barrier's phase to complete. Still one stage: load, wait, multiply, repeat.
//
// Same arithmetic as chapter 02 (unit scales, tensor-core accumulation over all of K, the same
// wgmma sequence), so D must be bit-for-bit identical.
#include "chapters/03_tma_mbarrier/core_matrix_view.hpp"
#include "chapters/registry.hpp"
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/launch.hpp"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/tma.cuh"
#include "common/ptx/wgmma.cuh"

namespace ch03 {

constexpr int BLOCK_M = 128;  // two warpgroups of 64 rows
constexpr int BLOCK_N = 128;  // one wgmma m64n128k32 per warpgroup and 32-wide K step
constexpr int BLOCK_K = 128;
constexpr int WGMMA_K = 32;
constexpr int kNumThreads = 2 * ptx::kWarpgroupSize;  // two warpgroups
constexpr uint32_t kTileBytesA = BLOCK_M * BLOCK_K, kTileBytesB = BLOCK_N * BLOCK_K;

// The layout TMA produces (core_matrix_view.hpp): core matrices 128 bytes apart along M or N,
// ROWS * 16 bytes apart along K.
__device__ __forceinline__ uint64_t make_descriptor(const uint8_t* smem, uint32_t box_rows) {
  return ptx::encode({ptx::shared_address(smem), leading_byte_offset(box_rows), kStrideByteOffset,
                      0, ptx::Swizzle::None});
}

__global__ void __launch_bounds__(kNumThreads)
    gemm_kernel(const __grid_constant__ CUtensorMap tensor_map_a,
                const __grid_constant__ CUtensorMap tensor_map_b, gemm::GemmArgs args) {
  using Wgmma = ptx::WgmmaFp8<BLOCK_N>;
  __shared__ alignas(128) uint8_t smem_a[kTileBytesA];
  __shared__ alignas(128) uint8_t smem_b[kTileBytesB];
  __shared__ uint64_t full_barrier;  // "the tiles of this K block have landed"

  const auto [M, N, K] = args.shape;
  const int64_t m0 = int64_t(blockIdx.y) * BLOCK_M, n0 = int64_t(blockIdx.x) * BLOCK_N;
  const int warpgroup = threadIdx.x / ptx::kWarpgroupSize;

  if (threadIdx.x == 0) {
    ptx::prefetch_tensor_map(&tensor_map_a);
    ptx::prefetch_tensor_map(&tensor_map_b);
    ptx::mbarrier_init(&full_barrier, 1);  // one arrival per phase: the thread issuing the TMA
    ptx::fence_barrier_init();
  }
  __syncthreads();

  float acc[Wgmma::kAccumulators];
#pragma unroll
  for (float& x : acc) x = 0.0f;

  const int num_k_blocks = int(K / BLOCK_K);
  for (int kb = 0; kb < num_k_blocks; ++kb) {
    if (threadIdx.x == 0) {
      // Arrive and announce the bytes to expect; the two copies then count them down. Rows past M
      // or N are zero-filled by TMA and still counted, so the total is always the full boxes.
      ptx::mbarrier_arrive_expect_tx(&full_barrier, kTileBytesA + kTileBytesB);
      ptx::tma_load_3d(smem_a, &tensor_map_a, &full_barrier, 0, int32_t(m0), kb * (BLOCK_K / 16));
      ptx::tma_load_3d(smem_b, &tensor_map_b, &full_barrier, 0, int32_t(n0), kb * (BLOCK_K / 16));
    }
    // Phase kb of the barrier completes when the bytes have landed; its parity is kb % 2.
    ptx::mbarrier_wait(&full_barrier, kb & 1, "full_barrier");

    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BLOCK_K / WGMMA_K; ++kk) {
      // This warpgroup's 64 rows of A start 64 / 8 core matrices down (SBO each); each k32 step
      // moves two core-matrix columns (2 x LBO) along K.
      const uint64_t desc_a = make_descriptor(
          smem_a + warpgroup * (64 / 8) * kStrideByteOffset + kk * 2 * leading_byte_offset(BLOCK_M),
          BLOCK_M);
      const uint64_t desc_b =
          make_descriptor(smem_b + kk * 2 * leading_byte_offset(BLOCK_N), BLOCK_N);
      Wgmma::mma(desc_a, desc_b, acc, kb > 0 || kk > 0);
    }
    ptx::wgmma_commit_group();
    ptx::wgmma_wait<0>();
    ptx::fence_accumulators(acc);
    __syncthreads();  // the next TMA may overwrite the tiles only after every warpgroup read them
  }

  // Epilogue, unchanged from chapter 02.
  const int t = threadIdx.x % ptx::kWarpgroupSize;
#pragma unroll
  for (int r = 0; r < Wgmma::kAccumulators; r += 2) {
    const ptx::RowCol p = ptx::accumulator_position(t, r);
    const int64_t row = m0 + warpgroup * 64 + p.row, col = n0 + p.col;
    if (row < M && col < N)
      *reinterpret_cast<__nv_bfloat162*>(args.d + row * N + col) =
          __floats2bfloat162_rn(acc[r], acc[r + 1]);
  }
}

void gemm(const gemm::GemmArgs& args, cudaStream_t stream) {
  // TMA loads of A and B (16-byte aligned global addresses), 4-byte bf16x2 stores of D; scales
  // not read (unit scales).
  gemm::check_arguments(args, {.who = "chapter 03",
                               .align_a = 16,
                               .align_b = 16,
                               .align_d = 4,
                               .block_m = BLOCK_M,
                               .block_n = BLOCK_N,
                               .max_k = gemm::kMaxKUnpromoted});
  const auto [M, N, K] = args.shape;
  const CUtensorMap map_a = gemm::make_tensor_map(core_matrix_view(M, K, BLOCK_M, BLOCK_K), args.a);
  const CUtensorMap map_b = gemm::make_tensor_map(core_matrix_view(N, K, BLOCK_N, BLOCK_K), args.b);
  const dim3 grid = gemm::tile_grid(args.shape, BLOCK_M, BLOCK_N, "chapter 03");
  gemm::launch("chapter 03", gemm_kernel, {grid, kNumThreads, 0, stream}, map_a, map_b, args);
}

}  // namespace ch03
