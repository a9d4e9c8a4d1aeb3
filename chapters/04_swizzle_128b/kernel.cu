// Chapter 04: the 128-byte swizzle.
//
// Chapter 03 asked TMA for 16-byte-wide boxes to build the non-swizzled core-matrix layout and paid
// in copy traffic: every 32-byte sector from L2 carried 16 useful bytes, and the tiles took about
// seven times the L2 requests of chapter 02's loads. Here TMA copies plain 2-D boxes, each row of
// the tile one 128-byte line (all of BLOCK_K): half the bytes from L2 and a sixth of the requests
// (Nsight Compute, see the README). The gain is all in the copy: ncu counts no bank conflicts on
// the tensor core's shared-memory reads in chapter 03 either, so the swizzle removes none.
//
// The swizzle is what makes a 128-byte-wide box legal for wgmma. TMA scrambles the 16-byte chunks
// of each row with CU_TENSOR_MAP_SWIZZLE_128B (chunk c of row r lands at c ^ (r % 8)) and the wgmma
// descriptor says "128B swizzle" and unscrambles them on the fly. Unswizzled, the eight rows of a
// core matrix would sit 128 bytes apart in the same four banks, and the no-swizzle descriptor could
// not describe them at all: it needs each core matrix as 128 contiguous bytes.
//
// Same arithmetic as chapter 03: D must be bit-for-bit identical.
#include "chapters/04_swizzle_128b/swizzle.hpp"
#include "chapters/registry.hpp"
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/launch.hpp"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/tma.cuh"
#include "common/ptx/wgmma.cuh"
#include "common/tensor_map.hpp"

namespace ch04 {

constexpr int BLOCK_M = 128;  // two warpgroups of 64 rows
constexpr int BLOCK_N = 128;  // one wgmma m64n128k32 per warpgroup and 32-wide K step
constexpr int BLOCK_K = 128;  // = kSwizzleBytes: one K block is exactly one swizzled row
constexpr int WGMMA_K = 32;
constexpr int kNumThreads = 2 * ptx::kWarpgroupSize;  // two warpgroups
constexpr uint32_t kTileBytesA = BLOCK_M * BLOCK_K, kTileBytesB = BLOCK_N * BLOCK_K;
static_assert(BLOCK_K == kSwizzleBytes, "a K block must fill one 128-byte swizzled row");

// Start address inside the tile, LBO unused, SBO = 1024 (next eight rows), 128B swizzle. The tile
// is 1024-byte aligned, so the pattern starts at row 0 and the base offset field stays 0.
__device__ __forceinline__ uint64_t make_descriptor(const uint8_t* smem) {
  return ptx::encode({ptx::shared_address(smem), 0, kStrideByteOffset, 0, ptx::Swizzle::B128});
}

__global__ void __launch_bounds__(kNumThreads)
    gemm_kernel(const __grid_constant__ CUtensorMap tensor_map_a,
                const __grid_constant__ CUtensorMap tensor_map_b, gemm::GemmArgs args) {
  using Wgmma = ptx::WgmmaFp8<BLOCK_N>;
  // Align to 1024 bytes: the swizzle pattern is a function of absolute address bits [7, 10).
  __shared__ alignas(kSwizzleAtomBytes) uint8_t smem_a[kTileBytesA];
  __shared__ alignas(kSwizzleAtomBytes) uint8_t smem_b[kTileBytesB];
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
      ptx::mbarrier_arrive_expect_tx(&full_barrier, kTileBytesA + kTileBytesB);
      ptx::tma_load_2d(smem_a, &tensor_map_a, &full_barrier, kb * BLOCK_K, int32_t(m0));
      ptx::tma_load_2d(smem_b, &tensor_map_b, &full_barrier, kb * BLOCK_K, int32_t(n0));
    }
    ptx::mbarrier_wait(&full_barrier, kb & 1, "full_barrier");

    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BLOCK_K / WGMMA_K; ++kk) {
      // Along K the start address moves 32 bytes inside the 128-byte row, as if unswizzled: the
      // hardware applies the XOR to the final addresses, row by row. Along M this warpgroup's 64
      // rows start 64 * 128 bytes down.
      const uint64_t desc_a =
          make_descriptor(smem_a + warpgroup * 64 * kSwizzleBytes + kk * WGMMA_K);
      const uint64_t desc_b = make_descriptor(smem_b + kk * WGMMA_K);
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
  gemm::check_arguments(args, {.who = "chapter 04",
                               .align_a = 16,
                               .align_b = 16,
                               .align_d = 4,
                               .block_m = BLOCK_M,
                               .block_n = BLOCK_N,
                               .max_k = gemm::kMaxKUnpromoted});
  const auto [M, N, K] = args.shape;
  const CUtensorMap map_a = gemm::make_tensor_map(swizzled_view(M, K, BLOCK_M), args.a);
  const CUtensorMap map_b = gemm::make_tensor_map(swizzled_view(N, K, BLOCK_N), args.b);
  const dim3 grid = gemm::tile_grid(args.shape, BLOCK_M, BLOCK_N, "chapter 04");
  gemm::launch("chapter 04", gemm_kernel, {grid, kNumThreads, 0, stream}, map_a, map_b, args);
}

}  // namespace ch04
