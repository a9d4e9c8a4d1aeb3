// Chapter 02: the first real GEMM on the tensor cores.
//
// One CTA computes a BLOCK_M x BLOCK_N tile of D with two warpgroups (64 rows each). It walks K in
// 128-wide blocks: all 256 threads copy the A and B blocks from global memory into shared memory
// with ordinary 16-byte loads, arranged in the non-swizzled core-matrix layout that chapter 01
// described by hand; then each warpgroup issues four wgmma m64n128k32 (fp8 e4m3 in, fp32
// accumulators in registers) and waits for them. At the end each thread rounds its 64
// accumulators to bf16 and stores them straight to global memory.
//
// Unit scales, as in chapters 02 to 05: this computes sum_k A[m][k] * B[n][k] and ignores sA and
// sB; chapter 06 brings them in.
#include "chapters/registry.hpp"
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/launch.hpp"
#include "common/ptx/descriptor.hpp"
#include "common/ptx/wgmma.cuh"

namespace ch02 {

constexpr int BLOCK_M = 128;  // two warpgroups of 64 rows
constexpr int BLOCK_N = 128;  // one wgmma m64n128k32 per warpgroup and 32-wide K step
constexpr int BLOCK_K = 128;  // one scale block: the unit every later chapter pipelines
constexpr int WGMMA_K = 32;   // K per fp8 wgmma instruction (32 bytes = two core-matrix columns)
constexpr int kNumThreads = 2 * ptx::kWarpgroupSize;  // two warpgroups

// Non-swizzled K-major core-matrix layout of a ROWS x BLOCK_K fp8 tile. A core matrix is 8 rows of
// 16 bytes, stored as 128 contiguous bytes. Core matrices are ordered K-fastest:
//   byte(row, k) = ((row / 8) * (BLOCK_K / 16) + k / 16) * 128 + (row % 8) * 16 + k % 16
// so the core matrix to the right along K is 128 bytes away (the descriptor's LBO) and the one
// below along M or N is (BLOCK_K / 16) * 128 = 1024 bytes away (SBO).
using ptx::kCoreMatrixBytes;                                               // 128
constexpr uint32_t kLeadingByteOffset = kCoreMatrixBytes;                  // next 16 k
constexpr uint32_t kStrideByteOffset = (BLOCK_K / 16) * kCoreMatrixBytes;  // next 8 rows

// byte(row, k) above: the no-swizzle layout of common/ptx/descriptor.hpp with this LBO and SBO.
__device__ __forceinline__ uint32_t core_matrix_offset(int row, int k) {
  return ptx::no_swizzle_k_major_offset(row, k, kLeadingByteOffset, kStrideByteOffset);
}

// Copies rows [row0, row0 + ROWS) x K columns [k0, k0 + BLOCK_K) of a row-major fp8 matrix with
// `rows` rows and leading dimension ld into the core-matrix layout at smem. Rows past the end are
// zero-filled, so a partial tile computes zeros there and needs no other special case.
template <int ROWS>
__device__ __forceinline__ void load_tile(uint8_t* smem, const __nv_fp8_e4m3* g, int64_t rows,
                                          int64_t ld, int64_t row0, int64_t k0) {
  constexpr int kChunksPerRow = BLOCK_K / 16;  // 16-byte chunks
  for (int c = threadIdx.x; c < ROWS * kChunksPerRow; c += kNumThreads) {
    const int row = c / kChunksPerRow, chunk = c % kChunksPerRow;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (row0 + row < rows)
      v = *reinterpret_cast<const uint4*>(g + (row0 + row) * ld + k0 + chunk * 16);
    // Consecutive threads write chunks 128 bytes apart: the same banks, an 8-way conflict.
    // (ncu: 77% of the store wavefronts are conflict replays.) Chapter 03 hands the copy to TMA
    // and no thread stores to shared memory at all.
    *reinterpret_cast<uint4*>(smem + core_matrix_offset(row, chunk * 16)) = v;
  }
}

__device__ __forceinline__ uint64_t make_descriptor(const uint8_t* smem) {
  return ptx::encode(
      {ptx::shared_address(smem), kLeadingByteOffset, kStrideByteOffset, 0, ptx::Swizzle::None});
}

__global__ void __launch_bounds__(kNumThreads) gemm_kernel(gemm::GemmArgs args) {
  using Wgmma = ptx::WgmmaFp8<BLOCK_N>;
  __shared__ alignas(128) uint8_t smem_a[BLOCK_M * BLOCK_K];
  __shared__ alignas(128) uint8_t smem_b[BLOCK_N * BLOCK_K];

  const auto [M, N, K] = args.shape;
  const int64_t m0 = int64_t(blockIdx.y) * BLOCK_M, n0 = int64_t(blockIdx.x) * BLOCK_N;
  const int warpgroup = threadIdx.x / ptx::kWarpgroupSize;

  float acc[Wgmma::kAccumulators];
#pragma unroll
  for (float& x : acc) x = 0.0f;

  for (int64_t k0 = 0; k0 < K; k0 += BLOCK_K) {
    load_tile<BLOCK_M>(smem_a, args.a, M, K, m0, k0);
    load_tile<BLOCK_N>(smem_b, args.b, N, K, n0, k0);
    // The tensor cores read shared memory through the async proxy: make the generic-proxy stores
    // above visible to it, then wait for every thread's stores.
    ptx::fence_proxy_async_shared();
    __syncthreads();

    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BLOCK_K / WGMMA_K; ++kk) {
      // This warpgroup's 64 rows of A start 64 / 8 core-matrix rows down; each k32 step moves two
      // core matrices (2 x 128 bytes) along K in both operands.
      const uint64_t desc_a = make_descriptor(smem_a + warpgroup * (64 / 8) * kStrideByteOffset +
                                              kk * 2 * kCoreMatrixBytes);
      const uint64_t desc_b = make_descriptor(smem_b + kk * 2 * kCoreMatrixBytes);
      Wgmma::mma(desc_a, desc_b, acc, k0 > 0 || kk > 0);
    }
    ptx::wgmma_commit_group();
    ptx::wgmma_wait<0>();
    ptx::fence_accumulators(acc);
    __syncthreads();  // nobody overwrites the tiles while a warpgroup may still read them
  }

  // Epilogue: accumulator (thread, r) sits at accumulator_position(); r and r + 1 are neighbours
  // in a row, so each pair is one 4-byte bf16x2 store. N % 8 == 0 keeps pairs whole.
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
  // 16-byte loads of A and B, 4-byte bf16x2 stores of D; scales not read (unit scales).
  gemm::check_arguments(args, {.who = "chapter 02",
                               .align_a = 16,
                               .align_b = 16,
                               .align_d = 4,
                               .block_m = BLOCK_M,
                               .block_n = BLOCK_N,
                               .max_k = gemm::kMaxKUnpromoted});
  const dim3 grid = gemm::tile_grid(args.shape, BLOCK_M, BLOCK_N, "chapter 02");
  gemm::launch("chapter 02", gemm_kernel, {grid, kNumThreads, 0, stream}, args);
}

}  // namespace ch02
