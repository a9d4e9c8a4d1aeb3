// Chapter 10's host-checkable arithmetic: which operand the two CTAs of a cluster share, and which
// tile each of them computes. Plain C++ (tests/host_chapter10.cpp); kernel.cu calls cta_tile, and
// chapter 11's configuration builds on the same functions.
//
// Multicast on B: the two CTAs take vertically adjacent tiles (the same n-block, m-blocks 2i and
// 2i + 1) and each loads half of the B tile for both; on A, horizontally adjacent tiles (n-blocks
// 2j and 2j + 1) and each loads half of the A tile for both. Legal when the tiles pair up exactly
// (tiles_m even for B, tiles_n even for A), so that no CTA of a cluster is left without a partner
// tile, and when at least two SMs exist. The chapter's rule (multicast_for): when both are legal,
// the operand with the larger tile, which saves more bytes per K block (BLOCK_N against BLOCK_M
// rows of 128 bytes, each CTA loading half); otherwise the legal one; otherwise off.
//
// The scheduler walks the grid of pairs of tiles (of tiles, without multicast) in chapter 09's
// grouped order, with the group from ch09::pick_group over windows of as many pairs as run at once.
#pragma once

#include <string>

#include "chapters/09_persistent_scheduler/scheduler.hpp"
#include "common/check.hpp"
#include "common/host_device.hpp"

namespace ch10 {

using ch09::TileCoord;

enum class Multicast : int { None, A, B };

inline const char* name(Multicast m) {
  return m == Multicast::A ? "A" : m == Multicast::B ? "B" : "off";
}

// Whether the tiles pair up for the multicast (and a cluster of two fits on the GPU).
GEMM_HOST_DEVICE constexpr bool pairs_up(int tiles_m, int tiles_n, Multicast m, int num_sms) {
  if (m == Multicast::None) return true;
  if (num_sms < 2) return false;
  return m == Multicast::B ? tiles_m % 2 == 0 : tiles_n % 2 == 0;
}

// The chapter's choice: the larger operand tile where both pair up, else the one that does.
GEMM_HOST_DEVICE constexpr Multicast multicast_for(int tiles_m, int tiles_n, int block_m,
                                                   int block_n, int num_sms = ch09::kH100Sms) {
  const bool on_b = pairs_up(tiles_m, tiles_n, Multicast::B, num_sms);
  const bool on_a = pairs_up(tiles_m, tiles_n, Multicast::A, num_sms);
  if (on_a && on_b) return block_n >= block_m ? Multicast::B : Multicast::A;
  return on_b ? Multicast::B : on_a ? Multicast::A : Multicast::None;
}

// The launch's clusters for one tile and multicast: the scheduler's grid of pairs, its group, and
// the grid. Host only: pick_group walks the tiles (ch09::cached_group remembers its answers).
// Throws UnsupportedError, naming `who`, for a multicast the shape's tiles do not pair up for.
struct Clusters {
  Multicast multicast = Multicast::None;
  int tiles_m = 0, tiles_n = 0;
  int cluster_size = 1;          // 2 with multicast
  int pairs_m = 0, pairs_n = 0;  // the grid the scheduler walks: tiles, or pairs of tiles
  int group = 1;                 // ch09's group over that grid
  int clusters = 0;              // clusters launched: min(pairs, num_sms / cluster_size)
  int grid = 0;                  // CTAs launched: clusters * cluster_size
};
inline Clusters plan_clusters(const gemm::Shape& s, int block_m, int block_n, Multicast m,
                              int num_sms, const std::string& who) {
  Clusters c;
  c.multicast = m;
  c.tiles_m = int((s.m + block_m - 1) / block_m);
  c.tiles_n = int((s.n + block_n - 1) / block_n);
  if (!pairs_up(c.tiles_m, c.tiles_n, m, num_sms))
    throw gemm::UnsupportedError(who + ": multicast on " + name(m) +
                                 " needs the tiles to pair up (" + std::to_string(c.tiles_m) +
                                 " x " + std::to_string(c.tiles_n) + " tiles of " + s.str() + ")");
  c.cluster_size = m == Multicast::None ? 1 : 2;
  c.pairs_m = m == Multicast::B ? c.tiles_m / 2 : c.tiles_m;
  c.pairs_n = m == Multicast::A ? c.tiles_n / 2 : c.tiles_n;
  const int running = num_sms / c.cluster_size;  // clusters at once, if every one fits
  c.group = ch09::cached_group(c.pairs_m, c.pairs_n, block_m * (m == Multicast::B ? 2 : 1),
                               block_n * (m == Multicast::A ? 2 : 1), running);
  // At most one CTA per SM, never more clusters than pairs (shape_error keeps M * N below 2^31, so
  // the tile count fits an int).
  c.clusters = ch09::persistent_grid(c.pairs_m * c.pairs_n, running);
  c.grid = c.clusters * c.cluster_size;
  return c;
}

// CH10_MULTICAST-style override text: "off", "A" or "B"; nullptr or "" keeps `chosen`. Anything
// else is refused with a sentence naming `variable`.
inline Multicast multicast_override(const char* text, Multicast chosen, const std::string& who,
                                    const std::string& variable) {
  if (text == nullptr || *text == '\0') return chosen;
  const std::string value = text;
  if (value == "off") return Multicast::None;
  if (value == "A") return Multicast::A;
  if (value == "B") return Multicast::B;
  throw gemm::UnsupportedError(who + ": " + variable + " must be off, A or B (got \"" + value +
                               "\")");
}

// --- Which tile a CTA computes ------------------------------------------------------------------
//
// Pair p of the cluster's walk is tile_at(p, ...) over the grid of pairs, and the CTA of rank r in
// the cluster takes the tile at offset r along the multicast direction. Without multicast a "pair"
// is one tile and r = 0.
GEMM_HOST_DEVICE constexpr TileCoord cta_tile(int pair_index, int rank, int pairs_m, int pairs_n,
                                              int group, Multicast multicast) {
  const TileCoord p = ch09::tile_at(pair_index, pairs_m, pairs_n, group);
  if (multicast == Multicast::B) return {2 * p.m_block + rank, p.n_block};
  if (multicast == Multicast::A) return {p.m_block, 2 * p.n_block + rank};
  return p;
}

// Bytes the L2 sends to the SMs per K block for one wave of `ctas` CTAs: each CTA reads its A and
// B tiles, halving the multicast one (each CTA of a pair loads half of it for both).
inline double wave_l2_bytes(int ctas, int block_m, int block_n, Multicast m) {
  const double rows_a = m == Multicast::A ? block_m / 2.0 : block_m;
  const double rows_b = m == Multicast::B ? block_n / 2.0 : block_n;
  return double(ctas) * (rows_a + rows_b) * gemm::kScaleBlock;
}

}  // namespace ch10
