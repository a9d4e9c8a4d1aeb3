// The progression benchmark: every registered chapter and every cuBLASLt peer over DeepGEMM's 18
// dense shapes (DeepSeek-V3 projections, M = 64, 128, 4096), timed the way DeepGEMM's own
// benchmark times its kernels (common/timing.hpp), and the chapters' ablations (registry.hpp)
// beside them. Google Benchmark reports and writes JSON; docs/progression.py turns the JSON into
// docs/progression.md and a chart.
//
//   progression [--iters N] [--ablation-iters N] [--chapters 0,2,5] [Google Benchmark's flags]
//
// The chapters and the peers are timed over --iters runs (30), the ablations over --ablation-iters
// (10: measured to give the same medians as 30 within the run-to-run spread; docs/method.md), and
// no entry over more than about a second of runs (the reference kernel at M = 4096: a few runs of
// 140 ms each). Each run is preceded by the 8 GB flush, so the runs are most of the benchmark's time.
//   e.g. progression --benchmark_out=results.json --benchmark_filter=05_
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <set>
#include <string>

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

}  // namespace

int main(int argc, char** argv) {
  // Our own flags first; the rest go to Google Benchmark.
  std::set<int> only;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) {
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
        "The build is complete; run this on an H100 to time the chapters.\n",
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
  return 0;
}
