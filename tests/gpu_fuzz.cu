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
//
// A second fuzz, EveryOverrideAndAblation, draws the chapters' environment overrides as well
// (CH09_GROUP to CH13_PATTERN, legal values and some that are not) and runs chapters 09 to 13 and
// one of each one's ablations under them; see kOverrides below. GEMM_FUZZ_OVERRIDES=N cases
// (default 40; GEMM_TEST_SEED adds as many from that seed).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "chapters/12_split_k/config.hpp"
#include "chapters/registry.hpp"
#include "tests/gpu.hpp"

namespace ch12 {
Config configured(const gemm::Shape& s);  // kernel.cu: the launch's configuration, overrides read
}

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

  // A chapter may refuse a legal shape only for a limit it declares (gpu_refusals.cu and
  // gpu_chapters.cu test them): a tile grid taller than CUDA allows (chapters 00 to 08, at an M
  // the drawn shapes never reach) or K beyond what summing it in the tensor core keeps accurate
  // (chapters 02 to 05, K > 2^20). Such a chapter is left out of the comparisons; any other
  // refusal is a failure. (Only GEMM_FUZZ_CASE reaches these limits.)
  auto run = [&](const Chapter& ch) -> std::optional<std::vector<uint16_t>> {
    ++totals.chapter_runs;
    try {
      return run_and_download(ch, dev);
    } catch (const UnsupportedError& e) {
      const std::string why = e.what();
      if (why.find("one grid row per") == std::string::npos &&
          why.find("K must be at most") == std::string::npos)
        fail(ch, "refused a legal shape: " + why);
      return std::nullopt;
    }
  };
  const Chapter& ch00 = *find_chapter(0);
  const std::optional<std::vector<uint16_t>> d00 = run(ch00);
  auto check_vs_reference = [&](const Chapter& ch, const std::vector<uint16_t>& d) {
    if (!ref) return;
    const Comparison r = compare_to_reference(d, *ref, ch.tolerance(s));
    if (r.unwritten || r.nan || r.over_bound || r.rel_diff > ch.max_rel_diff)
      fail(ch, "vs CPU reference: " + r.str() + ", worst at row " +
                   std::to_string(r.worst_index / s.n) + " col " +
                   std::to_string(r.worst_index % s.n));
  };
  if (d00) {
    const Comparison self = compare_outputs(*d00, *d00, Tolerance{INFINITY, 0, 0});
    if (self.unwritten || self.nan)
      fail(ch00, std::to_string(self.unwritten) + " elements never written, " +
                     std::to_string(self.nan) + " NaN or Inf");
    check_vs_reference(ch00, *d00);
  }

  // The last chapter run on this problem and its D, for the bit-for-bit check.
  const Chapter* last = &ch00;
  std::optional<std::vector<uint16_t>> last_d = d00;
  for (const Chapter& ch : chapters()) {
    if (!ch.launch || ch.number < 2 || (ch.applies_scales != (kind == Scales::Random))) continue;
    std::optional<std::vector<uint16_t>> d = run(ch);
    if (!d) continue;
    // Against chapter 00 where it ran; the D's own checks either way.
    const Comparison vs00 = compare_outputs(*d, d00 ? *d00 : *d, Tolerance{INFINITY, 0, 0});
    if (vs00.unwritten) fail(ch, std::to_string(vs00.unwritten) + " elements of D never written");
    if (vs00.nan) fail(ch, std::to_string(vs00.nan) + " NaN or Inf in D");
    if (vs00.rel_diff > ch.max_rel_diff)
      fail(ch, "vs chapter 00: rel_diff " + std::to_string(vs00.rel_diff) + " > " +
                   std::to_string(ch.max_rel_diff) + " (" + vs00.str() + ")");
    check_vs_reference(ch, *d);
    // Chapters that read scales and those that do not run on different problems: a predecessor
    // run on the other kind is not compared.
    if (ch.bitwise_equal_to_previous && previous_gemm(ch) == last && last_d)
      if (const int64_t n = count_bit_differences(*d, *last_d); n != 0)
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

// ---- the overrides -----------------------------------------------------------------------------
//
// Every environment override of chapters 09 to 13, with values each accepts and values each must
// refuse. A case sets each variable or leaves it unset, at random, then runs chapters 09 to 13 and
// one drawn ablation of each on one problem. What each run must do:
// - a chapter that reads a variable holding a refused value refuses before it launches
//   (UnsupportedError naming the variable, D left as poisoned, the context healthy);
// - otherwise it computes D, or refuses only where an override it reads asks for what the shape
//   cannot take (a multicast whose tiles do not pair, a split without a kernel), again before it
//   launches, with a sentence that starts with the chapter and names the broken constraint;
// - a D it computes passes the shape fuzz's checks (every element written, no NaN, chapter 00's
//   difference, the CPU reference where affordable), and is bit for bit chapter 11's D without
//   overrides wherever the arithmetic is the same: chapters 09 to 11 on any tile, group or
//   multicast, chapter 12 wherever its split is 1, and chapter 13 is chapter 12's D under the same
//   overrides. An ablation may refuse a configuration it forces (with a sentence, before launching).
struct Override {
  const char* name;
  std::vector<const char*> accepted, refused;
};
const Override kOverrides[] = {
    {"CH09_GROUP", {"1", "2", "3", "5", "8", "13", "16", "24", "1048576"}, {"0", "-2", "8x"}},
    {"CH10_MULTICAST", {"off", "A", "B"}, {"a", "AB", "on"}},
    {"CH11_BLOCK_M", {"64", "128", "256"}, {"96", "0", "2560"}},
    {"CH11_MULTICAST", {"off", "A", "B"}, {"b", "both"}},
    {"CH12_SPLIT", {"1", "2", "3", "4", "5", "6", "7", "8"}, {"0", "9", "12", "two"}},
    {"CH12_EVICT_B", {"first", "normal"}, {"last", "First"}},
    {"CH13_PATTERN", {"original", "alternate", "no_yield", "no_reuse"}, {"fast", "Original"}},
};

// The variables chapter `number`'s launch reads (its ablations read a subset: they force one).
std::vector<std::string> variables_read(int number) {
  switch (number) {
    case 9:
      return {"CH09_GROUP"};
    case 10:
      return {"CH09_GROUP", "CH10_MULTICAST"};
    case 11:
      return {"CH09_GROUP", "CH11_BLOCK_M", "CH11_MULTICAST"};
    case 12:
      return {"CH09_GROUP", "CH12_SPLIT", "CH12_EVICT_B"};
    case 13:
      return {"CH09_GROUP", "CH12_SPLIT", "CH12_EVICT_B", "CH13_PATTERN"};
    default:
      return {};
  }
}

struct Assignment {
  std::string name, value;
  bool refused = false;  // a value the chapters reading it must refuse
};

// Each variable unset (half the time), set to an accepted value, or (one time in twenty) to one
// that must be refused.
std::vector<Assignment> draw_overrides(Draw& draw) {
  std::vector<Assignment> a;
  for (const Override& o : kOverrides) {
    const double u = draw.unit();
    if (u < 0.5) continue;
    const bool refused = u > 0.95;
    const auto& values = refused ? o.refused : o.accepted;
    a.push_back({o.name, values[size_t(draw.uniform(0, int64_t(values.size()) - 1))], refused});
  }
  return a;
}

std::string str(const std::vector<Assignment>& a) {
  std::string out;
  for (const Assignment& x : a) out += x.name + "=" + x.value + " ";
  return out;
}

// The variables this test sets, unset for the case's baselines (and at the start: the test owns
// them while it runs).
void unset_overrides() {
  for (const Override& o : kOverrides) unsetenv(o.name);
}

TEST(ShapeFuzz, EveryOverrideAndAblation) {
  SKIP_WITHOUT_HOPPER();
  unset_overrides();
  int cases = 40;
  if (const char* env = std::getenv("GEMM_FUZZ_OVERRIDES")) cases = std::atoi(env);
  std::vector<uint64_t> seeds = {101};
  if (const char* env = std::getenv("GEMM_TEST_SEED")) seeds.push_back(std::strtoull(env, 0, 10));

  const auto t0 = std::chrono::steady_clock::now();
  int runs = 0, computed = 0, refused_values = 0, refused_shapes = 0, failed_cases = 0;
  std::vector<std::string> refusal_examples;
  for (uint64_t seed : seeds) {
    Draw draw(seed);
    for (int i = 0; i < cases && failed_cases < 10; ++i) {
      const Case c = draw.next();
      const Shape& s = c.shape;
      const std::vector<Assignment> env = draw_overrides(draw);
      const std::string what = s.str() + " seed " + std::to_string(c.seed) + " under " + str(env);
      bool failed = false;
      auto fail = [&](const std::string& who, const std::string& why) {
        ADD_FAILURE() << who << " " << what << ": " << why << "; the chapter alone: " << str(env)
                      << repro(c) << " (ShapeFuzz.EveryChapterAgreesWithChapter00)";
        failed = true;
      };

      // Baselines without overrides: chapter 00 and chapter 11.
      unset_overrides();
      const HostProblem host = make_problem(s, c.seed, Scales::Random);
      const DeviceProblem dev(host);
      std::optional<Reference> ref;
      if (reference_affordable(s)) ref = reference_gemm(host);
      const std::vector<uint16_t> d00 = run_and_download(*find_chapter(0), dev);
      const std::vector<uint16_t> base = run_and_download(*find_chapter(11), dev);

      for (const Assignment& a : env) setenv(a.name.c_str(), a.value.c_str(), 1);
      // Checks a D; `bits`, where given, is what it must equal bit for bit.
      auto check_d = [&](const Chapter& ch, const std::string& who, const std::vector<uint16_t>& d,
                         const std::vector<uint16_t>* bits) {
        ++computed;
        const Comparison vs00 = compare_outputs(d, d00, Tolerance{INFINITY, 0, 0});
        if (vs00.unwritten || vs00.nan || vs00.rel_diff > ch.max_rel_diff)
          fail(who, "vs chapter 00: " + vs00.str());
        if (ref) {
          const Comparison r = compare_to_reference(d, *ref, ch.tolerance(s));
          if (r.unwritten || r.nan || r.over_bound || r.rel_diff > ch.max_rel_diff)
            fail(who, "vs CPU reference: " + r.str());
        }
        if (bits != nullptr)
          if (const int64_t n = count_bit_differences(d, *bits); n != 0)
            fail(who, std::to_string(n) + " elements differ bit for bit from the expected D");
      };
      // Runs one launch; returns D, or nothing where it refused before launching anything (its
      // sentence in *refusal), checking that it did.
      auto run = [&](const std::string& who, LaunchFn launch, bool must_refuse,
                     std::string* refusal) -> std::optional<std::vector<uint16_t>> {
        ++runs;
        dev.poison();
        try {
          launch(dev.args(), nullptr);
        } catch (const UnsupportedError& e) {
          *refusal = e.what();
          const Comparison untouched =
              compare_outputs(dev.download_d(), d00, Tolerance{INFINITY, 0, 0});
          if (untouched.unwritten != s.m * s.n)
            fail(who, "refused (\"" + *refusal + "\") after writing D");
          if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess)
            fail(who, std::string("refused, leaving an error: ") + cudaGetErrorString(err));
          if (refusal->rfind("chapter ", 0) != 0)
            fail(who, "refused without naming the chapter: \"" + *refusal + "\"");
          (must_refuse ? refused_values : refused_shapes) += 1;
          if (refusal_examples.size() < 8 &&
              std::find(refusal_examples.begin(), refusal_examples.end(), *refusal) ==
                  refusal_examples.end())
            refusal_examples.push_back(*refusal);
          return std::nullopt;
        }
        if (must_refuse) fail(who, "ran under a value it must refuse");
        return dev.download_d();
      };

      std::optional<std::vector<uint16_t>> d12;
      for (int number = 9; number <= 13; ++number) {
        const Chapter& ch = *find_chapter(number);
        // What this chapter's launch reads: a refused value among them must stop it; an
        // accepted one may make it refuse the shape (a multicast, a split), else nothing may.
        std::vector<std::string> refused_read, set_read;
        for (const std::string& v : variables_read(number))
          for (const Assignment& a : env)
            if (a.name == v) (a.refused ? refused_read : set_read).push_back(v);
        const bool must_refuse = !refused_read.empty();
        std::string refusal;
        const std::optional<std::vector<uint16_t>> d =
            run(ch.dir, ch.launch, must_refuse, &refusal);
        // A refused value is named, or the launch refused something it parses first: a value it
        // accepts but the shape cannot take (CH12_SPLIT=7, a multicast whose tiles do not pair).
        // Then it refuses the same way without the refused values.
        if (must_refuse && !d) {
          bool named = false;
          for (const std::string& v : refused_read)
            named = named || refusal.find(v) != refusal.npos;
          if (!named) {
            for (const std::string& v : refused_read) unsetenv(v.c_str());
            std::string again;
            if (run(ch.dir, ch.launch, false, &again) || again != refusal)
              fail(ch.dir, "refused (\"" + refusal + "\") without naming " + refused_read[0] +
                               ", and not for another override");
            for (const Assignment& a : env) setenv(a.name.c_str(), a.value.c_str(), 1);
          }
        }
        if (d) {
          const std::vector<uint16_t>* bits = nullptr;
          if (number <= 11) bits = &base;
          if (number == 12 && ch12::configured(s).split == 1) bits = &base;
          if (number == 13) bits = d12 ? &*d12 : nullptr;
          check_d(ch, ch.dir, *d, bits);
        } else if (!must_refuse && set_read.empty()) {
          fail(ch.dir, "refused with no override it reads set");
        }
        if (number == 12) d12 = d;
        if (number == 13 && d.has_value() != d12.has_value() && refused_read.empty())
          fail(ch.dir, "ran where chapter 12 refused, or refused where it ran");

        // One of its ablations, drawn. Each forces part of the configuration and reads some of
        // the chapter's variables: it may refuse (a forced multicast the tiles cannot pair, or an
        // override it reads), with a sentence and nothing launched.
        if (ch.ablations.empty()) continue;
        const Ablation& ab =
            ch.ablations[size_t(draw.uniform(0, int64_t(ch.ablations.size()) - 1))];
        const std::string who = std::string(ch.dir) + " [" + ab.name + "]";
        std::string refusal_ab;
        const std::optional<std::vector<uint16_t>> da = run(who, ab.launch, false, &refusal_ab);
        if (!da) continue;
        const std::vector<uint16_t>* bits = nullptr;
        if (number <= 11 || std::string(ab.name) == "split=1") bits = &base;
        if (number == 13) bits = d12 ? &*d12 : nullptr;  // a rewrite of chapter 12's kernels
        check_d(ch, who, *da, bits);
      }
      unset_overrides();
      if (failed) ++failed_cases;
    }
  }
  if (failed_cases == 10) ADD_FAILURE() << "stopping after 10 failing cases";
  std::printf(
      "[   FUZZ   ] overrides: %d launches in %.1f s: %d computed D, %d refused a value they must "
      "refuse, %d refused what the shape cannot take\n",
      runs, seconds_since(t0), computed, refused_values, refused_shapes);
  for (const std::string& m : refusal_examples) std::printf("[   FUZZ   ]   e.g. %s\n", m.c_str());
}

}  // namespace
}  // namespace gemm
