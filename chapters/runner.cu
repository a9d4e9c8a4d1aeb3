#include "chapters/runner.hpp"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "chapters/registry.hpp"
#include "common/cli.hpp"
#include "common/cublaslt.hpp"
#include "common/device.hpp"
#include "common/timing.hpp"
#include "common/trace.hpp"

namespace gemm {

namespace {

bool report(const char* what, const Comparison& c, int64_t unwritten, int64_t nan,
            double max_rel_diff) {
  const bool ok = unwritten == 0 && nan == 0 && c.over_bound == 0 && c.rel_diff <= max_rel_diff;
  std::printf("  %-34s %s  [%s]\n", what, c.str().c_str(), ok ? "PASS" : "FAIL");
  if (unwritten || nan)
    std::printf("  %-34s %lld elements of D unwritten, %lld NaN/Inf\n", "", (long long)unwritten,
                (long long)nan);
  return ok;
}

// Step 1: the chapter's D against the CPU reference, and against the previous GEMM chapter on the
// same inputs (bit for bit where the registry says the arithmetic is the same).
bool check(const Chapter& ch, const HostProblem& host, const DeviceProblem& dev) {
  const Shape& s = host.shape;
  const std::vector<uint16_t> d = run_and_download(ch, dev);
  std::printf("checks (%s inputs):\n",
              ch.applies_scales ? "quantised, random scales" : "unit scales");
  const ReferenceCheck ref = check_against_reference(host, d, ch.tolerance(s), kCpuReferenceMacs);
  const std::string what = "vs CPU reference, " + std::to_string(ref.rows_checked) + " rows:";
  bool ok = report(what.c_str(), ref.on_bands, ref.unwritten_total, ref.nan_total, ch.max_rel_diff);
  const Chapter* prev = previous_gemm(ch);
  if (!prev) return ok;
  // The predecessor may refuse a shape this chapter takes (chapters 00 to 08 launch a grid row per
  // tile row, and refuse an M whose grid would not fit; the persistent chapters do not): then
  // there is nothing to compare with, and this chapter's check above stands alone.
  const auto run_prev = [&](const DeviceProblem& on) -> std::optional<std::vector<uint16_t>> {
    try {
      return run_and_download(*prev, on);
    } catch (const UnsupportedError& e) {
      std::printf("  %-34s not compared: %s\n",
                  (std::string("vs chapter ") + prev->dir + ":").c_str(), e.what());
      return std::nullopt;
    }
  };
  if (prev->applies_scales != ch.applies_scales) {
    // The predecessor computes the unscaled product: compare the two on unit-scale inputs.
    const DeviceProblem unit(make_problem(s, kDefaultSeed, Scales::Unit));
    const std::optional<std::vector<uint16_t>> d_prev = run_prev(unit);
    if (!d_prev) return ok;
    const Comparison c =
        compare_outputs(run_and_download(ch, unit), *d_prev, Tolerance{1.0, 0.0, INFINITY});
    const std::string w = std::string("vs chapter ") + prev->dir + " (unit scales):";
    return ok & report(w.c_str(), c, c.unwritten, c.nan, ch.max_rel_diff);
  }
  const std::optional<std::vector<uint16_t>> maybe_prev = run_prev(dev);
  if (!maybe_prev) return ok;
  const std::vector<uint16_t>& d_prev = *maybe_prev;
  // Each errs from the exact value by its own bound (checked above for this one): compare the
  // relative difference; where the arithmetic is the same, every bit must agree.
  const Comparison c = compare_outputs(d, d_prev, Tolerance{1.0, 0.0, INFINITY});
  const std::string w = std::string("vs chapter ") + prev->dir + ":";
  ok &= report(w.c_str(), c, c.unwritten, c.nan, ch.max_rel_diff);
  if (ch.bitwise_equal_to_previous) {
    const int64_t differ = count_bit_differences(d, d_prev);
    std::printf("  %-34s %lld of %zu elements differ  [%s]\n", "bit for bit:", (long long)differ,
                d.size(), differ ? "FAIL" : "PASS");
    ok &= differ == 0;
  }
  return ok;
}

void print_row(const char* name, const Shape& s, const Timing& t) {
  std::printf("  %-22s %10.1f %9.1f %9.0f", name, t.median_ms * 1e3, tflops(s, t.median_ms),
              gbps(s, t.median_ms));
  if (t.kernel_ms > 0)
    std::printf(" %10.1f %9.1f", t.kernel_ms * 1e3, tflops(s, t.kernel_ms));
  else
    std::printf(" %10s %9s", "-", "-");  // CUPTI held by another tool
  std::printf("   (median of %d)\n", t.runs);
}

// Step 2: the chapter and every cuBLASLt peer, timed the same way.
void time_against_peers(const Chapter& ch, const DeviceProblem& dev, int iters) {
  const Shape& s = dev.shape();
  const L2Flusher flusher;
  TimingOptions topt;
  topt.runs = iters;
  topt.kernel_time = true;
  std::printf(
      "timing (L2 flushed by a %.1f GB memset before each run; CUDA events, then the kernel alone "
      "from CUPTI):\n",
      flusher.bytes() / 1e9);
  std::printf("  %-22s %10s %9s %9s %10s %9s\n", "", "median us", "TFLOPS", "GB/s", "kernel us",
              "TFLOPS");
  const GemmArgs args = dev.args();
  print_row(ch.dir, s,
            time_launch([&](cudaStream_t st) { ch.launch(args, st); }, flusher, nullptr, topt));
  for (Peer p : kAllPeers) {
    try {
      const CublasLtGemm peer(p, args);
      print_row(peer_name(p), s,
                time_launch([&](cudaStream_t st) { peer.run(st); }, flusher, nullptr, topt));
    } catch (const Error& e) {
      std::printf("  %-22s unavailable: %s\n", peer_name(p), e.what());
    }
  }
}

// Step 3 (--trace FILE): one more run with a trace buffer, drawn as a timeline.
void draw_trace(const Chapter& ch, const DeviceProblem& dev, const std::string& path) {
  if (!ch.records_trace)
    throw UnsupportedError(std::string("chapter ") + ch.dir + " records no trace (--trace)");
  DeviceBuffer<uint64_t> trace{size_t(kTraceSlots)};
  CUDA_CHECK(cudaMemset(trace.get(), 0, trace.bytes()));
  GemmArgs args = dev.args();
  args.trace = trace.get();
  ch.launch(args, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<uint64_t> stamps = trace.download();
  trace_svg(stamps, std::string("chapter ") + ch.dir + ", " + dev.shape().str(), path);
  std::printf("trace: %lld stamps drawn to %s\n", (long long)trace_count(stamps), path.c_str());
}

}  // namespace

int run_chapter(int number, int argc, char** argv, DrawFn draw, DescribeFn describe) {
  const Chapter* ch = find_chapter(number);
  if (!ch || !ch->launch) {
    std::fprintf(stderr, "chapter %02d is not a registered GEMM chapter\n", number);
    return 2;
  }
  const std::string program = std::string("chapter ") + ch->dir;
  CliOptions opt;
  try {
    opt = parse_cli(argc, argv, kDefaultShape);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), e.what());
    return 2;
  }
  if (opt.help) {
    std::printf("%s", cli_usage(argv[0], program + ": " + ch->idea).c_str());
    return 0;
  }
  if (opt.print_config) {
    if (!describe) {
      std::fprintf(stderr, "%s: has no configuration heuristic (--print-config)\n",
                   program.c_str());
      return 2;
    }
    try {
      std::printf("%s\n", describe(opt.shape).c_str());
    } catch (const Error& e) {
      std::fprintf(stderr, "%s: %s\n", program.c_str(), e.what());
      return 2;
    }
    return 0;
  }
  if (!opt.draw.empty()) {
    if (!draw) {
      std::fprintf(stderr, "%s: draws no pictures (--draw)\n", program.c_str());
      return 2;
    }
    try {
      draw(opt.draw);
    } catch (const Error& e) {
      std::fprintf(stderr, "%s: %s\n", program.c_str(), e.what());
      return 1;
    }
    if (!opt.check && !opt.timing && opt.trace.empty()) return 0;
  }
  if (std::string why = hopper_unavailable_reason(); !why.empty()) {
    std::printf("%s: cannot run: %s\n", program.c_str(), why.c_str());
    return 2;
  }

  try {
    const Shape s = opt.shape;
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("%s: %s\n%s, seed %llu, %s (%d SMs)\n", program.c_str(), ch->idea, s.str().c_str(),
                (unsigned long long)opt.seed, prop.name, prop.multiProcessorCount);
    if (describe) std::printf("%s\n", describe(s).c_str());
    const HostProblem host = make_problem(s, opt.seed, scales_for(*ch));
    const DeviceProblem dev(host);
    const bool ok = !opt.check || check(*ch, host, dev);
    if (opt.timing) time_against_peers(*ch, dev, opt.iters);
    if (!opt.trace.empty()) draw_trace(*ch, dev, opt.trace);
    std::printf("%s\n", ok ? "all checks passed" : "CHECK FAILED");
    return ok ? 0 : 1;
  } catch (const UnsupportedError& e) {
    std::printf("%s: cannot run: %s\n", program.c_str(), e.what());
    return 2;
  } catch (const Error& e) {
    std::printf("%s: error: %s\n", program.c_str(), e.what());
    return 1;
  }
}

}  // namespace gemm
