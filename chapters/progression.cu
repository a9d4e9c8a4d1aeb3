// The progression benchmark: every registered chapter and every cuBLASLt peer over DeepGEMM's 18
// dense shapes (DeepSeek-V3 projections, M = 64, 128, 4096), timed the way DeepGEMM's own
// benchmark times its kernels (common/timing.hpp), and the chapters' ablations (registry.hpp)
// beside them; after the dense shapes, chapter 15's grouped GEMM over the 24 grouped shapes of
// DeepGEMM 2.6.1's figures (docs/method.md), beside chapter 13 launched once per group. Google
// Benchmark reports and writes JSON; docs/progression.py turns the JSON into docs/progression.md
// and a chart.
//
//   progression [--iters N] [--ablation-iters N] [--chapters 0,2,5] [--no-grouped]
//               [Google Benchmark's flags]
//
// The chapters and the peers are timed over --iters runs (30), the ablations over --ablation-iters
// (10: measured to give the same medians as 30 within the run-to-run spread; docs/method.md), and
// no entry over more than about a second of runs (the reference kernel at M = 4096: a few runs of
// 140 ms each). Each run is preceded by the 8 GB flush, so the runs are most of the benchmark's time.
// The grouped entries are chapter 15's (--chapters 15 selects them; --no-grouped leaves them out):
//   15_grouped_gemm/<contiguous|masked>/<groups>x<expected rows>/<N>x<K>   ch15::gemm, one launch
//   dense_per_group/<the same>                                             chapter 13 per group
//   e.g. progression --benchmark_out=results.json --benchmark_filter=05_
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <set>
#include <string>

#include "chapters/15_grouped_gemm/grouped.hpp"
#include "chapters/15_grouped_gemm/problem.hpp"
#include "chapters/registry.hpp"
#include "common/cublaslt.hpp"
#include "common/device.hpp"
#include "common/timing.hpp"

namespace {

using namespace gemm;

// Benchmarks run in registration order, shape by shape, so one problem is resident at a time.
struct Resident {
  Shape shape{};
  std::unique_ptr<DeviceProblem> problem;
};
Resident g_resident;
std::unique_ptr<L2Flusher> g_flusher;
TimingOptions g_timing;
TimingOptions g_ablation_timing = [] {
  TimingOptions t;
  t.runs = 10;
  return t;
}();

const DeviceProblem& problem_for(const Shape& s) {
  if (!g_resident.problem || g_resident.shape.m != s.m || g_resident.shape.n != s.n ||
      g_resident.shape.k != s.k) {
    g_resident.problem.reset();
    g_resident.problem =
        std::make_unique<DeviceProblem>(make_problem(s, kDefaultSeed, Scales::Random));
    g_resident.shape = s;
  }
  return *g_resident.problem;
}

void record(benchmark::State& state, const Shape& s, const Timing& t) {
  state.SetIterationTime(t.median_ms * 1e-3);
  state.counters["TFLOPS"] = tflops(s, t.median_ms);
  state.counters["GBps"] = gbps(s, t.median_ms);
  state.counters["median_us"] = t.median_ms * 1e3;
  // The kernels' own time (CUPTI; common/timing.hpp), beside the events' launch-to-launch time.
  if (t.kernel_ms > 0) state.counters["kernel_us"] = t.kernel_ms * 1e3;
  state.counters["runs"] = t.runs;
  state.counters["M"] = double(s.m);
  state.counters["N"] = double(s.n);
  state.counters["K"] = double(s.k);
}

// A chapter's kernel, or (an ablation's launch, with its own timing options) one of its variations.
void run_chapter(benchmark::State& state, LaunchFn launch, Shape s, const TimingOptions* timing) {
  const GemmArgs args = problem_for(s).args();
  for (auto _ : state) {
    try {
      record(state, s,
             time_launch([&](cudaStream_t st) { launch(args, st); }, *g_flusher, nullptr, *timing));
    } catch (const Error& e) {
      state.SkipWithError(e.what());
      break;
    }
  }
}

void run_peer(benchmark::State& state, Peer p, Shape s) {
  const GemmArgs args = problem_for(s).args();
  for (auto _ : state) {
    try {
      const CublasLtGemm peer(p, args);
      record(state, s,
             time_launch([&](cudaStream_t st) { peer.run(st); }, *g_flusher, nullptr, g_timing));
    } catch (const Error& e) {
      state.SkipWithError(e.what());
      break;
    }
  }
}

std::string shape_name(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

// --- Chapter 15: the grouped shapes ----------------------------------------------------------------
//
// DeepGEMM 2.6.1's grouped figures (docs/method.md): G groups of about `expected` rows each (drawn
// uniformly in [0.7, 1.3] x expected, as its test draws them), every group over one (N, K).
struct GroupedCase {
  ch15::Layout layout = ch15::Layout::Contiguous;
  int groups = 0;
  int64_t expected = 0;  // rows a group is expected to have
  int64_t n = 0, k = 0;
  bool operator==(const GroupedCase& o) const {
    return layout == o.layout && groups == o.groups && expected == o.expected && n == o.n &&
           k == o.k;
  }
};
struct GroupedRows {
  ch15::Layout layout;
  int groups;
  int64_t expected;
};
constexpr GroupedRows kGroupedRows[] = {
    {ch15::Layout::Contiguous, 4, 8192}, {ch15::Layout::Contiguous, 8, 4096},
    {ch15::Layout::Masked, 32, 192},     {ch15::Layout::Masked, 6, 1024},
    {ch15::Layout::Masked, 32, 20},      {ch15::Layout::Masked, 6, 20},
};
constexpr Shape kGroupedNK[] = {{0, 6144, 7168}, {0, 7168, 3072}, {0, 4096, 4096}, {0, 4096, 2048}};
// Masked: every group's A and D hold max_m rows (DeepGEMM's benchmark's).
constexpr int64_t kMaskedMaxM = 4096;

// One grouped problem resident at a time, as problem_for keeps one dense problem: the chapter's
// entry and the dense-per-group entry of a shape share it. The host copy is dropped once it is on
// the device (a contiguous 4 x 8192 problem at K = 7168 is a few hundred MB; generating it takes
// seconds).
struct ResidentGrouped {
  GroupedCase key;
  std::unique_ptr<ch15::GroupedDeviceProblem> problem;
  double flops = 0, min_bytes = 0;  // valid rows only (problem.hpp)
};
ResidentGrouped g_grouped;

const ResidentGrouped& grouped_problem_for(const GroupedCase& c) {
  if (!g_grouped.problem || !(g_grouped.key == c)) {
    // The previous problem, grouped or dense, freed before the next is made.
    g_grouped.problem.reset();
    g_resident.problem.reset();
    const ch15::GroupedHostProblem host = ch15::make_grouped_problem(
        c.layout, ch15::draw_rows(c.groups, c.expected, kDefaultSeed), c.n, c.k, kDefaultSeed,
        c.layout == ch15::Layout::Masked ? kMaskedMaxM : 0);
    g_grouped.problem = std::make_unique<ch15::GroupedDeviceProblem>(host);
    g_grouped.flops = host.flops();
    g_grouped.min_bytes = host.min_bytes();
    g_grouped.key = c;
  }
  return g_grouped;
}

void record_grouped(benchmark::State& state, const GroupedCase& c, const ResidentGrouped& p,
                    const Timing& t) {
  state.SetIterationTime(t.median_ms * 1e-3);
  state.counters["TFLOPS"] = p.flops / (t.median_ms * 1e-3) / 1e12;
  state.counters["GBps"] = p.min_bytes / (t.median_ms * 1e-3) / 1e9;
  state.counters["median_us"] = t.median_ms * 1e3;
  if (t.kernel_ms > 0) state.counters["kernel_us"] = t.kernel_ms * 1e3;
  state.counters["runs"] = t.runs;
  state.counters["groups"] = c.groups;
  state.counters["rows"] = double(c.expected);
  state.counters["N"] = double(c.n);
  state.counters["K"] = double(c.k);
  state.counters["masked"] = c.layout == ch15::Layout::Masked ? 1 : 0;
}

// Chapter 15's kernel: all groups in one launch.
void run_grouped(benchmark::State& state, GroupedCase c) {
  for (auto _ : state) {
    try {
      const ResidentGrouped& p = grouped_problem_for(c);
      ch15::GroupedArgs args = p.problem->args();
      if (c.layout == ch15::Layout::Masked) args.expected_m = c.expected;
      const Timing t = time_launch([&](cudaStream_t st) { ch15::gemm(args, st); }, *g_flusher,
                                   nullptr, g_timing);
      // A bad index or count would have skipped work (grouped.hpp): not a figure to report.
      ch15::check_status(args.status, nullptr);
      record_grouped(state, c, p, t);
    } catch (const Error& e) {
      state.SkipWithError(e.what());
      break;
    }
  }
}

// The peer without groups: chapter 13's dense kernel launched once per group with rows, one
// launch after another on the stream, all inside one timed run. By the events its time includes
// the gaps between the launches; its kernel time (kernel_us) is the sum of its kernels' own
// durations (TimingOptions::kernel_time_sum), not the span from the first start to the last end.
void run_dense_per_group(benchmark::State& state, LaunchFn launch, GroupedCase c) {
  TimingOptions timing = g_timing;
  timing.kernel_time_sum = true;
  for (auto _ : state) {
    try {
      const ResidentGrouped& p = grouped_problem_for(c);
      const auto& groups = p.problem->dense_groups();
      const Timing t = time_launch(
          [&](cudaStream_t st) {
            for (const auto& g : groups) launch(g.args, st);
          },
          *g_flusher, nullptr, timing);
      record_grouped(state, c, p, t);
    } catch (const Error& e) {
      state.SkipWithError(e.what());
      break;
    }
  }
}

std::string grouped_name(const GroupedCase& c) {
  return std::string(c.layout == ch15::Layout::Contiguous ? "contiguous" : "masked") + "/" +
         std::to_string(c.groups) + "x" + std::to_string(c.expected) + "/" + std::to_string(c.n) +
         "x" + std::to_string(c.k);
}

}  // namespace

int main(int argc, char** argv) {
  // Our own flags first; the rest go to Google Benchmark.
  std::set<int> only;
  bool grouped = true;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--no-grouped")) {
      grouped = false;
    } else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) {
      g_timing.runs = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--ablation-iters") && i + 1 < argc) {
      g_ablation_timing.runs = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--chapters") && i + 1 < argc) {
      for (const char* p = argv[++i]; *p;) {
        only.insert(std::atoi(p));
        while (*p && *p != ',') ++p;
        if (*p == ',') ++p;
      }
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (std::string why = hopper_unavailable_reason(); !why.empty()) {
    std::printf(
        "progression: no Hopper GPU here (%s): nothing to measure.\n"
        "The build is complete; run this on a Hopper GPU (H100, H200) to time the chapters.\n",
        why.c_str());
    return 0;
  }

  g_timing.kernel_time = true;
  g_timing.max_total_ms = 1000.0;
  g_ablation_timing.kernel_time = true;
  g_ablation_timing.max_total_ms = 1000.0;
  try {
    g_flusher = std::make_unique<L2Flusher>();
  } catch (const Error& e) {
    std::fprintf(stderr, "progression: %s\n", e.what());
    return 1;
  }
  for (const Shape& s : kDeepGemmShapes) {
    for (const Chapter& ch : chapters()) {
      if (!ch.launch || (!only.empty() && !only.count(ch.number))) continue;
      benchmark::RegisterBenchmark((std::string(ch.dir) + "/" + shape_name(s)).c_str(), run_chapter,
                                   ch.launch, s, &g_timing)
          ->Iterations(1)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
      // "10_tma_multicast[multicast=off]/...": docs/progression.py's ablation table.
      for (const Ablation& a : ch.ablations)
        benchmark::RegisterBenchmark(
            (std::string(ch.dir) + "[" + a.name + "]/" + shape_name(s)).c_str(), run_chapter,
            a.launch, s, &g_ablation_timing)
            ->Iterations(1)
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
    }
    for (Peer p : kAllPeers)
      benchmark::RegisterBenchmark((std::string(peer_name(p)) + "/" + shape_name(s)).c_str(),
                                   run_peer, p, s)
          ->Iterations(1)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
  }
  // The grouped shapes, after the dense ones (one problem resident at a time: grouped_problem_for).
  if (grouped && (only.empty() || only.count(15))) {
    const Chapter* ch15_entry = find_chapter(15);
    const std::string dir = ch15_entry ? ch15_entry->dir : "15_grouped_gemm";
    const Chapter* dense = find_chapter(13);
    for (const GroupedRows& r : kGroupedRows)
      for (const Shape& nk : kGroupedNK) {
        const GroupedCase c{r.layout, r.groups, r.expected, nk.n, nk.k};
        benchmark::RegisterBenchmark((dir + "/" + grouped_name(c)).c_str(), run_grouped, c)
            ->Iterations(1)
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
        if (dense && dense->launch)
          benchmark::RegisterBenchmark(("dense_per_group/" + grouped_name(c)).c_str(),
                                       run_dense_per_group, dense->launch, c)
              ->Iterations(1)
              ->UseManualTime()
              ->Unit(benchmark::kMicrosecond);
      }
  }
  int bargc = int(rest.size());
  benchmark::Initialize(&bargc, rest.data());
  benchmark::AddCustomContext(
      "timing", "median of " + std::to_string(g_timing.runs) +
                    " runs (the ablations: " + std::to_string(g_ablation_timing.runs) +
                    "), CUDA events around the launch (and the "
                    "kernels' own time from CUPTI: kernel_us), " +
                    std::to_string(g_flusher->bytes() >> 20) + " MiB memset before each run");
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
    benchmark::AddCustomContext(
        "gpu", std::string(prop.name) + " (" + std::to_string(prop.multiProcessorCount) + " SMs)");
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  benchmark::AddCustomContext("date", date);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  g_resident.problem.reset();
  g_grouped.problem.reset();
  return 0;
}
