// Chapter 11: the configuration. The full kernel.
//
// Chapters 06-10 run one of four tiles: 256 x 128 above M = 128, else 128 rows at a width of 128,
// 144 or 160 (chapter 07's choose_tile). At M = 64 and 128 those tiles leave most of the SMs idle
// (a 128-row tile is half padding at M = 64, and 7168 / 128 = 56 tiles give 56 of 132 SMs a tile).
// Here each shape gets the kernel that suits it (config.hpp, host-tested):
// - BLOCK_M 64, 128 or 256. With BLOCK_M = 64 the CTA has one math warpgroup and 256 threads, and
//   needs no setmaxnreg: 65536 / 256 registers each is already more than the math warpgroup uses.
// - BLOCK_N from 16 to 160 by the waves of tiles over the SMs (the small widths fill the SMs at
//   M = 64 and 128), and 96 or 128 at 256 rows;
// - the stages by the shared-memory budget, up to kMaxStages;
// - multicast on A only at the 256 x 128 tile where K is long and the tiles run 4 waves or more,
//   where chapter 10's clusters measure faster than none; elsewhere none (config.hpp, step 3);
//   the override CH11_MULTICAST still reaches every multicast.
// One compiled kernel per choice the heuristic can make (kVariants); the kernel itself is chapter
// 10's, with the number of math warpgroups, the sub-tiles and the stages following the variant.
#include <cstdlib>
#include <string>
#include <utility>

#include "chapters/04_swizzle_128b/swizzle.hpp"
#include "chapters/05_warp_specialized_pipeline/pipeline.hpp"
#include "chapters/06_fp8_promotion/promotion.hpp"
#include "chapters/07_two_scale_b/scale_blocks.hpp"
#include "chapters/08_stmatrix_epilogue/epilogue_layout.hpp"
#include "chapters/09_persistent_scheduler/scheduler.hpp"
#include "chapters/10_tma_multicast/cluster.hpp"
#include "chapters/11_configuration/config.hpp"
#include "chapters/registry.hpp"
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/launch.hpp"
#include "common/ptx/barrier.cuh"
#include "common/ptx/cluster.cuh"
#include "common/ptx/cp_async.cuh"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/setmaxnreg.cuh"
#include "common/ptx/stmatrix.cuh"
#include "common/ptx/tma.cuh"
#include "common/ptx/wgmma.cuh"
#include "common/tensor_map.hpp"
#include "common/trace.hpp"

namespace ch11 {

using ch10::cta_tile;  // cluster.hpp

using namespace ch07;  // scale_blocks.hpp
using ch06::for_each_k_block;
using ch06::row_half;
using ch06::scale_a_view;
using ch08::d_store_view;  // epilogue_layout.hpp
using ch08::stmatrix_address_offset;
using ch08::swizzle_span_for;
using ch09::persistent_grid;  // scheduler.hpp

using ch05::PipelineState;

using ch04::kStrideByteOffset;
using ch04::kSwizzleAtomBytes;
using ch04::kSwizzleBytes;
using ch04::swizzled_view;

constexpr int BLOCK_K = 128;  // = kSwizzleBytes: one K block is exactly one swizzled row
constexpr int WGMMA_K = 32;
static_assert(BLOCK_K == kSwizzleBytes, "a K block must fill one 128-byte swizzled row");
static_assert(BLOCK_K == gemm::kScaleBlock,
              "one K block is one scale block: promote once per block");

// Registers: 65536 per SM and one CTA per SM (__launch_bounds__(kNumThreads, 1)), so ptxas caps
// every thread at 65536 / 384 = 170, rounded down to 168. The producer drops to 40, the math
// threads rise to 232: 128 * 40 + 256 * 232 = 64512 <= 65536. (BLOCK_M = 64: 256 threads, capped
// at 255, no exchange.)
constexpr int kProducerRegisters = 40;
constexpr int kMathRegisters = 232;

// Shared memory: kNumStages (A tile, B tile, A scales, full barrier, empty barrier, B scales), as
// many as fit in the 227 KB a CTA may opt in to on sm_90 (cudaDevAttrMaxSharedMemoryPerBlockOptin),
// at most kMaxStages (config.hpp: stages_for, smem_bytes). What depends on the tile, per choice.
template <int BLOCK_M, int BLOCK_N>
struct TileConfig {
  static constexpr int kNumMathWarpgroups = BLOCK_M == 64 ? 1 : 2;  // one per 64 rows, at most 2
  static constexpr int kNumMathThreads = kNumMathWarpgroups * ptx::kWarpgroupSize;
  // BLOCK_M = 256: each math warpgroup computes two 64-row sub-tiles, one after the other, into the
  // same acc registers and two sets of final_acc (DeepGEMM's "accumulator reuse"): rows w * 64 and
  // w * 64 + 128 for warpgroup w. 128 + 64 registers at BLOCK_N = 128, where four warpgroups of
  // one sub-tile each would need 4 x 128 math threads and leave too few registers for any.
  static constexpr int kSubtiles = BLOCK_M / (64 * kNumMathWarpgroups);
  static constexpr int kSubtileRows = 64 * kNumMathWarpgroups;  // from one sub-tile to the next
  static constexpr int kNumThreads = kNumMathThreads + ptx::kWarpgroupSize;  // + the producer, last
  static constexpr uint32_t kTileBytesA = BLOCK_M * BLOCK_K;
  static constexpr uint32_t kScaleBytesA = BLOCK_M * sizeof(float);  // one scale per tile row
  static constexpr uint32_t kTileBytesB = BLOCK_N * BLOCK_K;
  static constexpr uint32_t kScaleBytesB = 2 * sizeof(float);  // the two blocks' scales
  static constexpr uint32_t kStageBytes =
      kTileBytesA + kTileBytesB + kScaleBytesA + 2 * sizeof(uint64_t) + kScaleBytesB;
  // The bf16 tile the epilogue stores from, written once per CTA, beside the stages.
  static constexpr uint32_t kSpan = swizzle_span_for(BLOCK_N);  // bytes per panel row
  static constexpr int kPanelColumns = int(kSpan) / 2;
  static constexpr uint32_t kTileBytesD = BLOCK_M * BLOCK_N * 2;
  static constexpr int kNumStages = stages_for(BLOCK_M, BLOCK_N);
  static constexpr uint32_t kSmemBytes = smem_bytes(BLOCK_M, BLOCK_N);
  static_assert(BLOCK_M == 64 || BLOCK_M == 128 || BLOCK_M == 256,
                "one or two math warpgroups of 64 rows, or two of two 64-row sub-tiles");
  static_assert(BLOCK_M <= 256, "a TMA box has at most 256 rows (the A tile, the A scales)");
  static_assert(kStageBytes == stage_bytes(BLOCK_M, BLOCK_N) &&
                    kTileBytesD == d_tile_bytes(BLOCK_M, BLOCK_N),
                "the kernel's layout is config.hpp's arithmetic");
  static_assert(BLOCK_N % 16 == 0, "stmatrix stores two 8-column groups at a time");
  static_assert(BLOCK_N % kPanelColumns == 0, "the tile must be whole panels");
  static_assert(kTileBytesD % kSwizzleAtomBytes == 0, "the stages after it stay 1024-byte aligned");
  static_assert(kNumStages >= 2, "a pipeline needs at least two stages");
  static_assert(kTileBytesA % kSwizzleAtomBytes == 0 && kTileBytesB % kSwizzleAtomBytes == 0,
                "every stage's tiles must stay 1024-byte aligned for the 128B swizzle");
  // Multicast loads half of a tile per CTA, at half the tile's rows: each half must start on a
  // 1024-byte swizzle atom (8 rows of 128 bytes), so that both halves see the same pattern.
  static_assert((BLOCK_M / 2) % 8 == 0 && (BLOCK_N / 2) % 8 == 0,
                "a half tile must be whole 8-row swizzle atoms");
  static_assert(touches_at_most_two_scale_blocks(BLOCK_N),
                "a tile may touch at most two B scale blocks: BLOCK_N <= 128 + gcd(BLOCK_N, 128)");
};

// Start address inside the tile, LBO unused, SBO = 1024 (next eight rows), 128B swizzle. The tile
// is 1024-byte aligned, so the pattern starts at row 0 and the base offset field stays 0.
__device__ __forceinline__ uint64_t make_descriptor(const uint8_t* smem) {
  return ptx::encode({ptx::shared_address(smem), 0, kStrideByteOffset, 0, ptx::Swizzle::B128});
}

// kTrace: record the timeline (common/trace.hpp); the timed kernel is gemm_kernel<..., false>.
template <int BLOCK_M, int BLOCK_N, Multicast kMulticast, bool kTrace>
__global__ void __launch_bounds__(TileConfig<BLOCK_M, BLOCK_N>::kNumThreads, 1)
    gemm_kernel(const __grid_constant__ CUtensorMap tensor_map_a,
                const __grid_constant__ CUtensorMap tensor_map_b,
                const __grid_constant__ CUtensorMap tensor_map_sa,
                const __grid_constant__ CUtensorMap tensor_map_d, gemm::GemmArgs args, int group) {
  using Wgmma = ptx::WgmmaFp8<BLOCK_N>;
  using Tile = TileConfig<BLOCK_M, BLOCK_N>;
  constexpr int kNumMathWarpgroups = Tile::kNumMathWarpgroups;
  constexpr int kNumMathThreads = Tile::kNumMathThreads;
  constexpr uint32_t kTileBytesA = Tile::kTileBytesA, kScaleBytesA = Tile::kScaleBytesA;
  constexpr uint32_t kTileBytesB = Tile::kTileBytesB;
  constexpr int kNumStages = Tile::kNumStages;
  constexpr int kSubtiles = Tile::kSubtiles, kSubtileRows = Tile::kSubtileRows;
  // The cluster: 2 CTAs sharing one operand tile, or 1 (no multicast).
  constexpr int kClusterSize = kMulticast == Multicast::None ? 1 : 2;
  // Align to 1024 bytes: the swizzle pattern is a function of absolute address bits [7, 10).
  // The A tiles of every stage, then the B tiles, then the A scales, then the barriers,
  // then the B scales (after the 8-byte barriers, so that those keep their alignment).
  extern __shared__ __align__(kSwizzleAtomBytes) uint8_t smem[];
  uint8_t* smem_a = smem;
  uint8_t* smem_b = smem + kNumStages * kTileBytesA;
  // The D tile sits after the B tiles: every tile is a multiple of 1024 bytes, so it is 1024-byte
  // aligned as the swizzled TMA store needs.
  uint8_t* smem_d = smem_b + kNumStages * kTileBytesB;
  auto* smem_sa = reinterpret_cast<float*>(smem_d + Tile::kTileBytesD);
  auto* full_barriers = reinterpret_cast<uint64_t*>(smem_sa + kNumStages * BLOCK_M);
  uint64_t* empty_barriers = full_barriers + kNumStages;
  auto* smem_sb = reinterpret_cast<float*>(empty_barriers + kNumStages);  // two per stage

  const auto [M, N, K] = args.shape;
  // The tiles this CTA computes. The scheduler walks the grid of pairs of tiles (of tiles, without
  // multicast): cluster c takes pairs c, c + clusters, ... < pairs, and the CTA of rank r in the
  // cluster the r-th tile of each pair (cta_tile, cluster.hpp). The launch pairs the tiles exactly
  // (tiles_m even for multicast on B, tiles_n even on A), so both CTAs always have a tile.
  const int tiles_m = int((M + BLOCK_M - 1) / BLOCK_M), tiles_n = int((N + BLOCK_N - 1) / BLOCK_N);
  const int pairs_m = kMulticast == Multicast::B ? tiles_m / 2 : tiles_m;
  const int pairs_n = kMulticast == Multicast::A ? tiles_n / 2 : tiles_n;
  const int pairs = pairs_m * pairs_n;
  const int rank = int(ptx::cluster_ctarank());
  const int cluster = int(blockIdx.x) / kClusterSize, clusters = int(gridDim.x) / kClusterSize;
  // Through a shuffle from lane 0, so that the compiler knows it is the same in the whole warp:
  // the descriptor arithmetic that depends on it then runs on the uniform datapath (uniform
  // registers, which wgmma's descriptor operands need), not per thread with R2UR moves.
  const int warpgroup = __shfl_sync(0xffffffffu, int(threadIdx.x / ptx::kWarpgroupSize), 0);

  if (threadIdx.x == kNumMathThreads) {
    // __align__ on dynamic shared memory is a request, not a guarantee the language makes; a tile
    // off the 1024-byte pattern would be read back scrambled, so check it (always, once per CTA).
    if (ptx::shared_address(smem) % kSwizzleAtomBytes != 0) {
      printf("chapter 11: dynamic shared memory is not 1024-byte aligned\n");
      __trap();
    }
    ptx::prefetch_tensor_map(&tensor_map_a);
    ptx::prefetch_tensor_map(&tensor_map_b);
    ptx::prefetch_tensor_map(&tensor_map_sa);
    ptx::prefetch_tensor_map(&tensor_map_d);
    for (int s = 0; s < kNumStages; ++s) {
      // Two arrivals per phase: the thread issuing TMA, and its cp.async of scale B when it lands.
      ptx::mbarrier_init(&full_barriers[s], 2);
      // One arrival per math thread of every CTA of the cluster: with multicast, this CTA's
      // producer writes the stage in both CTAs, so both CTAs' math threads must have released it.
      ptx::mbarrier_init(&empty_barriers[s], kClusterSize * kNumMathThreads);
    }
    ptx::fence_barrier_init();
  }
  // The partner's producer may multicast into this CTA's stages and complete its full barriers,
  // and its math threads arrive on its empty barriers: none of that before they are initialised.
  // The inits' own fence (above) is the release they need: the arrival is relaxed (ptx/cluster.cuh).
  if constexpr (kClusterSize > 1)
    ptx::cluster_sync_relaxed();
  else
    __syncthreads();

  const int num_k_blocks = int(K / BLOCK_K);
  if (warpgroup == kNumMathWarpgroups) {
    // ---- Producer warpgroup ----
    // setmaxnreg must be executed by every warp of a warpgroup (PTX ISA 9.7.19.5), so all four
    // warps give their registers back to the CTA's pool; the other three exit.
    if constexpr (kNumMathWarpgroups > 1) ptx::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == kNumMathThreads) {
      // One ring position for all of this CTA's tiles: the first K blocks of tile i + 1 go into
      // the stages that tile i's last K blocks free, while the math warpgroups run tile i's
      // epilogue.
      PipelineState state;
      int step = 0;  // K blocks issued so far, over all tiles (for the trace)
      for (int pair = cluster; pair < pairs; pair += clusters) {
        const TileCoord tile = cta_tile(pair, rank, pairs_m, pairs_n, group, kMulticast);
        const int64_t m0 = int64_t(tile.m_block) * BLOCK_M, n0 = int64_t(tile.n_block) * BLOCK_N;
        // Where the rows of scale B for the two blocks the tile's columns may cover start in args.sb
        // (the second one only if it exists: past N its columns are padding, and any scale will do
        // for them). Offsets, not pointers: the producer has 40 registers. (An int: a B that fits
        // in memory has N * K / 16384 scales, far fewer than 2^31.)
        const int scale_b_row = int(n0 / gemm::kScaleBlock) * num_k_blocks;
        const int scale_b_row_2 =
            needs_second_scale(n0, BLOCK_N, N) ? scale_b_row + num_k_blocks : scale_b_row;
        for (int kb = 0; kb < num_k_blocks; ++kb, ++step, state.advance(kNumStages)) {
          // Wait until the math warpgroups (of both CTAs, with multicast) have released this stage
          // (round 0 passes at once).
          ptx::mbarrier_wait(&empty_barriers[state.stage], state.phase ^ 1, "empty_barrier");
          uint64_t* full_barrier = &full_barriers[state.stage];
          // Scale B for this block, copied without waiting for it: cp.async arrives on the full
          // barrier once the 8 bytes have landed (.noinc: one of the barrier's two arrivals).
          ptx::cp_async_4(&smem_sb[2 * state.stage], args.sb + scale_b_row + kb);
          ptx::cp_async_4(&smem_sb[2 * state.stage + 1], args.sb + scale_b_row_2 + kb);
          ptx::cp_async_mbarrier_arrive_noinc(full_barrier);
          // Arrive and announce the bytes to expect; the copies then count them down. With
          // multicast, half of the shared tile's bytes come from the partner's copy: the partner
          // may even deliver them before this arrival, which only delays the phase's completion.
          ptx::mbarrier_arrive_expect_tx(full_barrier, kTileBytesA + kTileBytesB + kScaleBytesA);
          if constexpr (kMulticast == Multicast::A) {
            // Rows [r * BLOCK_M / 2, (r + 1) * BLOCK_M / 2) of the A tile, into both CTAs.
            constexpr int kHalf = BLOCK_M / 2;
            ptx::tma_load_2d_multicast(smem_a + state.stage * kTileBytesA + rank * kHalf * BLOCK_K,
                                       &tensor_map_a, full_barrier, kb * BLOCK_K,
                                       int32_t(m0) + rank * kHalf, 0b11);
          } else {
            ptx::tma_load_2d(smem_a + state.stage * kTileBytesA, &tensor_map_a, full_barrier,
                             kb * BLOCK_K, int32_t(m0));
          }
          if constexpr (kMulticast == Multicast::B) {
            // Rows [r * BLOCK_N / 2, (r + 1) * BLOCK_N / 2) of the B tile, into both CTAs.
            constexpr int kHalf = BLOCK_N / 2;
            ptx::tma_load_2d_multicast(smem_b + state.stage * kTileBytesB + rank * kHalf * BLOCK_K,
                                       &tensor_map_b, full_barrier, kb * BLOCK_K,
                                       int32_t(n0) + rank * kHalf, 0b11);
          } else {
            ptx::tma_load_2d(smem_b + state.stage * kTileBytesB, &tensor_map_b, full_barrier,
                             kb * BLOCK_K, int32_t(n0));
          }
          ptx::tma_load_2d(smem_sa + state.stage * BLOCK_M, &tensor_map_sa, full_barrier,
                           int32_t(m0), kb);
          gemm::trace_stamp<kTrace>(args.trace, gemm::kTraceTmaIssued, gemm::kTraceLanes - 1, step);
        }
      }
      // The way out (with multicast): one more round of waits on the empty barriers. Each wait
      // passes once both CTAs' math threads have released the stage's last use, so when the round
      // is over every arrival the partner will ever make on this CTA's barriers has landed, and
      // this CTA may exit. No thread waits at a cluster barrier for that (chapter 10's README,
      // step 4).
      if constexpr (kClusterSize > 1) {
        for (int s = 0; s < kNumStages; ++s, state.advance(kNumStages))
          ptx::mbarrier_wait(&empty_barriers[state.stage], state.phase ^ 1, "empty_barrier");
      }
    }
  } else {
    // ---- Math warpgroups ----
    // Blocks until the producer's registers are back in the pool (PTX ISA 9.7.19.5): the
    // exchange must balance, or this waits forever.
    if constexpr (kNumMathWarpgroups > 1) ptx::setmaxnreg_inc<kMathRegisters>();

    // acc: one K block's product of one sub-tile, fresh from the tensor core; final: the scaled
    // sums over blocks, sub-tile i in [i * kAccumulators, (i + 1) * kAccumulators).
    float acc[Wgmma::kAccumulators];
    float final_acc[kSubtiles * Wgmma::kAccumulators];

    // This thread's two rows of D in its first sub-tile (ptx::accumulator_position: row_half 0
    // and 1; sub-tile i is kSubtileRows * i rows further down).
    const int t = threadIdx.x % ptx::kWarpgroupSize;
    const int row_lo = warpgroup * 64 + ptx::accumulator_position(t, 0).row;
    const int row_hi = warpgroup * 64 + ptx::accumulator_position(t, 2).row;
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
    // The ring position carries on across tiles, as the producer's does: both advance once per K
    // block of the same sequence of tiles, so they still meet on every stage and phase.
    PipelineState state;
    int step = 0;  // K blocks consumed so far, over all tiles (for the trace)
    int tile_count = 0;
    for (int pair = cluster; pair < pairs; pair += clusters, ++tile_count) {
      const TileCoord tile = cta_tile(pair, rank, pairs_m, pairs_n, group, kMulticast);
      const int64_t m0 = int64_t(tile.m_block) * BLOCK_M, n0 = int64_t(tile.n_block) * BLOCK_N;
#pragma unroll
      for (float& x : final_acc) x = 0.0f;

      // A sub-tile whose 64 rows all lie past M (M <= 64, or the last row of tiles) has nothing to
      // compute: its warpgroup skips the wgmmas and the promotion, and still releases the stage.
      // Sub-tile i starts at row m0 + warpgroup * 64 + kSubtileRows * i: the first live_subtiles of
      // them have rows before M. (One count, computed once: a flag per sub-tile made the compiler
      // re-evaluate 64-bit comparisons in every iteration.)
      const int64_t rows_left = M - (m0 + warpgroup * 64);
      const int64_t live = rows_left <= 0 ? 0 : (rows_left + kSubtileRows - 1) / kSubtileRows;
      const int live_subtiles = live < kSubtiles ? int(live) : kSubtiles;

      // The K loop, once per value num_former_iters can take for this BLOCK_N, and twice for each
      // (chapter 06): for a tile whose sub-tiles all have rows before M, and for the others.
      const bool all_live = live_subtiles == kSubtiles;
      dispatch_k_loop<BLOCK_N>(num_former_iters(n0, BLOCK_N), all_live, [&](auto former, auto all) {
        constexpr int kNumFormerIters = decltype(former)::value;
        constexpr bool kAllLive = decltype(all)::value;
        const auto k_block = [&](int kb, uint32_t stage, uint32_t phase)
            __attribute__((always_inline)) {
          ptx::mbarrier_wait(&full_barriers[stage], phase, "full_barrier");
          gemm::trace_stamp<kTrace>(args.trace, gemm::kTraceFullDone, warpgroup, step);

          // This block's scales, read from the stage as soon as it has landed, before the wgmmas
          // are issued: the loads' latency hides behind the tensor core, and the products are
          // formed in the promotion, after the wait (chapter 06's NOTES.md, "13. The scales read
          // first (2026-11-27)").
          float a_lo[kSubtiles], a_hi[kSubtiles];  // scale A of this thread's rows lo and hi
#pragma unroll
          for (int sub = 0; sub < kSubtiles; ++sub) {
            const uint32_t offset = 4 * (stage * BLOCK_M + sub * kSubtileRows);  // bytes
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
            // With multicast, every math thread arrives on the barrier of each CTA of the
            // cluster: both CTAs' producers write this stage of this CTA, and wait for its release.
            const auto release = [&] {
              if (sub != kSubtiles - 1) return;
              if constexpr (kClusterSize == 1) {
                ptx::mbarrier_arrive(&empty_barriers[stage]);
              } else {
                for (uint32_t r = 0; r < uint32_t(kClusterSize); ++r)
                  ptx::mbarrier_arrive_cluster(&empty_barriers[stage], r);
              }
            };
            if (!kAllLive && sub >= live_subtiles) {
              release();
              continue;
            }
            ptx::wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < BLOCK_K / WGMMA_K; ++kk) {
              // Along K the start address moves 32 bytes inside the 128-byte row, as if unswizzled:
              // the hardware applies the XOR to the final addresses, row by row. Along M this
              // sub-tile's 64 rows start (warpgroup * 64 + sub * kSubtileRows) * 128 bytes down.
              const uint64_t desc_a = ptx::advance(
                  desc_a0, stage_a + (sub * kSubtileRows * kSwizzleBytes + kk * WGMMA_K) / 16);
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
              gemm::trace_stamp<kTrace>(args.trace, gemm::kTraceMathDone, warpgroup, step);
            release();

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
          ++step;
        };
        // The loop over K blocks, unrolled by the ring where it can be (chapter 06, promotion.hpp).
        for_each_k_block<kNumStages>(0, num_k_blocks, state, k_block);
      });

      // Epilogue. 0: the shared tile may still hold the previous tile's rows, not yet read by its
      // TMA store (issued at the end of the previous epilogue and left to run during this tile's
      // K loop). The storing thread waits until TMA has read them (nothing to wait for on the
      // first tile), and the named barrier holds the warpgroup's other threads until it has.
      gemm::trace_stamp<kTrace>(args.trace, gemm::kTraceEpilogueBegin, warpgroup, tile_count);
      if (t == 0) ptx::bulk_wait_group_read<0>();
      ptx::named_barrier_sync(1 + warpgroup, ptx::kWarpgroupSize);
      // 1: each warp writes its 16 rows into the shared tile, two 8-column groups (four 8x8 bf16
      // matrices) per stmatrix; register i of the store is accumulators 4j + 2i, 4j + 2i + 1.
      // Sub-tile `sub` is the 64-row block warpgroup + sub * kNumMathWarpgroups of the tile.
      constexpr uint32_t kSpan = Tile::kSpan;
      const int warp = t / ptx::kWarpSize, lane = t % ptx::kWarpSize;
#pragma unroll
      for (int sub = 0; sub < kSubtiles; ++sub) {
        const int block64 = warpgroup + sub * kNumMathWarpgroups;
        const float* final_sub = final_acc + sub * Wgmma::kAccumulators;
#pragma unroll
        for (int j = 0; j < Wgmma::kAccumulators / 4; j += 2)
          ptx::stmatrix_x4(smem_d + stmatrix_address_offset(block64, warp, lane, j, BLOCK_M, kSpan),
                           ptx::pack_bf16x2(final_sub[4 * j + 0], final_sub[4 * j + 1]),
                           ptx::pack_bf16x2(final_sub[4 * j + 2], final_sub[4 * j + 3]),
                           ptx::pack_bf16x2(final_sub[4 * j + 4], final_sub[4 * j + 5]),
                           ptx::pack_bf16x2(final_sub[4 * j + 6], final_sub[4 * j + 7]));
      }
      // 2: make the writes visible to the async proxy that TMA reads through, then wait for the
      // warpgroup's four warps (named barrier 1 + warpgroup; 0 is __syncthreads).
      ptx::fence_proxy_async_shared();
      ptx::named_barrier_sync(1 + warpgroup, ptx::kWarpgroupSize);
      // 3: the warpgroup's first thread stores its 64 rows (per sub-tile), one box per panel; TMA
      // clips what lies past M or N. No wait here: the store runs while the warpgroup starts the
      // next tile.
      if (t == 0) {
        constexpr int kPanelColumns = Tile::kPanelColumns;
#pragma unroll
        for (int sub = 0; sub < kSubtiles; ++sub) {
          const int row0 = (warpgroup + sub * kNumMathWarpgroups) * 64;
#pragma unroll
          for (int p = 0; p < BLOCK_N / kPanelColumns; ++p)
            ptx::tma_store_2d(&tensor_map_d, smem_d + (p * BLOCK_M + row0) * kSpan,
                              int32_t(n0 + p * kPanelColumns), int32_t(m0 + row0));
        }
        ptx::bulk_commit_group();
      }
      gemm::trace_stamp<kTrace>(args.trace, gemm::kTraceEpilogueEnd, warpgroup, tile_count);
    }
    // The shared tile must stay valid until TMA has read the last tile's rows: wait for that
    // before the CTA may exit.
    if (t == 0) ptx::bulk_wait_group_read<0>();
  }
  // With multicast, this CTA's math threads arrive on the partner's empty barriers until their last
  // K block: neither CTA may exit (and release its shared memory) before those arrivals have
  // landed. The producer's last round of empty waits (above) is what holds each CTA until they
  // have; every other thread leaves when its work is done. (A cluster barrier here, with every
  // thread of both CTAs, is also correct, and slower: chapter 10's NOTES.md, "The way out".)
}

template <int BLOCK_M, int BLOCK_N, Multicast kMulticast>
void launch_tile(const gemm::GemmArgs& args, const Config& c, cudaStream_t stream) {
  using Tile = TileConfig<BLOCK_M, BLOCK_N>;
  const auto [M, N, K] = args.shape;
  // With multicast each CTA copies half of the shared tile: the box is half as many rows.
  const CUtensorMap map_a = gemm::make_tensor_map(
      swizzled_view(M, K, kMulticast == Multicast::A ? BLOCK_M / 2 : BLOCK_M), args.a);
  const CUtensorMap map_b = gemm::make_tensor_map(
      swizzled_view(N, K, kMulticast == Multicast::B ? BLOCK_N / 2 : BLOCK_N), args.b);
  const CUtensorMap map_sa = gemm::make_tensor_map(scale_a_view(args.shape, BLOCK_M), args.sa);
  const CUtensorMap map_d = gemm::make_tensor_map(d_store_view(args.shape, Tile::kSpan), args.d);
  auto* kernel = args.trace ? gemm_kernel<BLOCK_M, BLOCK_N, kMulticast, true>
                            : gemm_kernel<BLOCK_M, BLOCK_N, kMulticast, false>;
  gemm::LaunchConfig launch{dim3(c.grid), Tile::kNumThreads, Tile::kSmemBytes, stream,
                            unsigned(c.cluster_size)};
  // The plan assumes num_sms / cluster_size clusters fit at once. Where fewer do (a GPC with an odd
  // number of free SMs), launch only those: a persistent cluster that waited for a free pair of
  // SMs would start its tiles when the others are done with theirs.
  if (c.cluster_size > 1) {
    const int fit = gemm::max_active_clusters("chapter 11", kernel, launch);
    if (fit > 0 && fit < c.clusters) launch.grid = dim3(fit * c.cluster_size);
  }
  // The group: pick_group's over the grid of pairs (plan_clusters, remembered per shape), unless
  // CH09_GROUP overrides it.
  gemm::launch("chapter 11", kernel, launch, map_a, map_b, map_sa, map_d, args,
               ch09::group_from_environment(c.group, "chapter 11"));
}

// launch_tile for variant I of kVariants. One kernel per variant, a hundred and more, take minutes
// to compile one after another, so this file is compiled several times (chapters/CMakeLists.txt):
// once as itself, for the host code below, which only declares launch_variant; and once per share
// of the variants, with GEMM_VARIANT_SHARD set, where the end of the file defines launch_variant
// and compiles it for every I equal to the share modulo GEMM_VARIANT_SHARDS. The shares build in
// parallel; the machine code of each kernel is the same as in one translation unit.
template <size_t I>
void launch_variant(const gemm::GemmArgs& args, const Config& c, cudaStream_t stream);

#ifndef GEMM_VARIANT_SHARD

// Launches the variant the configuration names: one comparison per compiled variant.
template <size_t... I>
void launch_config(const gemm::GemmArgs& args, const Config& c, cudaStream_t stream,
                   std::index_sequence<I...>) {
  const bool launched =
      ((c.variant == kVariants[I] ? (launch_variant<I>(args, c, stream), true) : false) || ...);
  if (!launched)
    throw gemm::UnsupportedError("chapter 11: no kernel compiled for the configuration (" +
                                 describe(args.shape, c) + ")");
}

void check(const gemm::GemmArgs& args) {
  // TMA loads of A, B and scale A and TMA stores of D (16-byte aligned global addresses), one
  // float at a time of scale B. No block_m / block_n: the grid does not grow with the shape.
  gemm::check_arguments(args, {.who = "chapter 11",
                               .align_a = 16,
                               .align_b = 16,
                               .align_sa = 16,
                               .align_sb = 4,
                               .align_d = 16});
}

// The heuristic's configuration with its two overrides (config.hpp): `block_m` as CH11_BLOCK_M
// ("64", "128", "256") and `multicast` as CH11_MULTICAST ("off", "A", "B"); nullptr or "" leaves
// the heuristic's choice. UnsupportedError where the tiles do not pair up for the multicast.
Config configure(const gemm::Shape& s, const char* block_m, const char* multicast, int num_sms) {
  const Config chosen = apply_block_m_override(s, choose_config(s, num_sms), block_m, num_sms);
  return apply_multicast_override(s, chosen, multicast, num_sms);
}

void gemm_with(const gemm::GemmArgs& args, const char* block_m, const char* multicast,
               cudaStream_t stream) {
  check(args);
  const int num_sms = gemm::multiprocessor_count();
  const Config c = configure(args.shape, block_m, multicast, num_sms);
  launch_config(args, c, stream, std::make_index_sequence<kNumVariants>{});
}

void gemm(const gemm::GemmArgs& args, cudaStream_t stream) {
  gemm_with(args, std::getenv("CH11_BLOCK_M"), std::getenv("CH11_MULTICAST"), stream);
}

// For the tests: the given variant instead of the heuristic's choice (UnsupportedError where its
// multicast does not suit the shape).
void gemm_variant(const gemm::GemmArgs& args, Variant v, cudaStream_t stream) {
  check(args);
  const Config c = make_config(args.shape, v, gemm::multiprocessor_count());
  launch_config(args, c, stream, std::make_index_sequence<kNumVariants>{});
}

// The benchmark's ablation entries (registry.cu): one override each, the other choices the
// heuristic's. First chapters 06-10's tile (ch07::choose_tile) without a cluster: what the
// configuration's tile is worth, apart from its multicast.
void gemm_tile_ch07(const gemm::GemmArgs& args, cudaStream_t stream) {
  check(args);
  const int num_sms = gemm::multiprocessor_count();
  const ch07::TileChoice tile = ch07::choose_tile(args.shape, num_sms);
  const Config c = make_config(args.shape, {tile.block_m, tile.block_n, Multicast::None}, num_sms);
  launch_config(args, c, stream, std::make_index_sequence<kNumVariants>{});
}
void gemm_multicast_off(const gemm::GemmArgs& args, cudaStream_t stream) {
  gemm_with(args, nullptr, "off", stream);
}
void gemm_multicast_a(const gemm::GemmArgs& args, cudaStream_t stream) {
  gemm_with(args, nullptr, "A", stream);
}
void gemm_multicast_b(const gemm::GemmArgs& args, cudaStream_t stream) {
  gemm_with(args, nullptr, "B", stream);
}
void gemm_block_m_64(const gemm::GemmArgs& args, cudaStream_t stream) {
  gemm_with(args, "64", nullptr, stream);
}
void gemm_block_m_256(const gemm::GemmArgs& args, cudaStream_t stream) {
  gemm_with(args, "256", nullptr, stream);
}
void gemm_block_m_128(const gemm::GemmArgs& args, cudaStream_t stream) {
  gemm_with(args, "128", nullptr, stream);
}

// For the binary's --print-config and its header line.
std::string describe_config(const gemm::Shape& s) {
  const int num_sms = gemm::multiprocessor_count_or(kH100Sms);
  Config c = configure(s, std::getenv("CH11_BLOCK_M"), std::getenv("CH11_MULTICAST"), num_sms);
  c.group = ch09::group_from_environment(c.group, "chapter 11");  // as the launch takes it
  return describe(s, c) + (num_sms == kH100Sms ? "" : " (" + std::to_string(num_sms) + " SMs)");
}

#else  // GEMM_VARIANT_SHARD: one share of the variants, and nothing else.

template <size_t I>
void launch_variant(const gemm::GemmArgs& args, const Config& c, cudaStream_t stream) {
  launch_tile<kVariants[I].block_m, kVariants[I].block_n, kVariants[I].multicast>(args, c, stream);
}

// The share's variants, compiled by taking their addresses in a table that the explicit
// instantiation below makes the compiler emit.
template <class Indices>
struct VariantShare;
template <size_t... J>
struct VariantShare<std::index_sequence<J...> > {
  static void (*const launches[sizeof...(J)])(const gemm::GemmArgs&, const Config&, cudaStream_t);
};
template <size_t... J>
void (*const VariantShare<std::index_sequence<J...> >::launches[sizeof...(J)])(
    const gemm::GemmArgs&, const Config&,
    cudaStream_t) = {&launch_variant<J * GEMM_VARIANT_SHARDS + GEMM_VARIANT_SHARD>...};
template struct VariantShare<std::make_index_sequence<
    (kNumVariants - GEMM_VARIANT_SHARD + GEMM_VARIANT_SHARDS - 1) / GEMM_VARIANT_SHARDS> >;

#endif  // GEMM_VARIANT_SHARD

}  // namespace ch11
