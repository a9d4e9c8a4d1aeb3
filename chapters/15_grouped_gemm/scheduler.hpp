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
// Out-of-range values from the device are defined, never a fault: a tile whose first row's index
// is outside [-1, G) (for a 256-row tile, each 128-row half's first row), or a masked_m[g] outside
// [0, max_m], is skipped (nothing loaded, nothing stored) and raises a status bit, which the launch
// wrapper reports (grouped.hpp: check_status).
#pragma once

#include <cstdint>

#include "chapters/09_persistent_scheduler/scheduler.hpp"
#include "common/host_device.hpp"

namespace ch15 {

enum class Layout : int { Contiguous = 0, Masked = 1 };

// Contiguous: each group's rows start on a multiple of this (DeepGEMM's alignment); masked: max_m is
// a multiple of kMaskedRows, the height of one TMA store box of D, so that no store crosses into the
// next group's rows.
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
  int rows = 0;       // rows of the tile that hold data, from row0 (<= BLOCK_M); the stores skip
                      // 64-row boxes at or past it, and the epilogue zeroes rows past it in a box
  int n_block = 0;    // the tile's column of D, in BLOCK_N
  int sub_begin = 0;  // the 128-row halves of a 256-row tile this work computes and stores:
  int sub_end = 1;    //   [sub_begin, sub_end); 0 to 1 below 256 rows
};

// What the host passes the kernel (configure, config.hpp) for the scheduler.
struct SchedulerParams {
  Layout layout = Layout::Contiguous;
  int groups = 1;
  int64_t m = 0;  // contiguous: all rows; masked: max_m
  int block_m = 128, block_n = 128;
  int tiles_m = 0;      // contiguous: ceil(m / block_m); masked: ceil(max_m / block_m), a bound
  int tiles_n = 0;      // ceil(N / block_n)
  int order_group = 1;  // contiguous: chapter 09's group size for the tile order
  // An upper bound on the tiles (masked: every group full), for the grid: min(SMs, this).
  GEMM_HOST_DEVICE int64_t max_tiles() const {
    return (layout == Layout::Masked ? int64_t(groups) : 1) * int64_t(tiles_m) * tiles_n;
  }
};

// One CTA's walk: tiles first, first + stride, ... and, where a tile holds two groups, two works.
// m_indices (contiguous, m of them) or masked_m (masked, groups of them) is read through a plain
// pointer. Every thread of a CTA that needs the works runs its own copy and gets the same sequence.
class GroupedScheduler {
 public:
  GEMM_HOST_DEVICE GroupedScheduler(const SchedulerParams& p, const int* m_indices,
                                    const int* masked_m, int first, int stride)
      : p_(p), m_indices_(m_indices), masked_m_(masked_m), tile_(first), stride_(stride) {}

  // The next work, or false when there is none. Bits of Status for what was skipped accumulate in
  // status().
  GEMM_HOST_DEVICE bool next(Work& w) {
    return p_.layout == Layout::Contiguous ? next_contiguous(w) : next_masked(w);
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

  // Masked: group by group, ceil(masked_m[g] / BLOCK_M) x tiles_n tiles each, M fastest.
  GEMM_HOST_DEVICE bool next_masked(Work& w) {
    while (group_ < p_.groups) {
      const int count = read(masked_m_, group_);
      int tiles_m = 0;
      if (count < 0 || count > p_.m) {
        if (!counted_) status_ |= kBadMaskedM;  // the group is skipped
      } else {
        tiles_m = (count + p_.block_m - 1) / p_.block_m;
      }
      counted_ = true;
      const int64_t tiles = int64_t(tiles_m) * p_.tiles_n;
      if (tile_ < base_ + tiles) {
        const int64_t inside = tile_ - base_;
        const int m_block = int(inside % tiles_m);
        w.group = group_;
        w.row0 = int64_t(group_) * p_.m + int64_t(m_block) * p_.block_m;
        const int left = count - m_block * p_.block_m;
        w.rows = left < p_.block_m ? left : p_.block_m;
        w.n_block = int(inside / tiles_m);
        w.sub_begin = 0;
        w.sub_end = p_.block_m == 256 ? 2 : 1;
        tile_ += stride_;
        return true;
      }
      base_ += tiles;
      ++group_;
      counted_ = false;
    }
    return false;
  }

  SchedulerParams p_;
  const int* m_indices_;
  const int* masked_m_;
  int64_t tile_;
  int stride_;
  int pass_ = 0;          // contiguous: which half of a two-group tile comes next
  int group_ = 0;         // masked: the group tile_ is looked for in
  int64_t base_ = 0;      // masked: the first tile index of group_
  bool counted_ = false;  // masked: group_'s count has been checked (its bit raised once)
  uint32_t status_ = 0;
};

}  // namespace ch15
