// Chapter 05: the warp-specialized pipeline.
//
// Chapter 04 loaded a K block, waited, multiplied, waited, and only then loaded the next: the copy
// engine and the tensor cores took turns. Here the CTA's shared memory holds a ring of kNumStages
// stages and the warpgroups split the work. A third, producer warpgroup keeps TMA busy filling
// stages (its first thread, threadIdx.x == kNumMathThreads, issues every copy); the two math
// warpgroups multiply whatever stage is full. Two mbarriers per stage carry the hand-off:
//   full[s]   TMA -> math:  "stage s holds K block kb"   (arrival + transaction bytes)
//   empty[s]  math -> TMA:  "we are done reading stage s" (one arrival per math warp)
// The ring is larger than the 48 KB of static shared memory a CTA may declare, so it lives in
// dynamic shared memory.
//
// The producer needs few registers and the math warpgroups many: setmaxnreg moves them. That is
// what lets the tile grow to 128 x 256 (wgmma m64n256k32): 128 fp32 accumulators per math thread
// fit in the 232 registers that one CTA per SM and setmaxnreg give it. The README's ablation
// measures the ring (at chapter 04's 128 x 128 tile) and the wider tile apart.
//
// Same arithmetic per output element as chapter 04 (the same k32 steps, in the same order), so D
// must be bit-for-bit identical.
#include "chapters/04_swizzle_128b/swizzle.hpp"
#include "chapters/05_warp_specialized_pipeline/pipeline.hpp"
#include "chapters/registry.hpp"
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/launch.hpp"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/setmaxnreg.cuh"
#include "common/ptx/tma.cuh"
#include "common/ptx/wgmma.cuh"
#include "common/tensor_map.hpp"
#include "common/trace.hpp"

// The ablation's knobs (README): build with -DCH05_BLOCK_N=128 or -DCH05_MAX_STAGES=2.
#ifndef CH05_BLOCK_N
#define CH05_BLOCK_N 256
#endif
#ifndef CH05_MAX_STAGES
#define CH05_MAX_STAGES 8
#endif

namespace ch05 {

using ch04::kStrideByteOffset;
using ch04::kSwizzleAtomBytes;
using ch04::kSwizzleBytes;
using ch04::swizzled_view;

constexpr int BLOCK_M = 128;           // two math warpgroups of 64 rows
constexpr int BLOCK_N = CH05_BLOCK_N;  // one wgmma m64n256k32 per warpgroup and 32-wide K step
constexpr int BLOCK_K = 128;           // = kSwizzleBytes: one K block is exactly one swizzled row
constexpr int WGMMA_K = 32;
constexpr int kNumMathWarpgroups = 2;
constexpr int kNumMathThreads = kNumMathWarpgroups * ptx::kWarpgroupSize;
constexpr int kNumThreads = kNumMathThreads + ptx::kWarpgroupSize;  // + the producer, last
constexpr uint32_t kTileBytesA = BLOCK_M * BLOCK_K, kTileBytesB = BLOCK_N * BLOCK_K;
static_assert(BLOCK_K == kSwizzleBytes, "a K block must fill one 128-byte swizzled row");

// Registers: 65536 per SM and one CTA per SM (__launch_bounds__(kNumThreads, 1)), so ptxas caps
// every thread at 65536 / 384 = 170, rounded down to 168. The producer drops to 40, the math
// threads rise to 232: 128 * 40 + 256 * 232 = 64512 <= 65536.
constexpr int kProducerRegisters = 40;
constexpr int kMathRegisters = 232;

// Shared memory: kNumStages (A tile, B tile, full barrier, empty barrier), as many as fit in the
// 227 KB a CTA may opt in to on sm_90 (cudaDevAttrMaxSharedMemoryPerBlockOptin).
constexpr uint32_t kSmemBudget = 227 * 1024;
constexpr uint32_t kStageBytes = kTileBytesA + kTileBytesB + 2 * sizeof(uint64_t);
constexpr int kNumStages = stages_for_budget(kSmemBudget, kStageBytes, 0, CH05_MAX_STAGES);
constexpr uint32_t kSmemBytes = kNumStages * kStageBytes;
static_assert(kNumStages >= 2, "a pipeline needs at least two stages");
static_assert(kTileBytesA % kSwizzleAtomBytes == 0 && kTileBytesB % kSwizzleAtomBytes == 0,
              "every stage's tiles must stay 1024-byte aligned for the 128B swizzle");

// Start address inside the tile, LBO unused, SBO = 1024 (next eight rows), 128B swizzle. The tile
// is 1024-byte aligned, so the pattern starts at row 0 and the base offset field stays 0.
__device__ __forceinline__ uint64_t make_descriptor(const uint8_t* smem) {
  return ptx::encode({ptx::shared_address(smem), 0, kStrideByteOffset, 0, ptx::Swizzle::B128});
}

// kTrace: record the timeline (common/trace.hpp); the timed kernel is gemm_kernel<false>.
template <bool kTrace>
__global__ void __launch_bounds__(kNumThreads, 1)
    gemm_kernel(const __grid_constant__ CUtensorMap tensor_map_a,
                const __grid_constant__ CUtensorMap tensor_map_b, gemm::GemmArgs args) {
  using Wgmma = ptx::WgmmaFp8<BLOCK_N>;
  // Align to 1024 bytes: the swizzle pattern is a function of absolute address bits [7, 10).
  // The A tiles of every stage, then the B tiles, then the barriers.
  extern __shared__ __align__(kSwizzleAtomBytes) uint8_t smem[];
  uint8_t* smem_a = smem;
  uint8_t* smem_b = smem + kNumStages * kTileBytesA;
  auto* full_barriers = reinterpret_cast<uint64_t*>(smem_b + kNumStages * kTileBytesB);
  uint64_t* empty_barriers = full_barriers + kNumStages;

  const auto [M, N, K] = args.shape;
  const int64_t m0 = int64_t(blockIdx.y) * BLOCK_M, n0 = int64_t(blockIdx.x) * BLOCK_N;
  const int warpgroup = threadIdx.x / ptx::kWarpgroupSize;

  if (threadIdx.x == kNumMathThreads) {
    // __align__ on dynamic shared memory is a request, not a guarantee the language makes; a tile
    // off the 1024-byte pattern would be read back scrambled, so check it (always, once per CTA).
    if (ptx::shared_address(smem) % kSwizzleAtomBytes != 0) {
      printf("chapter 05: dynamic shared memory is not 1024-byte aligned\n");
      __trap();
    }
    ptx::prefetch_tensor_map(&tensor_map_a);
    ptx::prefetch_tensor_map(&tensor_map_b);
    for (int s = 0; s < kNumStages; ++s) {
      ptx::mbarrier_init(&full_barriers[s], 1);  // one arrival per phase: the thread issuing TMA
      ptx::mbarrier_init(&empty_barriers[s], kNumMathThreads / ptx::kWarpSize);  // one per warp
    }
    ptx::fence_barrier_init();
  }
  __syncthreads();

  const int num_k_blocks = int(K / BLOCK_K);
  if (warpgroup == kNumMathWarpgroups) {
    // ---- Producer warpgroup ----
    // setmaxnreg must be executed by every warp of a warpgroup (PTX ISA 9.7.19.5), so all four
    // warps give their registers back to the CTA's pool, and only then do three of them leave.
    ptx::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == kNumMathThreads) {
      PipelineState state;
      for (int kb = 0; kb < num_k_blocks; ++kb, state.advance(kNumStages)) {
        // Wait until the math warpgroups have released this stage (round 0 passes at once).
        ptx::mbarrier_wait(&empty_barriers[state.stage], state.phase ^ 1, "empty_barrier");
        uint64_t* full_barrier = &full_barriers[state.stage];
        // Arrive and announce the bytes to expect; the two copies then count them down.
        ptx::mbarrier_arrive_expect_tx(full_barrier, kTileBytesA + kTileBytesB);
        ptx::tma_load_2d(smem_a + state.stage * kTileBytesA, &tensor_map_a, full_barrier,
                         kb * BLOCK_K, int32_t(m0));
        ptx::tma_load_2d(smem_b + state.stage * kTileBytesB, &tensor_map_b, full_barrier,
                         kb * BLOCK_K, int32_t(n0));
        gemm::trace_stamp<kTrace>(args.trace, gemm::kTraceTmaIssued, gemm::kTraceLanes - 1, kb);
      }
    }
  } else {
    // ---- Math warpgroups ----
    // Blocks until the producer's registers are back in the pool (PTX ISA 9.7.19.5): the
    // exchange must balance, or this waits forever.
    ptx::setmaxnreg_inc<kMathRegisters>();

    float acc[Wgmma::kAccumulators];
#pragma unroll
    for (float& x : acc) x = 0.0f;

    PipelineState state;
    for (int kb = 0; kb < num_k_blocks; ++kb, state.advance(kNumStages)) {
      ptx::mbarrier_wait(&full_barriers[state.stage], state.phase, "full_barrier");
      gemm::trace_stamp<kTrace>(args.trace, gemm::kTraceFullDone, warpgroup, kb);
      const uint8_t* tile_a = smem_a + state.stage * kTileBytesA;
      const uint8_t* tile_b = smem_b + state.stage * kTileBytesB;

      ptx::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BLOCK_K / WGMMA_K; ++kk) {
        // Along K the start address moves 32 bytes inside the 128-byte row, as if unswizzled: the
        // hardware applies the XOR to the final addresses, row by row. Along M this warpgroup's 64
        // rows start 64 * 128 bytes down.
        const uint64_t desc_a =
            make_descriptor(tile_a + warpgroup * 64 * kSwizzleBytes + kk * WGMMA_K);
        const uint64_t desc_b = make_descriptor(tile_b + kk * WGMMA_K);
        Wgmma::mma(desc_a, desc_b, acc, kb > 0 || kk > 0);
      }
      ptx::wgmma_commit_group();
      // Wait for this stage's wgmmas before releasing it: they read the stage's shared memory
      // asynchronously, and the producer may overwrite it as soon as the empty barrier completes.
      // (Keeping one group in flight would need the release one stage later: chapter 05 keeps
      // the simple order; the other warpgroup's wgmmas keep the tensor core busy meanwhile.)
      ptx::wgmma_wait<0>();
      ptx::fence_accumulators(acc);
      gemm::trace_stamp<kTrace>(args.trace, gemm::kTraceMathDone, warpgroup, kb);
      // Lane 0 of each warp arrives once for its warp: the barrier expects kNumMathThreads / ptx::kWarpSize.
      if (threadIdx.x % ptx::kWarpSize == 0) ptx::mbarrier_arrive(&empty_barriers[state.stage]);
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
}

void gemm(const gemm::GemmArgs& args, cudaStream_t stream) {
  // TMA loads of A and B (16-byte aligned global addresses), 4-byte bf16x2 stores of D; scales
  // not read (unit scales).
  gemm::check_arguments(args, {.who = "chapter 05",
                               .align_a = 16,
                               .align_b = 16,
                               .align_d = 4,
                               .block_m = BLOCK_M,
                               .block_n = BLOCK_N,
                               .max_k = gemm::kMaxKUnpromoted});
  const auto [M, N, K] = args.shape;
  const CUtensorMap map_a = gemm::make_tensor_map(swizzled_view(M, K, BLOCK_M), args.a);
  const CUtensorMap map_b = gemm::make_tensor_map(swizzled_view(N, K, BLOCK_N), args.b);
  const dim3 grid = gemm::tile_grid(args.shape, BLOCK_M, BLOCK_N, "chapter 05");
  gemm::launch("chapter 05", args.trace ? gemm_kernel<true> : gemm_kernel<false>,
               {grid, kNumThreads, kSmemBytes, stream}, map_a, map_b, args);
}

}  // namespace ch05
