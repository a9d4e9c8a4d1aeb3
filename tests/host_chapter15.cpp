// Chapter 15's plain arithmetic: the grouped scheduler on both layouts (every box of valid rows
// once, padding as group -1, two-group 256-row tiles as two works, the masked order, bad indices
// and counts skipped and reported), the configuration over the benchmark's grouped shapes and its
// overrides, and argument_error's refusals on made-up pointers (nothing is dereferenced).
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "chapters/09_persistent_scheduler/scheduler.hpp"
#include "chapters/11_configuration/config.hpp"
#include "chapters/12_split_k/config.hpp"
#include "chapters/15_grouped_gemm/config.hpp"
#include "chapters/15_grouped_gemm/grouped.hpp"
#include "chapters/15_grouped_gemm/scheduler.hpp"
#include "common/check.hpp"
#include "common/problem.hpp"

namespace {

using ch15::Layout;
using ch15::SchedulerParams;
using ch15::Work;

constexpr int kBox = 64;  // the tallest TMA store box of D, the walks' unit (ch15::kMaskedRows)

int64_t round_up(int64_t x, int64_t to) {
  return (x + to - 1) / to * to;
}

// Collects failures of a check that runs over many elements: the first few in words, the count.
class Failures {
 public:
  void add(const std::string& what) {
    if (count_++ < 8) text_ += "\n  " + what;
  }
  int64_t count() const { return count_; }
  const std::string& text() const { return text_; }

 private:
  int64_t count_ = 0;
  std::string text_;
};

std::string str(const Work& w) {
  return "{group " + std::to_string(w.group) + ", row0 " + std::to_string(w.row0) + ", rows " +
         std::to_string(w.rows) + ", n_block " + std::to_string(w.n_block) + ", sub [" +
         std::to_string(w.sub_begin) + ", " + std::to_string(w.sub_end) + ")}";
}

std::tuple<int, int64_t, int, int, int, int> key(const Work& w) {
  return {w.group, w.row0, w.rows, w.n_block, w.sub_begin, w.sub_end};
}

// --- Grouped problems as the scheduler sees them ------------------------------------------------

struct Groups {
  Layout layout = Layout::Contiguous;
  std::vector<int64_t> rows;       // each group's valid rows
  int64_t m = 0;                   // contiguous M, or masked max_m
  std::vector<int> m_indices;      // contiguous
  std::vector<int> masked_m;       // masked
  std::vector<int64_t> first_row;  // contiguous: where each group starts
  int groups() const { return int(rows.size()); }
};

// Each group padded to 128 rows, and where `rng` is given, whole blocks of padding (-1) between
// groups and at the end now and then. Every group empty: one block of padding.
Groups contiguous(const std::vector<int64_t>& rows, std::mt19937_64* rng = nullptr) {
  Groups g;
  g.layout = Layout::Contiguous;
  g.rows = rows;
  auto padding_block = [&] { g.m_indices.insert(g.m_indices.end(), ch15::kAlignment, -1); };
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rng && (*rng)() % 5 == 0) padding_block();
    g.first_row.push_back(int64_t(g.m_indices.size()));
    const int64_t padded = round_up(rows[i], ch15::kAlignment);
    for (int64_t r = 0; r < padded; ++r) g.m_indices.push_back(r < rows[i] ? int(i) : -1);
  }
  if ((rng && (*rng)() % 3 == 0) || g.m_indices.empty()) padding_block();
  g.m = int64_t(g.m_indices.size());
  return g;
}

// max_m: the largest group rounded up to 64 rows, plus `extra` (a multiple of 64).
Groups masked(const std::vector<int64_t>& rows, int64_t extra = 0) {
  Groups g;
  g.layout = Layout::Masked;
  g.rows = rows;
  int64_t biggest = 0;
  for (int64_t r : rows) biggest = std::max(biggest, r);
  g.m = std::max<int64_t>(kBox, round_up(biggest, kBox)) + extra;
  g.masked_m.assign(rows.begin(), rows.end());
  return g;
}

std::string describe(const Groups& g) {
  std::string s = g.layout == Layout::Contiguous ? "contiguous" : "masked";
  s += ", m " + std::to_string(g.m) + ", rows {";
  for (size_t i = 0; i < g.rows.size() && i < 24; ++i)
    s += (i ? ", " : "") + std::to_string(g.rows[i]);
  if (g.rows.size() > 24) s += ", ... (" + std::to_string(g.rows.size()) + " groups)";
  return s + "}";
}

// The rows lists: the edges (0, 1, exactly 128 and 256, 129, 257), random lists mixing them, and
// 256 groups of a few rows.
std::vector<std::vector<int64_t>> rows_lists() {
  std::vector<std::vector<int64_t>> lists = {
      {0, 1, 128, 256, 129, 0, 255, 257, 64, 65, 127, 384},
      {1},
      {0},
      {0, 0, 0},
      {128},
      {256},
      {129},
      {257, 0, 1},
      {128, 128, 128, 128},
      {63, 64, 65, 191, 192, 193},
  };
  std::mt19937_64 rng(15);
  const int64_t edges[] = {0, 1, 63, 64, 65, 127, 128, 129, 255, 256, 257};
  for (int list = 0; list < 24; ++list) {
    std::vector<int64_t> rows(1 + rng() % 24);
    for (int64_t& r : rows)
      r = rng() % 3 == 0 ? edges[rng() % std::size(edges)] : int64_t(rng() % 600);
    lists.push_back(rows);
  }
  std::vector<int64_t> many(256);
  for (int64_t& r : many) r = rng() % 4 == 0 ? 0 : int64_t(rng() % 40);
  lists.push_back(many);
  std::vector<int64_t> many_bigger(256);
  for (int64_t& r : many_bigger) r = int64_t(rng() % 300);
  lists.push_back(many_bigger);
  return lists;
}

// The scheduler's parameters as the launch makes them (config.hpp), for N and a compiled tile (in
// pairs: the 128 x 192 tile).
SchedulerParams params(const Groups& g, int64_t n, ch15::Tile t, bool paired = false) {
  ch15::GroupedShape s;
  s.layout = g.layout;
  s.groups = g.groups();
  s.shape = {g.m, n, 128};
  return ch15::make_config(s, t, gemm::kH100Sms, paired).scheduler;
}

// Every CTA's walk: first = cta, stride = ctas.
struct Walk {
  std::vector<std::vector<Work>> works;  // per CTA
  uint32_t status = 0;                   // OR of every CTA's status()
};

Walk walk(const SchedulerParams& p, const Groups& g, int ctas) {
  Walk w;
  w.works.resize(size_t(ctas));
  // Contiguous: at most two works a tile; masked: at most one a tile of a full group.
  const int64_t limit = 2 * p.max_tiles() + 2;
  for (int cta = 0; cta < ctas; ++cta) {
    ch15::GroupedScheduler s(p, g.m_indices.empty() ? nullptr : g.m_indices.data(),
                             g.masked_m.empty() ? nullptr : g.masked_m.data(), cta, ctas);
    for (Work x; s.next(x);) {
      w.works[size_t(cta)].push_back(x);
      if (int64_t(w.works[size_t(cta)].size()) > limit) {
        ADD_FAILURE() << "CTA " << cta << " of " << ctas << " walks more than " << limit
                      << " works";
        break;
      }
    }
    w.status |= s.status();
  }
  return w;
}

// The rows a work stores, [begin, end) in A and D: its tile from row0 (a 256-row tile: its halves
// [sub_begin, sub_end)), cut at row0 + rows.
std::pair<int64_t, int64_t> stored_rows(const SchedulerParams& p, const Work& w) {
  const int64_t begin = w.row0 + (p.block_m == 256 ? 128 * int64_t(w.sub_begin) : 0);
  const int64_t end =
      w.row0 + std::min<int64_t>(w.rows, p.block_m == 256 ? 128 * int64_t(w.sub_end) : p.block_m);
  return {begin, end};
}

// What covers each (64-row box, n_block) of D: how many works, and the last of them.
struct Cover {
  int count = 0;
  Work work;
};
class Covers {
 public:
  Covers(int64_t boxes, int tiles_n) : tiles_n_(tiles_n), cover_(size_t(boxes * tiles_n)) {}
  Cover& at(int64_t box, int n) { return cover_[size_t(box * tiles_n_ + n)]; }
  const Cover& at(int64_t box, int n) const { return cover_[size_t(box * tiles_n_ + n)]; }
  void add(int64_t box, const Work& w) {
    Cover& c = at(box, w.n_block);
    ++c.count;
    c.work = w;
  }

 private:
  int64_t tiles_n_;
  std::vector<Cover> cover_;
};

// The contiguous layout's contract (scheduler.hpp) on one walk: every work inside D with the
// rows M leaves it; its group the index of the first row of the rows it stores (-1: padding); a
// 256-row tile whose halves start with different indices as two works, [0, 1) and [1, 2), any
// other 256-row tile as one, [0, 2); each CTA's works in chapter 09's order from its first tile
// with its stride. Returns what covers each (box, n_block), for expect_every_box_once.
Covers check_contiguous(const Groups& g, const SchedulerParams& p, const Walk& w,
                        const std::string& what, Failures& f) {
  Covers covers(g.m / kBox, p.tiles_n);
  const int ctas = int(w.works.size());
  const int64_t tiles = int64_t(p.tiles_m) * p.tiles_n;
  for (int cta = 0; cta < ctas; ++cta) {
    int64_t last_tile = -1;
    int last_sub_end = 0;
    for (const Work& x : w.works[size_t(cta)]) {
      const auto at = [&] { return what + ", CTA " + std::to_string(cta) + ": " + str(x); };
      if (x.row0 < 0 || x.row0 >= g.m || x.row0 % p.block_m != 0 || x.n_block < 0 ||
          x.n_block >= p.tiles_n || x.group < -1 || x.group >= g.groups()) {
        f.add(at() + " lies outside the problem");
        continue;
      }
      if (x.rows != std::min<int64_t>(p.block_m, g.m - x.row0))
        f.add(at() + ": rows should be " +
              std::to_string(std::min<int64_t>(p.block_m, g.m - x.row0)));
      // The order: tile indices cta, cta + ctas, ... (chapter 09's map), a two-work tile's halves
      // one after the other.
      const int64_t tile =
          ch09::index_of({int(x.row0 / p.block_m), x.n_block}, p.tiles_m, p.tiles_n, p.order_group);
      if (tile % ctas != cta || tile >= tiles) f.add(at() + ": tile " + std::to_string(tile));
      if (tile < last_tile || (tile == last_tile && x.sub_begin != last_sub_end))
        f.add(at() + ": out of order after tile " + std::to_string(last_tile));
      last_tile = tile;
      last_sub_end = x.sub_end;
      // The halves.
      if (p.block_m == 256) {
        const bool two =
            x.rows > 128 && g.m_indices[size_t(x.row0)] != g.m_indices[size_t(x.row0 + 128)];
        if (two ? x.sub_end - x.sub_begin != 1 : (x.sub_begin != 0 || x.sub_end != 2))
          f.add(at() + (two ? ": a two-group tile must run as two works, one half each"
                            : ": a one-group tile must run as one work, sub [0, 2)"));
      } else if (x.sub_begin != 0 || x.sub_end != 1) {
        f.add(at() + ": sub should be [0, 1) below 256 rows");
      }
      const auto [begin, end] = stored_rows(p, x);
      if (begin >= end || end > g.m) {
        f.add(at() + ": stores rows [" + std::to_string(begin) + ", " + std::to_string(end) + ")");
        continue;
      }
      if (x.group != g.m_indices[size_t(begin)])
        f.add(at() + ": its rows start with index " + std::to_string(g.m_indices[size_t(begin)]));
      for (int64_t row = begin; row < end; ++row) {
        const int index = g.m_indices[size_t(row)];
        if (index != -1 && index != x.group) {
          f.add(at() + ": row " + std::to_string(row) + " belongs to group " +
                std::to_string(index));
          break;
        }
      }
      for (int64_t box = begin / kBox; box * kBox < end; ++box) covers.add(box, x);
    }
  }
  return covers;
}

void expect_every_box_once(const Groups& g, const SchedulerParams& p, const Covers& covers,
                           const std::string& what, Failures& f) {
  for (int64_t box = 0; box < g.m / kBox; ++box)
    for (int n = 0; n < p.tiles_n; ++n) {
      const int count = covers.at(box, n).count;
      if (count != 1)
        f.add(what + ": box " + std::to_string(box) + " (rows " + std::to_string(box * kBox) +
              "...), n_block " + std::to_string(n) + " covered " + std::to_string(count) +
              " times");
    }
}

// The masked layout's contract: tiles group by group, ceil(masked_m[g] / BLOCK_M) x tiles_n each,
// M fastest inside the group, dealt to CTAs as first + j * stride; each (group, box with valid rows,
// n_block) once, no box past the group's rows. Groups whose count is out of range have none.
void check_masked(const Groups& g, const SchedulerParams& p, const Walk& w, const std::string& what,
                  Failures& f) {
  struct Expected {
    int group, m_block, n_block;
  };
  std::vector<Expected> sequence;
  for (int group = 0; group < g.groups(); ++group) {
    const int count = g.masked_m[size_t(group)];
    if (count < 0 || count > g.m) continue;
    const int tiles_m = (count + p.block_m - 1) / p.block_m;
    for (int n = 0; n < p.tiles_n; ++n)
      for (int m = 0; m < tiles_m; ++m) sequence.push_back({group, m, n});
  }
  const int ctas = int(w.works.size());
  const int64_t total = int64_t(sequence.size());
  // Each (group, box in the group, n_block): how many works store it.
  const int64_t group_boxes = g.m / kBox;
  std::vector<int> covered(size_t(g.groups() * group_boxes * p.tiles_n), 0);
  const auto cell = [&](int group, int64_t box, int n) {
    return size_t((group * group_boxes + box) * p.tiles_n + n);
  };
  for (int cta = 0; cta < ctas; ++cta) {
    const std::vector<Work>& works = w.works[size_t(cta)];
    const int64_t expected_works = cta < total ? (total - cta + ctas - 1) / ctas : 0;
    if (int64_t(works.size()) != expected_works)
      f.add(what + ", CTA " + std::to_string(cta) + ": " + std::to_string(works.size()) +
            " works, expected " + std::to_string(expected_works));
    for (size_t j = 0; j < works.size() && cta + int64_t(j) * ctas < total; ++j) {
      const Work& x = works[j];
      const Expected& e = sequence[size_t(cta + int64_t(j) * ctas)];
      const auto at = [&] {
        return what + ", CTA " + std::to_string(cta) + " work " + std::to_string(j) + ": " + str(x);
      };
      const int count = g.masked_m[size_t(e.group)];
      const Work want{e.group,
                      int64_t(e.group) * g.m + int64_t(e.m_block) * p.block_m,
                      std::min(p.block_m, count - e.m_block * p.block_m),
                      e.n_block,
                      0,
                      p.block_m == 256 ? 2 : 1};
      if (key(x) != key(want)) {
        f.add(at() + ", expected " + str(want));
        continue;
      }
      for (int64_t box = 0; box * kBox < x.rows; ++box)
        ++covered[cell(x.group, (x.row0 - int64_t(x.group) * g.m) / kBox + box, x.n_block)];
    }
  }
  for (int group = 0; group < g.groups(); ++group) {
    const int count = g.masked_m[size_t(group)];
    const int64_t boxes = count < 0 || count > g.m ? 0 : (count + kBox - 1) / kBox;
    for (int64_t box = 0; box < g.m / kBox; ++box)
      for (int n = 0; n < p.tiles_n; ++n) {
        const int times = covered[cell(group, box, n)];
        if (times != (box < boxes ? 1 : 0))
          f.add(what + ": group " + std::to_string(group) + " box " + std::to_string(box) +
                " n_block " + std::to_string(n) + " covered " + std::to_string(times) + " times");
      }
  }
}

// The tiles the scheduler tests use: every height, a few widths (all compiled, so that
// make_config builds the parameters the launch would).
const ch15::Tile kWalkTiles[] = {{64, 16},  {64, 112},  {64, 160}, {128, 16},
                                 {128, 64}, {128, 160}, {256, 96}, {256, 128}};
const int kCtaCounts[] = {1, 7, 132};

TEST(Chapter15, ContiguousSchedulerCoversEveryBoxOnce) {
  std::mt19937_64 rng(1515);
  int walks = 0;
  for (const std::vector<int64_t>& rows : rows_lists()) {
    for (std::mt19937_64* padding : {static_cast<std::mt19937_64*>(nullptr), &rng}) {
      const Groups g = contiguous(rows, padding);
      for (const int64_t n : {int64_t(256), int64_t(1168)}) {
        for (const ch15::Tile t : kWalkTiles) {
          SchedulerParams p = params(g, n, t);
          ASSERT_EQ(p.tiles_m, int((g.m + t.block_m - 1) / t.block_m));
          ASSERT_EQ(p.tiles_n, int((n + t.block_n - 1) / t.block_n));
          // The order group the configuration chose, and two others: any must work.
          for (const int order_group : {p.order_group, 1, 5}) {
            p.order_group = order_group;
            for (const int ctas : kCtaCounts) {
              const std::string what = describe(g) + ", N " + std::to_string(n) + ", tile " +
                                       std::to_string(t.block_m) + "x" + std::to_string(t.block_n) +
                                       ", order group " + std::to_string(order_group) + ", " +
                                       std::to_string(ctas) + " CTAs";
              const Walk w = walk(p, g, ctas);
              Failures f;
              const Covers covers = check_contiguous(g, p, w, what, f);
              expect_every_box_once(g, p, covers, what, f);
              EXPECT_EQ(w.status, 0u) << what;
              ASSERT_EQ(f.count(), 0) << f.count() << " failures:" << f.text();
              ++walks;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(walks, 1000);
}

// The cases the contract names, spelt out: blocks of padding are works of group -1, a 256-row tile
// with two groups is two works, [0, 1) and [1, 2).
TEST(Chapter15, ContiguousPaddingAndTwoGroupTiles) {
  // Rows 0-127 group 0 (100 valid), 128-255 padding, 256-383 group 1 (128 valid), 384-511 group 2
  // (1 valid), 512-767 group 3 (129 valid).
  Groups g = contiguous({100, 128, 1, 129});
  g.m_indices.insert(g.m_indices.begin() + 128, 128, -1);
  for (int64_t& first : g.first_row) first += first > 0 ? 128 : 0;
  g.m += 128;
  ASSERT_EQ(g.m, 768);
  const SchedulerParams p = params(g, 256, {256, 128});
  const Walk w = walk(p, g, 1);
  std::vector<std::tuple<int64_t, int, int, int>> seen;  // (row0, group, sub_begin, sub_end)
  for (const Work& x : w.works[0])
    if (x.n_block == 0) seen.push_back({x.row0, x.group, x.sub_begin, x.sub_end});
  std::sort(seen.begin(), seen.end());
  const std::vector<std::tuple<int64_t, int, int, int>> expected = {
      {0, -1, 1, 2}, {0, 0, 0, 1}, {256, 1, 0, 1}, {256, 2, 1, 2}, {512, 3, 0, 2}};
  EXPECT_EQ(seen, expected);
  for (const Work& x : w.works[0]) EXPECT_EQ(x.rows, 256) << str(x);
  EXPECT_EQ(w.status, 0u);

  // 128-row tiles: the padding block is one work of group -1 per n_block.
  const SchedulerParams p128 = params(g, 256, {128, 128});
  int padding_all = 0;
  for (const auto& works : walk(p128, g, 3).works)
    for (const Work& x : works) {
      padding_all += x.group == -1;
      if (x.group == -1) {
        EXPECT_EQ(x.row0, 128) << str(x);
      }
    }
  EXPECT_EQ(padding_all, p128.tiles_n);

  // The last tile of 256 rows with only 128 rows left: one work, sub [0, 2), 128 rows.
  const Groups h = contiguous({200, 5});
  ASSERT_EQ(h.m, 384);
  const SchedulerParams q = params(h, 128, {256, 128});
  const Walk v = walk(q, h, 2);
  std::vector<Work> all;
  for (const auto& works : v.works) all.insert(all.end(), works.begin(), works.end());
  ASSERT_EQ(all.size(), 2u);
  std::sort(all.begin(), all.end(), [](const Work& x, const Work& y) { return x.row0 < y.row0; });
  EXPECT_EQ(key(all[0]), key(Work{0, 0, 256, 0, 0, 2}));
  EXPECT_EQ(key(all[1]), key(Work{1, 256, 128, 0, 0, 2}));
}

TEST(Chapter15, MaskedSchedulerWalksGroupsInOrderMFastest) {
  int walks = 0;
  for (const std::vector<int64_t>& rows : rows_lists()) {
    for (const int64_t extra : {int64_t(0), int64_t(128)}) {
      const Groups g = masked(rows, extra);
      for (const int64_t n : {int64_t(256), int64_t(1168)}) {
        for (const ch15::Tile t : kWalkTiles) {
          const SchedulerParams p = params(g, n, t);
          ASSERT_EQ(p.layout, Layout::Masked);
          ASSERT_EQ(p.m, g.m);
          for (const int ctas : kCtaCounts) {
            const std::string what = describe(g) + ", N " + std::to_string(n) + ", tile " +
                                     std::to_string(t.block_m) + "x" + std::to_string(t.block_n) +
                                     ", " + std::to_string(ctas) + " CTAs";
            const Walk w = walk(p, g, ctas);
            Failures f;
            check_masked(g, p, w, what, f);
            EXPECT_EQ(w.status, 0u) << what;
            ASSERT_EQ(f.count(), 0) << f.count() << " failures:" << f.text();
            ++walks;
          }
        }
      }
    }
  }
  EXPECT_GT(walks, 1000);
}

// A masked group whose count is exactly max_m is full, not out of range.
TEST(Chapter15, MaskedCountOfMaxMIsAFullGroup) {
  Groups g = masked({64, 0, 1}, 128);
  g.masked_m[1] = int(g.m);
  g.rows[1] = g.m;
  for (const ch15::Tile t : kWalkTiles) {
    const SchedulerParams p = params(g, 512, t);
    const Walk w = walk(p, g, 7);
    Failures f;
    check_masked(g, p, w, "max_m " + std::to_string(g.m), f);
    EXPECT_EQ(w.status, 0u);
    EXPECT_EQ(f.count(), 0) << f.text();
  }
}

// A 128-row block whose first index is outside [-1, G): no work for its rows, kBadGroupIndex; the
// other boxes are covered as before, by works of the same group, first row and rows. (With 64-row
// tiles the scheduler reads each 64-row box's first index: only the first box of the block starts
// with the bad value.)
TEST(Chapter15, ContiguousBadGroupIndexSkipsItsBlock) {
  const std::vector<std::vector<int64_t>> lists = {
      {0, 1, 128, 256, 129, 0, 255, 257, 64, 65, 127, 384}, {300, 5}, {129}};
  for (const std::vector<int64_t>& rows : lists) {
    const Groups good = contiguous(rows);
    const int groups = good.groups();
    for (const ch15::Tile t : kWalkTiles) {
      const SchedulerParams p = params(good, 1168, t);
      for (const int ctas : {1, 7, 132}) {
        Failures f;
        const Covers before = check_contiguous(good, p, walk(p, good, ctas), "good", f);
        ASSERT_EQ(f.count(), 0) << f.text();
        for (int64_t block = 0; block < good.m / 128; ++block) {
          for (const int bad : {-2, -1000, INT_MIN, groups, groups + 1, 999, INT_MAX}) {
            Groups g = good;
            g.m_indices[size_t(block * 128)] = bad;
            const std::string what = describe(good) + ", block " + std::to_string(block) +
                                     " starts with " + std::to_string(bad) + ", tile " +
                                     std::to_string(t.block_m) + "x" + std::to_string(t.block_n) +
                                     ", " + std::to_string(ctas) + " CTAs";
            const Walk w = walk(p, g, ctas);
            EXPECT_EQ(w.status, ch15::kBadGroupIndex) << what;
            // The rows that lose their work: the block, or with 64-row tiles its first box.
            const int64_t lost_begin = block * 128 / kBox;
            const int64_t lost_end = lost_begin + (t.block_m == 64 ? 1 : 128 / kBox);
            Covers after(good.m / kBox, p.tiles_n);
            int64_t after_boxes = 0;
            for (const auto& works : w.works)
              for (const Work& x : works) {
                if (x.group < -1 || x.group >= groups) {
                  f.add(what + ": " + str(x) + " has a group outside [-1, G)");
                  continue;
                }
                const auto [begin, end] = stored_rows(p, x);
                if (x.row0 < 0 || end > good.m || x.n_block < 0 || x.n_block >= p.tiles_n) {
                  f.add(what + ": " + str(x) + " lies outside the problem");
                  continue;
                }
                for (int64_t box = begin / kBox; box * kBox < end; ++box, ++after_boxes)
                  after.add(box, x);
              }
            for (int64_t box = 0; box < good.m / kBox; ++box)
              for (int n = 0; n < p.tiles_n; ++n) {
                const Cover& was = before.at(box, n);
                const Cover& is = after.at(box, n);
                const auto where = [&] {
                  return what + ": box " + std::to_string(box) + " n_block " + std::to_string(n);
                };
                if (box >= lost_begin && box < lost_end) {
                  if (is.count != 0) f.add(where() + " still has " + str(is.work));
                  continue;
                }
                if (is.count != 1) {
                  f.add(where() + " covered " + std::to_string(is.count) + " times");
                  continue;
                }
                if (is.work.group != was.work.group || is.work.row0 != was.work.row0 ||
                    is.work.rows != was.work.rows)
                  f.add(where() + " was " + str(was.work) + ", is " + str(is.work));
              }
            if (after_boxes != (good.m / kBox - (lost_end - lost_begin)) * p.tiles_n)
              f.add(what + ": " + std::to_string(after_boxes) + " boxes covered");
            ASSERT_EQ(f.count(), 0) << f.count() << " failures:" << f.text();
          }
        }
      }
    }
  }
}

// masked_m[g] outside [0, max_m]: no work for group g, kBadMaskedM, and the other works exactly
// those of the same counts with masked_m[g] = 0.
TEST(Chapter15, MaskedBadCountSkipsItsGroup) {
  const std::vector<std::vector<int64_t>> lists = {
      {0, 1, 128, 256, 129, 0, 255, 257, 64, 65, 127, 384}, {300, 5}, {129}};
  for (const std::vector<int64_t>& rows : lists) {
    const Groups good = masked(rows, 64);
    for (const ch15::Tile t : kWalkTiles) {
      const SchedulerParams p = params(good, 1168, t);
      for (const int ctas : {1, 7, 132}) {
        for (int group = 0; group < good.groups(); ++group) {
          Groups zero = good;
          zero.masked_m[size_t(group)] = 0;
          std::vector<std::tuple<int, int64_t, int, int, int, int>> expected;
          for (const auto& works : walk(p, zero, ctas).works)
            for (const Work& x : works) expected.push_back(key(x));
          std::sort(expected.begin(), expected.end());
          for (const int bad : {-1, -1000, INT_MIN, int(good.m) + 1, int(good.m) + 64, INT_MAX}) {
            Groups g = good;
            g.masked_m[size_t(group)] = bad;
            const std::string what = describe(good) + ", group " + std::to_string(group) +
                                     " counts " + std::to_string(bad) + ", tile " +
                                     std::to_string(t.block_m) + "x" + std::to_string(t.block_n) +
                                     ", " + std::to_string(ctas) + " CTAs";
            const Walk w = walk(p, g, ctas);
            EXPECT_EQ(w.status, ch15::kBadMaskedM) << what;
            Failures f;
            check_masked(g, p, w, what, f);
            ASSERT_EQ(f.count(), 0) << f.count() << " failures:" << f.text();
            std::vector<std::tuple<int, int64_t, int, int, int, int>> seen;
            for (const auto& works : w.works)
              for (const Work& x : works) seen.push_back(key(x));
            std::sort(seen.begin(), seen.end());
            ASSERT_EQ(seen, expected) << what;
          }
        }
      }
    }
  }
}

// --- The configuration ---------------------------------------------------------------------------

struct NK {
  int64_t n, k;
};
constexpr NK kBenchmarkNK[] = {{6144, 7168}, {7168, 3072}, {4096, 4096}, {4096, 2048}};

ch15::GroupedShape contiguous_shape(int groups, int64_t rows, int64_t n, int64_t k) {
  ch15::GroupedShape s;
  s.layout = Layout::Contiguous;
  s.groups = groups;
  s.shape = {int64_t(groups) * round_up(rows, ch15::kAlignment), n, k};
  return s;
}
ch15::GroupedShape masked_shape(int groups, int64_t max_m, int64_t expected, int64_t n, int64_t k) {
  ch15::GroupedShape s;
  s.layout = Layout::Masked;
  s.groups = groups;
  s.shape = {max_m, n, k};
  s.expected_m = expected;
  return s;
}

// The rule of config.hpp, and what every configuration must be: a compiled tile, the stages and
// shared memory of chapter 12's kernel without a split, the scheduler's parameters for the shape,
// at most one CTA per SM and never more CTAs than tiles.
// --- Pairs ------------------------------------------------------------------------------------

// Both CTAs of every cluster walk pairs in step: the same number of works; each step's two works
// agree on sharing, and a shared pair is two consecutive m-blocks of one group and one n-block,
// both with rows. Every work lies inside the problem; a phantom (rows 0) has a group whose B
// exists. What the works store covers every (box of valid rows, n_block) once, as without pairs:
// the same tiles. Returns the phantoms.
int64_t check_pairs(const Groups& g, const SchedulerParams& p, int clusters,
                    const std::string& what, Failures& f) {
  int64_t phantoms = 0;
  const int64_t total_rows = g.layout == Layout::Contiguous ? g.m : g.m * g.groups();
  const int64_t boxes = total_rows / kBox;
  std::vector<int> covered(size_t(boxes * p.tiles_n), 0);
  for (int cluster = 0; cluster < clusters; ++cluster) {
    std::vector<Work> works[2];
    for (int rank = 0; rank < 2; ++rank) {
      ch15::GroupedScheduler s(p, g.m_indices.empty() ? nullptr : g.m_indices.data(),
                               g.masked_m.empty() ? nullptr : g.masked_m.data(), cluster, clusters,
                               rank);
      for (Work x; s.next(x);) {
        works[rank].push_back(x);
        if (int64_t(works[rank].size()) > p.max_pairs() + 1) {
          f.add(what + ": a walk longer than the pairs");
          return phantoms;
        }
      }
      if (s.status() != 0) f.add(what + ": status " + std::to_string(s.status()));
    }
    const std::string at_cluster = what + ", cluster " + std::to_string(cluster);
    if (works[0].size() != works[1].size()) {
      f.add(at_cluster + ": " + std::to_string(works[0].size()) + " and " +
            std::to_string(works[1].size()) + " works: the pair's CTAs part");
      continue;
    }
    for (size_t j = 0; j < works[0].size(); ++j) {
      const Work& x0 = works[0][j];
      const Work& x1 = works[1][j];
      const std::string at = at_cluster + ", step " + std::to_string(j) + ": " + str(x0) + " and " +
                             str(x1) + (x0.shared ? " shared" : "");
      if (x0.shared != x1.shared) f.add(at + ": the two CTAs disagree on sharing");
      if (x0.shared && (x0.group != x1.group || x0.group < 0 || x0.n_block != x1.n_block ||
                        x1.row0 != x0.row0 + p.block_m || x0.rows <= 0 || x1.rows <= 0))
        f.add(at + ": a shared pair must be two consecutive m-blocks of one group and n-block");
      for (const Work& x : {x0, x1}) {
        // The tile's first row: a multiple of BLOCK_M (masked: inside its group's max_m rows).
        const int64_t base = g.layout == Layout::Masked ? int64_t(x.group) * g.m : 0;
        if (x.row0 < 0 || x.row0 >= total_rows || (x.row0 - base) % p.block_m != 0 ||
            x.n_block < 0 || x.n_block >= p.tiles_n || x.group < -1 || x.group >= g.groups() ||
            x.rows < 0 || x.rows > p.block_m || x.sub_begin != 0 || x.sub_end != 1) {
          f.add(at + ": a work outside the problem");
          continue;
        }
        if (x.rows == 0) {
          ++phantoms;
          if (x.group < 0) f.add(at + ": a phantom without a group to load");
          continue;
        }
        if (g.layout == Layout::Masked) {
          const int64_t in_group = x.row0 - int64_t(x.group) * g.m;
          const int64_t count = g.masked_m[size_t(x.group)];
          if (in_group < 0 || in_group >= count ||
              x.rows != std::min<int64_t>(p.block_m, count - in_group))
            f.add(at + ": rows outside its group's count");
        } else if (x.group != g.m_indices[size_t(x.row0)]) {
          f.add(at + ": its rows start with index " + std::to_string(g.m_indices[size_t(x.row0)]));
        }
        for (int64_t box = x.row0 / kBox; box * kBox < x.row0 + x.rows; ++box)
          ++covered[size_t(box * p.tiles_n + x.n_block)];
      }
    }
  }
  for (int64_t box = 0; box < boxes; ++box) {
    // Boxes of valid rows: contiguous, every box (padding boxes store zeros); masked, the boxes
    // before the group's count.
    const bool valid =
        g.layout == Layout::Contiguous || (box * kBox) % g.m < g.masked_m[size_t(box * kBox / g.m)];
    for (int n = 0; n < p.tiles_n; ++n)
      if (covered[size_t(box * p.tiles_n + n)] != (valid ? 1 : 0))
        f.add(what + ": box " + std::to_string(box) + ", n_block " + std::to_string(n) +
              " covered " + std::to_string(covered[size_t(box * p.tiles_n + n)]) + " times");
  }
  return phantoms;
}

TEST(Chapter15, PairsWalkInStepAndCoverEveryBoxOnce) {
  std::mt19937_64 rng(1515);
  int walks = 0;
  for (const std::vector<int64_t>& rows : rows_lists()) {
    for (const Layout layout : {Layout::Contiguous, Layout::Masked}) {
      const Groups g = layout == Layout::Contiguous ? contiguous(rows, &rng) : masked(rows, 64);
      for (const int64_t n : {192, 384, 1152, 1168}) {
        const SchedulerParams p = params(g, n, ch15::kPairedTile, true);
        ASSERT_TRUE(p.paired);
        for (const int clusters : {1, 3, 66}) {
          Failures f;
          const std::string what = describe(g) + ", N " + std::to_string(n) + ", " +
                                   std::to_string(clusters) + " clusters";
          const int64_t phantoms = check_pairs(g, p, clusters, what, f);
          // Masked: a phantom only where a group has an odd count of m-blocks and of n-blocks,
          // one per such group. Contiguous: at most one per n-block (an odd count of m-blocks).
          int64_t most = 0;
          if (layout == Layout::Masked) {
            for (int c : g.masked_m) most += ((c + 127) / 128) % 2 == 1 && p.tiles_n % 2 == 1;
          } else {
            most = p.tiles_m % 2 == 1 ? p.tiles_n : 0;
          }
          if (phantoms > most)
            f.add(what + ": " + std::to_string(phantoms) + " phantoms, at most " +
                  std::to_string(most));
          EXPECT_EQ(f.count(), 0) << f.count() << " failures:" << f.text();
          ++walks;
          if (HasFailure()) return;
        }
      }
    }
  }
  EXPECT_GT(walks, 800);
}

// A bad index or count with pairs: the status bit, the block (or group) stored by no work, the
// pair's CTAs still in step.
TEST(Chapter15, PairsSkipBadIndicesAndCounts) {
  Groups c =
      contiguous({130, 50, 128, 1});  // m-blocks 0-1 group 0, 2 group 1, 3 group 2, 4 group 3
  const SchedulerParams pc = params(c, 1168, ch15::kPairedTile, true);
  for (const int block : {1, 2, 4}) {
    Groups bad = c;
    bad.m_indices[size_t(block * 128)] = 99;
    uint32_t status = 0;
    int64_t stored = 0;
    for (int rank = 0; rank < 2; ++rank) {
      ch15::GroupedScheduler w(pc, bad.m_indices.data(), nullptr, 0, 1, rank);
      for (Work x; w.next(x);) stored += x.rows > 0 && x.row0 == block * 128;
      status |= w.status();
    }
    EXPECT_EQ(status, ch15::kBadGroupIndex) << "block " << block;
    EXPECT_EQ(stored, 0) << "block " << block;
  }
  Groups m = masked({100, 1, 257, 64});
  const SchedulerParams pm = params(m, 1168, ch15::kPairedTile, true);
  for (const int group : {0, 2, 3}) {
    Groups bad = m;
    bad.masked_m[size_t(group)] = -1;
    uint32_t status = 0;
    size_t steps[2] = {0, 0};
    int64_t stored = 0;
    for (int rank = 0; rank < 2; ++rank) {
      ch15::GroupedScheduler w(pm, nullptr, bad.masked_m.data(), 0, 1, rank);
      for (Work x; w.next(x);) ++steps[rank], stored += x.group == group && x.rows > 0;
      status |= w.status();
    }
    EXPECT_EQ(status, ch15::kBadMaskedM) << "group " << group;
    EXPECT_EQ(stored, 0) << "group " << group;
    EXPECT_EQ(steps[0], steps[1]) << "group " << group;
  }
}

void expect_sound(const ch15::GroupedShape& s, const ch15::Config& c, int num_sms,
                  const std::string& what) {
  EXPECT_TRUE(ch15::compiled(c.tile)) << what;
  EXPECT_EQ(c.stages, ch12::stages_for(c.tile.block_m, c.tile.block_n, 1)) << what;
  EXPECT_GE(c.stages, 2) << what;
  EXPECT_EQ(c.smem_bytes, ch12::smem_bytes(c.tile.block_m, c.tile.block_n, 1)) << what;
  EXPECT_LE(c.smem_bytes, ch12::kSmemBudget) << what;
  const SchedulerParams& p = c.scheduler;
  EXPECT_EQ(p.layout, s.layout) << what;
  EXPECT_EQ(p.groups, s.groups) << what;
  EXPECT_EQ(p.m, s.shape.m) << what;
  EXPECT_EQ(p.block_m, c.tile.block_m) << what;
  EXPECT_EQ(p.block_n, c.tile.block_n) << what;
  EXPECT_EQ(p.tiles_m, (s.shape.m + c.tile.block_m - 1) / c.tile.block_m) << what;
  EXPECT_EQ(p.tiles_n, (s.shape.n + c.tile.block_n - 1) / c.tile.block_n) << what;
  EXPECT_GE(p.order_group, 1) << what;
  EXPECT_GE(c.grid, 1) << what;
  EXPECT_LE(c.grid, num_sms) << what;
  EXPECT_LE(c.grid, gemm::kH100Sms) << what;
  if (p.paired) {
    // Pairs: the 128 x 192 tile, clusters of two, as many as run at once up to the pairs.
    EXPECT_EQ(c.tile, ch15::kPairedTile) << what;
    EXPECT_EQ(c.grid, 2 * std::max<int64_t>(1, std::min<int64_t>(p.max_pairs(), num_sms / 2)))
        << what;
  } else {
    EXPECT_LE(int64_t(c.grid), p.max_tiles()) << what;
    // Contiguous: chapter 09's persistent grid; masked: every SM, up to the most tiles there can
    // be.
    const int64_t most = std::min<int64_t>(p.max_tiles(), int64_t(1) << 30);
    EXPECT_EQ(c.grid, s.layout == Layout::Contiguous ? ch09::persistent_grid(int(most), num_sms)
                                                     : int(std::min<int64_t>(most, num_sms)))
        << what;
  }
  EXPECT_EQ(p.max_tiles(),
            (s.layout == Layout::Masked ? s.groups : 1) * int64_t(p.tiles_m) * p.tiles_n)
      << what;
  if (s.layout == Layout::Contiguous) {
    EXPECT_FALSE(c.b_evict_first) << what;
  } else {
    EXPECT_EQ(c.b_evict_first,
              c.tile.block_m == 64 && (s.expected() + c.tile.block_m - 1) / c.tile.block_m == 1)
        << what;
  }
}

void expect_the_rule(const ch15::GroupedShape& s, const ch15::Config& c, int num_sms,
                     const std::string& what) {
  // Pairs with the tile 128 x 192 on two SMs or more: contiguous where a group's B is at most
  // 2^25 bytes and there are two m-blocks; masked where B is more than 2^25 bytes, or where a group
  // is expected to have 512 rows or more and K is at least 3072.
  const bool large_b = s.shape.n * s.shape.k > (int64_t(1) << 25);
  const bool wanted = s.layout == Layout::Contiguous
                          ? !large_b && s.shape.m > 128
                          : large_b || (s.expected() >= 512 && s.shape.k >= 3072);
  EXPECT_EQ(c.scheduler.paired, c.tile == ch15::kPairedTile && num_sms >= 2 && wanted) << what;
  if (s.layout == Layout::Contiguous) {
    EXPECT_EQ(c.tile.block_m, ch11::block_m_for(s.shape, num_sms)) << what;
    EXPECT_EQ(c.tile.block_n, ch11::block_n_for(s.shape, c.tile.block_m, num_sms)) << what;
    EXPECT_NE(c.tile.block_m, 64) << what;  // M >= 128
    return;
  }
  const int64_t e = s.expected();
  if (e <= 64) {
    EXPECT_EQ(c.tile.block_m, 64) << what;
  } else if (e <= 128) {
    EXPECT_EQ(c.tile.block_m, 128) << what;
  } else {
    // Above 128 rows, the tile of least expected time among the candidates, unless chapter 11's
    // rule (its height for all groups' rows, each group's rounded up to 256) takes a narrower
    // width than any candidate's.
    const gemm::Shape rows256{int64_t(s.groups) * round_up(e, 256), s.shape.n, s.shape.k};
    const int height = ch11::block_m_for(rows256, num_sms);
    const gemm::Shape rows_h{int64_t(s.groups) * round_up(e, height), s.shape.n, s.shape.k};
    const int width = ch11::block_n_for(rows_h, height, num_sms);
    if (width < 96) {
      EXPECT_EQ(c.tile, (ch15::Tile{height, width})) << what;
    } else {
      EXPECT_EQ(c.tile, ch15::masked_tile(s, num_sms)) << what;
      bool candidate = false;
      for (const ch15::MaskedCandidate& m : ch15::kMaskedCandidates) candidate |= m.tile == c.tile;
      EXPECT_TRUE(candidate) << what;
    }
    return;
  }
  const gemm::Shape dense{int64_t(s.groups) * round_up(e, c.tile.block_m), s.shape.n, s.shape.k};
  if (c.tile.block_m == 64) {
    EXPECT_EQ(c.tile.block_n, ch07::best_block_n_among(ch15::kStreamBlockN, dense, 64, num_sms))
        << what;
    EXPECT_LE(c.tile.block_n, 128) << what;
  } else {
    EXPECT_EQ(c.tile.block_n, ch11::block_n_for(dense, c.tile.block_m, num_sms)) << what;
  }
}

TEST(Chapter15, ConfigurationOfTheBenchmarkShapes) {
  std::vector<ch15::GroupedShape> shapes;
  for (const NK nk : kBenchmarkNK) {
    shapes.push_back(contiguous_shape(4, 8192, nk.n, nk.k));
    shapes.push_back(contiguous_shape(8, 4096, nk.n, nk.k));
    for (const auto& [groups, rows] :
         {std::pair<int, int64_t>{32, 192}, {6, 1024}, {32, 20}, {6, 20}})
      shapes.push_back(masked_shape(groups, 4096, rows, nk.n, nk.k));
  }
  ASSERT_EQ(shapes.size(), 24u);
  for (const ch15::GroupedShape& s : shapes) {
    const ch15::Config c = ch15::choose_config(s);
    const std::string what = ch15::describe(s, c);
    expect_sound(s, c, gemm::kH100Sms, what);
    expect_the_rule(s, c, gemm::kH100Sms, what);
    // Every shape of 192 rows a group or more runs chapter 11's 128 x 192 tile (README's table),
    // in pairs sharing B: contiguous but at 6144 x 7168, masked at 6144 x 7168 and, with 1024 rows,
    // at K of 3072 and 4096.
    if (s.layout == Layout::Contiguous || s.expected() > 128) {
      EXPECT_EQ(c.tile, (ch15::Tile{128, 192})) << what;
    }
    const bool paired = s.layout == Layout::Contiguous
                            ? s.shape.n != 6144
                            : s.expected() > 128 && (s.shape.n == 6144 ||
                                                     (s.expected() == 1024 && s.shape.k >= 3072));
    EXPECT_EQ(c.scheduler.paired, paired) << what;
    // Enough tiles for every SM in each of these shapes: at least as many CTAs as a full last
    // round would leave (chapter 09's persistent_grid keeps the rounds, not every SM).
    EXPECT_GE(c.grid, gemm::kH100Sms / 2) << what;
    // The description names the tile.
    const std::string tile =
        "BLOCK_M " + std::to_string(c.tile.block_m) + ", BLOCK_N " + std::to_string(c.tile.block_n);
    EXPECT_NE(what.find(tile), std::string::npos) << what;
  }
}

TEST(Chapter15, ConfigurationOfOtherShapes) {
  int shapes = 0;
  const auto check = [&](const ch15::GroupedShape& s, int num_sms) {
    const ch15::Config c = ch15::choose_config(s, num_sms);
    const std::string what = ch15::describe(s, c) + " on " + std::to_string(num_sms) + " SMs";
    expect_sound(s, c, num_sms, what);
    expect_the_rule(s, c, num_sms, what);
    ++shapes;
  };
  for (const int num_sms : {132, 78, 1}) {
    for (const int groups : {1, 2, 3, 8, 32, 256}) {
      for (const int64_t rows : {1, 20, 64, 65, 128, 129, 192, 500, 4096}) {
        for (const int64_t n : {8, 264, 1168, 4096, 7168, 24576}) {
          for (const int64_t k : {128, 7168}) {
            // (Contiguous up to 32768 rows: chapter 09's choice of the order walks every tile.)
            if (groups * round_up(rows, ch15::kAlignment) <= 32768)
              check(contiguous_shape(groups, rows, n, k), num_sms);
            for (const int64_t max_m : {round_up(rows, 64), int64_t(4096)})
              for (const int64_t expected : {int64_t(0), rows})
                check(masked_shape(groups, max_m, expected, n, k), num_sms);
            if (HasFailure()) return;
          }
        }
      }
    }
  }
  EXPECT_GT(shapes, 5000);
}

// The masked rule above 128 expected rows, at the 13 shapes of NOTES.md section 25 where it was
// timed against the rule before it (four draws of the counts each, H200, 2026-11-28): the tile it
// takes, the one measured faster there at 11 of them. (At 2 x 896 rows, 2048 x 7168 the rule
// before it, 256 x 128, measured 5.6% faster; at 4 x 224, 1536 x 2048 the two were level; at 16 x
// 544, 1024 x 7168 the margin now keeps 128 x 192, not the 128 x 128 timed there.) And the
// expected rounds: the same draws for every tile, so equal for equal tile counts.
TEST(Chapter15, MaskedTileForTheExpectedRounds) {
  struct Case {
    int groups;
    int64_t expected, n, k;
    ch15::Tile tile;
  };
  const Case cases[] = {{2, 1472, 1024, 7168, {256, 128}}, {2, 352, 3072, 2048, {128, 192}},
                        {16, 224, 1024, 4096, {128, 192}}, {4, 224, 1536, 2048, {128, 128}},
                        {8, 384, 1536, 2048, {128, 192}},  {16, 256, 4096, 2048, {128, 192}},
                        {6, 512, 1536, 2048, {128, 192}},  {16, 320, 5120, 2048, {128, 192}},
                        {8, 320, 4096, 4096, {128, 192}},  {2, 1312, 1024, 2048, {128, 192}},
                        {6, 1152, 2560, 4096, {128, 192}}, {2, 896, 2048, 7168, {128, 128}},
                        {16, 544, 1024, 7168, {128, 192}}};
  for (const Case& t : cases) {
    const ch15::GroupedShape s = masked_shape(t.groups, 4096, t.expected, t.n, t.k);
    const ch15::Config c = ch15::choose_config(s);
    EXPECT_EQ(c.tile, t.tile) << ch15::describe(s, c);
    // Asked again (from the cache), the same answer.
    EXPECT_EQ(ch15::choose_config(s).tile, t.tile) << ch15::describe(s, c);
  }
  // Every group's count between 0.7 and 1.3 x 160 needs two 128-row blocks or one 256-row block:
  // 4 groups, 2560 columns, 128 x 160 makes 8 x 16 = 128 tiles, one round; 128 x 144 makes 8 x 18
  // = 144, two.
  const ch15::GroupedShape s = masked_shape(4, 4096, 190, 2560, 7168);
  EXPECT_DOUBLE_EQ(ch15::expected_rounds(s, {128, 160}, 132), 1.0);
  EXPECT_DOUBLE_EQ(ch15::expected_rounds(s, {128, 144}, 132), 2.0);
  EXPECT_DOUBLE_EQ(ch15::expected_rounds(s, {256, 128}, 132), 1.0);
}

TEST(Chapter15, OverridesTakeEveryCompiledTile) {
  const ch15::GroupedShape shapes[] = {
      contiguous_shape(8, 4096, 4096, 2048), contiguous_shape(3, 129, 1168, 640),
      masked_shape(32, 4096, 20, 7168, 3072), masked_shape(6, 320, 0, 1168, 640)};
  for (const ch15::GroupedShape& s : shapes) {
    for (const ch15::Tile t : ch15::kTiles) {
      const std::string bm = std::to_string(t.block_m), bn = std::to_string(t.block_n);
      const ch15::Config c = ch15::choose_config(s, gemm::kH100Sms, bm.c_str(), bn.c_str());
      const std::string what = ch15::describe(s, c);
      EXPECT_EQ(c.tile, t) << what << " (forced " << bm << " x " << bn << ")";
      expect_sound(s, c, gemm::kH100Sms, what);
    }
    // BLOCK_M alone: the rule's width for it; BLOCK_N alone: the rule's height with it; "" and
    // nullptr leave the rule's choice.
    for (const char* bm : {"64", "128", "256"}) {
      const ch15::Config c = ch15::choose_config(s, gemm::kH100Sms, bm, nullptr);
      EXPECT_EQ(c.tile.block_m, std::stoi(bm)) << ch15::describe(s, c);
      expect_sound(s, c, gemm::kH100Sms, ch15::describe(s, c));
    }
    const ch15::Config rule = ch15::choose_config(s);
    EXPECT_EQ(ch15::choose_config(s, gemm::kH100Sms, "", "").tile, rule.tile);
    EXPECT_EQ(ch15::choose_config(s, gemm::kH100Sms, nullptr, nullptr).tile, rule.tile);
    for (const ch15::Tile t : ch15::kTiles) {
      if (t.block_m != rule.tile.block_m) continue;
      const std::string bn = std::to_string(t.block_n);
      EXPECT_EQ(ch15::choose_config(s, gemm::kH100Sms, nullptr, bn.c_str()).tile, t);
    }
  }
}

// The refusal's sentence names the variable.
void expect_refused(const ch15::GroupedShape& s, const char* bm, const char* bn,
                    const char* variable) {
  const std::string what = std::string("CH15_BLOCK_M=") + (bm ? bm : "(unset)") +
                           " CH15_BLOCK_N=" + (bn ? bn : "(unset)");
  try {
    const ch15::Config c = ch15::choose_config(s, gemm::kH100Sms, bm, bn);
    ADD_FAILURE() << what << " was taken: " << ch15::describe(s, c);
  } catch (const gemm::UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find(variable), std::string::npos) << what << ": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << " threw something other than UnsupportedError: " << e.what();
  }
}

TEST(Chapter15, OverridesRefuseBadText) {
  const ch15::GroupedShape s = contiguous_shape(4, 1000, 4096, 2048);
  for (const char* bad : {"0", "32", "96", "192", "512", "-64", "+128", "abc", "128x", " 128",
                          "128 ", "1e2", "64.0", "99999999999999999999"})
    expect_refused(s, bad, nullptr, "CH15_BLOCK_M");
  for (const char* bad : {"0", "8", "48", "80", "170", "176", "256", "-96", "+96", "abc", "96x",
                          " 96", "96.0", "1e2", "99999999999999999999", "4294967392"}) {
    expect_refused(s, nullptr, bad, "CH15_BLOCK_N");
    expect_refused(s, "128", bad, "CH15_BLOCK_N");
  }
  // Widths compiled for 64 and 128 rows but not for 256.
  for (const char* narrow : {"16", "32", "64", "112", "144", "160"})
    expect_refused(s, "256", narrow, "CH15_BLOCK_N");
  // A bad BLOCK_M is named even when BLOCK_N is good.
  expect_refused(s, "100", "128", "CH15_BLOCK_M");
  // CH15_PAIRS: "on" or "off", and "on" only with the 128 x 192 tile, on two SMs or more.
  for (const char* bad : {"1", "yes", "On", "ON", "true", " on", "on ", "of"})
    EXPECT_THROW(ch15::choose_config(s, gemm::kH100Sms, "128", "192", bad), gemm::UnsupportedError)
        << bad;
  EXPECT_THROW(ch15::choose_config(s, gemm::kH100Sms, "256", "128", "on"), gemm::UnsupportedError);
  EXPECT_THROW(ch15::choose_config(s, 1, "128", "192", "on"), gemm::UnsupportedError);
  EXPECT_TRUE(ch15::choose_config(s, gemm::kH100Sms, "128", "192", "on").scheduler.paired);
  EXPECT_FALSE(ch15::choose_config(s, gemm::kH100Sms, "128", "192", "off").scheduler.paired);
  // CH15_BOX_ROWS: "32" or "64"; nullptr or "" leaves the rule's.
  const ch15::Config chosen = ch15::choose_config(s);
  for (const char* bad : {"0", "16", "48", "96", "128", "+32", " 32", "32 ", "032", "abc", "3.2e1"})
    EXPECT_THROW(ch15::apply_box_rows_override(chosen, bad), gemm::UnsupportedError) << bad;
  EXPECT_EQ(ch15::apply_box_rows_override(chosen, "32").box_rows, 32);
  EXPECT_EQ(ch15::apply_box_rows_override(chosen, "64").box_rows, 64);
  EXPECT_EQ(ch15::apply_box_rows_override(chosen, "").box_rows, chosen.box_rows);
  EXPECT_EQ(ch15::apply_box_rows_override(chosen, nullptr).box_rows, chosen.box_rows);
  // make_config refuses a tile that has no kernel.
  ch15::GroupedShape g = s;
  EXPECT_THROW(ch15::make_config(g, {256, 64}), gemm::UnsupportedError);
  EXPECT_THROW(ch15::make_config(g, {128, 48}), gemm::UnsupportedError);
  EXPECT_THROW(ch15::make_config(g, {32, 128}), gemm::UnsupportedError);
}

// The boxes of A and D: 32 rows in the masked layout with 64-row tiles; 64 otherwise.
TEST(Chapter15, MaskedBoxesAre32RowsWith64RowTiles) {
  for (const int64_t expected : {1, 20, 64, 192, 1024})
    for (const ch15::Tile t : ch15::kTiles) {
      ch15::GroupedShape m{Layout::Masked, 6, {4096, 4096, 2048}, expected};
      const ch15::Config c = ch15::make_config(m, t, gemm::kH100Sms, t == ch15::kPairedTile);
      const int rows = t.block_m == 64 ? 32 : 64;
      EXPECT_EQ(c.box_rows, rows) << expected << ", " << t.block_m << " x " << t.block_n;
      EXPECT_NE(ch15::describe(m, c).find("boxes of " + std::to_string(rows) + " rows"),
                std::string::npos);
      const ch15::GroupedShape k = contiguous_shape(4, 1000, 4096, 2048);
      EXPECT_EQ(ch15::make_config(k, t).box_rows, 64) << t.block_m << " x " << t.block_n;
    }
  // The benchmark's: 32 at 32 x 20 and 6 x 20 rows (64-row tiles), 64 at the others.
  for (const int64_t expected : {20, 192, 1024}) {
    const ch15::GroupedShape m{Layout::Masked, 32, {4096, 6144, 7168}, expected};
    EXPECT_EQ(ch15::choose_config(m).box_rows, expected == 20 ? 32 : 64) << expected;
  }
  EXPECT_EQ(ch15::choose_config(contiguous_shape(8, 4096, 6144, 7168)).box_rows, 64);
}

TEST(Chapter15, TheTilesAreChapter11sWithoutACluster) {
  EXPECT_EQ(ch15::kNumTiles, 19);
  for (const ch15::Tile t : ch15::kTiles) {
    bool found = false;
    for (const ch11::Variant& v : ch11::kVariants)
      found |=
          v.block_m == t.block_m && v.block_n == t.block_n && v.multicast == ch10::Multicast::None;
    EXPECT_TRUE(found) << t.block_m << " x " << t.block_n;
    EXPECT_TRUE(ch15::compiled(t));
  }
  for (const ch11::Variant& v : ch11::kVariants)
    EXPECT_TRUE(ch15::compiled({v.block_m, v.block_n})) << v.block_m << " x " << v.block_n;
}

// --- argument_error --------------------------------------------------------------------------------

// Made-up addresses, 1 TiB apart (every tensor of these tests, the 2^31-row ones included, fits
// between two of them), each 4 KiB aligned.
constexpr uintptr_t kTiB = uintptr_t(1) << 40;
constexpr uintptr_t kAddrA = 1 * kTiB, kAddrSa = 2 * kTiB, kAddrB = 3 * kTiB, kAddrSb = 4 * kTiB,
                    kAddrD = 5 * kTiB, kAddrIndices = 6 * kTiB, kAddrCounts = 7 * kTiB,
                    kAddrStatus = 8 * kTiB;

template <class T>
T* at(uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

// A ragged shape (N not a multiple of 128 or of any tile width, 5 K blocks) in each layout.
ch15::GroupedArgs good_args(Layout layout) {
  ch15::GroupedArgs args;
  args.layout = layout;
  args.groups = layout == Layout::Contiguous ? 4 : 6;
  args.shape =
      layout == Layout::Contiguous ? gemm::Shape{512, 1168, 640} : gemm::Shape{320, 1168, 640};
  args.a = at<const __nv_fp8_e4m3>(kAddrA);
  args.sa = at<const float>(kAddrSa);
  args.b = at<const __nv_fp8_e4m3>(kAddrB);
  args.sb = at<const float>(kAddrSb);
  args.d = at<__nv_bfloat16>(kAddrD);
  if (layout == Layout::Contiguous)
    args.m_indices = at<const int>(kAddrIndices);
  else
    args.masked_m = at<const int>(kAddrCounts);
  args.expected_m = layout == Layout::Masked ? 100 : 0;
  args.status = at<uint32_t>(kAddrStatus);
  return args;
}

// Bytes of A and of B in the layouts of grouped.hpp.
int64_t bytes_a(const ch15::GroupedArgs& a) {
  return (a.layout == Layout::Masked ? a.groups : 1) * a.shape.m * a.shape.k;
}
int64_t bytes_b(const ch15::GroupedArgs& a) {
  return int64_t(a.groups) * a.shape.n * a.shape.k;
}
int64_t bytes_d(const ch15::GroupedArgs& a) {
  return (a.layout == Layout::Masked ? a.groups : 1) * a.shape.m * a.shape.n * 2;
}

const char* name(Layout l) {
  return l == Layout::Contiguous ? "contiguous" : "masked";
}

void expect_accepted(const ch15::GroupedArgs& args, const std::string& what) {
  EXPECT_EQ(ch15::argument_error(args), "") << name(args.layout) << ": " << what;
}

// Refused, and the sentence holds every one of `words` (and at least one of `any`, if given).
void expect_refusal(const ch15::GroupedArgs& args, const std::string& what,
                    std::initializer_list<const char*> words,
                    std::initializer_list<const char*> any = {}) {
  const std::string why = ch15::argument_error(args);
  const std::string context = std::string(name(args.layout)) + ", " + what + ": \"" + why + "\"";
  ASSERT_FALSE(why.empty()) << context << " was accepted";
  for (const char* w : words)
    EXPECT_NE(why.find(w), std::string::npos) << context << " lacks \"" << w << "\"";
  if (any.size() == 0) return;
  bool found = false;
  for (const char* w : any) found |= why.find(w) != std::string::npos;
  EXPECT_TRUE(found) << context << " names none of the expected words";
}

TEST(Chapter15, ArgumentErrorAcceptsGoodArguments) {
  for (const Layout l : {Layout::Contiguous, Layout::Masked}) {
    const ch15::GroupedArgs good = good_args(l);
    expect_accepted(good, "the baseline");
    ch15::GroupedArgs a = good;
    a.status = nullptr;
    expect_accepted(a, "no status word (it is optional)");
    // The pointer the other layout reads is not needed.
    a = good;
    if (l == Layout::Contiguous)
      a.masked_m = at<const int>(kAddrCounts);
    else
      a.m_indices = at<const int>(kAddrIndices);
    expect_accepted(a, "the other layout's pointer given too");
    // One group; N of 8; K of 128.
    a = good;
    a.groups = 1;
    expect_accepted(a, "one group");
    a = good;
    a.shape.n = 8;
    expect_accepted(a, "N = 8");
    a = good;
    a.shape.k = 128;
    expect_accepted(a, "K = 128");
    // D right after A ends, and right before B starts: adjacent, not overlapping.
    a = good;
    a.d = at<__nv_bfloat16>(kAddrA + uintptr_t(bytes_a(good)));
    expect_accepted(a, "D right after A");
    a = good;
    a.d = at<__nv_bfloat16>(kAddrB - uintptr_t(bytes_d(good)));
    expect_accepted(a, "D right before B");
  }
  ch15::GroupedArgs m = good_args(Layout::Masked);
  for (const int64_t e : {int64_t(0), int64_t(1), int64_t(64), m.shape.m}) {
    m.expected_m = e;
    expect_accepted(m, "expected_m " + std::to_string(e));
  }
  m = good_args(Layout::Masked);
  m.shape.m = 64;
  m.expected_m = 0;
  expect_accepted(m, "max_m = 64");
  ch15::GroupedArgs c = good_args(Layout::Contiguous);
  c.shape.m = 128;
  expect_accepted(c, "M = 128");
  // Just inside TMA's 32-bit coordinates: G x N rows of B, G x max_m rows of A and D.
  c = good_args(Layout::Contiguous);
  c.groups = (1 << 18) - 1;  // x 8192 = 2^31 - 8192 rows of B
  c.shape = {128, 8192, 128};
  expect_accepted(c, "G x N = 2^31 - 8192 rows of B");
  m = good_args(Layout::Masked);
  m.groups = (1 << 15) - 1;  // x 65536 = 2^31 - 65536 rows of A and D
  m.shape = {65536, 8, 128};
  m.expected_m = 0;
  expect_accepted(m, "G x max_m = 2^31 - 65536 rows of A and D");
}

TEST(Chapter15, ArgumentErrorRefusesEachBrokenConstraint) {
  for (const Layout l : {Layout::Contiguous, Layout::Masked}) {
    const ch15::GroupedArgs good = good_args(l);
    ch15::GroupedArgs a = good;
    a.layout = static_cast<Layout>(2);
    expect_refusal(a, "layout 2", {"layout"});
    for (const int g : {0, -1, INT_MIN}) {
      a = good;
      a.groups = g;
      expect_refusal(a, "groups " + std::to_string(g), {"group"});
    }
    for (const int64_t n : {1172, 1164, 4, 0, -8}) {
      a = good;
      a.shape.n = n;
      expect_refusal(a, "N " + std::to_string(n), {"N"});
    }
    for (const int64_t k : {704, 64, 0, 129, -128}) {
      a = good;
      a.shape.k = k;
      expect_refusal(a, "K " + std::to_string(k), {"K"});
    }
    // Null pointers, each by itself.
    for (const char* which : {"A", "scale A", "B", "scale B", "D"}) {
      a = good;
      const std::string w = which;
      if (w == "A") a.a = nullptr;
      if (w == "scale A") a.sa = nullptr;
      if (w == "B") a.b = nullptr;
      if (w == "scale B") a.sb = nullptr;
      if (w == "D") a.d = nullptr;
      expect_refusal(a, "null " + w, {"null"});
    }
    a = good;
    if (l == Layout::Contiguous) {
      a.m_indices = nullptr;
      expect_refusal(a, "null m_indices", {"m_indices"});
      a = good;
      a.m_indices = nullptr;
      a.masked_m = at<const int>(kAddrCounts);  // the other layout's pointer does not stand in
      expect_refusal(a, "null m_indices, masked_m given", {"m_indices"});
    } else {
      a.masked_m = nullptr;
      expect_refusal(a, "null masked_m", {"masked_m"});
      a = good;
      a.masked_m = nullptr;
      a.m_indices = at<const int>(kAddrIndices);
      expect_refusal(a, "null masked_m, m_indices given", {"masked_m"});
    }
    // Misaligned pointers: TMA's 16 bytes for A, B, scale A and D; 4 for scale B and the ints.
    a = good;
    a.a = at<const __nv_fp8_e4m3>(kAddrA + 8);
    expect_refusal(a, "A 8 bytes past 16", {"align"});
    a = good;
    a.b = at<const __nv_fp8_e4m3>(kAddrB + 1);
    expect_refusal(a, "B 1 byte past 16", {"align"});
    a = good;
    a.sa = at<const float>(kAddrSa + 8);
    expect_refusal(a, "scale A 8 bytes past 16", {"align"});
    a = good;
    a.sb = at<const float>(kAddrSb + 2);
    expect_refusal(a, "scale B 2 bytes past 4", {"align"});
    a = good;
    a.d = at<__nv_bfloat16>(kAddrD + 8);
    expect_refusal(a, "D 8 bytes past 16", {"align"});
    a = good;
    if (l == Layout::Contiguous)
      a.m_indices = at<const int>(kAddrIndices + 2);
    else
      a.masked_m = at<const int>(kAddrCounts + 2);
    expect_refusal(a, "the indices or counts 2 bytes past 4", {"align"});
    a = good;
    a.status = at<uint32_t>(kAddrStatus + 2);
    expect_refusal(a, "status 2 bytes past 4", {"align"});
    // D overlapping an input.
    a = good;
    a.d = at<__nv_bfloat16>(kAddrA);
    expect_refusal(a, "D = A", {"overlap"});
    a = good;
    a.d = at<__nv_bfloat16>(kAddrA + uintptr_t(bytes_a(good)) - 16);
    expect_refusal(a, "D over A's last 16 bytes", {"overlap"});
    a = good;
    a.d = at<__nv_bfloat16>(kAddrB + uintptr_t(bytes_b(good)) - 16);
    expect_refusal(a, "D over B's last 16 bytes (the last group's B)", {"overlap"});
    a = good;
    a.d = at<__nv_bfloat16>(kAddrB - uintptr_t(bytes_d(good)) + 16);
    expect_refusal(a, "D's last 16 bytes over B", {"overlap"});
    a = good;
    a.d = at<__nv_bfloat16>(kAddrSa);
    expect_refusal(a, "D = scale A", {"overlap"});
    a = good;
    a.d = at<__nv_bfloat16>(kAddrSb);
    expect_refusal(a, "D = scale B", {"overlap"});
    // Beyond TMA's 32-bit coordinates: G x N rows of B.
    a = good;
    a.groups = 1 << 18;
    a.shape.n = 8192;
    a.shape.k = 128;
    if (l == Layout::Contiguous) a.shape.m = 128;
    if (l == Layout::Masked) a.shape.m = 64, a.expected_m = 0;
    expect_refusal(a, "G x N = 2^31 rows of B", {}, {"2^31", "32-bit", "32 bit", "int32"});
  }
  ch15::GroupedArgs c = good_args(Layout::Contiguous);
  for (const int64_t m : {576, 100, 64, 0}) {
    c.shape.m = m;
    expect_refusal(c, "M " + std::to_string(m), {"M"});
  }
  c = good_args(Layout::Contiguous);
  c.shape = {int64_t(1) << 31, 8, 128};
  expect_refusal(c, "M = 2^31 rows of A and D", {}, {"2^31", "32-bit", "32 bit", "int32"});

  ch15::GroupedArgs m = good_args(Layout::Masked);
  for (const int64_t max_m : {96, 100, 32, 0}) {
    m.shape.m = max_m;
    m.expected_m = 0;
    expect_refusal(m, "max_m " + std::to_string(max_m), {"max_m"});
  }
  m = good_args(Layout::Masked);
  for (const int64_t e : {int64_t(-1), m.shape.m + 1, int64_t(1) << 40}) {
    m.expected_m = e;
    expect_refusal(m, "expected_m " + std::to_string(e), {"expected_m"});
  }
  m = good_args(Layout::Masked);
  m.groups = 1 << 15;
  m.shape = {65536, 8, 128};
  m.expected_m = 0;
  expect_refusal(m, "G x max_m = 2^31 rows of A and D", {}, {"2^31", "32-bit", "32 bit", "int32"});
}

// m_indices and masked_m are inputs too: the epilogue reads m_indices while other CTAs store D, and
// every CTA reads masked_m as it walks. grouped.hpp: "D overlapping no input".
TEST(Chapter15, ArgumentErrorRefusesDOverTheIndicesOrCounts) {
  ch15::GroupedArgs c = good_args(Layout::Contiguous);
  c.d = at<__nv_bfloat16>(kAddrIndices);
  expect_refusal(c, "D = m_indices", {"overlap"});
  c = good_args(Layout::Contiguous);
  c.d = at<__nv_bfloat16>(kAddrIndices - uintptr_t(bytes_d(c)) + 16);
  expect_refusal(c, "D's last 16 bytes over m_indices", {"overlap"});
  ch15::GroupedArgs m = good_args(Layout::Masked);
  m.d = at<__nv_bfloat16>(kAddrCounts - uintptr_t(bytes_d(m)) + 16);
  expect_refusal(m, "D's last 16 bytes over masked_m", {"overlap"});
}

TEST(Chapter15, StatusMessages) {
  EXPECT_EQ(ch15::status_message(0), "");
  // Each bit's sentence, and the words that name it.
  const std::pair<uint32_t, std::vector<const char*>> bits[] = {
      {ch15::kBadGroupIndex, {"group index", "tile"}},
      {ch15::kBadRowIndex, {"row", "group index", "zeros"}},
      {ch15::kBadMaskedM, {"masked_m"}}};
  std::vector<std::string> sentences;
  for (const auto& [bit, words] : bits) {
    const std::string m = ch15::status_message(bit);
    for (const char* w : words)
      EXPECT_NE(m.find(w), std::string::npos) << "bit " << bit << ": \"" << m << "\" lacks " << w;
    sentences.push_back(m);
  }
  EXPECT_NE(sentences[0], sentences[1]);
  EXPECT_NE(sentences[0], sentences[2]);
  EXPECT_NE(sentences[1], sentences[2]);
  // Several bits: every one is named.
  const std::string all =
      ch15::status_message(ch15::kBadGroupIndex | ch15::kBadRowIndex | ch15::kBadMaskedM);
  for (const auto& [bit, words] : bits)
    for (const char* w : words)
      EXPECT_NE(all.find(w), std::string::npos) << "\"" << all << "\" lacks " << w;
  EXPECT_NE(ch15::status_message(ch15::kBadGroupIndex | ch15::kBadMaskedM), "");
  // A bit no one defined is still not silence.
  EXPECT_NE(ch15::status_message(8u), "");
  // The bits are distinct.
  EXPECT_EQ(ch15::kBadGroupIndex & ch15::kBadRowIndex, 0u);
  EXPECT_EQ(ch15::kBadGroupIndex & ch15::kBadMaskedM, 0u);
  EXPECT_EQ(ch15::kBadRowIndex & ch15::kBadMaskedM, 0u);
}

}  // namespace
