// Chapter 15: the scheduler learns groups.
//
// A mixture-of-experts layer multiplies each expert's tokens by that expert's weights: G GEMMs with
// one N and one K, in one launch (grouped.hpp has the two layouts, contiguous and masked). This is
// chapter 12's kernel, and what changes is where a tile's rows, B and scales come from:
// - the CTAs walk works from GroupedScheduler (scheduler.hpp) where chapter 12 walked its grid of
//   pairs: a work is one tile of one group, or a tile of padding rows. One thread of each CTA runs
//   the walk and hands the works to the producer and the math threads (WorkRing, below);
// - the producer loads the group's B (rows group * N + n0 of B's [G * N, K] view) and the group's B
//   scales; in the masked layout, the group's A scales (their [G * K/128, max_m] view). A and D are
//   addressed by the work's first row, as before;
// - a work of padding loads nothing and runs no K loop: its accumulators stay zero and its rows are
//   stored as zeros; a 256-row tile holding two groups runs as two works, each computing and storing
//   its own 128-row half (the K loop's sub-tile test, which chapter 06 wrote for rows past M, now
//   also skips the other half);
// - the epilogue zeroes the rows that hold no data of the work's group (contiguous: padding rows;
//   masked: rows past masked_m), and stores no box that starts past the group's rows. Masked, the
//   boxes of D, and of A with 64-row tiles, are 32 rows (config.hpp, box_rows_for): a group of 20
//   rows moves one box of A and of D per tile, not 64 rows of each.
// - with 128 x 192 tiles where B is large (config.hpp), the CTAs run in pairs (clusters of two) that
//   share B: the scheduler hands both CTAs of a cluster one pair of works at a time (scheduler.hpp),
//   and where the pair has one group and one n-block, the CTA of rank 0 loads B into both (chapter
//   10's multicast, the whole tile from one CTA). Every math thread releases each stage in both CTAs.
// What this chapter takes out: chapter 12's split (the G groups of a few rows fill the SMs that the
// split was for) and its multicast of A; the kernel loses kMulticast and kSplit, and takes kPaired.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "chapters/04_swizzle_128b/swizzle.hpp"
#include "chapters/05_warp_specialized_pipeline/pipeline.hpp"
#include "chapters/06_fp8_promotion/promotion.hpp"
#include "chapters/07_two_scale_b/scale_blocks.hpp"
#include "chapters/08_stmatrix_epilogue/epilogue_layout.hpp"
#include "chapters/12_split_k/config.hpp"
#include "chapters/15_grouped_gemm/config.hpp"
#include "chapters/15_grouped_gemm/grouped.hpp"
#include "chapters/15_grouped_gemm/scheduler.hpp"
#include "common/arguments.hpp"
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

namespace ch15 {

using ch11::d_tile_bytes;  // chapter 11's config.hpp
using ch11::stage_bytes;

using namespace ch07;  // scale_blocks.hpp
using ch06::for_each_k_block;
using ch06::row_half;
using ch06::scale_a_view;
using ch08::d_store_view;  // epilogue_layout.hpp
using ch08::stmatrix_address_offset;
using ch08::swizzle_span_for;

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

// The works of one CTA, from its scheduler thread (the only thread that runs the scheduler, lane 0
// of the producer warpgroup's second warp) to the producer thread and the math threads, through a
// ring of kWorkSlots slots in shared memory, each with a full barrier (the scheduler's one arrival,
// whose release orders its stores before it) and an empty one (the producer thread and every math
// thread, once each has read the slot).
// - Why not every math thread running the scheduler itself, as chapter 12's threads each walked
//   the tiles: the walk's loops over indices read from memory made ptxas keep the pipeline state in
//   ordinary registers, and move every wgmma descriptor to a uniform register first (290 R2UR in
//   the 256 x 128 kernel, against 40 this way; 9% slower at 7294 x 6144 x 7168 on the H100,
//   2026-11-26: NOTES.md, "The uniform datapath").
// - Why not the producer thread, which ran it until 2026-11-26: the walk reads a group index (or a
//   count) from memory and needs the value at once. The producer then issued no load for 2.5 us at
//   every turn of a tile, against 0.9 us in chapter 12, and the kernel ran 4% below chapter 12 on
//   one group of 30205 x 6144 x 7168 (H100: NOTES.md, "The producer's read"). A thread of its own
//   waits on those reads while the producer loads, up to kWorkSlots works ahead of it.
constexpr int kWorkSlots = 4;
constexpr int kWorkInts = 8;  // group, row0, rows, n_block, sub_begin, sub_end, valid, shared
constexpr uint32_t kWorkRingBytes = kWorkSlots * (2 * sizeof(uint64_t) + kWorkInts * sizeof(int));
struct WorkRing {
  int slot = 0;
  uint32_t phase = 0;
  __device__ __forceinline__ void advance() {
    if (++slot == kWorkSlots) slot = 0, phase ^= 1;
  }
  // The scheduler thread: the next work, or (nullptr) the end.
  __device__ __forceinline__ void publish(uint64_t* full, uint64_t* empty, int* slots,
                                          const Work* w) {
    ptx::mbarrier_wait(&empty[slot], phase ^ 1, "work_empty");  // round 0 passes at once
    int* out = slots + slot * kWorkInts;
    if (w != nullptr) {
      out[0] = w->group, out[1] = int(w->row0), out[2] = w->rows, out[3] = w->n_block;
      out[4] = w->sub_begin, out[5] = w->sub_end, out[7] = w->shared;
    }
    out[6] = w != nullptr;
    ptx::mbarrier_arrive(&full[slot]);
    advance();
  }
  // The producer thread: the next work; false at the end.
  __device__ __forceinline__ bool take_alone(uint64_t* full, uint64_t* empty, const int* slots,
                                             Work& w) {
    ptx::mbarrier_wait(&full[slot], phase, "work_full");
    return read(empty, slots, w);
  }
  // Either reader, once the slot's full barrier has passed: the work, then the slot released.
  __device__ __forceinline__ bool read(uint64_t* empty, const int* slots, Work& w) {
    const int* in = slots + slot * kWorkInts;
    w.group = in[0], w.row0 = in[1], w.rows = in[2], w.n_block = in[3];
    w.sub_begin = in[4], w.sub_end = in[5], w.shared = in[7];
    const bool valid = in[6] != 0;
    ptx::mbarrier_arrive(&empty[slot]);
    advance();
    return valid;
  }
  // A math thread: the next work; false at the end.
  __device__ __forceinline__ bool take(uint64_t* full, uint64_t* empty, const int* slots, Work& w) {
    // The wait as a loop whose exit the whole warp votes on: a loop that each thread may leave on
    // its own here, before the K loop, also made ptxas keep the pipeline state per thread (290
    // R2UR again). Each lane's own successful try_wait is its acquire of the slot.
    while (!__all_sync(0xffffffffu, ptx::mbarrier_try_wait(&full[slot], phase))) {
    }
    return read(empty, slots, w);
  }
};

// Shared memory: kNumStages (A tile, B tile, A scales, full barrier, empty barrier, B scales), as
// many as fit in the 227 KB a CTA may opt in to on sm_90 (cudaDevAttrMaxSharedMemoryPerBlockOptin),
// at most kMaxStages (chapter 12's config.hpp: stages_for, smem_bytes, split 1). What depends on
// the tile, per choice.
template <int BLOCK_M, int BLOCK_N>
struct TileConfig {
  static constexpr int kNumMathWarpgroups = BLOCK_M == 64 ? 1 : 2;  // one per 64 rows, at most 2
  static constexpr int kNumMathThreads = kNumMathWarpgroups * ptx::kWarpgroupSize;
  // BLOCK_M = 256: each math warpgroup computes two 64-row sub-tiles, one after the other, into the
  // same acc registers and two sets of final_acc (DeepGEMM's "accumulator reuse"): rows w * 64 and
  // w * 64 + 128 for warpgroup w. 128 + 64 registers at BLOCK_N = 128, where four warpgroups of
  // one sub-tile each would need 4 x 128 math threads and leave too few registers for any.
  // Sub-tile i of both warpgroups is rows [128 i, 128 i + 128): the half of the tile a work's
  // [sub_begin, sub_end) names (scheduler.hpp).
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
  static constexpr int kNumStages = ch12::stages_for(BLOCK_M, BLOCK_N, 1);
  static constexpr uint32_t kSmemBytes = ch12::smem_bytes(BLOCK_M, BLOCK_N, 1);
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
  static_assert(touches_at_most_two_scale_blocks(BLOCK_N),
                "a tile may touch at most two B scale blocks: BLOCK_N <= 128 + gcd(BLOCK_N, 128)");
  static_assert(kSmemBytes + kWorkRingBytes <= ch11::kSmemBudget,
                "the ring of works fits beside the stages");
  static_assert(BLOCK_M < 256 || kAlignment == 128,
                "a 256-row tile holds at most two groups, one per 128-row sub-tile");
};

// Start address inside the tile, LBO unused, SBO = 1024 (next eight rows), 128B swizzle. The tile
// is 1024-byte aligned, so the pattern starts at row 0 and the base offset field stays 0.
__device__ __forceinline__ uint64_t make_descriptor(const uint8_t* smem) {
  return ptx::encode({ptx::shared_address(smem), 0, kStrideByteOffset, 0, ptx::Swizzle::B128});
}

// What the kernel needs of the groups, beside chapter 12's arguments: the scheduler's parameters
// (config.hpp), the indices or counts it reads on the device, and the status word.
struct GroupParams {
  SchedulerParams scheduler;
  const int* m_indices;
  const int* masked_m;
  uint32_t* status;
  int box_rows;  // D's store box, and A's load box with 64-row tiles: 32 or 64 rows (Config)
};

// The work of lane 0, in every lane of the warp (all lanes active).
__device__ __forceinline__ Work warp_uniform(const Work& w) {
  Work u;
  u.group = __shfl_sync(0xffffffffu, w.group, 0);
  u.row0 = __shfl_sync(0xffffffffu, static_cast<long long>(w.row0), 0);
  u.rows = __shfl_sync(0xffffffffu, w.rows, 0);
  u.n_block = __shfl_sync(0xffffffffu, w.n_block, 0);
  u.sub_begin = __shfl_sync(0xffffffffu, w.sub_begin, 0);
  u.sub_end = __shfl_sync(0xffffffffu, w.sub_end, 0);
  return u;
}

// kTrace: record the timeline (common/trace.hpp); the timed kernel is gemm_kernel<..., false>.
// args.shape is {M or max_m, N, K}; args.b and args.sb hold every group's B and scales.
// kPaired: clusters of two CTAs walking pairs of works in step (scheduler.hpp), sharing B.
template <int BLOCK_M, int BLOCK_N, bool kTrace, bool kPaired>
__global__ void __launch_bounds__(TileConfig<BLOCK_M, BLOCK_N>::kNumThreads, 1)
    gemm_kernel(const __grid_constant__ CUtensorMap tensor_map_a,
                const __grid_constant__ CUtensorMap tensor_map_b,
                const __grid_constant__ CUtensorMap tensor_map_sa,
                const __grid_constant__ CUtensorMap tensor_map_d, gemm::GemmArgs args,
                GroupParams groups, bool b_evict_first) {
  using Wgmma = ptx::WgmmaFp8<BLOCK_N>;
  using Tile = TileConfig<BLOCK_M, BLOCK_N>;
  constexpr int kNumMathWarpgroups = Tile::kNumMathWarpgroups;
  constexpr int kNumMathThreads = Tile::kNumMathThreads;
  constexpr uint32_t kTileBytesA = Tile::kTileBytesA, kScaleBytesA = Tile::kScaleBytesA;
  constexpr uint32_t kTileBytesB = Tile::kTileBytesB;
  constexpr int kNumStages = Tile::kNumStages;
  constexpr int kSubtiles = Tile::kSubtiles, kSubtileRows = Tile::kSubtileRows;
  // Align to 1024 bytes: the swizzle pattern is a function of absolute address bits [7, 10).
  // The A tiles of every stage, then the B tiles, then the D tile, then the A scales, then the
  // barriers, then the B scales (after the 8-byte barriers, so that those keep their alignment).
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
  // The ring of works the scheduler thread publishes to the producer and the math warpgroups
  // (after the B scales, 8-byte aligned: 2 floats per stage): a full and an empty barrier per
  // slot, then the slots.
  auto* work_full = reinterpret_cast<uint64_t*>(smem_sb + 2 * kNumStages);
  uint64_t* work_empty = work_full + kWorkSlots;
  auto* work_slots = reinterpret_cast<int*>(work_empty + kWorkSlots);

  const auto [M, N, K] = args.shape;
  const bool masked = groups.scheduler.layout == Layout::Masked;
  // The works this CTA computes: CTA c takes tiles c, c + CTAs, ... of the scheduler's sequence
  // (scheduler.hpp), and where a tile holds two groups, one work per group. The scheduler thread
  // walks them; the producer and every math thread take each from the ring.
  // Paired, the cluster c takes pairs c, c + clusters, ..., and the CTA of rank r the r-th work of
  // each.
  constexpr int kClusterSize = kPaired ? 2 : 1;
  const int cta = int(blockIdx.x) / kClusterSize, ctas = int(gridDim.x) / kClusterSize;
  const int rank = kPaired ? int(ptx::cluster_ctarank()) : 0;
  // Through a shuffle from lane 0, so that the compiler knows it is the same in the whole warp:
  // the descriptor arithmetic that depends on it then runs on the uniform datapath (uniform
  // registers, which wgmma's descriptor operands need), not per thread with R2UR moves.
  const int warpgroup = __shfl_sync(0xffffffffu, int(threadIdx.x / ptx::kWarpgroupSize), 0);

  if (threadIdx.x == kNumMathThreads) {
    // __align__ on dynamic shared memory is a request, not a guarantee the language makes; a tile
    // off the 1024-byte pattern would be read back scrambled, so check it (always, once per CTA).
    if (ptx::shared_address(smem) % kSwizzleAtomBytes != 0) {
      printf("chapter 15: dynamic shared memory is not 1024-byte aligned\n");
      __trap();
    }
    ptx::prefetch_tensor_map(&tensor_map_a);
    ptx::prefetch_tensor_map(&tensor_map_b);
    ptx::prefetch_tensor_map(&tensor_map_sa);
    ptx::prefetch_tensor_map(&tensor_map_d);
    for (int s = 0; s < kNumStages; ++s) {
      // Two arrivals per phase: the thread issuing TMA, and its cp.async of scale B when it lands.
      ptx::mbarrier_init(&full_barriers[s], 2);
      // One arrival per math thread of every CTA of the cluster: paired, the CTA of rank 0 may
      // write B into this stage of both CTAs, so both CTAs' math threads must have released it.
      ptx::mbarrier_init(&empty_barriers[s], kClusterSize * kNumMathThreads);
    }
    for (int s = 0; s < kWorkSlots; ++s) {
      ptx::mbarrier_init(&work_full[s], 1);  // the scheduler thread, once it wrote the slot
      // The producer thread and every math thread, once each has read it.
      ptx::mbarrier_init(&work_empty[s], kNumMathThreads + 1);
    }
    ptx::fence_barrier_init();
  }
  // Paired, the partner's producer may multicast into this CTA's stages and its math threads
  // arrive on its empty barriers: none of that before they are initialised (chapter 10).
  if constexpr (kPaired)
    ptx::cluster_sync_relaxed();
  else
    __syncthreads();

  const int num_k_blocks = int(K / BLOCK_K);
  const int n_scale_blocks = int((N + gemm::kScaleBlock - 1) / gemm::kScaleBlock);
  if (warpgroup == kNumMathWarpgroups) {
    // ---- Producer warpgroup ----
    // setmaxnreg must be executed by every warp of a warpgroup (PTX ISA 9.7.19.5), so all four
    // warps give their registers back to the CTA's pool; the first lanes of two of them then load
    // and schedule, and the other threads exit.
    if constexpr (kNumMathWarpgroups > 1) ptx::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == kNumMathThreads) {
      // One ring position for all of this CTA's tiles: the first K blocks of tile i + 1 go into
      // the stages that tile i's last K blocks free, while the math warpgroups run tile i's
      // epilogue.
      PipelineState state;
      int step = 0;  // K blocks issued so far, over all tiles (for the trace)
      const uint64_t evict_first = ptx::l2_policy_evict_first();
      WorkRing ring;
      for (Work work; ring.take_alone(work_full, work_empty, work_slots, work);) {
        // Padding rows: nothing to load (the math warpgroups store zeros). Paired, the pair's
        // stages move in step: a work of padding loads group 0's B and computes nothing.
        if (!kPaired && work.group < 0) continue;
        const int group = work.group < 0 ? 0 : work.group;
        const int64_t m0 = work.row0, n0 = int64_t(work.n_block) * BLOCK_N;
        // The group's B: rows group * N + n0 of B's [G * N, K] view. Its scales: the group's block
        // of scale B, [ceil(N / 128)][K / 128] per group.
        const int64_t b_row = int64_t(group) * N + n0;
        // Where the rows of scale B for the two blocks the tile's columns may cover start in args.sb
        // (the second one only if it exists: past N its columns are padding, and any scale will do
        // for them). Offsets, not pointers: the producer has 40 registers. (An int: a B that fits
        // in memory has N * K / 16384 scales, far fewer than 2^31.)
        const int scale_b_row =
            (group * n_scale_blocks + int(n0 / gemm::kScaleBlock)) * num_k_blocks;
        const int scale_b_row_2 =
            needs_second_scale(n0, BLOCK_N, N) ? scale_b_row + num_k_blocks : scale_b_row;
        // The A scales: contiguous, column m0 of [K / 128, M]; masked, column m0 - group * max_m of
        // the group's K / 128 rows in [G * K / 128, max_m].
        const int32_t sa_column = int32_t(masked ? m0 - int64_t(group) * M : m0);
        const int sa_row0 = masked ? group * num_k_blocks : 0;
        // A in boxes of a_box rows: with 64-row tiles and 32-row boxes, a second box only where
        // the work has rows past the first 32. The rows no box loads keep whatever the stage held:
        // their accumulators are garbage, and the epilogue stores them as zeros (rows past the
        // work's, as before), or not at all.
        const int a_box = BLOCK_M == 64 ? groups.box_rows : BLOCK_M;
        const int a_boxes = BLOCK_M == 64 && work.rows <= a_box ? 1 : BLOCK_M / a_box;
        const uint32_t a_bytes = uint32_t(a_boxes * a_box * BLOCK_K);
        for (int kb = 0; kb < num_k_blocks; ++kb, ++step, state.advance(kNumStages)) {
          // Wait until the math warpgroups have released this stage (round 0 passes at once).
          ptx::mbarrier_wait(&empty_barriers[state.stage], state.phase ^ 1, "empty_barrier");
          uint64_t* full_barrier = &full_barriers[state.stage];
          // Scale B for this block, copied without waiting for it: cp.async arrives on the full
          // barrier once the 8 bytes have landed (.noinc: one of the barrier's two arrivals).
          ptx::cp_async_4(&smem_sb[2 * state.stage], args.sb + scale_b_row + kb);
          ptx::cp_async_4(&smem_sb[2 * state.stage + 1], args.sb + scale_b_row_2 + kb);
          ptx::cp_async_mbarrier_arrive_noinc(full_barrier);
          // Arrive and announce the bytes to expect; the copies then count them down.
          ptx::mbarrier_arrive_expect_tx(full_barrier, a_bytes + kTileBytesB + kScaleBytesA);
          for (int i = 0; i < a_boxes; ++i)
            ptx::tma_load_2d(smem_a + state.stage * kTileBytesA + i * a_box * BLOCK_K,
                             &tensor_map_a, full_barrier, kb * BLOCK_K, int32_t(m0 + i * a_box));
          if (kPaired && work.shared) {
            // The pair's B: the whole tile from the CTA of rank 0 into both CTAs, completing each
            // CTA's full barrier with its bytes; the CTA of rank 1 loads none.
            if (rank == 0)
              ptx::tma_load_2d_multicast(smem_b + state.stage * kTileBytesB, &tensor_map_b,
                                         full_barrier, kb * BLOCK_K, int32_t(b_row), 0b11);
          } else if (b_evict_first) {
            ptx::tma_load_2d(smem_b + state.stage * kTileBytesB, &tensor_map_b, full_barrier,
                             kb * BLOCK_K, int32_t(b_row), evict_first);
          } else {
            ptx::tma_load_2d(smem_b + state.stage * kTileBytesB, &tensor_map_b, full_barrier,
                             kb * BLOCK_K, int32_t(b_row));
          }
          ptx::tma_load_2d(smem_sa + state.stage * BLOCK_M, &tensor_map_sa, full_barrier, sa_column,
                           sa_row0 + kb);
          gemm::trace_stamp<kTrace>(args.trace, gemm::kTraceTmaIssued, gemm::kTraceLanes - 1, step);
        }
      }
      // The way out (with multicast): one more round of waits on the empty barriers. Each wait
      // passes once both CTAs' math threads have released the stage's last use, so when the round
      // is over every arrival the partner will ever make on this CTA's barriers has landed, and
      // this CTA may exit. No thread waits at a cluster barrier for that (chapter 10's README,
      // step 4).
      if constexpr (kPaired) {
        for (int s = 0; s < kNumStages; ++s, state.advance(kNumStages))
          ptx::mbarrier_wait(&empty_barriers[state.stage], state.phase ^ 1, "empty_barrier");
      }
    } else if (threadIdx.x == kNumMathThreads + ptx::kWarpSize) {
      // The scheduler thread: every work of this CTA into the ring, then the end.
      GroupedScheduler scheduler(groups.scheduler, groups.m_indices, groups.masked_m, cta, ctas,
                                 rank);
      WorkRing ring;
      const auto next = [&](Work& w) {
        if constexpr (kPaired)
          return scheduler.next_paired(w);
        else
          return scheduler.next_unpaired(w);
      };
      for (Work work; next(work);) ring.publish(work_full, work_empty, work_slots, &work);
      ring.publish(work_full, work_empty, work_slots, nullptr);  // no more works
      // What the walk skipped (an index or a count out of range), for the launch wrapper.
      if (scheduler.status() != 0 && groups.status != nullptr)
        atomicOr(groups.status, scheduler.status());
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
    // block of the same sequence of works, so they still meet on every stage and phase.
    // Paired: the partner's empty barriers, mapped once (stage s is 8 s bytes further).
    const uint32_t partner_empty = kPaired ? ptx::map_shared_cluster(empty_barriers, rank ^ 1) : 0;
    PipelineState state;
    int step = 0;  // K blocks consumed so far, over all tiles (for the trace)
    int tile_count = 0;
    WorkRing ring;
    for (;; ++tile_count) {
      // The next work, as the scheduler thread published it. Two copies: the K loop's decisions take lane
      // 0's through shuffles (work), which the compiler knows are the same in the whole warp, so
      // that the pipeline state and the wgmma descriptors stay on the uniform datapath; the
      // epilogue takes this thread's own (mine, equal to it).
      Work mine;
      const bool more = ring.take(work_full, work_empty, work_slots, mine);
      if (!__shfl_sync(0xffffffffu, int(more), 0)) break;
      const Work work = warp_uniform(mine);
      const int64_t n0 = int64_t(work.n_block) * BLOCK_N;
#pragma unroll
      for (float& x : final_acc) x = 0.0f;

      // A sub-tile with nothing to compute: its 64 rows all lie past the work's rows (masked_m, or
      // M), or it is the other group's half of a two-group tile. Its warpgroup skips the wgmmas and
      // the promotion, and still releases the stage. Sub-tile i starts at row warpgroup * 64 +
      // kSubtileRows * i of the tile: those in [sub_begin, live_end) compute. (One count, computed
      // once: a flag per sub-tile made the compiler re-evaluate 64-bit comparisons in every
      // iteration.)
      const int rows_left = work.rows - warpgroup * 64;
      const int live = rows_left <= 0 ? 0 : (rows_left + kSubtileRows - 1) / kSubtileRows;
      // Paired, a work of padding runs the K loop (its stages move with the partner's) and computes
      // nothing.
      const int live_end = kPaired && work.group < 0 ? 0
                           : live < work.sub_end     ? live
                                                     : work.sub_end;
      const int sub_begin = work.sub_begin;
      // Contiguous: the group indices of this thread's rows, loaded now and compared in the
      // epilogue, so that the loads' latency hides behind the K loop (loaded there, they held up
      // the epilogue).
      int index_lo[kSubtiles], index_hi[kSubtiles];
#pragma unroll
      for (int sub = 0; sub < kSubtiles; ++sub) {
        const int lo = row_lo + sub * kSubtileRows, hi = row_hi + sub * kSubtileRows;
        index_lo[sub] = !masked && lo < mine.rows ? groups.m_indices[mine.row0 + lo] : -1;
        index_hi[sub] = !masked && hi < mine.rows ? groups.m_indices[mine.row0 + hi] : -1;
      }

      // The K loop, once per value num_former_iters can take for this BLOCK_N, and twice for each
      // (chapter 06): for a work whose sub-tiles all compute, and for the others. A work of padding
      // rows has none, without pairs: no K loop, and its zeros are stored.
      const bool all_live = sub_begin == 0 && live_end == kSubtiles;
      if (kPaired || work.group >= 0)
        dispatch_k_loop<
            BLOCK_N>(num_former_iters(n0, BLOCK_N), all_live, [&](auto former, auto all) {
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
            const uint32_t stage_a = stage * (kTileBytesA / 16),
                           stage_b = stage * (kTileBytesB / 16);

#pragma unroll
            for (int sub = 0; sub < kSubtiles; ++sub) {
              // The last sub-tile's wgmmas are the last reads of the stage: after them (or at once,
              // if it has nothing to compute) every math thread arrives on the empty barrier, which
              // expects kNumMathThreads. Each thread's arrival orders its own reads of the stage
              // (the scales, read by every lane) before the copies that next overwrite it; one
              // arrival per warp, by lane 0, orders lane 0's only (racecheck, in chapter 06's
              // NOTES.md, "8. Scale B through the stage (2026-11-24)").
              const auto release = [&] {
                if (sub != kSubtiles - 1) return;
                ptx::mbarrier_arrive(&empty_barriers[stage]);
                if constexpr (kPaired) ptx::mbarrier_arrive_remote(partner_empty + 8 * stage);
              };
              if (!kAllLive && (sub < sub_begin || sub >= live_end)) {
                release();
                continue;
              }
              ptx::wgmma_fence();
#pragma unroll
              for (int kk = 0; kk < BLOCK_K / WGMMA_K; ++kk) {
                // Along K the start address moves 32 bytes inside the 128-byte row, as if
                // unswizzled: the hardware applies the XOR to the final addresses, row by row.
                // Along M this sub-tile's 64 rows start (warpgroup * 64 + sub * kSubtileRows) * 128
                // bytes down.
                const uint64_t desc_a = ptx::advance(
                    desc_a0, stage_a + (sub * kSubtileRows * kSwizzleBytes + kk * WGMMA_K) / 16);
                const uint64_t desc_b = ptx::advance(desc_b0, stage_b + kk * WGMMA_K / 16);
                Wgmma::mma(desc_a, desc_b, acc, kk > 0);  // each K block starts from zero
              }
              ptx::wgmma_commit_group();
              // Wait for this stage's wgmmas before releasing it: they read the stage's shared
              // memory asynchronously, and the producer may overwrite it as soon as the empty
              // barrier completes. (Keeping one group in flight would need a second `acc`: no
              // registers are left for it at 256 rows.) The other warpgroup's wgmmas keep the
              // tensor core busy meanwhile.
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
          // The loop over K blocks, unrolled by the ring where it can be (chapter 06,
          // promotion.hpp).
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
      // A row that holds no data of the work's group is stored as zeros: contiguous, a row whose
      // index is not the group (padding, -1; anything else also raises kBadRowIndex); masked, a
      // row at or past masked_m.
      const int64_t m0 = mine.row0, n0_mine = int64_t(mine.n_block) * BLOCK_N;
      const auto keeps = [&](int row, int index) -> bool {
        if (row >= mine.rows) return false;  // past M, or past masked_m
        if (masked) return true;
        if (index != mine.group && index != -1 && groups.status != nullptr)
          atomicOr(groups.status, kBadRowIndex);
        return index == mine.group && index >= 0;
      };
      constexpr uint32_t kSpan = Tile::kSpan;
      const int warp = t / ptx::kWarpSize, lane = t % ptx::kWarpSize;
#pragma unroll
      for (int sub = 0; sub < kSubtiles; ++sub) {
        if (sub < mine.sub_begin || sub >= mine.sub_end) continue;  // the other group's half
        const int block64 = warpgroup + sub * kNumMathWarpgroups;
        float* final_sub = final_acc + sub * Wgmma::kAccumulators;
        const bool keep_lo = keeps(row_lo + sub * kSubtileRows, index_lo[sub]);
        const bool keep_hi = keeps(row_hi + sub * kSubtileRows, index_hi[sub]);
        // Only in a warp that holds such a row: a tile inside its group skips the 96 selects,
        // which cost 2.8% at one group of 30205 x 6144 x 7168 (H100, 2026-11-26: NOTES.md, "The
        // producer's read").
        if (__any_sync(0xffffffffu, !keep_lo || !keep_hi)) {
#pragma unroll
          for (int r = 0; r < Wgmma::kAccumulators; ++r)
            if (!(row_half(r) == 0 ? keep_lo : keep_hi)) final_sub[r] = 0.0f;
        }
#pragma unroll
        for (int j = 0; j < Wgmma::kAccumulators / 4; j += 2) {
          ptx::stmatrix_x4(smem_d + stmatrix_address_offset(block64, warp, lane, j, BLOCK_M, kSpan),
                           ptx::pack_bf16x2(final_sub[4 * j + 0], final_sub[4 * j + 1]),
                           ptx::pack_bf16x2(final_sub[4 * j + 2], final_sub[4 * j + 3]),
                           ptx::pack_bf16x2(final_sub[4 * j + 4], final_sub[4 * j + 5]),
                           ptx::pack_bf16x2(final_sub[4 * j + 6], final_sub[4 * j + 7]));
        }
      }
      // 2: make the writes visible to the async proxy that TMA reads through, then wait for the
      // warpgroup's four warps (named barrier 1 + warpgroup; 0 is __syncthreads).
      ptx::fence_proxy_async_shared();
      ptx::named_barrier_sync(1 + warpgroup, ptx::kWarpgroupSize);
      // 3: the warpgroup's first thread stores its 64 rows (per sub-tile), in boxes of box_rows
      // rows, one per panel; TMA clips what lies past M or N. No box that starts past the work's
      // rows: in the masked layout those rows may be the next group's. No wait here: the store
      // runs while the warpgroup starts the next tile.
      if (t == 0) {
        constexpr int kPanelColumns = Tile::kPanelColumns;
        const int box_rows = groups.box_rows;
#pragma unroll
        for (int sub = 0; sub < kSubtiles; ++sub) {
          if (sub < mine.sub_begin || sub >= mine.sub_end) continue;
          const int block0 = (warpgroup + sub * kNumMathWarpgroups) * 64;
          for (int row0 = block0; row0 < block0 + 64 && row0 < mine.rows; row0 += box_rows) {
#pragma unroll
            for (int p = 0; p < BLOCK_N / kPanelColumns; ++p)
              ptx::tma_store_2d(&tensor_map_d, smem_d + (p * BLOCK_M + row0) * kSpan,
                                int32_t(n0_mine + p * kPanelColumns), int32_t(m0 + row0));
          }
        }
        ptx::bulk_commit_group();
      }
      gemm::trace_stamp<kTrace>(args.trace, gemm::kTraceEpilogueEnd, warpgroup, tile_count);
    }
    // The shared tile must stay valid until TMA has read the last tile's rows: wait for that
    // before the CTA may exit.
    if (t == 0) ptx::bulk_wait_group_read<0>();
  }
  // Paired, this CTA's math threads arrive on the partner's empty barriers, and its producer may
  // multicast into the partner's stages, until the last K block. The multicast's bytes have landed
  // once this CTA's math threads are past their last full barrier, and the partner's arrivals once
  // the producer's last round of empty waits is over: that round holds the CTA until then, and
  // every other thread leaves when its work is done (chapter 10).
}

// The launch of one tile's kernel. Tensor maps over all groups: A [M or G * max_m, K], B
// [G * N, K], the A scales [K / 128 or G * K / 128, M or max_m], D [M or G * max_m, N].
template <int BLOCK_M, int BLOCK_N, bool kPaired>
void launch_tile(const GroupedArgs& args, const Config& c, cudaStream_t stream) {
  using Tile = TileConfig<BLOCK_M, BLOCK_N>;
  const gemm::Shape& s = args.shape;
  const int64_t rows = args.layout == Layout::Contiguous ? s.m : int64_t(args.groups) * s.m;
  const int64_t scale_rows = (args.layout == Layout::Contiguous ? 1 : args.groups) * s.k_blocks();
  // A's box: BLOCK_M rows, or c.box_rows with 64-row tiles; D's: c.box_rows (config.hpp).
  const CUtensorMap map_a = gemm::make_tensor_map(
      swizzled_view(rows, s.k, BLOCK_M == 64 ? uint32_t(c.box_rows) : uint32_t(BLOCK_M)), args.a);
  const CUtensorMap map_b =
      gemm::make_tensor_map(swizzled_view(int64_t(args.groups) * s.n, s.k, BLOCK_N), args.b);
  gemm::TensorMapSpec<2> sa_view = scale_a_view(s, BLOCK_M);  // [K / 128][sa_ld(m)], m contiguous
  sa_view.dims[1] = uint64_t(scale_rows);
  const CUtensorMap map_sa = gemm::make_tensor_map(sa_view, args.sa);
  gemm::TensorMapSpec<2> d_view = d_store_view({rows, s.n, s.k}, Tile::kSpan);
  d_view.box[1] = uint32_t(c.box_rows);
  const CUtensorMap map_d = gemm::make_tensor_map(d_view, args.d);
  gemm::GemmArgs dense;  // what chapter 12's kernel took: the shape, scale B, the trace
  dense.shape = s;
  dense.sb = args.sb;
  const GroupParams groups{c.scheduler, args.m_indices, args.masked_m, args.status, c.box_rows};
  gemm::LaunchConfig launch{dim3(c.grid), Tile::kNumThreads, Tile::kSmemBytes + kWorkRingBytes,
                            stream, kPaired ? 2u : 1u};
  auto* kernel = gemm_kernel<BLOCK_M, BLOCK_N, false, kPaired>;
  // Paired, only as many clusters as run at once (chapter 11: a GPC with an odd number of free SMs).
  if constexpr (kPaired) {
    const int fit = gemm::max_active_clusters("chapter 15", kernel, launch);
    if (fit > 0 && fit < c.grid / 2) launch.grid = dim3(2 * fit);
  }
  gemm::launch("chapter 15", kernel, launch, map_a, map_b, map_sa, map_d, dense, groups,
               c.b_evict_first);
}

// launch_tile for tile I of kTiles, compiled in shares as chapter 12's variants are
// (chapters/CMakeLists.txt): declared here for the host code, defined at the end of the file.
template <size_t I>
void launch_variant(const GroupedArgs& args, const Config& c, cudaStream_t stream);

#ifndef GEMM_VARIANT_SHARD

template <size_t... I>
void launch_config(const GroupedArgs& args, const Config& c, cudaStream_t stream,
                   std::index_sequence<I...>) {
  const bool launched =
      ((c.tile == kTiles[I] ? (launch_variant<I>(args, c, stream), true) : false) || ...);
  if (!launched)
    throw gemm::UnsupportedError("chapter 15: no kernel compiled for BLOCK_M " +
                                 std::to_string(c.tile.block_m) + ", BLOCK_N " +
                                 std::to_string(c.tile.block_n));
}

namespace {

bool fits_int32(int64_t x) {
  return x >= 0 && x < (int64_t(1) << 31);
}

// Where the driver says p lives: device or managed memory is what the kernel may read.
std::string where_error(const void* p, const char* name) {
  cudaPointerAttributes attributes{};
  const cudaError_t err = cudaPointerGetAttributes(&attributes, p);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return std::string("chapter 15: cannot tell where ") + name +
           " lives (cudaPointerGetAttributes: " + cudaGetErrorString(err) + ")";
  }
  if (attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged)
    return {};
  return std::string("chapter 15: ") + name +
         " is host memory; the kernel reads it on the GPU (so that a CUDA graph can replay the "
         "launch with new values): copy it to device memory";
}

}  // namespace

std::string argument_error(const GroupedArgs& args) {
  const gemm::Shape& s = args.shape;
  const bool contiguous = args.layout == Layout::Contiguous;
  if (!contiguous && args.layout != Layout::Masked)
    return "chapter 15: the layout must be Layout::Contiguous or Layout::Masked";
  if (args.groups < 1)
    return "chapter 15: groups must be at least 1 (got " + std::to_string(args.groups) + ")";
  if (std::string why = gemm::shape_error(s); !why.empty())
    return "chapter 15: " + why + (contiguous ? "" : " (M here is max_m)");
  if (contiguous && s.m % kAlignment != 0)
    return "chapter 15: the contiguous layout's M (" + std::to_string(s.m) +
           ") must be a multiple of " + std::to_string(kAlignment) +
           ": every group's rows are padded to 128, the tile height the groups align to";
  if (!contiguous && s.m % kMaskedRows != 0)
    return "chapter 15: the masked layout's max_m (" + std::to_string(s.m) +
           ") must be a multiple of " + std::to_string(kMaskedRows) +
           ", the most rows one store of D covers, so that no store reaches the next group's rows";
  if (!contiguous && (args.expected_m < 0 || args.expected_m > s.m))
    return "chapter 15: expected_m (" + std::to_string(args.expected_m) +
           ") must be between 0 (meaning max_m) and max_m (" + std::to_string(s.m) + ")";
  const int64_t rows = contiguous ? s.m : int64_t(args.groups) * s.m;
  if (!fits_int32(rows) || !fits_int32(int64_t(args.groups) * s.n) ||
      !fits_int32(int64_t(args.groups) * s.k_blocks() * s.n_blocks()) ||
      !fits_int32((contiguous ? 1 : int64_t(args.groups)) * s.k_blocks()))
    return "chapter 15: too many groups for 32-bit coordinates: the rows of A and D (" +
           std::to_string(rows) +
           "), of B (groups x N = " + std::to_string(int64_t(args.groups) * s.n) +
           ") and the scale blocks must each stay below 2^31";
  // The pointers, as every chapter checks them, over the grouped tensors' extents.
  const int64_t scale_groups = contiguous ? 1 : args.groups;
  const gemm::Extents e{
      rows * s.k, int64_t(sizeof(float)) * scale_groups * s.k_blocks() * s.sa_ld(),
      int64_t(args.groups) * s.n * s.k,
      int64_t(sizeof(float)) * args.groups * s.n_blocks() * s.k_blocks(), 2 * rows * s.n};
  gemm::GemmArgs dense;
  dense.shape = s;
  dense.a = args.a;
  dense.sa = args.sa;
  dense.b = args.b;
  dense.sb = args.sb;
  dense.d = args.d;
  if (std::string why = gemm::pointer_error(dense,
                                            {.who = "chapter 15",
                                             .align_a = 16,
                                             .align_b = 16,
                                             .align_sa = 16,
                                             .align_sb = 4,
                                             .align_d = 16},
                                            e);
      !why.empty())
    return why;
  if (contiguous && args.m_indices == nullptr)
    return "chapter 15: the contiguous layout needs m_indices (one group index per row of A)";
  if (!contiguous && args.masked_m == nullptr)
    return "chapter 15: the masked layout needs masked_m (one row count per group)";
  // D must not cover what the kernel reads while other CTAs store: the indices, counts, status.
  const auto overlaps_d = [&](const void* p, int64_t bytes) {
    const auto d0 = reinterpret_cast<uintptr_t>(args.d), x0 = reinterpret_cast<uintptr_t>(p);
    return p != nullptr && x0 < d0 + uintptr_t(e.d) && d0 < x0 + uintptr_t(bytes);
  };
  if ((contiguous && overlaps_d(args.m_indices, 4 * s.m)) ||
      (!contiguous && overlaps_d(args.masked_m, 4 * int64_t(args.groups))) ||
      overlaps_d(args.status, 4))
    return "chapter 15: D overlaps m_indices, masked_m or status: the kernel would overwrite what "
           "it reads";
  const auto misaligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 4 != 0; };
  if ((contiguous && misaligned(args.m_indices)) || (!contiguous && misaligned(args.masked_m)) ||
      (args.status != nullptr && misaligned(args.status)))
    return "chapter 15: m_indices, masked_m and status must be 4-byte aligned (int32 words)";
  return {};
}

std::string location_error(const GroupedArgs& args) {
  if (args.layout == Layout::Contiguous) {
    if (std::string why = where_error(args.m_indices, "m_indices"); !why.empty()) return why;
  } else if (std::string why = where_error(args.masked_m, "masked_m"); !why.empty()) {
    return why;
  }
  if (args.status != nullptr) return where_error(args.status, "status");
  return {};
}

namespace {

GroupedShape grouped_shape(const GroupedArgs& args) {
  return {args.layout, args.groups, args.shape, args.expected_m};
}

// The configuration with the environment's overrides: CH15_BLOCK_M, CH15_BLOCK_N, CH15_PAIRS,
// CH15_EVICT_B, CH15_BOX_ROWS, and chapter 09's CH09_GROUP (the contiguous layout's tile order).
Config configured(const GroupedArgs& args, int num_sms) {
  Config c = choose_config(grouped_shape(args), num_sms, std::getenv("CH15_BLOCK_M"),
                           std::getenv("CH15_BLOCK_N"), std::getenv("CH15_PAIRS"));
  if (args.layout == Layout::Contiguous)
    c.scheduler.order_group = ch09::group_from_environment(c.scheduler.order_group, "chapter 15");
  return apply_box_rows_override(apply_evict_b_override(c, std::getenv("CH15_EVICT_B")),
                                 std::getenv("CH15_BOX_ROWS"));
}

}  // namespace

void gemm(const GroupedArgs& args, cudaStream_t stream) {
  if (std::string why = argument_error(args); !why.empty()) throw gemm::UnsupportedError(why);
  if (std::string why = gemm::device_error(); !why.empty())
    throw gemm::UnsupportedError("chapter 15: " + why);
  if (std::string why = location_error(args); !why.empty()) throw gemm::UnsupportedError(why);
  const Config c = configured(args, gemm::multiprocessor_count());
  launch_config(args, c, stream, std::make_index_sequence<kNumTiles>{});
}

std::string status_message(uint32_t bits) {
  std::string text;
  const auto add = [&](uint32_t bit, const char* sentence) {
    if (!(bits & bit)) return;
    if (!text.empty()) text += "; ";
    text += sentence;
  };
  add(kBadGroupIndex,
      "a tile of A (a 128-row half, in a 256-row tile) began with a group index outside [-1, "
      "groups): its rows were not computed or stored");
  add(kBadRowIndex,
      "a row's group index was neither its tile's group nor -1 (groups must start on 128-row "
      "boundaries): the row was stored as zeros");
  add(kBadMaskedM,
      "a masked_m count was outside [0, max_m]: that group was not computed or stored");
  if (bits & ~(kBadGroupIndex | kBadRowIndex | kBadMaskedM)) {
    if (!text.empty()) text += "; ";
    text += "unknown status bits " + std::to_string(bits);
  }
  return text.empty() ? text : "chapter 15: " + text;
}

void check_status(uint32_t* status, cudaStream_t stream) {
  if (status == nullptr) return;
  uint32_t bits = 0;
  CUDA_CHECK(cudaMemcpyAsync(&bits, status, sizeof bits, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  if (bits == 0) return;
  CUDA_CHECK(cudaMemsetAsync(status, 0, sizeof bits, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  throw gemm::Error(status_message(bits));
}

Config configuration(const GroupedArgs& args) {
  return configured(args, gemm::multiprocessor_count_or(gemm::kH100Sms));
}

std::string describe_config(const GroupedArgs& args) {
  const int num_sms = gemm::multiprocessor_count_or(gemm::kH100Sms);
  return describe(grouped_shape(args), configured(args, num_sms)) +
         (num_sms == gemm::kH100Sms ? "" : " (" + std::to_string(num_sms) + " SMs)");
}

#else  // GEMM_VARIANT_SHARD: one share of the tiles, and nothing else.

template <size_t I>
void launch_variant(const GroupedArgs& args, const Config& c, cudaStream_t stream) {
  constexpr Tile t = kTiles[I];
  if constexpr (t == kPairedTile) {
    if (c.scheduler.paired) return launch_tile<t.block_m, t.block_n, true>(args, c, stream);
  }
  launch_tile<t.block_m, t.block_n, false>(args, c, stream);
}

// The share's tiles, compiled by taking their addresses in a table that the explicit
// instantiation below makes the compiler emit.
template <class Indices>
struct VariantShare;
template <size_t... J>
struct VariantShare<std::index_sequence<J...> > {
  static void (*const launches[sizeof...(J)])(const GroupedArgs&, const Config&, cudaStream_t);
};
template <size_t... J>
void (*const VariantShare<std::index_sequence<J...> >::launches[sizeof...(J)])(const GroupedArgs&,
                                                                               const Config&,
                                                                               cudaStream_t) = {
    &launch_variant<J * GEMM_VARIANT_SHARDS + GEMM_VARIANT_SHARD>...};
template struct VariantShare<std::make_index_sequence<
    (kNumTiles - GEMM_VARIANT_SHARD + GEMM_VARIANT_SHARDS - 1) / GEMM_VARIANT_SHARDS> >;

#endif  // GEMM_VARIANT_SHARD

}  // namespace ch15
