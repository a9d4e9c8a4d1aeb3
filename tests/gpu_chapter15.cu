// Chapter 15's GPU checks: the grouped GEMM in both layouts against the CPU reference, group by
// group, with chapter 12's bound; every row the contract says is written, written (D is poisoned
// first), and every row it says is left alone, left alone; every compiled tile; the same bits as
// chapter 12 run group by group; a CUDA graph replayed with new counts; bad indices and counts on
// the device reported and skipped; and the refusals that come before any launch.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "chapters/12_split_k/config.hpp"
#include "chapters/15_grouped_gemm/config.hpp"
#include "chapters/15_grouped_gemm/grouped.hpp"
#include "chapters/15_grouped_gemm/problem.hpp"
#include "chapters/registry.hpp"
#include "common/reference.hpp"
#include "tests/gpu.hpp"

namespace ch12 {
void gemm_variant(const gemm::GemmArgs& args, Variant v, cudaStream_t stream);  // kernel.cu
}  // namespace ch12

namespace gemm {
namespace {

using testing::EnvOverride;  // tests/gpu.hpp

using ch15::Layout;

const char* name(Layout l) {
  return l == Layout::Contiguous ? "contiguous" : "masked";
}

std::string rows_text(const std::vector<int64_t>& rows) {
  std::string s = "{";
  for (size_t i = 0; i < rows.size() && i < 16; ++i) s += (i ? ", " : "") + std::to_string(rows[i]);
  if (rows.size() > 16) s += ", ... (" + std::to_string(rows.size()) + " groups)";
  return s + "}";
}

// CH15_BLOCK_M and CH15_BLOCK_N (either may be left out: 0) for the lifetime of the object: what
// the launch reads, and what describe_config reports.
class TileOverride {
 public:
  TileOverride(int block_m, int block_n)
      : m_("CH15_BLOCK_M", block_m > 0 ? std::to_string(block_m) : std::string()),
        n_("CH15_BLOCK_N", block_n > 0 ? std::to_string(block_n) : std::string()) {}
  explicit TileOverride(ch15::Tile t) : TileOverride(t.block_m, t.block_n) {}

 private:
  EnvOverride m_, n_;  // "" is as unset: the launch's parse leaves the rule's choice
};

std::string tile_text(ch15::Tile t) {
  return "BLOCK_M " + std::to_string(t.block_m) + ", BLOCK_N " + std::to_string(t.block_n);
}

// A grouped problem on the host with the CPU reference of each group that has rows.
struct Checked {
  ch15::GroupedHostProblem host;
  std::vector<Reference> refs;  // per group; empty (shape.m = 0) for a group of no rows
  std::string what;
};

Checked make_checked(Layout layout, const std::vector<int64_t>& rows, int64_t n, int64_t k,
                     uint64_t seed, int64_t max_m = 0) {
  Checked c;
  c.host = ch15::make_grouped_problem(layout, rows, n, k, seed, max_m);
  c.refs.resize(rows.size());
  for (int g = 0; g < c.host.groups; ++g)
    if (rows[size_t(g)] > 0) c.refs[size_t(g)] = reference_gemm(c.host.group_problem(g));
  c.what = std::string(name(layout)) + ", rows " + rows_text(rows) + ", " +
           (layout == Layout::Contiguous ? "M " : "max_m ") + std::to_string(c.host.shape.m) +
           ", N " + std::to_string(n) + ", K " + std::to_string(k) + ", seed " +
           std::to_string(seed);
  return c;
}

// What a run should leave in D beyond the contract's default (grouped.hpp: every valid row its
// product; contiguous padding rows zeros; masked rows from masked_m[g] to the next multiple of the
// store box's rows zeros, the rest untouched).
struct Expected {
  int box_rows = 0;  // the rows of D's store box; 0: the configuration's for the problem's args
  std::vector<int64_t> counts;                         // masked: the counts the kernel read, if
                                                       // not the problem's rows
  std::vector<std::pair<int64_t, int64_t>> untouched;  // rows of D skipped: still poison
  std::vector<int64_t> zeroed;                         // rows of D stored as zeros (a bad index)
};

// Checks every element of D: the products against each group's reference (chapter 12's bound),
// the zeros, and the poison where nothing may be stored.
void expect_d(const Checked& c, const std::vector<uint16_t>& d, const std::string& what,
              const Expected& e = {}) {
  const ch15::GroupedHostProblem& h = c.host;
  const int64_t n = h.shape.n, k = h.shape.k, rows = h.d_rows();
  ASSERT_EQ(int64_t(d.size()), rows * n) << what;
  enum Kind : int8_t { kProduct, kZero, kPoison };
  std::vector<Kind> kind(size_t(rows), kPoison);
  std::vector<int> group(size_t(rows), -1);
  std::vector<int64_t> in_group(size_t(rows), 0);
  if (h.layout == Layout::Contiguous) {
    for (int64_t r = 0; r < rows; ++r) {
      const int g = h.m_indices[size_t(r)];
      kind[size_t(r)] = g >= 0 ? kProduct : kZero;
      if (g >= 0) group[size_t(r)] = g, in_group[size_t(r)] = r - h.first_row[size_t(g)];
    }
  } else {
    ch15::GroupedArgs shape_only;
    shape_only.layout = h.layout, shape_only.groups = h.groups, shape_only.shape = h.shape;
    const int64_t box = e.box_rows > 0 ? e.box_rows : ch15::configuration(shape_only).box_rows;
    for (int g = 0; g < h.groups; ++g) {
      const int64_t count = e.counts.empty() ? h.rows[size_t(g)] : e.counts[size_t(g)];
      ASSERT_LE(count, h.rows[size_t(g)]) << what << ": no reference for so many rows";
      for (int64_t i = 0; i < h.shape.m; ++i) {
        const int64_t r = int64_t(g) * h.shape.m + i;
        kind[size_t(r)] = i < count                           ? kProduct
                          : i < (count + box - 1) / box * box ? kZero
                                                              : kPoison;
        group[size_t(r)] = g;
        in_group[size_t(r)] = i;
      }
    }
  }
  for (const int64_t r : e.zeroed) kind[size_t(r)] = kZero;
  for (const auto& [begin, end] : e.untouched)
    for (int64_t r = begin; r < end; ++r) kind[size_t(r)] = kPoison;

  // The products, group by group.
  const Chapter& ch = *find_chapter(12);
  for (int g = 0; g < h.groups; ++g) {
    std::vector<uint16_t> got;
    Reference want;
    for (int64_t r = 0; r < rows; ++r) {
      if (kind[size_t(r)] != kProduct || group[size_t(r)] != g) continue;
      const Reference& ref = c.refs[size_t(g)];
      ASSERT_LT(in_group[size_t(r)], ref.shape.m) << what << ": group " << g;
      got.insert(got.end(), d.begin() + r * n, d.begin() + (r + 1) * n);
      const size_t at = size_t(in_group[size_t(r)] * n);
      want.value.insert(want.value.end(), ref.value.begin() + at, ref.value.begin() + at + n);
      want.abs_sum.insert(want.abs_sum.end(), ref.abs_sum.begin() + at,
                          ref.abs_sum.begin() + at + n);
    }
    if (got.empty()) continue;
    want.shape = {int64_t(got.size()) / n, n, k};
    const Comparison cmp = compare_to_reference(got, want, ch.tolerance({h.rows[size_t(g)], n, k}));
    const std::string at = what + ", group " + std::to_string(g) + " (" +
                           std::to_string(want.shape.m) + " rows compared): " + cmp.str();
    EXPECT_EQ(cmp.unwritten, 0) << at;
    EXPECT_EQ(cmp.nan, 0) << at;
    EXPECT_EQ(cmp.over_bound, 0) << at;
    EXPECT_LE(cmp.rel_diff, ch.max_rel_diff) << at;
  }
  // The zeros and the untouched rows.
  int64_t not_zero = 0, not_poison = 0, first_not_zero = -1, first_not_poison = -1;
  for (int64_t r = 0; r < rows; ++r) {
    if (kind[size_t(r)] == kProduct) continue;
    for (int64_t j = 0; j < n; ++j) {
      const uint16_t bits = d[size_t(r * n + j)];
      if (kind[size_t(r)] == kZero && (bits & 0x7FFF) != 0) {
        if (not_zero++ == 0) first_not_zero = r;
      }
      if (kind[size_t(r)] == kPoison && bits != kPoisonBits) {
        if (not_poison++ == 0) first_not_poison = r;
      }
    }
  }
  EXPECT_EQ(not_zero, 0) << what << ": elements that should be zeros are not (first in row "
                         << first_not_zero << ")";
  EXPECT_EQ(not_poison, 0) << what << ": elements that nothing may store were stored (first in row "
                           << first_not_poison << ")";
}

// Poisons D, runs chapter 15, reads the status word (throws on a bit) and returns D.
std::vector<uint16_t> run(const ch15::GroupedDeviceProblem& dev, const ch15::GroupedArgs& args) {
  dev.poison();
  ch15::gemm(args, nullptr);
  ch15::check_status(args.status, nullptr);
  return dev.download_d();
}

// A fresh problem, run with the configuration the rule chooses, checked.
void run_and_check(Layout layout, const std::vector<int64_t>& rows, int64_t n, int64_t k,
                   uint64_t seed, int64_t max_m = 0) {
  const Checked c = make_checked(layout, rows, n, k, seed, max_m);
  const ch15::GroupedDeviceProblem dev(c.host);
  const ch15::GroupedArgs args = dev.args();
  const std::string what = c.what + " (" + ch15::describe_config(args) + ")";
  expect_d(c, run(dev, args), what);
}

// The ragged rows: an empty group, one row, exactly one 128-row tile, 256 + 1, and others.
const std::vector<int64_t> kRaggedRows = {1, 0, 128, 257, 45, 200};

TEST(Chapter15, BothLayoutsMatchTheReference) {
  SKIP_WITHOUT_HOPPER();
  for (const Layout layout : {Layout::Contiguous, Layout::Masked})
    for (const int64_t k : {640, 1024})
      // Masked: max_m 384, past the largest group's 320 rows, so that some rows stay poison.
      run_and_check(layout, kRaggedRows, 1168, k,
                    testing::test_seed() + uint64_t(k) + 7 * uint64_t(layout), 384);
}

// 256 groups of a few rows each (some empty): every group its own B, and (masked) most of the
// groups one tile of 64 rows.
TEST(Chapter15, ManySmallGroups) {
  SKIP_WITHOUT_HOPPER();
  const uint64_t seed = testing::test_seed();
  std::mt19937_64 rng(seed);
  std::vector<int64_t> rows(256);
  for (int64_t& r : rows) r = rng() % 5 == 0 ? 0 : int64_t(1 + rng() % 12);
  rows[0] = 0;
  rows[255] = 12;
  for (const Layout layout : {Layout::Contiguous, Layout::Masked})
    run_and_check(layout, rows, 264, 256, seed + 1 + uint64_t(layout), 128);
}

// Every compiled tile, forced through the environment, on one ragged problem per layout.
TEST(Chapter15, EveryTileMatchesTheReference) {
  SKIP_WITHOUT_HOPPER();
  for (const Layout layout : {Layout::Contiguous, Layout::Masked}) {
    const Checked c =
        make_checked(layout, kRaggedRows, 1168, 640, testing::test_seed() + uint64_t(layout), 384);
    const ch15::GroupedDeviceProblem dev(c.host);
    for (const ch15::Tile t : ch15::kTiles) {
      const TileOverride force(t);
      const ch15::GroupedArgs args = dev.args();
      const std::string config = ch15::describe_config(args);
      EXPECT_NE(config.find(tile_text(t)), std::string::npos) << config;
      expect_d(c, run(dev, args), c.what + " (" + config + ")");
    }
  }
}

// Chapter 12's kernel on each group as a dense problem, with the same tile and no split: the same
// instructions in the same order for every element, so the same bits in every valid row.
TEST(Chapter15, BitForBitChapter12GroupByGroup) {
  SKIP_WITHOUT_HOPPER();
  for (const Layout layout : {Layout::Contiguous, Layout::Masked}) {
    const uint64_t seed = testing::test_seed() + uint64_t(layout);
    const ch15::GroupedHostProblem host =
        ch15::make_grouped_problem(layout, kRaggedRows, 1168, 1024, seed, 384);
    const ch15::GroupedDeviceProblem grouped(host), dense(host);
    for (const ch15::Tile t : ch15::kTiles) {
      const std::string what =
          std::string(name(layout)) + ", " + tile_text(t) + ", seed " + std::to_string(seed);
      std::vector<uint16_t> d15;
      {
        const TileOverride force(t);
        d15 = run(grouped, grouped.args());
      }
      dense.poison();
      for (const auto& g : dense.dense_groups())
        ch12::gemm_variant(g.args, ch12::Variant{t.block_m, t.block_n, ch10::Multicast::None, 1},
                           nullptr);
      const std::vector<uint16_t> d12 = dense.download_d();
      const int64_t n = host.shape.n;
      for (const auto& g : dense.dense_groups()) {
        const int64_t begin = host.first_row[size_t(g.group)] * n;
        const int64_t end = begin + host.rows[size_t(g.group)] * n;
        const std::vector<uint16_t> x(d15.begin() + begin, d15.begin() + end);
        const std::vector<uint16_t> y(d12.begin() + begin, d12.begin() + end);
        int64_t poison = 0;
        for (const uint16_t bits : x) poison += bits == kPoisonBits;
        EXPECT_EQ(poison, 0) << what << ", group " << g.group << ": rows chapter 15 never wrote";
        EXPECT_EQ(count_bit_differences(x, y), 0)
            << what << ", group " << g.group << " (" << host.rows[size_t(g.group)] << " rows)";
      }
    }
  }
}

// Owners of a stream, a graph and its executable.
struct Stream {
  cudaStream_t s = nullptr;
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s); }
};
struct Graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~Graph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
};

// The masked layout's reason to keep the counts on the GPU: one launch captured in a graph, then
// replayed with other counts written to the device between replays. The host problem is built
// with the largest count of each group over the replays; the reference of a group's first r rows is
// the first r rows of its reference (row i of D depends on row i of A alone), so expect_d compares
// those, and A's rows past r, which hold real data, must not reach D.
TEST(Chapter15, GraphReplaysWithNewCounts) {
  SKIP_WITHOUT_HOPPER();
  const std::vector<std::vector<int64_t>> replays = {
      {200, 0, 130, 64, 1, 0}, {17, 129, 1, 0, 3, 0}, {64, 65, 128, 63, 0, 0}};
  std::vector<int64_t> largest(replays[0].size(), 0);
  for (const auto& counts : replays)
    for (size_t g = 0; g < counts.size(); ++g) largest[g] = std::max(largest[g], counts[g]);
  const Checked c = make_checked(Layout::Masked, largest, 1168, 640, testing::test_seed(), 256);
  const ch15::GroupedDeviceProblem dev(c.host);
  const Stream stream;
  // expected_m 64: 64-row tiles; 0 (max_m, 256): the rule's tile for 256 rows; and 128 x 192 tiles
  // in pairs sharing B (CH15_PAIRS=on).
  for (const auto& [expected_m, pairs] :
       {std::pair<int64_t, bool>{64, false}, {0, false}, {0, true}}) {
    std::optional<TileOverride> tile;
    std::optional<EnvOverride> paired;
    if (pairs) tile.emplace(ch15::kPairedTile), paired.emplace("CH15_PAIRS", "on");
    ch15::GroupedArgs args = dev.args();
    args.expected_m = expected_m;
    const std::string what = c.what + " (" + ch15::describe_config(args) + ")";
    const std::vector<int> first(largest.begin(), largest.end());
    CUDA_CHECK(cudaMemcpy(dev.masked_m(), first.data(), first.size() * sizeof(int),
                          cudaMemcpyHostToDevice));

    // Once outside the graph (the first launch of a tile may set its attributes), with the
    // largest counts.
    dev.poison(stream.s);
    ch15::gemm(args, stream.s);
    ch15::check_status(args.status, stream.s);
    // The store box of this expected_m's configuration (expect_d's default reads the problem's).
    Expected direct;
    direct.box_rows = ch15::configuration(args).box_rows;
    expect_d(c, dev.download_d(), what + ", launched directly", direct);

    Graph graph;
    CUDA_CHECK(cudaStreamBeginCapture(stream.s, cudaStreamCaptureModeThreadLocal));
    try {
      ch15::gemm(args, stream.s);
    } catch (const std::exception& e) {
      cudaStreamEndCapture(stream.s, &graph.graph);
      cudaGetLastError();
      FAIL() << what << ": ch15::gemm while capturing: " << e.what();
    }
    CUDA_CHECK(cudaStreamEndCapture(stream.s, &graph.graph));
    CUDA_CHECK(cudaGraphInstantiate(&graph.exec, graph.graph, 0));

    for (size_t replay = 0; replay < replays.size(); ++replay) {
      const std::vector<int> counts(replays[replay].begin(), replays[replay].end());
      CUDA_CHECK(cudaMemcpy(dev.masked_m(), counts.data(), counts.size() * sizeof(int),
                            cudaMemcpyHostToDevice));
      dev.poison(stream.s);
      CUDA_CHECK(cudaGraphLaunch(graph.exec, stream.s));
      ch15::check_status(args.status, stream.s);
      Expected e = direct;
      e.counts = replays[replay];
      expect_d(c, dev.download_d(),
               what + ", graph replay " + std::to_string(replay) + " with counts " +
                   rows_text(replays[replay]),
               e);
    }
  }
}

// check_status throws gemm::Error with the bit's sentence, and leaves the word at 0.
void expect_status(const ch15::GroupedArgs& args, uint32_t bit, const std::string& what) {
  try {
    ch15::check_status(args.status, nullptr);
    ADD_FAILURE() << what << ": check_status did not throw";
  } catch (const UnsupportedError& e) {
    ADD_FAILURE() << what << ": UnsupportedError, expected gemm::Error: " << e.what();
  } catch (const Error& e) {
    // That bit alone: nothing else was wrong.
    EXPECT_EQ(std::string(e.what()), ch15::status_message(bit)) << what;
  }
  EXPECT_NO_THROW(ch15::check_status(args.status, nullptr)) << what << ": the word was not reset";
}

// After a run that skipped something, the context still works: a good problem, checked.
void expect_a_good_run(uint64_t seed, const std::string& what) {
  SCOPED_TRACE(what + ": the good run after it");
  run_and_check(Layout::Contiguous, {3, 129}, 264, 256, seed);
  run_and_check(Layout::Masked, {3, 129}, 264, 256, seed + 1);
}

// Rows 0-255 group 0 (130 rows), 256-383 group 1 (50), 384-511 group 2 (128), 512-639 group 3 (1).
const std::vector<int64_t> kBadIndexRows = {130, 50, 128, 1};

// A 128-row block whose first index is outside [-1, G): kBadGroupIndex, the block not stored, the
// other groups right. Tiles of 128 and 256 rows: with 64-row tiles the scheduler reads the first
// index of each 64-row box, so only the first half of such a block is skipped (scheduler.hpp).
// And 128 x 192 in pairs sharing B (CH15_PAIRS=on), where the bad block becomes a phantom.
TEST(Chapter15, BadGroupIndexSkipsItsBlock) {
  SKIP_WITHOUT_HOPPER();
  uint64_t seed = testing::test_seed();
  for (const auto& [block_m, pairs] :
       {std::pair<int, bool>{128, false}, {256, false}, {128, true}}) {
    // The first block of group 1 (rows 256-383), the second block of group 0 (rows 128-255), and
    // group 3's only block (rows 512-639: the last pair's first CTA, its partner a phantom).
    for (const int64_t block_row : {256, 128, 512}) {
      for (const int bad : {999, -2}) {
        const Checked c = make_checked(Layout::Contiguous, kBadIndexRows, 528, 512, ++seed);
        ASSERT_EQ(c.host.shape.m, 640);
        const ch15::GroupedDeviceProblem dev(c.host);
        const ch15::GroupedArgs args = dev.args();
        const std::string what = c.what + ", BLOCK_M " + std::to_string(block_m) +
                                 (pairs ? " in pairs" : "") + ", row " + std::to_string(block_row) +
                                 " indexed " + std::to_string(bad);
        CUDA_CHECK(
            cudaMemcpy(dev.m_indices() + block_row, &bad, sizeof bad, cudaMemcpyHostToDevice));
        {
          const TileOverride force(block_m, pairs ? ch15::kPairedTile.block_n : 0);
          // Off named as well: the rule pairs a contiguous 128 x 192 tile where B is small.
          const EnvOverride paired("CH15_PAIRS", pairs ? "on" : "off");
          dev.poison();
          ch15::gemm(args, nullptr);
        }
        expect_status(args, ch15::kBadGroupIndex, what);
        Expected e;
        e.untouched = {{block_row, block_row + 128}};
        expect_d(c, dev.download_d(), what, e);
        expect_a_good_run(seed * 31, what);
      }
    }
  }
}

// A row inside a block whose index is another valid group: kBadRowIndex, that row zeros, the
// rest of its group and the other groups right. Every tile height (the row is no box's first).
TEST(Chapter15, BadRowIndexIsZeroed) {
  SKIP_WITHOUT_HOPPER();
  uint64_t seed = testing::test_seed();
  for (const int block_m : {64, 128, 256}) {
    for (const auto& [row, index] : {std::pair<int64_t, int>{5, 2}, {129, 3}, {300, 0}}) {
      const Checked c = make_checked(Layout::Contiguous, kBadIndexRows, 528, 512, ++seed);
      const ch15::GroupedDeviceProblem dev(c.host);
      const ch15::GroupedArgs args = dev.args();
      const std::string what = c.what + ", BLOCK_M " + std::to_string(block_m) + ", row " +
                               std::to_string(row) + " indexed " + std::to_string(index);
      CUDA_CHECK(cudaMemcpy(dev.m_indices() + row, &index, sizeof index, cudaMemcpyHostToDevice));
      {
        const TileOverride force(block_m, 0);
        dev.poison();
        ch15::gemm(args, nullptr);
      }
      expect_status(args, ch15::kBadRowIndex, what);
      Expected e;
      e.zeroed = {row};
      expect_d(c, dev.download_d(), what, e);
      expect_a_good_run(seed * 31, what);
    }
  }
}

// masked_m[g] outside [0, max_m]: kBadMaskedM, group g untouched, the other groups right; with the
// rule's tile, and with 128 x 192 in pairs sharing B (CH15_PAIRS=on).
TEST(Chapter15, BadMaskedMSkipsItsGroup) {
  SKIP_WITHOUT_HOPPER();
  uint64_t seed = testing::test_seed();
  const std::vector<int64_t> rows = {100, 1, 257, 64};
  for (const bool pairs : {false, true})
    for (const int group : {0, 2, 3}) {
      for (const int bad : {320 + 1, -1}) {
        const Checked c = make_checked(Layout::Masked, rows, 528, 512, ++seed, 320);
        ASSERT_EQ(c.host.shape.m, 320);
        const ch15::GroupedDeviceProblem dev(c.host);
        const ch15::GroupedArgs args = dev.args();
        const std::string what = c.what + (pairs ? ", in pairs" : "") + ", masked_m[" +
                                 std::to_string(group) + "] = " + std::to_string(bad);
        CUDA_CHECK(cudaMemcpy(dev.masked_m() + group, &bad, sizeof bad, cudaMemcpyHostToDevice));
        {
          std::optional<TileOverride> tile;
          std::optional<EnvOverride> paired;
          if (pairs) tile.emplace(ch15::kPairedTile), paired.emplace("CH15_PAIRS", "on");
          dev.poison();
          ch15::gemm(args, nullptr);
        }
        expect_status(args, ch15::kBadMaskedM, what);
        Expected e;
        e.untouched = {{int64_t(group) * 320, int64_t(group + 1) * 320}};
        expect_d(c, dev.download_d(), what, e);
        expect_a_good_run(seed * 31, what);
      }
    }
}

// Pairs sharing B (128 x 192 tiles, CH15_PAIRS=on): against the reference, and every bit of D (the
// untouched rows' poison included) the same as without pairs. Groups whose m-blocks are odd and
// even in number, N of an odd and an even count of n-blocks (1168: 7; 1152: 6), an empty group, a
// padding block between groups (contiguous), many groups of a few rows.
TEST(Chapter15, PairsMatchTheReferenceAndTheUnpairedBits) {
  SKIP_WITHOUT_HOPPER();
  uint64_t seed = testing::test_seed();
  const TileOverride force(ch15::kPairedTile);
  std::mt19937_64 rng(seed);
  std::vector<int64_t> many(40);
  for (int64_t& r : many) r = rng() % 4 == 0 ? 0 : int64_t(1 + rng() % 400);
  const std::vector<std::vector<int64_t>> row_sets = {kRaggedRows, {300, 129, 385, 0, 640}, many};
  for (const Layout layout : {Layout::Contiguous, Layout::Masked})
    for (const auto& rows : row_sets)
      for (const int64_t n : {1168, 1152}) {
        const Checked c = make_checked(layout, rows, n, 512, ++seed, 640);
        const ch15::GroupedDeviceProblem dev(c.host);
        const ch15::GroupedArgs args = dev.args();
        std::vector<uint16_t> unpaired, paired;
        std::string config;
        {
          const EnvOverride off("CH15_PAIRS", "off");
          unpaired = run(dev, args);
        }
        {
          const EnvOverride on("CH15_PAIRS", "on");
          config = ch15::describe_config(args);
          paired = run(dev, args);
        }
        const std::string what = c.what + " (" + config + ")";
        EXPECT_NE(config.find("in pairs sharing B"), std::string::npos) << config;
        expect_d(c, paired, what);
        EXPECT_EQ(count_bit_differences(paired, unpaired), 0) << what << ": against no pairs";
      }
}

// The boxes of A and D (CH15_BOX_ROWS): masked groups whose counts fall on either side of 32 and
// 64 (1, 20, 31, 32, 33, 63, 64, 65, 100 rows, and an empty group), with 64-row tiles (where A
// moves in one or two 32-row boxes) and 128-row ones (D only). With 32 and with 64 rows, every
// element as the contract says for that box (zeros up to the next multiple of it, the rest still
// poison), and the products bit for bit the same.
TEST(Chapter15, BoxesOf32And64RowsAgree) {
  SKIP_WITHOUT_HOPPER();
  uint64_t seed = testing::test_seed();
  const std::vector<int64_t> rows = {1, 20, 31, 32, 0, 33, 63, 64, 65, 100};
  for (const int block_m : {64, 128})
    for (const int64_t n : {264, 1168}) {
      const TileOverride tile(block_m, 0);
      const Checked c = make_checked(Layout::Masked, rows, n, 640, ++seed, 192);
      const ch15::GroupedDeviceProblem dev(c.host);
      const ch15::GroupedArgs args = dev.args();
      std::vector<uint16_t> d[2];
      for (const int box : {32, 64}) {
        const EnvOverride force("CH15_BOX_ROWS", std::to_string(box));
        const std::string config = ch15::describe_config(args);
        EXPECT_NE(config.find("boxes of " + std::to_string(box) + " rows"), std::string::npos)
            << config;
        d[box / 64] = run(dev, args);
        Expected e;
        e.box_rows = box;
        expect_d(c, d[box / 64], c.what + " (" + config + ")", e);
      }
      int64_t differ = 0;
      for (int g = 0; g < c.host.groups; ++g)
        for (int64_t i = 0; i < c.host.rows[size_t(g)]; ++i)
          for (int64_t j = 0; j < n; ++j) {
            const size_t at = size_t((int64_t(g) * c.host.shape.m + i) * n + j);
            differ += d[0][at] != d[1][at];
          }
      EXPECT_EQ(differ, 0) << c.what << ", BLOCK_M " << block_m << ": 32-row against 64-row boxes";
    }
}

// Counts, indices or the status word left in host memory, and a contiguous M that is not whole
// blocks: refused with UnsupportedError before anything is launched (D still poison).
// A fuzz over grouped problems, because the fixed ones above cannot cover every way a group can
// end: a random layout; 1 to 40 groups (one draw in eight: 41 to 300); rows per group empty, one,
// at a tile boundary (63 to 257) or uniform up to a random scale; N a multiple of 8 up to 2000, K
// a multiple of 128 up to 2048 (halved until the CPU reference costs at most 2e8 multiply-adds);
// masked max_m the default or up to 130 rows past the largest group (a multiple of 64); and every
// override the launch reads, drawn: the tile (half the draws the rule's), pairs where the tile
// allows them, the boxes' rows, B's L2 policy. Each problem checked as run_and_check checks, with
// the box of the configuration launched. GEMM_FUZZ_GROUPED=N draws N problems (default 24); a failure names
// its draw's index and the seed (GEMM_TEST_SEED reproduces it).
TEST(Chapter15, GroupedFuzz) {
  SKIP_WITHOUT_HOPPER();
  const uint64_t seed = testing::test_seed();
  int count = 24;
  if (const char* env = std::getenv("GEMM_FUZZ_GROUPED")) count = std::atoi(env);
  std::mt19937_64 rng(seed ^ 0x15f022);
  const auto uniform = [&](int64_t lo, int64_t hi) {
    return lo + int64_t(rng() % uint64_t(hi - lo + 1));
  };
  const int64_t kBoundaries[] = {63, 64, 65, 127, 128, 129, 191, 192, 193, 255, 256, 257};
  const int64_t kScales[] = {8, 40, 150, 600};
  for (int i = 0; i < count; ++i) {
    const Layout layout = rng() % 2 ? Layout::Masked : Layout::Contiguous;
    const int groups = int(rng() % 8 == 0 ? uniform(41, 300) : uniform(1, 40));
    const int64_t scale = kScales[rng() % 4];
    std::vector<int64_t> rows(static_cast<size_t>(groups), 0);
    int64_t biggest = 0, total = 0;
    for (int64_t& r : rows) {
      const uint64_t u = rng() % 10;
      r = u == 0 ? 0 : u == 1 ? 1 : u == 2 ? kBoundaries[rng() % 12] : uniform(1, scale);
      biggest = std::max(biggest, r), total += r;
    }
    if (total == 0) rows[0] = 1, biggest = 1, total = 1;
    int64_t n = 8 * uniform(1, 250), k = 128 * uniform(1, 16);
    while (total * n * k > 200'000'000) {
      if (k > 128)
        k = std::max<int64_t>(128, k / 256 * 128);
      else
        n = std::max<int64_t>(8, n / 16 * 8);
    }
    // (max_m must be a multiple of 64: launching with another is refused, RefusedBeforeLaunch.)
    const int64_t max_m =
        layout == Layout::Masked && rng() % 2 ? (biggest + uniform(0, 130) + 63) / 64 * 64 : 0;
    // The overrides: the tile, then what it allows.
    std::optional<ch15::Tile> tile;
    if (rng() % 2) tile = ch15::kTiles[rng() % uint64_t(ch15::kNumTiles)];
    const char* pairs = nullptr;
    if (tile && *tile == ch15::kPairedTile) pairs = rng() % 2 ? "on" : "off";
    const char* const kBoxes[] = {nullptr, "32", "64"};
    const char* const kEvicts[] = {nullptr, "first", "normal"};
    const char* box = kBoxes[rng() % 3];
    const char* evict = kEvicts[rng() % 3];

    const uint64_t problem_seed = seed + 1000 + uint64_t(i);
    const Checked c = make_checked(layout, rows, n, k, problem_seed, max_m);
    const ch15::GroupedDeviceProblem dev(c.host);
    std::optional<TileOverride> force_tile;
    if (tile) force_tile.emplace(*tile);
    const EnvOverride force_pairs("CH15_PAIRS", pairs), force_box("CH15_BOX_ROWS", box),
        force_evict("CH15_EVICT_B", evict);
    const ch15::GroupedArgs args = dev.args();
    const ch15::Config config = ch15::configuration(args);
    const std::string what = "draw " + std::to_string(i) + " of GroupedFuzz (test seed " +
                             std::to_string(seed) + "): " + c.what + " (" +
                             ch15::describe_config(args) + ")";
    Expected e;
    e.box_rows = config.box_rows;
    expect_d(c, run(dev, args), what, e);
    if (HasFailure()) return;  // one failing draw is enough to read
  }
}

TEST(Chapter15, RefusedBeforeLaunch) {
  SKIP_WITHOUT_HOPPER();
  const auto expect_refused = [](const ch15::GroupedDeviceProblem& dev,
                                 const ch15::GroupedArgs& args, const std::string& what,
                                 const char* word) {
    dev.poison();
    CUDA_CHECK(cudaDeviceSynchronize());
    try {
      ch15::gemm(args, nullptr);
      ADD_FAILURE() << what << ": launched";
    } catch (const UnsupportedError& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << what << ": " << e.what();
    }
    int64_t written = 0;
    for (const uint16_t bits : dev.download_d()) written += bits != kPoisonBits;
    EXPECT_EQ(written, 0) << what << ": D was written";
  };
  const uint64_t seed = testing::test_seed();
  const ch15::GroupedHostProblem masked =
      ch15::make_grouped_problem(Layout::Masked, {3, 70}, 264, 256, seed);
  const ch15::GroupedDeviceProblem dev_masked(masked);
  EXPECT_EQ(ch15::location_error(dev_masked.args()), "");
  ch15::GroupedArgs args = dev_masked.args();
  args.masked_m = masked.masked_m.data();
  EXPECT_NE(ch15::location_error(args), "");
  expect_refused(dev_masked, args, "masked_m in host memory", "masked_m");
  uint32_t host_status = 0;
  args = dev_masked.args();
  args.status = &host_status;
  expect_refused(dev_masked, args, "the status word in host memory", "status");

  const ch15::GroupedHostProblem contiguous =
      ch15::make_grouped_problem(Layout::Contiguous, {3, 70}, 264, 256, seed + 1);
  const ch15::GroupedDeviceProblem dev_contiguous(contiguous);
  EXPECT_EQ(ch15::location_error(dev_contiguous.args()), "");
  args = dev_contiguous.args();
  args.m_indices = contiguous.m_indices.data();
  expect_refused(dev_contiguous, args, "m_indices in host memory", "m_indices");
  args = dev_contiguous.args();
  args.shape.m -= 64;
  expect_refused(dev_contiguous, args, "M = " + std::to_string(args.shape.m), "128");
  // And the arguments as they were still run.
  expect_a_good_run(seed + 2, "the refusals");
}

}  // namespace
}  // namespace gemm
