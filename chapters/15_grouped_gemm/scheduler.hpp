// Chapter 15's one new idea: the scheduler learns groups. Plain C++ that the kernel, the host tests
// (tests/host_chapter15.cpp) and the picture (draw.hpp) all call.
//
// A grouped GEMM is G GEMMs with the same N and K, D_g = A_g * B_g^T, one launch. Two layouts, as
// DeepGEMM serves them (grouped.hpp has the tensors):
//
// - Contiguous (prefill, training). A holds every group's rows one after the other, each group padded
//   to kAlignment (128) rows, and one int32 per row names its group (-1 on padding rows). The tile
//   grid is the dense one over all M rows, walked in chapter 09's order; a tile learns its group
//   from the index of its first row. A 256-row tile may hold two groups (its halves start on
//   128-row boundaries): it then runs as two works, one per 128-row half, each with its own B.
// - Masked (decoding, CUDA graphs). A and D are [G][max_m][...]; group g's valid rows are its first
//   masked_m[g], a count that lives on the GPU. The scheduler walks the groups in order, giving group
//   g ceil(masked_m[g] / BLOCK_M) x tiles_n tiles, M fastest inside the group (the CTAs working on
//   one column of B at once share it through L2), so an empty group costs nothing.
//
// Both become the same thing for the kernel: a Work, a tile of one group (the producer's loads, the
// math warpgroups' K loop and epilogue), or a tile of padding (no loads, no K loop: zeros stored).
// The scheduler reads the indices and counts through plain pointers, device memory in the kernel and
// host vectors in the tests, so one function serves both.
//
// Pairs (SchedulerParams::paired; 128-row tiles): the CTAs run in clusters of two, and the scheduler
// hands both CTAs of a cluster one pair of works at a time, in step, so that the two can share B
// (chapter 10's multicast): two m-blocks of one group and one n-block, B loaded once by the CTA of
// rank 0 into both (Work::shared). Where a pair cannot share (two groups; a group's odd last m-block,
// paired with the next n-block's), each CTA loads its own B; where a CTA has no tile left in the
// pair, it gets a phantom (rows 0: it loads, computes and stores nothing of its own, and keeps the
// pipeline of the pair in step). Both CTAs of a pair run every K block, so their stages and phases
// never part.
//
// Out-of-range values from the device are defined, never a fault: a tile whose first row's index
// is outside [-1, G) (for a 256-row tile, each 128-row half's first row), or a masked_m[g] outside
// [0, max_m], is skipped (nothing stored; unpaired, nothing loaded either; paired, the tile becomes
// a phantom) and raises a status bit, which the launch wrapper reports (grouped.hpp: check_status).
#pragma once

#include <cstdint>

#include "chapters/09_persistent_scheduler/scheduler.hpp"
#include "common/host_device.hpp"

namespace ch15 {

enum class Layout : int { Contiguous = 0, Masked = 1 };

// Contiguous: each group's rows start on a multiple of this (DeepGEMM's alignment); masked: max_m is
// a multiple of kMaskedRows, the height of the tallest TMA store box of D (Config::box_rows), so
// that no store crosses into the next group's rows.
inline constexpr int kAlignment = 128;
inline constexpr int kMaskedRows = 64;

// The bits the kernel ORs into GroupedArgs::status (grouped.hpp).
inline constexpr uint32_t kBadGroupIndex = 1u;  // a tile's (half's) first index outside [-1, G)
inline constexpr uint32_t kBadRowIndex = 2u;    // a row's index neither its tile's group nor -1
inline constexpr uint32_t kBadMaskedM = 4u;     // masked_m[g] outside [0, max_m]

// One unit of the kernel's work.
struct Work {
  int group = -1;     // whose B, B scales; -1: padding rows, zeros stored
  int64_t row0 = 0;   // the tile's first row in A and D (masked: g * max_m + the row in the group)
  int rows = 0;       // rows of the tile that hold data, from row0 (<= BLOCK_M); loads and stores
                      // skip boxes at or past it, and the epilogue zeroes rows past it in a box
  int n_block = 0;    // the tile's column of D, in BLOCK_N
  int sub_begin = 0;  // the 128-row halves of a 256-row tile this work computes and stores:
  int sub_end = 1;    //   [sub_begin, sub_end); 0 to 1 below 256 rows
  int shared = 0;     // pairs: 1 if both works of the pair have this group and n-block, and the CTA
                      //   of rank 0 loads B into both CTAs
};

// What the host passes the kernel (configure, config.hpp) for the scheduler.
struct SchedulerParams {
  Layout layout = Layout::Contiguous;
  int groups = 1;
  int64_t m = 0;  // contiguous: all rows; masked: max_m
  int block_m = 128, block_n = 128;
  int tiles_m = 0;      // contiguous: ceil(m / block_m); masked: ceil(max_m / block_m), a bound
  int tiles_n = 0;      // ceil(N / block_n)
  int order_group = 1;  // contiguous: chapter 09's group size for the tile order (of pairs, paired)
  bool paired = false;  // clusters of two CTAs, one pair of works at a time (block_m 128)
  // An upper bound on the tiles (masked: every group full), for the grid: min(SMs, this).
  GEMM_HOST_DEVICE int64_t max_tiles() const {
    return (layout == Layout::Masked ? int64_t(groups) : 1) * int64_t(tiles_m) * tiles_n;
  }
  // Paired: an upper bound on the pairs, for the grid of clusters.
  GEMM_HOST_DEVICE int64_t max_pairs() const {
    return (layout == Layout::Masked ? int64_t(groups) : 1) * int64_t((tiles_m + 1) / 2) * tiles_n;
  }
};

// One CTA's walk: tiles first, first + stride, ... and, where a tile holds two groups, two works.
// Paired: pairs first, first + stride, ... (first: the cluster, stride: the clusters), the work of
// the CTA of rank `rank` in each. m_indices (contiguous, m of them) or masked_m (masked, groups of
// them) is read through a plain pointer. Every thread of a CTA that needs the works runs its own
// copy and gets the same sequence.
class GroupedScheduler {
 public:
  GEMM_HOST_DEVICE GroupedScheduler(const SchedulerParams& p, const int* m_indices,
                                    const int* masked_m, int first, int stride, int rank = 0)
      : p_(p),
        m_indices_(m_indices),
        masked_m_(masked_m),
        tile_(first),
        stride_(stride),
        rank_(rank) {}

  // The next work, or false when there is none. Bits of Status for what was skipped accumulate in
  // status().
  GEMM_HOST_DEVICE bool next(Work& w) { return p_.paired ? next_paired(w) : next_unpaired(w); }
  // The same, for a caller that knows which (the kernel, where one walk's code fits the scheduler
  // thread's 40 registers and both did not: ptxas spilled).
  GEMM_HOST_DEVICE bool next_unpaired(Work& w) {
    return p_.layout == Layout::Contiguous ? next_contiguous(w) : next_masked(w);
  }
  GEMM_HOST_DEVICE bool next_paired(Work& w) {
    return p_.layout == Layout::Contiguous ? next_contiguous_paired(w) : next_masked_paired(w);
  }
  GEMM_HOST_DEVICE uint32_t status() const { return status_; }

 private:
  GEMM_HOST_DEVICE static int read(const int* p, int64_t i) { return p[i]; }

  // Contiguous: the dense grid, chapter 09's order; a tile's group from its first row's index.
  GEMM_HOST_DEVICE bool next_contiguous(Work& w) {
    const int64_t tiles = int64_t(p_.tiles_m) * p_.tiles_n;
    for (; tile_ < tiles; tile_ += stride_, pass_ = 0) {
      const ch09::TileCoord t = ch09::tile_at(int(tile_), p_.tiles_m, p_.tiles_n, p_.order_group);
      const int64_t m0 = int64_t(t.m_block) * p_.block_m;
      const int rows = int(p_.m - m0 < p_.block_m ? p_.m - m0 : p_.block_m);
      // A 256-row tile whose second half exists and belongs to another group: two works.
      const int g0 = read(m_indices_, m0);
      const int g1 = p_.block_m == 256 && rows > kAlignment ? read(m_indices_, m0 + 128) : g0;
      const bool halves = g1 != g0;
      for (; pass_ < (halves ? 2 : 1); ++pass_) {
        const int g = pass_ == 0 ? g0 : g1;
        if (g < -1 || g >= p_.groups) {
          status_ |= kBadGroupIndex;  // nothing loaded, nothing stored
          continue;
        }
        w.group = g;
        w.row0 = m0;
        w.rows = rows;
        w.n_block = t.n_block;
        w.sub_begin = halves ? pass_ : 0;
        w.sub_end = halves ? pass_ + 1 : (p_.block_m == 256 ? 2 : 1);
        ++pass_;
        return true;
      }
    }
    return false;
  }

  // Masked: group_'s count, and its rows of tiles, ceil(count / BLOCK_M); 0 for a count outside
  // [0, max_m], whose group is then skipped (its bit raised once, however often this is asked).
  GEMM_HOST_DEVICE int group_tiles_m(int& count) {
    count = read(masked_m_, group_);
    const bool bad = count < 0 || count > p_.m;
    if (bad && !counted_) status_ |= kBadMaskedM;
    counted_ = true;
    return bad ? 0 : (count + p_.block_m - 1) / p_.block_m;
  }

  // Masked: the work of group_'s m-block m_block in column n_block, the group holding `count`
  // rows; a phantom (paired, no partner tile) has none. Both masked walks fill a Work with this.
  GEMM_HOST_DEVICE void masked_work(Work& w, int count, int m_block, int n_block,
                                    bool phantom) const {
    w.group = group_;
    w.row0 = int64_t(group_) * p_.m + int64_t(m_block) * p_.block_m;
    const int left = count - m_block * p_.block_m;
    w.rows = phantom ? 0 : (left < p_.block_m ? left : p_.block_m);
    w.n_block = n_block;
    w.sub_begin = 0;
    w.sub_end = p_.block_m == 256 ? 2 : 1;  // paired: 128 rows, one
  }

  // Masked: group by group, ceil(masked_m[g] / BLOCK_M) x tiles_n tiles each, M fastest.
  GEMM_HOST_DEVICE bool next_masked(Work& w) {
    while (group_ < p_.groups) {
      int count = 0;
      const int tiles_m = group_tiles_m(count);
      const int64_t tiles = int64_t(tiles_m) * p_.tiles_n;
      if (tile_ < base_ + tiles) {
        const int64_t inside = tile_ - base_;
        masked_work(w, count, int(inside % tiles_m), int(inside / tiles_m), false);
        tile_ += stride_;
        return true;
      }
      base_ += tiles;
      ++group_;
      counted_ = false;
    }
    return false;
  }

  // Contiguous, paired: the grid of pairs of m-blocks (2 i, 2 i + 1) by n-blocks, chapter 09's
  // order over it. The pair shares B where both m-blocks exist and begin in the same group.
  GEMM_HOST_DEVICE bool next_contiguous_paired(Work& w) {
    const int pairs_m = (p_.tiles_m + 1) / 2;
    if (tile_ >= int64_t(pairs_m) * p_.tiles_n) return false;
    const ch09::TileCoord t = ch09::tile_at(int(tile_), pairs_m, p_.tiles_n, p_.order_group);
    const int mine = 2 * t.m_block + rank_, other = 2 * t.m_block + (rank_ ^ 1);
    const bool has_mine = mine < p_.tiles_m, has_other = other < p_.tiles_m;
    const int g_mine = has_mine ? read(m_indices_, int64_t(mine) * p_.block_m) : -1;
    const int g_other = has_other ? read(m_indices_, int64_t(other) * p_.block_m) : -1;
    const bool ok_mine = has_mine && g_mine >= -1 && g_mine < p_.groups;
    const bool ok_other = has_other && g_other >= -1 && g_other < p_.groups;
    if (has_mine && !ok_mine) status_ |= kBadGroupIndex;  // a phantom: nothing stored
    w.n_block = t.n_block;
    w.sub_begin = 0;
    w.sub_end = 1;
    w.shared = ok_mine && ok_other && g_mine == g_other && g_mine >= 0;
    if (ok_mine) {
      w.group = g_mine;  // -1: padding rows, their zeros stored
      w.row0 = int64_t(mine) * p_.block_m;
      w.rows = int(p_.m - w.row0 < p_.block_m ? p_.m - w.row0 : p_.block_m);
    } else {
      // A phantom loads the partner's rows, with a group whose B exists.
      w.group = ok_other && g_other >= 0 ? g_other : 0;
      w.row0 = int64_t(has_mine ? mine : other) * p_.block_m;
      w.rows = 0;
    }
    tile_ += stride_;
    return true;
  }

  // Masked, paired: group by group (T m-blocks, half = T / 2), for each two n-blocks 2q and
  // 2q + 1: the half pairs (2 i, 2 i + 1) of 2q sharing B, those of 2q + 1, then, if T is odd, the
  // last m-block of both n-blocks as one pair that does not share (an odd last n-block's with a
  // phantom). So a group has T x tiles_n tiles in ceil(T / 2) x tiles_n pairs at most, and its only
  // phantom is that of an odd T and an odd tiles_n.
  GEMM_HOST_DEVICE bool next_masked_paired(Work& w) {
    while (group_ < p_.groups) {
      int count = 0;
      const int tiles_m = group_tiles_m(count);  // a bad count: skipped by both CTAs
      const int half = tiles_m / 2, odd = tiles_m % 2;
      const int segment = 2 * half + odd;  // pairs per two n-blocks
      const int64_t pairs =
          tiles_m == 0 ? 0 : int64_t(p_.tiles_n / 2) * segment + (p_.tiles_n % 2) * (half + odd);
      if (tile_ < base_ + pairs) {
        const int64_t inside = tile_ - base_;
        const int q = int(inside / segment), r = int(inside % segment);
        // The last segment of an odd tiles_n has one n-block: its half pairs, then the leftover.
        const bool last_single = p_.tiles_n % 2 == 1 && q == p_.tiles_n / 2;
        int m_block, n_block;
        bool phantom = false;
        if (r < (last_single ? half : 2 * half)) {
          n_block = 2 * q + (r >= half);
          m_block = 2 * (r % half) + rank_;
          w.shared = 1;
        } else {
          m_block = tiles_m - 1;
          n_block = 2 * q + rank_;
          w.shared = 0;
          if (n_block >= p_.tiles_n) n_block = 2 * q, phantom = true;
        }
        masked_work(w, count, m_block, n_block, phantom);
        tile_ += stride_;
        return true;
      }
      base_ += pairs;
      ++group_;
      counted_ = false;
    }
    return false;
  }

  SchedulerParams p_;
  const int* m_indices_;
  const int* masked_m_;
  int64_t tile_;  // paired: the pair
  int stride_;
  int rank_;              // paired: this CTA's rank in its cluster
  int pass_ = 0;          // contiguous: which half of a two-group tile comes next
  int group_ = 0;         // masked: the group tile_ is looked for in
  int64_t base_ = 0;      // masked: the first tile index of group_
  bool counted_ = false;  // masked: group_'s count has been checked (its bit raised once)
  uint32_t status_ = 0;
};

}  // namespace ch15
