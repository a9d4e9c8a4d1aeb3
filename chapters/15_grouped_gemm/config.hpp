// Chapter 15's configuration: which of chapter 12's tiles a grouped problem runs, and the
// scheduler's parameters. Plain C++ (tests/host_chapter15.cpp).
//
// The grouped kernels are chapter 12's without its split (a group of a few rows is one row of
// tiles, and there are G of them to fill the SMs), and without its clusters except one kind: pairs
// of 128 x 192 tiles of one group sharing B (scheduler.hpp), where they measured faster (pairs_for).
// The rule is chapter 11's, asked about the dense problem the groups add up to:
// - contiguous: the dense M x N x K (all rows, padding included): BLOCK_M 256 or 128 by chapter
//   11's block_m_for, BLOCK_N by its block_n_for;
// - masked: BLOCK_M from the rows a group is expected to have (expected_m: 64 up to 64 rows, 128 up
//   to 128), then BLOCK_N by the rule over G x (expected_m rounded up to BLOCK_M) rows, the tiles all
//   groups together give the SMs (with 64-row tiles, widths up to 128). Above 128 rows the tile with
//   the least expected time (masked_choice): the counts are on the device, so the rounds of tiles are
//   averaged over counts drawn around expected_m, each tile's time measured per unit of its area.
// The order of the tiles: contiguous, chapter 09's over the dense grid (pick_group); masked, group
// by group, M fastest (scheduler.hpp). B is loaded with evict_first (chapter 12) where every group
// is expected to be one 64-row tile: then B is a stream, each tile read once.
// The boxes: masked with 64-row tiles, A and D move in boxes of 32 rows, so that a group of a few
// rows loads and stores one box where a 64-row box was mostly rows past its count (box_rows_for).
// Overrides: CH15_BLOCK_M (64, 128 or 256), CH15_BLOCK_N (one of chapter 07's widths; with 128
// rows also 192; with 256 rows, 96 or 128), CH15_EVICT_B (first or normal), CH15_PAIRS (on or
// off), CH15_BOX_ROWS (32 or 64), and at the launch chapter 09's CH09_GROUP (the contiguous tile
// order).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>

#include "chapters/11_configuration/config.hpp"
#include "chapters/12_split_k/config.hpp"
#include "chapters/15_grouped_gemm/scheduler.hpp"
#include "common/check.hpp"
#include "common/problem.hpp"

namespace ch15 {

// The kernels that exist: chapter 11's tiles without a cluster.
struct Tile {
  int block_m, block_n;
};
GEMM_HOST_DEVICE constexpr bool operator==(Tile x, Tile y) {
  return x.block_m == y.block_m && x.block_n == y.block_n;
}
#define CH15_TILES_FOR_N(bn) \
  Tile{64, bn}, Tile {       \
    128, bn                  \
  }
inline constexpr Tile kTiles[] = {
    CH15_TILES_FOR_N(16),  CH15_TILES_FOR_N(32),  CH15_TILES_FOR_N(64),  CH15_TILES_FOR_N(96),
    CH15_TILES_FOR_N(112), CH15_TILES_FOR_N(128), CH15_TILES_FOR_N(144), CH15_TILES_FOR_N(160),
    Tile{256, 96},         Tile{256, 128},        Tile{128, 192}};
#undef CH15_TILES_FOR_N
inline constexpr int kNumTiles = int(sizeof(kTiles) / sizeof(kTiles[0]));
constexpr bool compiled(Tile t) {
  for (const Tile& x : kTiles)
    if (x == t) return true;
  return false;
}

// The problem as the configuration sees it (GroupedArgs without the pointers).
struct GroupedShape {
  Layout layout = Layout::Contiguous;
  int groups = 1;
  gemm::Shape shape;       // m: contiguous M, or masked max_m
  int64_t expected_m = 0;  // masked; 0 means max_m
  int64_t expected() const { return expected_m > 0 ? expected_m : shape.m; }
};

// The one tile that runs in pairs sharing B: DeepGEMM 2.6.1's grouped tile (NOTES.md, section 10),
// the height of the contiguous layout's alignment, so that a pair's two m-blocks each begin a tile
// of one group.
inline constexpr Tile kPairedTile{128, 192};

struct Config {
  Tile tile{128, 128};
  int stages = 0;
  uint32_t smem_bytes = 0;
  SchedulerParams scheduler;
  int grid = 0;  // persistent CTAs (chapter 09's persistent_grid)
  bool b_evict_first = false;
  // The rows of D's store box, and of A's load box with 64-row tiles (larger tiles load A in one
  // box of BLOCK_M rows): 64, or 32 (a 64-row block then moves as one or two boxes, the second only
  // where the work has rows past its first 32).
  int box_rows = 64;
};

// The dense problem the rule is asked about.
inline gemm::Shape dense_equivalent(const GroupedShape& g, int block_m) {
  if (g.layout == Layout::Contiguous) return g.shape;
  const int64_t rows = (g.expected() + block_m - 1) / block_m * block_m;
  return {int64_t(g.groups) * rows, g.shape.n, g.shape.k};
}

// Masked above 128 expected rows: the tile with the least expected time. A group's count is known
// only on the device, and the tiles are ceil(count / BLOCK_M) x tiles_n per group, dealt to the SMs
// in rounds: where the expected count lies near a whole number of rounds, a rule that reads only
// expected_m (chapter 11's, on dense_equivalent) is a coin toss, and measured 10% to 40% off the
// best tile on such shapes (NOTES.md, section 20). So each candidate's rounds are averaged over
// kMaskedDraws draws of the counts, each group's uniform in [0.7, 1.3] x expected_m (the spread
// DeepGEMM's tests and this benchmark draw), and weighed by what a round of that tile costs:
// `cost` below, the time per unit of tile area (BLOCK_M x BLOCK_N x K) fitted to 192 timings on an
// H100 (24 random masked shapes, every candidate; NOTES.md, section 25), relative to 128 x 192. It
// falls with the width: wider tiles read fewer bytes and promote less per multiply-add. The
// narrower tiles (16 to 64 wide, for a few tiles spread over more SMs) have no measured cost, so
// where chapter 11's rule picks one of them, its choice stands (masked_choice).
struct MaskedCandidate {
  Tile tile;
  double cost;
};
inline constexpr MaskedCandidate kMaskedCandidates[] = {
    {{128, 192}, 1.00}, {{256, 128}, 1.02}, {{128, 160}, 1.09}, {{128, 144}, 1.18},
    {{128, 128}, 1.19}, {{256, 96}, 1.21},  {{128, 112}, 1.34}, {{128, 96}, 1.45}};
inline constexpr int kMaskedDraws = 48;
inline constexpr uint64_t kMaskedDrawSeed = 2026;

// One group's rows drawn uniformly in [0.7, 1.3] x expected (DeepGEMM's test rule): the draw of the
// benchmark's and tests' counts (problem.hpp's draw_rows) and of the rule's expected rounds below.
inline int64_t draw_count(std::mt19937_64& rng, int64_t expected) {
  return int64_t(double(expected) * std::uniform_real_distribution<double>(0.7, 1.3)(rng));
}

// The rounds of tiles of tile t, averaged over the draws of the counts (the same draws for every
// tile: re-seeded each call). At most 2^21 group counts drawn in all.
inline double expected_rounds(const GroupedShape& g, Tile t, int num_sms) {
  const int64_t e = g.expected(), tiles_n = (g.shape.n + t.block_n - 1) / t.block_n;
  const int64_t draws = std::max<int64_t>(
      1, std::min<int64_t>(kMaskedDraws, (int64_t(1) << 21) / std::max(g.groups, 1)));
  std::mt19937_64 rng(kMaskedDrawSeed);
  double sum = 0;
  for (int64_t d = 0; d < draws; ++d) {
    int64_t blocks = 0;
    for (int i = 0; i < g.groups; ++i) {
      const int64_t count = std::min<int64_t>(draw_count(rng, e), g.shape.m);
      blocks += (count + t.block_m - 1) / t.block_m;
    }
    sum += double((blocks * tiles_n + num_sms - 1) / num_sms);
  }
  return sum / double(draws);
}

// The candidate of least cost x expected rounds x BLOCK_M x BLOCK_N (K is the same for all), of
// height block_m (0: either). The fit's error is about 10%, so a candidate is taken over one
// before it in kMaskedCandidates (cheaper per unit of area) only if its modelled time is more than
// kMaskedMargin lower: at the benchmark's 32 x 192 rows, 4096 x 4096, 256 x 128 models 1.1% below
// 128 x 192, and the two measured level there (section 8).
inline constexpr double kMaskedMargin = 0.03;
inline Tile masked_tile(const GroupedShape& g, int num_sms, int block_m = 0) {
  Tile best{0, 0};
  double best_time = 0;
  for (const MaskedCandidate& c : kMaskedCandidates) {
    if (block_m != 0 && c.tile.block_m != block_m) continue;
    const double time =
        c.cost * expected_rounds(g, c.tile, num_sms) * c.tile.block_m * c.tile.block_n;
    if (best.block_m == 0 || time < (1.0 - kMaskedMargin) * best_time)
      best = c.tile, best_time = time;
  }
  return best;
}

// The masked tile above 128 expected rows, of height block_m (0: the rule's): masked_tile, unless
// chapter 11's rule (its height for all groups' rows, each group's rounded up to 256, and its width
// for that height) takes a width narrower than every candidate: its choice then stands.
// The launch asks on every call, and the draws take up to milliseconds for many groups, so the
// answers are kept per shape (at most 4096 of them; then the cache starts again).
inline Tile masked_choice(const GroupedShape& g, int num_sms, int block_m = 0) {
  using Key = std::array<int64_t, 7>;
  static std::mutex mutex;
  static std::map<Key, Tile> cache;
  const Key key{g.groups, g.shape.m, g.shape.n, g.shape.k, g.expected(), num_sms, block_m};
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
  }
  const int height = block_m != 0 ? block_m : ch11::block_m_for(dense_equivalent(g, 256), num_sms);
  const int width = ch11::block_n_for(dense_equivalent(g, height), height, num_sms);
  constexpr int kNarrowest = kMaskedCandidates[std::size(kMaskedCandidates) - 1].tile.block_n;
  const Tile t = width < kNarrowest ? Tile{height, width} : masked_tile(g, num_sms, block_m);
  const std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= 4096) cache.clear();
  cache.emplace(key, t);
  return t;
}

// Masked: 64 rows up to 64 expected, 128 up to 128, and above that masked_choice.
inline int block_m_for(const GroupedShape& g, int num_sms) {
  if (g.layout == Layout::Contiguous) return ch11::block_m_for(g.shape, num_sms);
  const int64_t e = g.expected();
  return e <= 64 ? 64 : e <= 128 ? 128 : masked_choice(g, num_sms).block_m;
}

// Masked with 64-row tiles, the work is a stream of B: the widths up to 128, whose extra stages
// measured 5% more GB/s than 160 at 32 x 20 rows (2809 against 2663 GB/s at 6144 x 7168).
inline constexpr int kStreamBlockN[] = {16, 32, 64, 96, 112, 128};
inline int block_n_for(const GroupedShape& g, int block_m, int num_sms) {
  const gemm::Shape dense = dense_equivalent(g, block_m);
  if (g.layout == Layout::Masked && block_m == 64)
    return ch07::best_block_n_among(kStreamBlockN, dense, block_m, num_sms);
  if (g.layout == Layout::Masked && g.expected() > 128) {
    const Tile rule = masked_choice(g, num_sms);
    return rule.block_m == block_m ? rule.block_n : masked_choice(g, num_sms, block_m).block_n;
  }
  return ch11::block_n_for(dense, block_m, num_sms);
}

// The boxes' rows: 32 in the masked layout with 64-row tiles, whose groups have a few rows (a group
// of 14 to 26 rows, the benchmark's 32 x 20, loaded 64 rows of A and stored 64 rows of D per tile);
// 64 otherwise. Measured (H100, 2026-11-27, CH15_BOX_ROWS=32 against 64, two runs each: NOTES.md,
// section 12): masked 32 x 20 and 6 x 20 rows 1.6% to 3.3% more GB/s; with larger tiles, where
// only D's boxes change and a 64-row block takes two stores, 32 x 192 level and 6 x 1024 0.8% to
// 4.4% slower.
inline int box_rows_for(const GroupedShape& g, Tile t) {
  return g.layout == Layout::Masked && t.block_m == 64 ? 32 : 64;
}

// The configuration for a given tile. Host only.
inline Config make_config(const GroupedShape& g, Tile t, int num_sms = gemm::kH100Sms,
                          bool paired = false) {
  if (!compiled(t))
    throw gemm::UnsupportedError("chapter 15: no kernel compiled for BLOCK_M " +
                                 std::to_string(t.block_m) + ", BLOCK_N " +
                                 std::to_string(t.block_n));
  if (paired && !(t == kPairedTile))
    throw gemm::UnsupportedError("chapter 15: pairs sharing B run only the 128 x 192 tile (got " +
                                 std::to_string(t.block_m) + " x " + std::to_string(t.block_n) +
                                 ")");
  if (paired && num_sms < 2)
    throw gemm::UnsupportedError(
        "chapter 15: pairs sharing B need two SMs (a cluster of two CTAs)");
  Config c;
  c.tile = t;
  c.stages = ch12::stages_for(t.block_m, t.block_n, 1);
  c.smem_bytes = ch12::smem_bytes(t.block_m, t.block_n, 1);
  SchedulerParams& p = c.scheduler;
  p.layout = g.layout;
  p.groups = g.groups;
  p.m = g.shape.m;
  p.block_m = t.block_m;
  p.block_n = t.block_n;
  p.tiles_m = int((g.shape.m + t.block_m - 1) / t.block_m);
  p.tiles_n = int((g.shape.n + t.block_n - 1) / t.block_n);
  p.paired = paired;
  // Paired, the order walks the grid of pairs (a pair is a 256 x 192 block of D), of which half as
  // many run at once (chapter 10's plan_clusters).
  p.order_group = g.layout != Layout::Contiguous ? 1
                  : paired
                      ? ch09::cached_group((p.tiles_m + 1) / 2, p.tiles_n, 2 * t.block_m, t.block_n,
                                           num_sms / 2)
                      : ch09::cached_group(p.tiles_m, p.tiles_n, t.block_m, t.block_n, num_sms);
  // Contiguous: chapter 09's persistent grid over the tiles. Masked: every SM, up to the most tiles
  // there can be: the counts are on the device, and with them the rounds. (A grid fitted to the
  // expected rows gave 128 CTAs at 6 x 1024 rows: 1144 TFLOPS in one run, where 132 CTAs gave 1224
  // in another of the same day; two runs, not a controlled comparison: NOTES.md.)
  const int64_t most = p.max_tiles();
  const int64_t bounded = most < (int64_t(1) << 30) ? most : (int64_t(1) << 30);
  c.grid = g.layout == Layout::Contiguous ? ch09::persistent_grid(int(bounded), num_sms)
                                          : int(bounded < num_sms ? bounded : num_sms);
  // Paired: clusters of two, as many as run at once, never more than there are pairs.
  if (paired) {
    const int64_t pairs = p.max_pairs();
    const int clusters = int(pairs < num_sms / 2 ? pairs : num_sms / 2);
    c.grid = 2 * (clusters > 0 ? clusters : 1);
  }
  // B with evict_first (chapter 12) where it streams: 64-row tiles, one per group. With one 256-row
  // tile per group (32 x 192 rows) it measured 5-7% slower than the default policy, and at 64 rows
  // level with it or up to 2% faster (H100, 2026-11-26: NOTES.md, "B's L2 policy").
  c.b_evict_first = g.layout == Layout::Masked && t.block_m == 64 &&
                    (g.expected() + t.block_m - 1) / t.block_m == 1;
  c.box_rows = box_rows_for(g, t);
  return c;
}

// Pairs sharing B, with the 128 x 192 tile, at least two m-blocks, where they measured faster on
// three machines (H100, 2026-11-27, pairs against the rule's unpaired 128 x 192, after chapter 10's
// way out; NOTES.md, sections 19 and 20). Contiguous, where one group's B is at most 32 MB (N x K
// <= 2^25 bytes of fp8): 0.2% to 1.5% faster at the six benchmark shapes of that size, while at
// 6144 x 7168 (44 MB) they read level to 1.7% slower. Masked, where B is more than 32 MB (level to
// 3% faster), or where a group is expected to fill four tiles or more and K is 3072 or more: 6 x
// 1024 rows 1.1% to 3.6% faster at 7168 x 3072 and 4096 x 4096, 1.1% to 1.5% slower at 4096 x 2048;
// 32 x 192 rows 0.6% to 2.0% slower at every B of 32 MB or less. The thresholds lie between the
// shapes measured; they are read off those 16 shapes, not derived.
inline bool pairs_for(const GroupedShape& g, Tile t, int num_sms = gemm::kH100Sms) {
  if (!(t == kPairedTile) || num_sms < 2) return false;
  const bool large_b = g.shape.n * g.shape.k > (int64_t(1) << 25);
  if (g.layout == Layout::Contiguous) return !large_b && g.shape.m > kPairedTile.block_m;
  return large_b || (g.expected() >= 4 * kPairedTile.block_m && g.shape.k >= 3072);
}

// CH15_PAIRS, the environment's override: "on" or "off"; nullptr or "" leaves the rule's. "on"
// with a tile other than 128 x 192 is refused.
inline std::optional<bool> parse_pairs(const char* text) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  const std::string v = text;
  if (v == "on") return true;
  if (v == "off") return false;
  throw gemm::UnsupportedError("chapter 15: CH15_PAIRS must be \"on\" or \"off\" (got \"" + v +
                               "\")");
}

// The rule, then the overrides (nullptr or "" leave the rule's choice).
inline Config choose_config(const GroupedShape& g, int num_sms = gemm::kH100Sms,
                            const char* block_m_text = nullptr, const char* block_n_text = nullptr,
                            const char* pairs_text = nullptr) {
  int block_m = block_m_for(g, num_sms);
  if (block_m_text && *block_m_text) {
    const std::string v = block_m_text;
    if (v != "64" && v != "128" && v != "256")
      throw gemm::UnsupportedError("chapter 15: CH15_BLOCK_M must be 64, 128 or 256 (got \"" + v +
                                   "\")");
    block_m = std::stoi(v);
  }
  int block_n = block_n_for(g, block_m, num_sms);
  if (block_n_text && *block_n_text) {
    const std::string v = block_n_text;
    int parsed = 0;
    for (char ch : v)
      parsed = (ch >= '0' && ch <= '9' && parsed >= 0 && parsed < 100000) ? parsed * 10 + (ch - '0')
                                                                          : -1;
    if (v.empty() || parsed <= 0 || std::to_string(parsed) != v || !compiled({block_m, parsed}))
      throw gemm::UnsupportedError(
          "chapter 15: CH15_BLOCK_N must be one of 16, 32, 64, 96, 112, 128, 144, 160 (with "
          "BLOCK_M 128 also 192; with BLOCK_M 256: 96 or 128); got \"" +
          v + "\" with BLOCK_M " + std::to_string(block_m));
    block_n = parsed;
  }
  const Tile t{block_m, block_n};
  const std::optional<bool> pairs = parse_pairs(pairs_text);
  return make_config(g, t, num_sms, pairs ? *pairs : pairs_for(g, t, num_sms));
}

// CH15_EVICT_B, the environment's override of B's L2 policy: "first" or "normal" (chapter 12's
// CH12_EVICT_B, read by its parse_evict_b); nullptr or "" leaves the rule's.
inline Config apply_evict_b_override(const Config& chosen, const char* text) {
  const std::optional<bool> first = ch12::parse_evict_b(text, "chapter 15", "CH15_EVICT_B");
  if (!first) return chosen;
  Config c = chosen;
  c.b_evict_first = *first;
  return c;
}

// CH15_BOX_ROWS, the environment's override of the boxes' rows: "32" or "64"; nullptr or "" leaves
// the rule's.
inline Config apply_box_rows_override(const Config& chosen, const char* text) {
  if (text == nullptr || *text == '\0') return chosen;
  const std::string v = text;
  if (v != "32" && v != "64")
    throw gemm::UnsupportedError("chapter 15: CH15_BOX_ROWS must be 32 or 64 (got \"" + v + "\")");
  Config c = chosen;
  c.box_rows = std::stoi(v);
  return c;
}

inline std::string describe(const GroupedShape& g, const Config& c) {
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "%s, %d groups, %s %lld, N %lld, K %lld%s: BLOCK_M %d, BLOCK_N %d, %d stages "
      "(%u bytes of shared memory), %d CTAs over at most %lld tiles%s%s%s, boxes of %d rows",
      g.layout == Layout::Contiguous ? "contiguous" : "masked", g.groups,
      g.layout == Layout::Contiguous ? "M" : "max_m", (long long)g.shape.m, (long long)g.shape.n,
      (long long)g.shape.k,
      g.layout == Layout::Masked ? (", expected_m " + std::to_string(g.expected())).c_str() : "",
      c.tile.block_m, c.tile.block_n, c.stages, c.smem_bytes, c.grid,
      (long long)c.scheduler.max_tiles(),
      g.layout == Layout::Contiguous
          ? (", chapter 09's order, group " + std::to_string(c.scheduler.order_group)).c_str()
          : ", group by group, M fastest",
      c.b_evict_first ? ", B evict_first" : "",
      c.scheduler.paired ? ", in pairs sharing B (clusters of 2)" : "", c.box_rows);
  return buf;
}

}  // namespace ch15
