// Chapter 07: two B scales in one tile.
//
// Chapter 06 kept BLOCK_N = 128 so that a tile's columns shared one 128 x 128 scale block of B.
// Tiles of 144 or 160 columns cover the 132 SMs in fewer, fuller waves on many shapes (the
// README's table), but such a tile can straddle two scale blocks: its first num_former_iters
// 8-column accumulator groups take the scale of block n0 / 128, the rest that of the next block
// (chapters/07_two_scale_b/scale_blocks.hpp, host-tested). BLOCK_N becomes a template parameter,
// chosen per shape among kBlockNChoices, and every math thread loads two B scales per K block.
//
// num_former_iters depends on the tile, so it is a run-time value; but it takes only a few values
// per BLOCK_N (four for 160, eight for 144), and the kernel dispatches over them so that each
// accumulator's choice of scale is fixed at compile time (dispatch_num_former_iters): the
// promotion stays one FFMA per accumulator, with no select.
//
// The tile: where M > 128, chapter 06's 256 x 128 stays the choice unless one of the 128-row widths
// fills the waves better by more than 0.1 of efficiency (choose_tile in scale_blocks.hpp, with the
// reason); so BLOCK_M is a template parameter beside BLOCK_N.
#include "chapters/04_swizzle_128b/swizzle.hpp"
#include "chapters/05_warp_specialized_pipeline/pipeline.hpp"
#include "chapters/06_fp8_promotion/promotion.hpp"
#include "chapters/07_two_scale_b/scale_blocks.hpp"
#include "chapters/registry.hpp"
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/launch.hpp"
#include "common/ptx/cp_async.cuh"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/setmaxnreg.cuh"
#include "common/ptx/tma.cuh"
#include "common/ptx/wgmma.cuh"
#include "common/tensor_map.hpp"
#include "common/trace.hpp"

namespace ch07 {

using ch06::for_each_k_block;
using ch06::row_half;
using ch06::scale_a_view;
using ch06::subtiles;

using ch05::PipelineState;
using ch05::stages_for_budget;

using ch04::kStrideByteOffset;
using ch04::kSwizzleAtomBytes;
using ch04::kSwizzleBytes;
using ch04::swizzled_view;

// BLOCK_M, 128 or 256, is a template parameter: two math warpgroups of one or two 64-row sub-tiles.
constexpr int BLOCK_K = 128;  // = kSwizzleBytes: one K block is exactly one swizzled row
constexpr int WGMMA_K = 32;
constexpr int kNumMathWarpgroups = 2;
constexpr int kNumMathThreads = kNumMathWarpgroups * ptx::kWarpgroupSize;
constexpr int kNumThreads = kNumMathThreads + ptx::kWarpgroupSize;  // + the producer, last
static_assert(BLOCK_K == kSwizzleBytes, "a K block must fill one 128-byte swizzled row");
static_assert(BLOCK_K == gemm::kScaleBlock,
              "one K block is one scale block: promote once per block");
// The tile widths the launch chooses from at 128 rows: kBlockNChoices (scale_blocks.hpp).

// Registers: 65536 per SM and one CTA per SM (__launch_bounds__(kNumThreads, 1)), so ptxas caps
// every thread at 65536 / 384 = 170, rounded down to 168. The producer drops to 40, the math
// threads rise to 232: 128 * 40 + 256 * 232 = 64512 <= 65536.
constexpr int kProducerRegisters = 40;
constexpr int kMathRegisters = 232;

// Shared memory: kNumStages (A tile, B tile, A scales, full barrier, empty barrier, B scales), as
// many as fit in the 227 KB a CTA may opt in to on sm_90 (cudaDevAttrMaxSharedMemoryPerBlockOptin).
// What depends on the tile, per choice: 6 stages at 128 rows (33,304, 35,352 and 37,400 bytes
// each at BLOCK_N = 128, 144, 160), 4 at 256 x 128 (50,200).
constexpr uint32_t kSmemBudget = 227 * 1024;
template <int BLOCK_M, int BLOCK_N>
struct TileConfig {
  static constexpr int kSubtiles = subtiles(BLOCK_M);  // 64-row sub-tiles per math warpgroup
  static constexpr uint32_t kTileBytesA = BLOCK_M * BLOCK_K;
  static constexpr uint32_t kScaleBytesA = BLOCK_M * sizeof(float);  // one scale per tile row
  static constexpr uint32_t kTileBytesB = BLOCK_N * BLOCK_K;
  static constexpr uint32_t kScaleBytesB = 2 * sizeof(float);  // the two blocks' scales
  static constexpr uint32_t kStageBytes =
      kTileBytesA + kTileBytesB + kScaleBytesA + 2 * sizeof(uint64_t) + kScaleBytesB;
  static constexpr int kNumStages = stages_for_budget(kSmemBudget, kStageBytes, 0, 8);
  static constexpr uint32_t kSmemBytes = kNumStages * kStageBytes;
  static_assert(BLOCK_M == 128 || BLOCK_M == 256, "two math warpgroups of one or two sub-tiles");
  // A math thread holds acc (BLOCK_N / 2 floats) and kSubtiles sets of final_acc (BLOCK_N / 2
  // each) in its 232 registers: 64 + 2 * 64 at 256 x 128; 80 + 2 * 80 at 256 x 160 would not fit.
  static_assert(BLOCK_M == 128 || BLOCK_N == 128, "at 256 rows only BLOCK_N = 128 fits");
  static_assert(kNumStages >= 2, "a pipeline needs at least two stages");
  static_assert(kTileBytesA % kSwizzleAtomBytes == 0 && kTileBytesB % kSwizzleAtomBytes == 0,
                "every stage's tiles must stay 1024-byte aligned for the 128B swizzle");
  static_assert(touches_at_most_two_scale_blocks(BLOCK_N),
                "a tile may touch at most two B scale blocks: BLOCK_N <= 128 + gcd(BLOCK_N, 128)");
};

// Start address inside the tile, LBO unused, SBO = 1024 (next eight rows), 128B swizzle. The tile
// is 1024-byte aligned, so the pattern starts at row 0 and the base offset field stays 0.
__device__ __forceinline__ uint64_t make_descriptor(const uint8_t* smem) {
  return ptx::encode({ptx::shared_address(smem), 0, kStrideByteOffset, 0, ptx::Swizzle::B128});
}

// kTrace: record the timeline (common/trace.hpp); the timed kernel is gemm_kernel<..., false>.
template <int BLOCK_M, int BLOCK_N, bool kTrace>
__global__ void __launch_bounds__(kNumThreads, 1)
    gemm_kernel(const __grid_constant__ CUtensorMap tensor_map_a,
                const __grid_constant__ CUtensorMap tensor_map_b,
                const __grid_constant__ CUtensorMap tensor_map_sa, gemm::GemmArgs args) {
  using Wgmma = ptx::WgmmaFp8<BLOCK_N>;
  using Tile = TileConfig<BLOCK_M, BLOCK_N>;
  constexpr uint32_t kTileBytesA = Tile::kTileBytesA, kScaleBytesA = Tile::kScaleBytesA;
  constexpr uint32_t kTileBytesB = Tile::kTileBytesB;
  constexpr int kNumStages = Tile::kNumStages, kSubtiles = Tile::kSubtiles;
  // Align to 1024 bytes: the swizzle pattern is a function of absolute address bits [7, 10).
  // The A tiles of every stage, then the B tiles, then the A scales, then the barriers,
  // then the B scales (after the 8-byte barriers, so that those keep their alignment).
  extern __shared__ __align__(kSwizzleAtomBytes) uint8_t smem[];
  uint8_t* smem_a = smem;
  uint8_t* smem_b = smem + kNumStages * kTileBytesA;
  auto* smem_sa = reinterpret_cast<float*>(smem_b + kNumStages * kTileBytesB);
  auto* full_barriers = reinterpret_cast<uint64_t*>(smem_sa + kNumStages * BLOCK_M);
  uint64_t* empty_barriers = full_barriers + kNumStages;
  auto* smem_sb = reinterpret_cast<float*>(empty_barriers + kNumStages);  // two per stage

  const auto [M, N, K] = args.shape;
  const int64_t m0 = int64_t(blockIdx.y) * BLOCK_M, n0 = int64_t(blockIdx.x) * BLOCK_N;
  // Through a shuffle from lane 0, so that the compiler knows it is the same in the whole warp:
  // the descriptor arithmetic that depends on it then runs on the uniform datapath (uniform
  // registers, which wgmma's descriptor operands need), not per thread with R2UR moves.
  const int warpgroup = __shfl_sync(0xffffffffu, int(threadIdx.x / ptx::kWarpgroupSize), 0);

  if (threadIdx.x == kNumMathThreads) {
    // __align__ on dynamic shared memory is a request, not a guarantee the language makes; a tile
    // off the 1024-byte pattern would be read back scrambled, so check it (always, once per CTA).
    if (ptx::shared_address(smem) % kSwizzleAtomBytes != 0) {
      printf("chapter 07: dynamic shared memory is not 1024-byte aligned\n");
      __trap();
    }
    ptx::prefetch_tensor_map(&tensor_map_a);
    ptx::prefetch_tensor_map(&tensor_map_b);
    ptx::prefetch_tensor_map(&tensor_map_sa);
    for (int s = 0; s < kNumStages; ++s) {
      // Two arrivals per phase: the thread issuing TMA, and its cp.async of scale B when it lands.
      ptx::mbarrier_init(&full_barriers[s], 2);
      ptx::mbarrier_init(&empty_barriers[s], kNumMathThreads);  // one per math thread
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
      // Where the rows of scale B for the two blocks the tile's columns may cover start in args.sb
      // (the second one only if it exists: past N its columns are padding, and any scale will do
      // for them). Offsets, not pointers: the producer has 40 registers. (An int: a B that fits
      // in memory has N * K / 16384 scales, far fewer than 2^31.)
      const int scale_b_row = int(n0 / gemm::kScaleBlock) * num_k_blocks;
      const int scale_b_row_2 =
          needs_second_scale(n0, BLOCK_N, N) ? scale_b_row + num_k_blocks : scale_b_row;
      PipelineState state;
      for (int kb = 0; kb < num_k_blocks; ++kb, state.advance(kNumStages)) {
        // Wait until the math warpgroups have released this stage (round 0 passes at once).
        ptx::mbarrier_wait(&empty_barriers[state.stage], state.phase ^ 1, "empty_barrier");
        uint64_t* full_barrier = &full_barriers[state.stage];
        // Scale B for this block, copied without waiting for it: cp.async arrives on the full
        // barrier once the 8 bytes have landed (.noinc: one of the barrier's two arrivals).
        ptx::cp_async_4(&smem_sb[2 * state.stage], args.sb + scale_b_row + kb);
        ptx::cp_async_4(&smem_sb[2 * state.stage + 1], args.sb + scale_b_row_2 + kb);
        ptx::cp_async_mbarrier_arrive_noinc(full_barrier);
        // Arrive and announce the bytes to expect; the three copies then count them down.
        ptx::mbarrier_arrive_expect_tx(full_barrier, kTileBytesA + kTileBytesB + kScaleBytesA);
        ptx::tma_load_2d(smem_a + state.stage * kTileBytesA, &tensor_map_a, full_barrier,
                         kb * BLOCK_K, int32_t(m0));
        ptx::tma_load_2d(smem_b + state.stage * kTileBytesB, &tensor_map_b, full_barrier,
                         kb * BLOCK_K, int32_t(n0));
        ptx::tma_load_2d(smem_sa + state.stage * BLOCK_M, &tensor_map_sa, full_barrier, int32_t(m0),
                         kb);
        gemm::trace_stamp<kTrace>(args.trace, gemm::kTraceTmaIssued, gemm::kTraceLanes - 1, kb);
      }
    }
  } else {
    // ---- Math warpgroups ----
    // Blocks until the producer's registers are back in the pool (PTX ISA 9.7.19.5): the
    // exchange must balance, or this waits forever.
    ptx::setmaxnreg_inc<kMathRegisters>();

    // acc: one K block's product of one sub-tile, fresh from the tensor core; final: the scaled
    // sums over blocks, sub-tile i in [i * kAccumulators, (i + 1) * kAccumulators).
    float acc[Wgmma::kAccumulators];
    float final_acc[kSubtiles * Wgmma::kAccumulators];
#pragma unroll
    for (float& x : final_acc) x = 0.0f;

    // This thread's two rows of D in its first sub-tile (ptx::accumulator_position: row_half 0
    // and 1; sub-tile i is 128 * i rows further down).
    const int t = threadIdx.x % ptx::kWarpgroupSize;
    const int row_lo = warpgroup * 64 + ptx::accumulator_position(t, 0).row;
    const int row_hi = warpgroup * 64 + ptx::accumulator_position(t, 2).row;
    // A sub-tile whose 64 rows all lie past M (M <= 64, or the last row of tiles) has nothing to
    // compute: its warpgroup skips the wgmmas and the promotion, and still releases the stage.
    // Sub-tile i starts at row m0 + warpgroup * 64 + 128 * i: the first live_subtiles of them have
    // rows before M. (One count, computed once: a flag per sub-tile made the compiler re-evaluate
    // 64-bit comparisons in every iteration.)
    const int64_t rows_left = M - (m0 + warpgroup * 64);
    const int64_t live = rows_left <= 0 ? 0 : (rows_left + 127) / 128;
    const int live_subtiles = live < kSubtiles ? int(live) : kSubtiles;

    // The shared addresses of this thread's scales in stage 0, converted once: scale A of its two
    // rows and scale B. A stage or a sub-tile only adds a constant (ptx::ld_shared_f32).
    const uint32_t scale_a_lo = ptx::shared_address(smem_sa + row_lo);
    const uint32_t scale_a_hi = ptx::shared_address(smem_sa + row_hi);
    const uint32_t scale_b0 = ptx::shared_address(smem_sb);
    // The descriptors of stage 0, built once. A stage, a sub-tile or a k32 step only moves the
    // start address, and the start address is the descriptor's low bits in 16-byte units
    // (ptx::encode): so each wgmma's descriptor is one addition to these.
    const uint64_t desc_a0 = make_descriptor(smem_a + warpgroup * 64 * kSwizzleBytes);
    const uint64_t desc_b0 = make_descriptor(smem_b);

    // The K loop, once per value num_former_iters can take for this BLOCK_N, and twice for each
    // (chapter 06): for a tile whose sub-tiles all have rows before M, and for the others.
    const bool all_live = live_subtiles == kSubtiles;
    dispatch_k_loop<BLOCK_N>(num_former_iters(n0, BLOCK_N), all_live, [&](auto former, auto all) {
      constexpr int kNumFormerIters = decltype(former)::value;
      constexpr bool kAllLive = decltype(all)::value;
      PipelineState state;
      const auto k_block = [&](int kb, uint32_t stage, uint32_t phase)
          __attribute__((always_inline)) {
        ptx::mbarrier_wait(&full_barriers[stage], phase, "full_barrier");
        gemm::trace_stamp<kTrace>(args.trace, gemm::kTraceFullDone, warpgroup, kb);

        // This block's scales, read from the stage as soon as it has landed, before the wgmmas
        // are issued: the loads' latency hides behind the tensor core, and the products are
        // formed in the promotion, after the wait (chapter 06's NOTES.md, "13. The scales read
        // first (2026-11-27)").
        float a_lo[kSubtiles], a_hi[kSubtiles];  // scale A of this thread's rows lo and hi
#pragma unroll
        for (int sub = 0; sub < kSubtiles; ++sub) {
          const uint32_t offset = 4 * (stage * BLOCK_M + sub * 128);  // bytes
          a_lo[sub] = ptx::ld_shared_f32(scale_a_lo + offset);
          a_hi[sub] = ptx::ld_shared_f32(scale_a_hi + offset);
        }
        const float2 scale_b = ptx::ld_shared_v2_f32(scale_b0 + 8 * stage);
        // The stage's offsets from stage 0, in the descriptors' 16-byte units.
        const uint32_t stage_a = stage * (kTileBytesA / 16), stage_b = stage * (kTileBytesB / 16);

#pragma unroll
        for (int sub = 0; sub < kSubtiles; ++sub) {
          // The last sub-tile's wgmmas are the last reads of the stage: after them (or at once,
          // if it has nothing to compute) every math thread arrives on the empty barrier, which
          // expects kNumMathThreads. Each thread's arrival orders its own reads of the stage (the
          // scales, read by every lane) before the copies that next overwrite it; one arrival per
          // warp, by lane 0, orders lane 0's only (racecheck, in chapter 06's NOTES.md,
          // "8. Scale B through the stage (2026-11-24)").
          const bool release = sub == kSubtiles - 1;
          if (!kAllLive && sub >= live_subtiles) {
            if (release) ptx::mbarrier_arrive(&empty_barriers[stage]);
            continue;
          }
          ptx::wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < BLOCK_K / WGMMA_K; ++kk) {
            // Along K the start address moves 32 bytes inside the 128-byte row, as if unswizzled:
            // the hardware applies the XOR to the final addresses, row by row. Along M this
            // sub-tile's 64 rows start (warpgroup * 64 + sub * 128) * 128 bytes down.
            const uint64_t desc_a =
                ptx::advance(desc_a0, stage_a + (sub * 128 * kSwizzleBytes + kk * WGMMA_K) / 16);
            const uint64_t desc_b = ptx::advance(desc_b0, stage_b + kk * WGMMA_K / 16);
            Wgmma::mma(desc_a, desc_b, acc, kk > 0);  // each K block starts from zero
          }
          ptx::wgmma_commit_group();
          // Wait for this stage's wgmmas before releasing it: they read the stage's shared memory
          // asynchronously, and the producer may overwrite it as soon as the empty barrier
          // completes. (Keeping one group in flight would need a second `acc`: no registers are
          // left for it at 256 rows.) The other warpgroup's wgmmas keep the tensor core busy
          // meanwhile.
          ptx::wgmma_wait<0>();
          ptx::fence_accumulators(acc);
          if (sub == kSubtiles - 1)
            gemm::trace_stamp<kTrace>(args.trace, gemm::kTraceMathDone, warpgroup, kb);
          if (release) ptx::mbarrier_arrive(&empty_barriers[stage]);

          // Promotion, on the CUDA cores: one FFMA per accumulator. Register r belongs to the
          // 8-column group r / 4; the former groups take the first block's scale.
          float* final_sub = final_acc + sub * Wgmma::kAccumulators;
          const float scale_lo = a_lo[sub] * scale_b.x, scale_hi = a_hi[sub] * scale_b.x;
          const float scale_lo_2 = a_lo[sub] * scale_b.y, scale_hi_2 = a_hi[sub] * scale_b.y;
#pragma unroll
          for (int r = 0; r < Wgmma::kAccumulators; ++r) {
            const bool former = r / 4 < kNumFormerIters;
            const float scale = row_half(r) == 0 ? (former ? scale_lo : scale_lo_2)
                                                 : (former ? scale_hi : scale_hi_2);
            final_sub[r] = fmaf(acc[r], scale, final_sub[r]);
          }
        }
      };
      // The loop over K blocks, unrolled by the ring where it can be (chapter 06, promotion.hpp).
      for_each_k_block<kNumStages>(0, num_k_blocks, state, k_block);
    });

    // Epilogue, unchanged from chapter 02, now from the promoted sums, one sub-tile at a time.
#pragma unroll
    for (int sub = 0; sub < kSubtiles; ++sub) {
#pragma unroll
      for (int r = 0; r < Wgmma::kAccumulators; r += 2) {
        const ptx::RowCol p = ptx::accumulator_position(t, r);
        const int64_t row = m0 + warpgroup * 64 + sub * 128 + p.row, col = n0 + p.col;
        const float* final_sub = final_acc + sub * Wgmma::kAccumulators;
        if (row < M && col < N)
          *reinterpret_cast<__nv_bfloat162*>(args.d + row * N + col) =
              __floats2bfloat162_rn(final_sub[r], final_sub[r + 1]);
      }
    }
  }
}

template <int BLOCK_M, int BLOCK_N>
void launch_tile(const gemm::GemmArgs& args, cudaStream_t stream) {
  using Tile = TileConfig<BLOCK_M, BLOCK_N>;
  // TMA loads of A, B and scale A (16-byte aligned global addresses), one float at a time of
  // scale B, 4-byte bf16x2 stores of D.
  gemm::check_arguments(args, {.who = "chapter 07",
                               .align_a = 16,
                               .align_b = 16,
                               .align_sa = 16,
                               .align_sb = 4,
                               .align_d = 4,
                               .block_m = BLOCK_M,
                               .block_n = BLOCK_N});
  const auto [M, N, K] = args.shape;
  const CUtensorMap map_a = gemm::make_tensor_map(swizzled_view(M, K, BLOCK_M), args.a);
  const CUtensorMap map_b = gemm::make_tensor_map(swizzled_view(N, K, BLOCK_N), args.b);
  const CUtensorMap map_sa = gemm::make_tensor_map(scale_a_view(args.shape, BLOCK_M), args.sa);
  const dim3 grid = gemm::tile_grid(args.shape, BLOCK_M, BLOCK_N, "chapter 07");
  gemm::launch(
      "chapter 07",
      args.trace ? gemm_kernel<BLOCK_M, BLOCK_N, true> : gemm_kernel<BLOCK_M, BLOCK_N, false>,
      {grid, kNumThreads, Tile::kSmemBytes, stream}, map_a, map_b, map_sa, args);
}

// The 128-row tile of width block_n, one of kBlockNChoices.
void launch_128_rows(const gemm::GemmArgs& args, int block_n, cudaStream_t stream) {
  switch (block_n) {
    case 128:
      return launch_tile<128, 128>(args, stream);
    case 144:
      return launch_tile<128, 144>(args, stream);
    default:
      return launch_tile<128, 160>(args, stream);
  }
}

// choose_tile (scale_blocks.hpp): chapter 06's 256 x 128 where M > 128, unless a 128-row width
// fills the waves better by more than kTallTileMargin; else choose_block_n's 128-row width.
void gemm(const gemm::GemmArgs& args, cudaStream_t stream) {
  const TileChoice tile = choose_tile(args.shape, gemm::multiprocessor_count_or(kH100Sms));
  if (tile.block_m == 256) return launch_tile<256, 128>(args, stream);
  launch_128_rows(args, tile.block_n, stream);
}

// The README's ablation: the 128-row tile on every shape, at choose_block_n's width.
void gemm_block_m_128(const gemm::GemmArgs& args, cudaStream_t stream) {
  launch_128_rows(args, choose_block_n(args.shape, gemm::multiprocessor_count_or(kH100Sms)),
                  stream);
}

}  // namespace ch07
