// Chapter 11's host-checkable arithmetic: which kernel a shape gets (the configuration heuristic).
// Plain C++ (tests/host_chapter11.cpp); kernel.cu instantiates exactly the variants listed in
// kVariants, and its CTAs find their tiles with chapter 10's cta_tile (cluster.hpp).
//
// The heuristic, in order (every step is a function below, tested on DeepGEMM's 18 shapes):
//
// 1. BLOCK_M: 64 when M <= 64 (one math warpgroup: a 128-row tile would be half padding), 128
//    when M <= 128 (two math warpgroups, chapters 05-09's tile). Above that, 256 (chapter 06's
//    two 64-row sub-tiles per math warpgroup), unless 128 rows fill the waves better by more than
//    ch07::kTallTileMargin (0.1) of efficiency, each height at its own step-2 width (256 rows:
//    96 or 128): chapter 07's choose_tile over this chapter's widths (block_m_for). And 128 rows
//    where their width is 192 and they fill the waves within kWideTileSlack (0.04) as well as 256
//    rows: the 128 x 192 tile, below.
// 2. BLOCK_N from kBlockNChoices: the fewest waves of tiles over the SMs, then the highest
//    efficiency (useful multiply-adds / work of those waves: the last wave's occupancy and the
//    padding past M and N), then the wider tile: chapter 07's rule (ch07::best_block_n), whose
//    offered widths include the small ones. At M = 64 and 128 the small widths are what fill the
//    SMs: 4096 / 32 = 128 tiles, 2112 / 16 = 132 tiles, one wave each. Above M = 128, 128-row
//    tiles may also be 192 wide (kBlockNChoices128).
// 3. Multicast: on A where the tile is 256 x 128, K is 8192 or more and there are 4 or more
//    waves of tiles (multicast_for); off everywhere else. Chapter 10's 2-CTA clusters halve the L2
//    bytes of one operand, but the pair of CTAs waits on the slower of the two at every stage.
//    With the promotion's turnaround as chapter 06 first had it they measured slower than no
//    cluster at every tile this heuristic chooses; once chapter 06 shortened it, multicast on A at
//    256 x 128 gained 2-3% where K is long; once chapter 06 unrolled its K loop by the ring, no
//    cluster was as fast or faster on every shape timed (2026-11-24). Since chapter 06 reads its
//    scales by ld.shared from addresses converted once (2026-11-27), multicast on A is ahead again
//    on the 256 x 128 tile where K is long and the tiles run several waves, and behind on the
//    128 x 192 tile (NOTES.md, "Step 3, the multicast", and its last two sections). The override
//    below still reaches every multicast.
// 4. Stages: as many as fit in the 227 KB of shared memory beside the D tile, at most kMaxStages.
// 5. The order of the (pairs of) tiles: chapter 09's grouped order over the grid of pairs, with
//    the group from ch09::pick_group, windows of as many pairs as run at once
//    (ch10::plan_clusters).
//
// Two overrides from the environment, for measuring the alternatives on one shape (the progression
// benchmark's ablations force them too): CH11_BLOCK_M (64, 128 or 256) replaces step 1, and steps
// 2 and 3 follow for that BLOCK_M; CH11_MULTICAST (off, A or B) replaces step 3.
#pragma once

#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>

#include "chapters/05_warp_specialized_pipeline/pipeline.hpp"
#include "chapters/07_two_scale_b/scale_blocks.hpp"
#include "chapters/09_persistent_scheduler/scheduler.hpp"
#include "chapters/10_tma_multicast/cluster.hpp"
#include "common/check.hpp"
#include "common/host_device.hpp"
#include "common/problem.hpp"

namespace ch11 {

using ch09::TileCoord;
using ch10::Multicast;
using ch10::name;

inline constexpr const auto& kBlockNChoices = ch07::kOfferedBlockN;  // 16 to 160
inline constexpr uint32_t kSmemBudget = 227 * 1024;  // cudaDevAttrMaxSharedMemoryPerBlockOptin
inline constexpr int kMaxStages = 16;

// --- Shared memory ------------------------------------------------------------------------------
//
// Per stage: the A tile, the B tile (fp8, one K block of gemm::kScaleBlock = 128 bytes per row),
// BLOCK_M A scales (fp32), two 8-byte barriers and the two B scales (fp32, copied in by the
// producer since chapter 06); beside the stages, the bf16 D tile of the epilogue (chapter 08).
// kernel.cu asserts its own layout against these.
GEMM_HOST_DEVICE constexpr uint32_t stage_bytes(int block_m, int block_n) {
  return uint32_t(block_m + block_n) * gemm::kScaleBlock + uint32_t(block_m) * 4 + 2 * 8 + 2 * 4;
}
GEMM_HOST_DEVICE constexpr uint32_t d_tile_bytes(int block_m, int block_n) {
  return uint32_t(block_m) * uint32_t(block_n) * 2;
}
GEMM_HOST_DEVICE constexpr int stages_for(int block_m, int block_n) {
  return ch05::stages_for_budget(kSmemBudget, stage_bytes(block_m, block_n),
                                 d_tile_bytes(block_m, block_n), kMaxStages);
}
GEMM_HOST_DEVICE constexpr uint32_t smem_bytes(int block_m, int block_n) {
  return uint32_t(stages_for(block_m, block_n)) * stage_bytes(block_m, block_n) +
         d_tile_bytes(block_m, block_n);
}

// --- The kernels that exist ---------------------------------------------------------------------
//
// One compiled kernel per (BLOCK_M, BLOCK_N, multicast) the heuristic can return, with or without
// its overrides, and no other: tests/host_chapter10.cpp checks both ways (every choice over a
// sweep of shapes and overrides is listed; every listed variant is chosen by some shape). Multicast
// on B at BLOCK_M = 64 only comes with CH11_BLOCK_M = 64 (the heuristic's M <= 64 is one row of
// tiles), BLOCK_M = 256 at BLOCK_N 96 or 128 only, and BLOCK_N = 192 at BLOCK_M = 128 only.
struct Variant {
  int block_m, block_n;
  Multicast multicast;
};
GEMM_HOST_DEVICE constexpr bool operator==(Variant x, Variant y) {
  return x.block_m == y.block_m && x.block_n == y.block_n && x.multicast == y.multicast;
}

#define CH11_VARIANTS_FOR(bm, bn)                                            \
  Variant{bm, bn, Multicast::None}, Variant{bm, bn, Multicast::A}, Variant { \
    bm, bn, Multicast::B                                                     \
  }
#define CH11_VARIANTS_FOR_N(bn) CH11_VARIANTS_FOR(64, bn), CH11_VARIANTS_FOR(128, bn)
inline constexpr Variant kVariants[] = {
    CH11_VARIANTS_FOR_N(16),     CH11_VARIANTS_FOR_N(32),    CH11_VARIANTS_FOR_N(64),
    CH11_VARIANTS_FOR_N(96),     CH11_VARIANTS_FOR_N(112),   CH11_VARIANTS_FOR_N(128),
    CH11_VARIANTS_FOR_N(144),    CH11_VARIANTS_FOR_N(160),   CH11_VARIANTS_FOR(256, 96),
    CH11_VARIANTS_FOR(256, 128), CH11_VARIANTS_FOR(128, 192)};
#undef CH11_VARIANTS_FOR_N
#undef CH11_VARIANTS_FOR
inline constexpr int kNumVariants = int(sizeof(kVariants) / sizeof(kVariants[0]));

// --- The heuristic ------------------------------------------------------------------------------

// Chapter 10's clusters (the tiles, the scheduler's grid of pairs, its group, the grid, and the
// multicast, which variant.multicast repeats) and what this chapter adds to them.
struct Config : ch10::Clusters {
  Variant variant{128, 128, Multicast::None};
  int stages = 0;
  uint32_t smem_bytes = 0;
  int64_t waves = 0;      // ceil(tiles / num_sms)
  double efficiency = 0;  // ch07::waves' efficiency
};

// Step 2, BLOCK_N: chapter 07's rule, ch07::best_block_n, over the same widths (kBlockNChoices).
// At BLOCK_M = 256 the same rule over 96 and 128: two sub-tiles' accumulators, 2 x BLOCK_N / 2
// registers for final_acc and BLOCK_N / 2 for acc, fit the math threads' 232 registers up to
// BLOCK_N = 128 (DeepGEMM's limit too); 96 and 128 are what the rule over every width up to 128
// picks at M = 4096.
// At BLOCK_M = 128 above M = 128, chapter 07's widths and 192: 96 + 96 registers of accumulators
// per math thread, which fit the 232 (ptxas: no spills in the math warpgroups; chapter 07 stops
// at 160 for its own kernels). Each warpgroup's wgmma is then 64 x 192, twice as wide as the
// 256 x 96 tile's 64 x 96 for the same 24576 outputs a tile. At M <= 128 the widths stay chapter
// 07's: there the rule wants the most tiles for one wave, and 192 only adds a choice it would take
// for fewer waves at the same occupancy, which we did not measure.
inline constexpr int kBlockNChoices256[] = {96, 128};
inline constexpr int kBlockNChoices128[] = {16, 32, 64, 96, 112, 128, 144, 160, 192};
constexpr int block_n_for(const gemm::Shape& s, int block_m, int num_sms) {
  if (block_m == 256) return ch07::best_block_n_among(kBlockNChoices256, s, 256, num_sms);
  if (block_m == 128 && s.m > 128)
    return ch07::best_block_n_among(kBlockNChoices128, s, 128, num_sms);
  return ch07::best_block_n(s, block_m, num_sms);
}

// The 128 x 192 tile unless the 256-row tile fills the waves better by more than kWideTileSlack.
// Measured on the H100 (2026-11-26; NOTES.md, "The 128 x 192 tile"): at the same efficiency as the
// 256-row tile it ran 1% to 11% faster at five shapes (4096 x 2112 x 7168: 1329 TFLOPS against
// 1202) and level at one; 0.013 and 0.021 of efficiency behind, it still won (grouped, chapter 15:
// 33920 x 7168 x 3072 and 33920 x 4096 x 4096); 0.065 behind it lost by 2.5% to 6% (4096 x 7168 x
// 2048 and x 16384), 0.108 behind by 10% (4096 x 4096 x 7168).
inline constexpr double kWideTileSlack = 0.04;

// Step 1, BLOCK_M: 64 for a single row of 64, 128 up to M = 128, and above that chapter 07's rule
// (ch07::choose_tile) over this chapter's widths: 256 rows (chapter 06's sub-tiles) unless the
// best 128-row width fills the last wave better by more than ch07::kTallTileMargin of efficiency,
// or that width is 192 and fills it within kWideTileSlack as well.
constexpr int block_m_for(const gemm::Shape& s, int num_sms = ch09::kH100Sms) {
  if (s.m <= 64) return 64;
  if (s.m <= 128) return 128;
  const int wide_n = block_n_for(s, 128, num_sms);
  const double wide = ch07::waves(s, 128, wide_n, num_sms).efficiency;
  const double tall = ch07::waves(s, 256, block_n_for(s, 256, num_sms), num_sms).efficiency;
  if (wide > tall + ch07::kTallTileMargin) return 128;
  return wide_n == 192 && wide >= tall - kWideTileSlack ? 128 : 256;
}

// The rest of the configuration, for a given variant: stages, and chapter 10's clusters (the
// scheduler's grid of pairs, its group, the grid). Host only. Throws UnsupportedError for a
// multicast the shape's tiles do not pair up for.
inline Config make_config(const gemm::Shape& s, Variant v, int num_sms = ch09::kH100Sms) {
  Config c;
  static_cast<ch10::Clusters&>(c) =
      ch10::plan_clusters(s, v.block_m, v.block_n, v.multicast, num_sms, "chapter 11");
  c.variant = v;
  c.stages = stages_for(v.block_m, v.block_n);
  c.smem_bytes = smem_bytes(v.block_m, v.block_n);
  const ch07::WaveInfo w = ch07::waves(s, v.block_m, v.block_n, num_sms);
  c.waves = w.waves;
  c.efficiency = w.efficiency;
  return c;
}

// Step 3: multicast on A where the tile is 256 x 128, K holds kMulticastAMinK or more and the
// tiles make kMulticastAMinWaves waves or more, if they pair up along N; else no cluster. Measured
// on two H100s (2026-11-27; NOTES.md, "Multicast of A, the rule"): at 4096 x 7168 x 16384 +0.9%
// to +1.5%, at the other long-K shapes of that tile with 4 or more waves -0.1% to +1.5%; at K =
// 4096, with 2 waves, and on the 128 x 192 tile, level or behind (to 4.8%).
inline constexpr int64_t kMulticastAMinK = 8192;
inline constexpr int64_t kMulticastAMinWaves = 4;
constexpr Multicast multicast_for(const gemm::Shape& s, int block_m, int block_n,
                                  int num_sms = ch09::kH100Sms) {
  if (block_m != 256 || block_n != 128 || s.k < kMulticastAMinK) return Multicast::None;
  const int tiles_m = int((s.m + block_m - 1) / block_m);
  const int tiles_n = int((s.n + block_n - 1) / block_n);
  if (!ch10::pairs_up(tiles_m, tiles_n, Multicast::A, num_sms)) return Multicast::None;
  return ch07::waves(s, block_m, block_n, num_sms).waves >= kMulticastAMinWaves ? Multicast::A
                                                                                : Multicast::None;
}

// Steps 2 and 3 for a given BLOCK_M, then make_config.
inline Config config_for_block_m(const gemm::Shape& s, int block_m, int num_sms) {
  const int block_n = block_n_for(s, block_m, num_sms);
  return make_config(s, {block_m, block_n, multicast_for(s, block_m, block_n, num_sms)}, num_sms);
}

// The heuristic: steps 1 to 3 choose the variant, make_config the rest.
inline Config choose_config(const gemm::Shape& s, int num_sms = ch09::kH100Sms) {
  return config_for_block_m(s, block_m_for(s, num_sms), num_sms);
}

// CH11_BLOCK_M, the environment's override of step 1: "64", "128" or "256"; nullptr or "" leaves
// the heuristic's choice. Steps 2 and 3 are then taken for that BLOCK_M. Anything else is refused
// with a sentence.
inline Config apply_block_m_override(const gemm::Shape& s, const Config& chosen, const char* text,
                                     int num_sms = ch09::kH100Sms) {
  if (text == nullptr || *text == '\0') return chosen;
  const std::string value = text;
  if (value != "64" && value != "128" && value != "256")
    throw gemm::UnsupportedError("chapter 11: CH11_BLOCK_M must be 64, 128 or 256 (got \"" + value +
                                 "\")");
  return config_for_block_m(s, std::stoi(value), num_sms);
}

// CH11_MULTICAST, the environment's override of step 3 (for measuring what multicast is worth on
// one shape): "off", "A" or "B"; nullptr or "" leaves the heuristic's choice. Anything else, and a
// multicast the shape's tiles cannot pair for (make_config), is refused with a sentence.
inline Config apply_multicast_override(const gemm::Shape& s, const Config& chosen, const char* text,
                                       int num_sms = ch09::kH100Sms) {
  if (text == nullptr || *text == '\0') return chosen;
  const Multicast m =
      ch10::multicast_override(text, chosen.variant.multicast, "chapter 11", "CH11_MULTICAST");
  return make_config(s, {chosen.variant.block_m, chosen.variant.block_n, m}, num_sms);
}

// One line per field, for --print-config.
inline std::string describe(const gemm::Shape& s, const Config& c) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "shape %s: BLOCK_M %d, BLOCK_N %d, multicast %s (cluster of %d), %d stages "
                "(%u bytes of shared memory), %d x %d tiles, %lld waves of SMs (efficiency "
                "%.3f), scheduler over %d x %d %s, group %d, %d CTAs",
                s.str().c_str(), c.variant.block_m, c.variant.block_n, name(c.variant.multicast),
                c.cluster_size, c.stages, c.smem_bytes, c.tiles_m, c.tiles_n,
                static_cast<long long>(c.waves), c.efficiency, c.pairs_m, c.pairs_n,
                c.cluster_size == 1 ? "tiles" : "pairs", c.group, c.grid);
  return buf;
}

}  // namespace ch11
