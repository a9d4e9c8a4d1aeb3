// A shape fuzz: every GEMM chapter from 02 on against chapter 00 (the GPU reference, all of D) on
// random legal shapes, because the fixed shapes of gpu_chapters.cu cannot cover every way a tile
// can end. Shapes are drawn so that tiles end ragged: M in [1, 5000] mostly not a multiple of 64,
// with tiny ones and ones at tile boundaries (127, 128, 129, 255, 256, 257, ...); N a multiple of
// 8 in [8, 9000], likewise; K a multiple of 128 in [128, 19968] (1 to 156 K blocks, many around
// pipeline depths); skewed toward small sizes, so that the default run is quick. A few corner
// shapes (M = 1, N = 8, K = 128 and the largest M, N or K) run first.
//
// For each shape every chapter runs on the same inputs as chapter 00 (unit scales for the chapters
// that compute the unscaled product, random fine-grained scales for the others; chapter 00 reads
// the scales either way) and is checked on every element: nothing left unwritten (poison), no NaN
// or Inf, DeepGEMM's relative difference to chapter 00 within ch.max_rel_diff, bit for bit equal
// to its predecessor where the registry says so, and, where the CPU can afford it (M*N*K <= 2e8
// and N*K <= 2e7), each element within ch.tolerance of the double-precision reference. The
// reference is computed once per problem and shared by the chapters (check_against_reference would
// recompute it for each); bands of rows, for bigger shapes, would cost 192*N*K multiply-adds each,
// too much to fuzz with.
//
// Knobs (environment):
//   GEMM_FUZZ_SHAPES=N         shapes drawn per seed (default 40, with 4 fixed seeds: 160 shapes
//                              plus 6 corners). A long run: GEMM_FUZZ_SHAPES=1000.
//   GEMM_TEST_SEED=S           also draw GEMM_FUZZ_SHAPES shapes (and their inputs) from seed S.
//   GEMM_FUZZ_CASE=M,N,K,SEED  run only this case: what a failure prints, to reproduce it.
// At the end it prints how many shapes ran and how long they took (also as test properties).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "chapters/registry.hpp"
#include "tests/gpu.hpp"

namespace gemm {
namespace {

constexpr uint64_t kFixedSeeds[] = {1, 2, 3, 4};
constexpr int kDefaultShapesPerSeed = 40;
// The CPU reference checks every element of shapes up to these sizes (multiply-adds; and per row
// of D, since tiny M leaves the reference's threads idle).
constexpr double kFuzzReferenceMacs = 2e8;
constexpr double kFuzzReferenceRowMacs = 2e7;

struct Case {
  Shape shape;
  uint64_t seed = 0;  // of the inputs
};

std::string repro(const Case& c) {
  return "GEMM_FUZZ_CASE=" + std::to_string(c.shape.m) + "," + std::to_string(c.shape.n) + "," +
         std::to_string(c.shape.k) + "," + std::to_string(c.seed) +
         " ./build/release/bin/test_gpu --gtest_filter='ShapeFuzz.*'";
}

// ---- drawing shapes ------------------------------------------------------------------------

class Draw {
 public:
  explicit Draw(uint64_t seed) : g_(seed) {}
  double unit() { return std::uniform_real_distribution<double>(0.0, 1.0)(g_); }
  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(g_);
  }
  // Log-uniform in [lo, hi]: as many values in [10, 100] as in [100, 1000].
  int64_t log_uniform(int64_t lo, int64_t hi) {
    const double x = std::exp(std::log(double(lo)) + unit() * std::log(double(hi) / double(lo)));
    return std::clamp<int64_t>(int64_t(std::llround(x)), lo, hi);
  }
  template <size_t N>
  int64_t pick(const int64_t (&v)[N]) {
    return v[size_t(uniform(0, int64_t(N) - 1))];
  }

  int64_t m() {
    const double u = unit();
    if (u < 0.15) return uniform(1, 16);  // a sliver of one tile
    if (u < 0.40) {                       // at a tile boundary: one short, exact, one over
      constexpr int64_t bases[] = {64, 128, 192, 256, 384, 512, 1024, 2048};
      return pick(bases) + uniform(-1, 1);
    }
    if (u < 0.92) return log_uniform(17, 1500);
    return log_uniform(1500, 5000);
  }
  int64_t n() {
    const double u = unit();
    if (u < 0.15) return 8 * uniform(1, 8);
    if (u < 0.40) {
      constexpr int64_t bases[] = {128, 256, 384, 512, 768, 1024, 2048};
      return pick(bases) + 8 * uniform(-1, 1);
    }
    if (u < 0.92) return round_up8(log_uniform(65, 2500));
    return std::min<int64_t>(9000, round_up8(log_uniform(2500, 9000)));
  }
  int64_t k() {
    const double u = unit();
    int64_t blocks;
    if (u < 0.30)
      blocks = uniform(1, 4);  // fewer K blocks than pipeline stages
    else if (u < 0.60)
      blocks = uniform(5, 17);  // around the depth of a ring of stages
    else if (u < 0.93)
      blocks = log_uniform(18, 64);
    else
      blocks = log_uniform(64, 156);  // 156 x 128 = 19968
    return 128 * blocks;
  }
  Case next() {
    Case c;
    c.seed = g_();
    c.shape = {m(), n(), k()};
    return c;
  }

 private:
  static int64_t round_up8(int64_t x) { return (x + 7) / 8 * 8; }
  std::mt19937_64 g_;
};

// Corner shapes first, then GEMM_FUZZ_SHAPES draws from each seed; or just GEMM_FUZZ_CASE.
std::vector<Case> fuzz_cases() {
  if (const char* env = std::getenv("GEMM_FUZZ_CASE")) {
    long long m = 0, n = 0, k = 0;
    unsigned long long seed = 0;
    if (std::sscanf(env, "%lld,%lld,%lld,%llu", &m, &n, &k, &seed) != 4) {
      ADD_FAILURE() << "GEMM_FUZZ_CASE must be M,N,K,SEED; got \"" << env << "\"";
      return {};
    }
    return {Case{{m, n, k}, seed}};
  }
  int per_seed = kDefaultShapesPerSeed;
  if (const char* env = std::getenv("GEMM_FUZZ_SHAPES")) per_seed = std::atoi(env);
  std::vector<uint64_t> seeds(std::begin(kFixedSeeds), std::end(kFixedSeeds));
  if (const char* env = std::getenv("GEMM_TEST_SEED")) seeds.push_back(std::strtoull(env, 0, 10));

  std::vector<Case> cases;
  for (Shape s : {Shape{1, 8, 128}, Shape{1, 9000, 19968}, Shape{5000, 8, 19968},
                  Shape{4999, 8992, 128}, Shape{129, 136, 128}, Shape{257, 264, 1152}})
    cases.push_back({s, uint64_t(s.m * 1'000'003 + s.n * 1'009 + s.k)});
  for (uint64_t seed : seeds) {
    Draw draw(seed);
    for (int i = 0; i < per_seed; ++i) cases.push_back(draw.next());
  }
  return cases;
}

// ---- one case ------------------------------------------------------------------------------

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Totals {
  int shapes = 0, chapter_runs = 0, failed_cases = 0;
  double inputs_s = 0, reference_s = 0;
};

bool reference_affordable(const Shape& s) {
  return double(s.m) * double(s.n) * double(s.k) <= kFuzzReferenceMacs &&
         double(s.n) * double(s.k) <= kFuzzReferenceRowMacs;
}

// Runs chapter 00 and every chapter of `kind` on one problem; returns the failures, one line each.
std::vector<std::string> run_case(const Case& c, Scales kind, Totals& totals) {
  const Shape& s = c.shape;
  std::vector<std::string> failures;
  auto fail = [&](const Chapter& ch, const std::string& what) {
    failures.push_back(std::string(ch.dir) + " " + s.str() + " seed " + std::to_string(c.seed) +
                       (kind == Scales::Unit ? " (unit scales)" : " (random scales)") + ": " +
                       what + "; reproduce: " + repro(c));
  };

  auto t0 = std::chrono::steady_clock::now();
  const HostProblem host = make_problem(s, c.seed, kind);
  totals.inputs_s += seconds_since(t0);
  const DeviceProblem dev(host);
  std::optional<Reference> ref;
  if (reference_affordable(s)) {
    t0 = std::chrono::steady_clock::now();
    ref = reference_gemm(host);
    totals.reference_s += seconds_since(t0);
  }

  const Chapter& ch00 = *find_chapter(0);
  const std::vector<uint16_t> d00 = run_and_download(ch00, dev);
  ++totals.chapter_runs;
  auto check_vs_reference = [&](const Chapter& ch, const std::vector<uint16_t>& d) {
    if (!ref) return;
    const Comparison r = compare_to_reference(d, *ref, ch.tolerance(s));
    if (r.unwritten || r.nan || r.over_bound || r.rel_diff > ch.max_rel_diff)
      fail(ch, "vs CPU reference: " + r.str() + ", worst at row " +
                   std::to_string(r.worst_index / s.n) + " col " +
                   std::to_string(r.worst_index % s.n));
  };
  {
    const Comparison self = compare_outputs(d00, d00, Tolerance{INFINITY, 0, 0});
    if (self.unwritten || self.nan)
      fail(ch00, std::to_string(self.unwritten) + " elements never written, " +
                     std::to_string(self.nan) + " NaN or Inf");
  }
  check_vs_reference(ch00, d00);

  // The last chapter run on this problem and its D, for the bit-for-bit check.
  const Chapter* last = &ch00;
  std::vector<uint16_t> last_d = d00;
  for (const Chapter& ch : chapters()) {
    if (!ch.launch || ch.number < 2 || (ch.applies_scales != (kind == Scales::Random))) continue;
    std::vector<uint16_t> d = run_and_download(ch, dev);
    ++totals.chapter_runs;
    const Comparison vs00 = compare_outputs(d, d00, Tolerance{INFINITY, 0, 0});
    if (vs00.unwritten) fail(ch, std::to_string(vs00.unwritten) + " elements of D never written");
    if (vs00.nan) fail(ch, std::to_string(vs00.nan) + " NaN or Inf in D");
    if (vs00.rel_diff > ch.max_rel_diff)
      fail(ch, "vs chapter 00: rel_diff " + std::to_string(vs00.rel_diff) + " > " +
                   std::to_string(ch.max_rel_diff) + " (" + vs00.str() + ")");
    check_vs_reference(ch, d);
    // Chapters that read scales and those that do not run on different problems: a predecessor
    // run on the other kind is not compared.
    if (ch.bitwise_equal_to_previous && previous_gemm(ch) == last)
      if (const int64_t n = count_bit_differences(d, last_d); n != 0)
        fail(ch, std::to_string(n) + " elements differ from " + last->dir + " (bit for bit)");
    if (ch.side) continue;  // no chapter's predecessor (registry.hpp)
    last = &ch;
    last_d = std::move(d);
  }
  return failures;
}

TEST(ShapeFuzz, EveryChapterAgreesWithChapter00) {
  SKIP_WITHOUT_HOPPER();
  bool unit = false, random = false;
  for (const Chapter& ch : chapters())
    if (ch.launch && ch.number >= 2) (ch.applies_scales ? random : unit) = true;

  const auto t0 = std::chrono::steady_clock::now();
  Totals totals;
  for (const Case& c : fuzz_cases()) {
    std::vector<std::string> failures;
    for (Scales kind : {Scales::Unit, Scales::Random}) {
      if (!(kind == Scales::Unit ? unit : random)) continue;
      const std::vector<std::string> f = run_case(c, kind, totals);
      failures.insert(failures.end(), f.begin(), f.end());
    }
    ++totals.shapes;
    for (const std::string& f : failures) ADD_FAILURE() << f;
    if (!failures.empty() && ++totals.failed_cases == 10) {
      ADD_FAILURE() << "stopping after 10 failing shapes";
      break;
    }
  }
  const double total_s = seconds_since(t0);
  std::printf(
      "[   FUZZ   ] %d shapes, %d chapter runs in %.1f s (inputs %.1f s, CPU reference %.1f s)\n",
      totals.shapes, totals.chapter_runs, total_s, totals.inputs_s, totals.reference_s);
  RecordProperty("shapes", totals.shapes);
  RecordProperty("chapter_runs", totals.chapter_runs);
  RecordProperty("seconds", std::to_string(total_s));
}

}  // namespace
}  // namespace gemm
