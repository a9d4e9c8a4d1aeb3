// Chapter 12's host-checkable arithmetic: split-K across a cluster. Plain C++
// (tests/host_chapter12.cpp); kernel.cu instantiates exactly the variants in kVariants and takes
// each CTA's slice of K from k_slice.
//
// At M = 64 and 128 there are few tiles: one row of them, N / BLOCK_N. Chapter 11 fills the SMs by
// narrowing the tiles (132 tiles of 16 columns at N = 2112), and a narrow tile makes every SM read
// the whole of A and all of K for a sliver of B. Here a cluster of `split` CTAs shares one output
// tile instead: CTA r of the cluster runs the K blocks [k_slice(r).begin, k_slice(r).end), and the
// cluster adds its partial sums through distributed shared memory (kernel.cu). A wide tile then
// still gives every SM work, and each SM moves 1 / split of the tile's K.
//
// The heuristic, in order (every step is a function below, tested on DeepGEMM's 18 shapes):
//
// 1. Chapter 11's configuration (ch11::choose_config): the tile, its waves, its multicast.
// 2. A split only where chapter 11's configuration leaves more than half of the SMs without a tile
//    (its grid at most num_sms * kSplitBelowOccupancy), or where its tile is narrower than
//    kSplitBelowBlockN columns. Measured on the H100 (NOTES.md,
//    "The split, measured again (2026-11-24)"): where chapter 11 runs 16 to 64 CTAs, the split
//    gains 1.1x to 1.9x (64 x 512 x 16384: 23.3 us to 12.6); where it runs 16-column tiles on 132
//    SMs (N = 2112), a split of 2 over 32-column tiles on the same 132 SMs gains 3% to 5%; where
//    chapter 11's tiles are 32 to 64 wide on 112 to 128 SMs, every split ties or loses
//    (128 x 4096 x 7168: 355 TFLOPS against 362), its exchange costing about 1 to 1.5 us per tile.
// 3. The split candidates: BLOCK_M 64 (M <= 64) or 128, every compiled (BLOCK_N, split) with at
//    least kMinSplitStages stages, whose tiles fit in one wave of clusters (tiles <= the clusters
//    of that size that run at once, ClusterFit), that keep at least as many SMs at work as chapter
//    11 (a split on half the SMs lost: split 3 over 66 CTAs at 128 x 2112 x 7168, 233 against 254)
//    and whose split leaves every CTA at least kMinSliceKBlocks K blocks (shorter slices lose: 64 x
//    1024 x 4096, 9.5 us unsplit, 9.8 at split 8 with 4 K blocks a slice, 9.2 at split 4 with 8).
// 4. The candidate, chapter 11's configuration included, with the fewest bytes per SM: waves of
//    clusters x (BLOCK_M + BLOCK_N) x 128 bytes x the K blocks of a slice (bytes_per_sm). On a tie
//    chapter 11's configuration, then the narrower tile, then the smaller split.
//
// One override from the environment, for measuring the alternatives on one shape (the
// benchmark's ablations force it too): CH12_SPLIT (1 to 8). 1 is chapter 11's configuration; more
// takes the compiled width with that split and the fewest bytes per SM, whatever its waves.
//
// The chapter's second change, B's L2 policy: with one row of tiles (tiles_m == 1, every shape
// with M <= BLOCK_M), each byte of B is loaded by one CTA, once, and nothing reads it again: the
// producer loads B with L2's evict_first policy (b_evict_first). With more rows, the tiles of a
// column of tiles read the same B, and a line of it is worth keeping: the default policy, as in
// chapter 11. Measured on the H100 (NOTES.md, "B read once: the measurements (2026-11-25)"):
// after the benchmark's flush, which leaves L2 full of dirty lines, 4% to 15% less time at ten of
// the twelve M = 64 and 128 shapes; after a flush that leaves it clean, no change. Its override:
// CH12_EVICT_B (first or normal).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "chapters/05_warp_specialized_pipeline/pipeline.hpp"
#include "chapters/11_configuration/config.hpp"
#include "common/check.hpp"
#include "common/host_device.hpp"
#include "common/problem.hpp"

namespace ch12 {

using ch10::Multicast;
using ch11::kMaxStages;
using ch11::kSmemBudget;

// The cluster sizes a launch may use without cudaFuncAttributeNonPortableClusterSizeAllowed (CUDA
// C++ Programming Guide, "Thread Block Clusters": "a maximum of 8 thread blocks in a cluster is
// supported as a portable cluster size").
inline constexpr int kMaxSplit = 8;

// --- The slices of K ----------------------------------------------------------------------------
//
// CTA `rank` of a cluster of `split` takes the K blocks [begin, end): the blocks dealt out as
// evenly as they go, the first num_k_blocks % split CTAs one more. A CTA may get none (K shorter
// than the split: CH12_SPLIT forces that); it then contributes zeros.
struct KSlice {
  int begin = 0, end = 0;
};
GEMM_HOST_DEVICE constexpr KSlice k_slice(int num_k_blocks, int split, int rank) {
  const int base = num_k_blocks / split, extra = num_k_blocks % split;
  const int begin = rank * base + (rank < extra ? rank : extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

// --- The reduction's share of the tile -----------------------------------------------------------
//
// CTA r reduces and stores the columns [r * BLOCK_N / split, (r + 1) * BLOCK_N / split) of the
// tile: whole pairs of 8-column groups, which is what one stmatrix.x4 writes. So BLOCK_N / 16 must
// be a multiple of the split.
GEMM_HOST_DEVICE constexpr bool splits_evenly(int block_n, int split) {
  return split >= 1 && block_n % 16 == 0 && (block_n / 16) % split == 0;
}
// The 8-column groups each CTA reduces, and which CTA reduces group g.
GEMM_HOST_DEVICE constexpr int groups_per_rank(int block_n, int split) {
  return block_n / 8 / split;
}
GEMM_HOST_DEVICE constexpr int reducing_rank(int group, int block_n, int split) {
  return group / groups_per_rank(block_n, split);
}

// --- Shared memory ------------------------------------------------------------------------------
//
// Chapter 11's stages and D tile, plus with a split the partial sums (BLOCK_M x BLOCK_N fp32, in
// the accumulators' own order, 16 bytes per 8-column group per thread) and two barriers: "partials
// written" and "partials read".
GEMM_HOST_DEVICE constexpr uint32_t partial_bytes(int block_m, int block_n, int split) {
  return split > 1 ? uint32_t(block_m) * uint32_t(block_n) * 4 + 16 : 0;
}
GEMM_HOST_DEVICE constexpr int stages_for(int block_m, int block_n, int split) {
  return ch05::stages_for_budget(
      kSmemBudget, ch11::stage_bytes(block_m, block_n),
      ch11::d_tile_bytes(block_m, block_n) + partial_bytes(block_m, block_n, split), kMaxStages);
}
GEMM_HOST_DEVICE constexpr uint32_t smem_bytes(int block_m, int block_n, int split) {
  return uint32_t(stages_for(block_m, block_n, split)) * ch11::stage_bytes(block_m, block_n) +
         ch11::d_tile_bytes(block_m, block_n) + partial_bytes(block_m, block_n, split);
}

// --- The kernels that exist ---------------------------------------------------------------------
//
// Chapter 11's variants (split 1), and the split ones: BLOCK_M 64 and 128, the widths in
// kSplitBlockN, every split from 2 to kMaxSplit that divides BLOCK_N / 16. The 16-wide tiles have
// no split variant: splitting K is the alternative to them. tests/host_chapter12.cpp checks that
// every choice has its kernel and that every split variant is chosen for some shape.
struct Variant {
  int block_m, block_n;
  Multicast multicast;
  int split;
};
GEMM_HOST_DEVICE constexpr bool operator==(Variant x, Variant y) {
  return x.block_m == y.block_m && x.block_n == y.block_n && x.multicast == y.multicast &&
         x.split == y.split;
}

inline constexpr int kSplitBlockN[] = {32, 64, 96, 128, 160};
// Step 2 and 3's limits (measured: NOTES.md, "The configuration: the rule with its measurements"):
// chapter 11's grid at most this share of the SMs, or its tile narrower than this; a ring of at
// least this many stages (128 x 160 has 2, 128 x 128 4: at 128 x 2112 x 7168 the 96-wide tile of 5
// stages ran 218 TFLOPS, the 128-wide 211, the 160-wide 178); slices of at least this many K
// blocks.
inline constexpr double kSplitBelowOccupancy = 0.5;
inline constexpr int kSplitBelowBlockN = 32;
inline constexpr int kMinSplitStages = 5;
inline constexpr int kMinSliceKBlocks = 8;

#define CH12_SPLITS_FOR(bm)                                                                 \
  Variant{bm, 32, Multicast::None, 2}, Variant{bm, 64, Multicast::None, 2},                 \
      Variant{bm, 64, Multicast::None, 4}, Variant{bm, 96, Multicast::None, 2},             \
      Variant{bm, 96, Multicast::None, 3}, Variant{bm, 96, Multicast::None, 6},             \
      Variant{bm, 128, Multicast::None, 2}, Variant{bm, 128, Multicast::None, 4},           \
      Variant{bm, 128, Multicast::None, 8}, Variant{bm, 160, Multicast::None, 2}, Variant { \
    bm, 160, Multicast::None, 5                                                             \
  }
inline constexpr Variant kSplitVariants[] = {CH12_SPLITS_FOR(64), CH12_SPLITS_FOR(128)};
#undef CH12_SPLITS_FOR
inline constexpr int kNumSplitVariants = int(sizeof(kSplitVariants) / sizeof(kSplitVariants[0]));
inline constexpr int kNumVariants = ch11::kNumVariants + kNumSplitVariants;

// Variant i of all: chapter 11's first (split 1), then the split ones.
constexpr Variant variant_at(int i) {
  if (i < ch11::kNumVariants) {
    const ch11::Variant v = ch11::kVariants[i];
    return {v.block_m, v.block_n, v.multicast, 1};
  }
  return kSplitVariants[i - ch11::kNumVariants];
}
constexpr bool compiled(const Variant& v) {
  for (int i = 0; i < kNumVariants; ++i)
    if (variant_at(i) == v) return true;
  return false;
}

// --- Clusters that run at once ------------------------------------------------------------------
//
// A cluster's CTAs run on one GPC, so how many clusters of s CTAs (one per SM) run at once depends
// on how the SMs are spread over the GPCs, not only on their count: the launch asks the driver
// (cudaOccupancyMaxActiveClusters). for_sms is the count if the SMs could be grouped freely, what
// the host tests use for other GPUs; kH100ClusterFit is what the driver answered on our H100.
struct ClusterFit {
  int clusters[kMaxSplit + 1] = {};  // clusters[s]: clusters of s CTAs at once; [1]: the SMs
  static constexpr ClusterFit for_sms(int num_sms) {
    ClusterFit f;
    for (int s = 1; s <= kMaxSplit; ++s) f.clusters[s] = num_sms / s;
    return f;
  }
};
// cudaOccupancyMaxActiveClusters on our H100 SXM (132 SMs; one CTA of 256 or 384 threads and 200
// KB of shared memory per SM), 2026-11-23: sizes 3 to 8 fit fewer clusters than 132 / s, because
// a cluster must fit in one GPC.
inline constexpr ClusterFit kH100ClusterFit = {{0, 132, 66, 39, 30, 22, 17, 15, 15}};

// --- The heuristic ------------------------------------------------------------------------------

// Chapter 11's configuration and the split. The clusters' fields (ch10::Clusters) are those of the
// split's clusters: cluster_size = split, the scheduler over tiles, clusters = the tiles, or as
// many as run at once.
struct Config : ch11::Config {
  int split = 1;
  int k_blocks_per_slice = 0;  // the longest slice
  double bytes_per_sm = 0;     // step 3's measure
  bool b_evict_first = false;  // B loaded with L2's evict_first policy
};

// Each byte of B is loaded once, by one CTA, where there is one row of tiles.
constexpr bool reads_b_once(int tiles_m) {
  return tiles_m == 1;
}

inline Variant variant_of(const Config& c) {
  return {c.variant.block_m, c.variant.block_n, c.variant.multicast, c.split};
}

// Step 4's measure: waves of clusters x the bytes of A and B one CTA loads for its slice.
inline double bytes_per_sm(const gemm::Shape& s, int block_m, int block_n, int split,
                           int64_t waves) {
  const int num_k_blocks = int(s.k / gemm::kScaleBlock);
  const int slice = k_slice(num_k_blocks, split, 0).end;  // the first slice is the longest
  return double(waves) * double(block_m + block_n) * gemm::kScaleBlock * slice;
}

// The configuration for a given variant. Host only. Throws UnsupportedError for a multicast the
// shape's tiles do not pair up for (chapter 11's make_config), or a split without a kernel.
inline Config make_config(const gemm::Shape& s, Variant v, int num_sms = ch09::kH100Sms,
                          const ClusterFit& fit = kH100ClusterFit) {
  if (!compiled(v))
    throw gemm::UnsupportedError("chapter 12: no kernel compiled for BLOCK_M " +
                                 std::to_string(v.block_m) + ", BLOCK_N " +
                                 std::to_string(v.block_n) + ", split " + std::to_string(v.split));
  Config c;
  static_cast<ch11::Config&>(c) =
      ch11::make_config(s, {v.block_m, v.block_n, v.multicast}, num_sms);
  c.split = v.split;
  c.stages = stages_for(v.block_m, v.block_n, v.split);
  c.smem_bytes = smem_bytes(v.block_m, v.block_n, v.split);
  const int num_k_blocks = int(s.k / gemm::kScaleBlock);
  c.k_blocks_per_slice = k_slice(num_k_blocks, v.split, 0).end;
  if (v.split > 1) {
    // The split's clusters: every CTA of a cluster on the same tile, clusters walking the tiles.
    const int running = fit.clusters[v.split];
    if (running < 1)
      throw gemm::UnsupportedError("chapter 12: no cluster of " + std::to_string(v.split) +
                                   " CTAs fits on this GPU (" + std::to_string(num_sms) + " SMs)");
    c.cluster_size = v.split;
    c.group = ch09::cached_group(c.tiles_m, c.tiles_n, v.block_m, v.block_n, running);
    c.clusters = ch09::persistent_grid(c.tiles_m * c.tiles_n, running);
    c.grid = c.clusters * c.split;
    c.waves = (int64_t(c.tiles_m) * c.tiles_n + running - 1) / running;
  }
  c.bytes_per_sm = bytes_per_sm(s, v.block_m, v.block_n, v.split, c.waves);
  c.b_evict_first = reads_b_once(c.tiles_m);
  return c;
}

// Step 3's BLOCK_M.
constexpr int split_block_m(const gemm::Shape& s) {
  return s.m <= 64 ? 64 : 128;
}

// Step 1: chapter 11's configuration, split 1.
inline Config chapter11_config(const gemm::Shape& s, int num_sms, const ClusterFit& fit) {
  const ch11::Variant v = ch11::choose_config(s, num_sms).variant;
  return make_config(s, {v.block_m, v.block_n, v.multicast, 1}, num_sms, fit);
}

// Steps 1 to 4.
inline Config choose_config(const gemm::Shape& s, int num_sms = ch09::kH100Sms,
                            const ClusterFit& fit = kH100ClusterFit) {
  Config best = chapter11_config(s, num_sms, fit);
  const int chapter11_grid = best.grid;
  if (best.grid > num_sms * kSplitBelowOccupancy && best.variant.block_n >= kSplitBelowBlockN)
    return best;
  const int num_k_blocks = int(s.k / gemm::kScaleBlock);
  const int block_m = split_block_m(s);
  const int64_t tiles_m = (s.m + block_m - 1) / block_m;
  for (const Variant& v : kSplitVariants) {
    if (v.block_m != block_m || num_k_blocks / v.split < kMinSliceKBlocks) continue;
    if (stages_for(v.block_m, v.block_n, v.split) < kMinSplitStages) continue;
    const int64_t tiles = tiles_m * ((s.n + v.block_n - 1) / v.block_n);
    if (tiles > fit.clusters[v.split]) continue;     // more than one wave of clusters
    if (tiles * v.split < chapter11_grid) continue;  // fewer SMs at work than chapter 11
    const Config c = make_config(s, v, num_sms, fit);
    if (c.bytes_per_sm < best.bytes_per_sm) best = c;
  }
  return best;
}

// CH12_SPLIT, the environment's override: "1" to "8"; nullptr or "" leaves the heuristic's
// choice. 1 is chapter 11's configuration; more, the compiled width with that split and the fewest
// bytes per SM at split_block_m. Anything else is refused with a sentence.
inline Config apply_split_override(const gemm::Shape& s, const Config& chosen, const char* text,
                                   int num_sms = ch09::kH100Sms,
                                   const ClusterFit& fit = kH100ClusterFit) {
  if (text == nullptr || *text == '\0') return chosen;
  const std::string value = text;
  if (value.size() != 1 || value[0] < '1' || value[0] > '0' + kMaxSplit)
    throw gemm::UnsupportedError("chapter 12: CH12_SPLIT must be 1 to " +
                                 std::to_string(kMaxSplit) + " (got \"" + value + "\")");
  const int split = value[0] - '0';
  if (split == 1) return chapter11_config(s, num_sms, fit);
  bool found = false;
  Config best;
  for (const Variant& v : kSplitVariants) {
    if (v.block_m != split_block_m(s) || v.split != split) continue;
    const Config c = make_config(s, v, num_sms, fit);
    if (!found || c.bytes_per_sm < best.bytes_per_sm) best = c, found = true;
  }
  if (!found)
    throw gemm::UnsupportedError("chapter 12: CH12_SPLIT=" + value +
                                 ": no kernel is compiled for a split of " + value +
                                 " (the splits: 2, 3, 4, 5, 6, 8)");
  return best;
}

// An override of B's L2 policy as text: nothing for nullptr or "", true for "first", false for
// "normal"; anything else is refused with a sentence naming `who` and `variable`. Chapter 15's
// CH15_EVICT_B reads the same way.
inline std::optional<bool> parse_evict_b(const char* text, const char* who, const char* variable) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  const std::string value = text;
  if (value != "first" && value != "normal")
    throw gemm::UnsupportedError(std::string(who) + ": " + variable +
                                 " must be first or normal (got \"" + value + "\")");
  return value == "first";
}

// CH12_EVICT_B, the environment's override of B's L2 policy: "first" or "normal"; nullptr or ""
// leaves the rule's choice (reads_b_once). Anything else is refused with a sentence.
inline Config apply_evict_b_override(const Config& chosen, const char* text) {
  const std::optional<bool> first = parse_evict_b(text, "chapter 12", "CH12_EVICT_B");
  if (!first) return chosen;
  Config c = chosen;
  c.b_evict_first = *first;
  return c;
}

// One line per field, for --print-config: chapter 11's, with the split and B's L2 policy.
inline std::string describe(const gemm::Shape& s, const Config& c) {
  char buf[640];
  std::snprintf(buf, sizeof buf,
                "shape %s: BLOCK_M %d, BLOCK_N %d, multicast %s, split %d (cluster of %d, %d K "
                "blocks per slice), %d stages (%u bytes of shared memory), %d x %d tiles, %lld "
                "waves of clusters, %.0f KB per SM, scheduler over %d x %d %s, group %d, %d CTAs, "
                "B loaded evict_%s",
                s.str().c_str(), c.variant.block_m, c.variant.block_n,
                ch10::name(c.variant.multicast), c.split, c.cluster_size, c.k_blocks_per_slice,
                c.stages, c.smem_bytes, c.tiles_m, c.tiles_n, static_cast<long long>(c.waves),
                c.bytes_per_sm / 1024, c.pairs_m, c.pairs_n,
                c.variant.multicast == Multicast::None ? "tiles" : "pairs", c.group, c.grid,
                c.b_evict_first ? "first" : "normal");
  return buf;
}

}  // namespace ch12
