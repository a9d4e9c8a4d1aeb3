// Chapter 15's binary: a grouped problem in each layout (or the one --layout names), checked group
// by group against the CPU reference and bit for bit against chapter 12 run once per group with the
// same tile, its padding and masked rows checked, and timed beside chapter 13 launched once per
// group. The shape flags are the chapters' own (common/cli.hpp), with M the rows a group is expected
// to have; the groups' rows are drawn in [0.7, 1.3] x M (DeepGEMM's test rule) from the seed.
//   15_grouped_gemm [--layout contiguous|masked|both] [--groups G] [--max-m ROWS]
//                   [--m ROWS] [--n N] [--k K] [--iters I] [--seed S] [--no-check] [--no-timing]
//                   [--print-config] [--draw DIR]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "chapters/12_split_k/config.hpp"
#include "chapters/15_grouped_gemm/config.hpp"
#include "chapters/15_grouped_gemm/draw.hpp"
#include "chapters/15_grouped_gemm/grouped.hpp"
#include "chapters/15_grouped_gemm/problem.hpp"
#include "chapters/registry.hpp"
#include "common/cli.hpp"
#include "common/device.hpp"
#include "common/launch.hpp"
#include "common/reference.hpp"
#include "common/timing.hpp"

namespace ch12 {
void gemm_variant(const gemm::GemmArgs& args, Variant v, cudaStream_t stream);  // kernel.cu
}  // namespace ch12

namespace {

using namespace ch15;

const char* kProgram = "chapter 15_grouped_gemm";

struct Options {
  bool contiguous = true, masked = true;
  int groups = 8;
  int64_t max_m = 0;  // masked; 0: the largest group rounded up to 64
};

// The group's rows of the grouped D, as a dense D of rows x N.
std::vector<uint16_t> group_rows(const std::vector<uint16_t>& d, const GroupedHostProblem& p,
                                 int g) {
  const int64_t n = p.shape.n;
  return std::vector<uint16_t>(d.begin() + p.first_row[g] * n,
                               d.begin() + (p.first_row[g] + p.rows[g]) * n);
}

// The rows the contract says hold zeros, and (masked) the rows it says are untouched: masked rows
// past a group's count are zeros up to the next multiple of the store box's rows (box_rows, the
// launched configuration's), then untouched (grouped.hpp).
bool check_padding(const std::vector<uint16_t>& d, const GroupedHostProblem& p, int box_rows) {
  const int64_t n = p.shape.n;
  int64_t not_zero = 0, touched = 0;
  for (int g = 0; g < p.groups; ++g) {
    const int64_t end = p.layout == Layout::Contiguous
                            ? (p.rows[g] + kAlignment - 1) / kAlignment * kAlignment
                            : (p.rows[g] + box_rows - 1) / box_rows * box_rows;
    for (int64_t r = p.rows[g]; r < end; ++r)
      for (int64_t j = 0; j < n; ++j) not_zero += d[(p.first_row[g] + r) * n + j] != 0;
    if (p.layout == Layout::Masked)
      for (int64_t r = end; r < p.shape.m; ++r)
        for (int64_t j = 0; j < n; ++j)
          touched += d[(p.first_row[g] + r) * n + j] != gemm::kPoisonBits;
  }
  const bool ok = not_zero == 0 && touched == 0;
  const std::string what = p.layout == Layout::Contiguous
                               ? "padding rows:"
                               : "rows past masked_m (to " + std::to_string(box_rows) + "):";
  std::printf("  %-34s %lld not zero%s  [%s]\n", what.c_str(), (long long)not_zero,
              p.layout == Layout::Masked
                  ? (", " + std::to_string(touched) + " written past them").c_str()
                  : "",
              ok ? "PASS" : "FAIL");
  return ok;
}

bool check(const GroupedHostProblem& host, const GroupedDeviceProblem& dev, GroupedArgs args,
           const Config& c) {
  const gemm::Chapter& ch12 = *gemm::find_chapter(12);
  dev.poison();
  ch15::gemm(args, nullptr);
  check_status(args.status, nullptr);
  const std::vector<uint16_t> d = dev.download_d();
  bool ok = true;
  // Against the CPU reference, group by group (bands of rows where a group is large).
  gemm::Comparison worst;
  int64_t rows_checked = 0, unwritten = 0, nan = 0;
  const double budget = gemm::kCpuReferenceMacs / std::max(1, host.groups);
  for (int g = 0; g < host.groups; ++g) {
    if (host.rows[g] == 0) continue;
    const gemm::HostProblem q = host.group_problem(g);
    const gemm::ReferenceCheck r = gemm::check_against_reference(
        q, group_rows(d, host, g), ch12.tolerance(q.shape), std::max(budget, 1e6));
    rows_checked += r.rows_checked;
    unwritten += r.unwritten_total;
    nan += r.nan_total;
    worst.count += r.on_bands.count;
    worst.over_bound += r.on_bands.over_bound;
    if (r.on_bands.rel_diff >= worst.rel_diff) {
      worst.rel_diff = r.on_bands.rel_diff;
      worst.max_abs_err = std::max(worst.max_abs_err, r.on_bands.max_abs_err);
    }
  }
  const bool ref_ok =
      unwritten == 0 && nan == 0 && worst.over_bound == 0 && worst.rel_diff <= ch12.max_rel_diff;
  std::printf("  %-34s %lld elements over bound, worst rel_diff %.3g, %lld unwritten  [%s]\n",
              ("vs CPU reference, " + std::to_string(rows_checked) + " rows:").c_str(),
              (long long)worst.over_bound, worst.rel_diff, (long long)unwritten,
              ref_ok ? "PASS" : "FAIL");
  ok &= ref_ok;
  ok &= check_padding(d, host, c.box_rows);
  // Chapter 12 group by group with the same tile and no cluster: the same instructions per element.
  dev.poison();
  for (const auto& group : dev.dense_groups())
    ch12::gemm_variant(group.args, {c.tile.block_m, c.tile.block_n, ch10::Multicast::None, 1},
                       nullptr);
  const std::vector<uint16_t> dense = dev.download_d();
  int64_t differ = 0, compared = 0;
  for (int g = 0; g < host.groups; ++g) {
    const std::vector<uint16_t> a = group_rows(d, host, g), b = group_rows(dense, host, g);
    differ += gemm::count_bit_differences(a, b);
    compared += int64_t(a.size());
  }
  std::printf("  %-34s %lld of %lld elements differ  [%s]\n",
              "vs chapter 12 per group, bit for bit:", (long long)differ, (long long)compared,
              differ ? "FAIL" : "PASS");
  ok &= differ == 0;
  return ok;
}

void time_it(const GroupedHostProblem& host, const GroupedDeviceProblem& dev,
             const GroupedArgs& args, int iters) {
  const gemm::L2Flusher flusher;
  gemm::TimingOptions topt;
  topt.runs = iters;
  topt.kernel_time = true;
  std::printf(
      "timing (L2 flushed by a %.1f GB memset before each run; TFLOPS and GB/s of the valid "
      "rows):\n",
      flusher.bytes() / 1e9);
  std::printf("  %-26s %10s %9s %9s %10s %9s\n", "", "median us", "TFLOPS", "GB/s", "kernel us",
              "TFLOPS");
  const auto row = [&](const char* name, const gemm::Timing& t) {
    std::printf("  %-26s %10.1f %9.1f %9.0f %10.1f %9.1f   (median of %d)\n", name,
                t.median_ms * 1e3, host.flops() / (t.median_ms * 1e9),
                host.min_bytes() / (t.median_ms * 1e6), t.kernel_ms * 1e3,
                t.kernel_ms > 0 ? host.flops() / (t.kernel_ms * 1e9) : 0.0, t.runs);
  };
  row(kProgram + 8,
      gemm::time_launch([&](cudaStream_t s) { ch15::gemm(args, s); }, flusher, nullptr, topt));
  const gemm::Chapter& ch13 = *gemm::find_chapter(13);
  gemm::TimingOptions each = topt;
  each.kernel_time_sum = true;
  row("chapter 13 once per group", gemm::time_launch(
                                       [&](cudaStream_t s) {
                                         for (const auto& group : dev.dense_groups())
                                           ch13.launch(group.args, s);
                                       },
                                       flusher, nullptr, each));
}

int run(Layout layout, const Options& o, const gemm::CliOptions& cli) {
  const std::vector<int64_t> rows = draw_rows(o.groups, cli.shape.m, cli.seed);
  const GroupedHostProblem host =
      make_grouped_problem(layout, rows, cli.shape.n, cli.shape.k, cli.seed, o.max_m);
  GroupedArgs shape_only;
  shape_only.layout = layout;
  shape_only.groups = host.groups;
  shape_only.shape = host.shape;
  shape_only.expected_m = layout == Layout::Masked ? std::min(cli.shape.m, host.shape.m) : 0;
  // The configuration as the launch takes it, the environment's overrides included (kernel.cu).
  const Config c = configuration(shape_only);
  std::printf("%s\n", describe_config(shape_only).c_str());
  if (cli.print_config) return 0;
  const GroupedDeviceProblem dev(host);
  GroupedArgs args = dev.args();
  args.expected_m = shape_only.expected_m;
  std::printf("rows per group:");
  for (int64_t r : rows) std::printf(" %lld", (long long)r);
  std::printf(" (%lld valid of %lld)\n", (long long)host.valid_rows(), (long long)host.d_rows());
  bool ok = true;
  if (cli.check) {
    std::printf("checks (quantised, random scales):\n");
    ok = check(host, dev, args, c);
  }
  if (cli.timing) time_it(host, dev, args, cli.iters);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // This chapter's flags first; the rest are the chapters' shared ones.
  Options o;
  std::vector<const char*> rest = {argv[0]};
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      const bool has_value = i + 1 < argc;
      if (a == "--layout" && has_value) {
        const std::string v = argv[++i];
        if (v != "contiguous" && v != "masked" && v != "both")
          throw gemm::UnsupportedError("--layout must be contiguous, masked or both (got \"" + v +
                                       "\")");
        o.contiguous = v != "masked";
        o.masked = v != "contiguous";
      } else if (a == "--groups" && has_value) {
        o.groups = std::atoi(argv[++i]);
        if (o.groups < 1 || o.groups > 4096)
          throw gemm::UnsupportedError("--groups must be between 1 and 4096");
      } else if (a == "--max-m" && has_value) {
        o.max_m = std::atoll(argv[++i]);
        if (o.max_m < 1) throw gemm::UnsupportedError("--max-m must be at least 1");
      } else {
        rest.push_back(argv[i]);
      }
    }
    const gemm::CliOptions cli = gemm::parse_cli(int(rest.size()), rest.data(), {512, 4096, 7168});
    if (cli.help) {
      std::printf("%s", gemm::cli_usage(argv[0],
                                        std::string(kProgram) + ": " + gemm::find_chapter(15)->idea)
                            .c_str());
      std::printf(
          "  --layout L          contiguous, masked or both (default)\n"
          "  --groups G          groups (default 8); --m is the rows a group is expected to "
          "have,\n"
          "                      each drawn in [0.7, 1.3] x M from the seed\n"
          "  --max-m ROWS        the masked layout's max_m (default: the largest group, rounded "
          "up to 64)\n");
      return 0;
    }
    if (!cli.draw.empty()) {
      draw_schedule(cli.draw + "/schedule.svg");
      std::printf("wrote %s/schedule.svg\n", cli.draw.c_str());
      if (!cli.check && !cli.timing) return 0;
    }
    // No Hopper GPU: the chapter cannot run here (exit 2 and one line, as every chapter binary).
    if (const std::string why = gemm::hopper_unavailable_reason();
        !cli.print_config && !why.empty()) {
      std::printf("%s: cannot run: %s\n", kProgram, why.c_str());
      return 2;
    }
    int rc = 0;
    if (o.contiguous) rc |= run(Layout::Contiguous, o, cli);
    if (o.masked) rc |= run(Layout::Masked, o, cli);
    return rc;
  } catch (const gemm::UnsupportedError& e) {
    std::fprintf(stderr, "%s: %s\n", kProgram, e.what());
    return 2;
  } catch (const gemm::Error& e) {
    std::fprintf(stderr, "%s: %s\n", kProgram, e.what());
    return 1;
  }
}
