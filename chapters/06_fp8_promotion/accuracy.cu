// Chapter 06's accuracy study: what promotion buys, measured over K.
//
// Chapters 02-05 let the tensor core accumulate all of K. Its FP8 accumulator is not a true fp32
// adder: it aligns each instruction's products to the largest exponent and keeps about 13 fraction
// bits (DeepSeek-V3 report, section 3.3.2), so the error a long dot product collects grows with K.
// Chapter 06 hands each 128-wide K block's partial sum to fp32 registers on the CUDA cores (the
// promotion), so the tensor core never sums more than 128 products. This program runs, for K from
// 512 to 65536 on one small M x N, every result below against the CPU reference in double
// (common/reference.hpp) and prints what it measured:
//
//   ch05, unit             chapter 05: tensor-core accumulation over all of K (it ignores scales,
//                          so it runs on unit-scale inputs: N(0,1) values rounded to fp8)
//   ch06, unit             chapter 06 on the same inputs: the same products, promoted every block
//   ch00, unit             chapter 00: fp32 accumulation of dequantised values on CUDA cores
//   bf16 floor, unit       the exact value rounded to float, then to bf16: no kernel with a bf16
//                          output can do better, element by element
//   ch06 / ch00 / cuBLASLt block-scaled / bf16 floor, random: the same on random-scale inputs
//                          (Scales::Random), the real problem, scales varying 256x between blocks
//
// Two kinds of figure, because one is not enough:
//   - the global relative difference 1 - 2<d,ref>/(<d,d>+<ref,ref>) (DeepGEMM's calc_diff) is a
//     ratio of sums over all M*N elements. It is what DeepGEMM's tests accept on (< 1e-3), and it
//     averages: one column of D that is badly off (a wrong scale for one block, an accumulator that
//     lost bits where the sum happened to be large) by a relative error e moves it by only about
//     e^2 / (2N), 2e-5 for a column 10% off at N = 256, well under the threshold;
//   - the worst single element, as |d - ref| / sum|a*b| (that element's sum of |terms|, the
//     quantity every accumulation bound is written in: fp32 summation of K terms errs by at most
//     about K * 2^-24 of it) and as |d - ref| / RMS(ref) (in units of D's typical size, RMS over
//     all of D). These see every element.
//
// Every figure is measured on the GPU it runs on, none is derived from a bound. Unwritten (poison)
// or NaN/Inf elements in any result are a failure: exit 1.
//
//   accuracy_study [--m M] [--n N] [--k-max K] [--seed S] [--out DIR] [--help]
//
// --out DIR writes DIR/accuracy.md (the tables) and DIR/accuracy.svg (two log-log charts over K).
// The CPU reference costs M*N*K multiply-adds in double per K and per input kind (2.1e9 at the
// default M = 128, N = 256, K = 65536), run on all cores; its time per K goes to stderr.
#include <cuda_runtime.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "chapters/registry.hpp"
#include "common/check.hpp"
#include "common/cublaslt.hpp"
#include "common/device.hpp"
#include "common/inputs.hpp"
#include "common/reference.hpp"
#include "common/svg.hpp"

namespace {

using gemm::Reference;
using gemm::Shape;

constexpr const char* kProgram = "accuracy_study";
constexpr int64_t kSweep[] = {512, 1024, 2048, 4096, 8192, 16384, 32768, 65536};

// ---------------------------------------------------------------------------------------------
// The command line: a handful of flags of its own, so a small parser rather than common/cli.hpp.

struct Options {
  int64_t m = 128, n = 256;
  int64_t k_max = 65536;
  uint64_t seed = gemm::kDefaultSeed;
  std::string out;  // empty: print only
  bool help = false;
};

std::string usage() {
  char buf[2048];
  std::snprintf(
      buf, sizeof buf,
      "usage: %s [--m M] [--n N] [--k-max K] [--seed S] [--out DIR] [--help]\n"
      "Chapter 06's accuracy study: for K = 512, 1024, ..., 65536, chapters 05, 06 and 00, "
      "cuBLASLt\n"
      "block-scaled FP8 and the exact value rounded to bf16, each against the CPU reference in\n"
      "double: the global relative difference (DeepGEMM's calc_diff) and the worst element.\n"
      "  --m M       rows of D (default 128)\n"
      "  --n N       columns of D, a multiple of 8 (default 256)\n"
      "  --k-max K   stop the sweep after the largest K <= this (default 65536, at least 512)\n"
      "  --seed S    seed of the random inputs (default %llu)\n"
      "  --out DIR   also write DIR/accuracy.md and DIR/accuracy.svg (DIR is created)\n"
      "  --help      print this and exit\n"
      "The CPU reference costs M*N*K multiply-adds in double per K, twice (unit and random\n"
      "scales); its time per K goes to stderr. Exit status: 0 measured, 1 a result left elements\n"
      "unwritten or NaN/Inf (or a CUDA error), 2 cannot run here (no Hopper GPU, bad flag).\n",
      kProgram, (unsigned long long)gemm::kDefaultSeed);
  return buf;
}

// A whole-string non-negative integer, or false.
bool parse_u64(const char* s, uint64_t& v) {
  if (!s || !*s || *s == '-' || *s == '+') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long x = std::strtoull(s, &end, 10);
  if (errno || *end) return false;
  v = x;
  return true;
}

// Throws gemm::UnsupportedError with a sentence naming the bad argument.
Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      o.help = true;
      continue;
    }
    if (flag != "--m" && flag != "--n" && flag != "--k-max" && flag != "--seed" && flag != "--out")
      throw gemm::UnsupportedError("unknown argument '" + flag + "' (--help lists the flags)");
    if (i + 1 >= argc) throw gemm::UnsupportedError(flag + " needs a value");
    const char* value = argv[++i];
    if (flag == "--out") {
      o.out = value;
      continue;
    }
    uint64_t v = 0;
    if (!parse_u64(value, v) || (flag != "--seed" && (v == 0 || v > (uint64_t(1) << 40))))
      throw gemm::UnsupportedError(flag + " takes a positive integer, not '" + value + "'");
    if (flag == "--m") o.m = int64_t(v);
    if (flag == "--n") o.n = int64_t(v);
    if (flag == "--k-max") o.k_max = int64_t(v);
    if (flag == "--seed") o.seed = v;
  }
  if (o.k_max < kSweep[0])
    throw gemm::UnsupportedError("--k-max must be at least " + std::to_string(kSweep[0]) +
                                 ", where the sweep starts (got " + std::to_string(o.k_max) + ")");
  return o;
}

// ---------------------------------------------------------------------------------------------
// The results and their figures.

enum Result {
  kCh05Unit,
  kCh06Unit,
  kCh00Unit,
  kFloorUnit,
  kCh06Random,
  kCh00Random,
  kCublasRandom,
  kFloorRandom,
  kNumResults
};
constexpr int kFirstRandom = kCh06Random;  // results [0, 4) run on unit scales, [4, 8) on random

struct ResultInfo {
  const char* column;  // stdout header, under the input group (<= 9 characters)
  const char* name;    // Markdown header and chart legend
  const char* what;    // one line for the printed header
  const char* colour;  // chart line colour; unit-scale inputs are drawn dashed
};

constexpr ResultInfo kResults[kNumResults] = {
    {"ch05", "ch05, unit",
     "chapter 05: FP8 wgmma, the tensor core accumulates all of K (ignores scales)", "#d62728"},
    {"ch06", "ch06, unit",
     "chapter 06: FP8 wgmma, promoted into fp32 on CUDA cores every 128-wide K block", "#1f77b4"},
    {"ch00", "ch00, unit", "chapter 00: fp32 accumulation of the dequantised values on CUDA cores",
     "#2ca02c"},
    {"floor", "bf16 floor, unit",
     "the exact value rounded to float, then bf16: no bf16 output does better", "#7f7f7f"},
    {"ch06", "ch06, random", "chapter 06, as above", "#1f77b4"},
    {"ch00", "ch00, random", "chapter 00, as above", "#2ca02c"},
    {"cuBLASLt", "cuBLASLt blk-scaled, random",
     "cuBLASLt FP8, A scaled per 1x128 and B per 128x128 (Peer::BlockScaled)", "#ff7f0e"},
    {"floor", "bf16 floor, random", "the exact value rounded to bf16, as above", "#7f7f7f"},
};

struct Figures {
  bool available = false;    // false: not run (cuBLASLt has no algorithm for the shape)
  double global = NAN;       // 1 - 2<d,ref> / (<d,d> + <ref,ref>)
  double worst_terms = NAN;  // max |d - ref| / sum|a*b|
  double worst_rms = NAN;    // max |d - ref| / RMS(ref)
  int64_t unwritten = 0, nan = 0;
};

// The three figures of D (bf16 bits) against the reference. Poisoned and non-finite elements are
// counted (and make the global figure NaN); the worst-element figures skip them.
Figures measure(const std::vector<uint16_t>& d, const Reference& ref) {
  if (d.size() != ref.value.size()) throw gemm::Error("measure: size mismatch");
  Figures f;
  f.available = true;
  f.worst_terms = f.worst_rms = 0.0;
  double sum_sq = 0.0;
  for (double r : ref.value) sum_sq += r * r;
  const double rms = std::sqrt(sum_sq / double(ref.value.size()));
  std::vector<double> x(d.size());
  for (size_t i = 0; i < d.size(); ++i) {
    x[i] = gemm::bf16_to_float(d[i]);
    if (d[i] == gemm::kPoisonBits) {
      ++f.unwritten;
      continue;
    }
    if (!std::isfinite(x[i])) {
      ++f.nan;
      continue;
    }
    const double err = std::fabs(x[i] - ref.value[i]);
    const auto ratio = [err](double over) {
      return over > 0 ? err / over : (err > 0 ? INFINITY : 0);
    };
    f.worst_terms = std::fmax(f.worst_terms, ratio(ref.abs_sum[i]));
    f.worst_rms = std::fmax(f.worst_rms, ratio(rms));
  }
  f.global = gemm::rel_diff(x, ref.value);
  return f;
}

// The floor: the exact value rounded to float, then to bf16 (round to nearest even).
std::vector<uint16_t> rounded_reference(const Reference& ref) {
  std::vector<uint16_t> d(ref.value.size());
  for (size_t i = 0; i < d.size(); ++i) d[i] = gemm::float_to_bf16_bits(float(ref.value[i]));
  return d;
}

struct Row {
  int64_t k = 0;
  Figures f[kNumResults];
};

// The three figures, by index, with their titles (stdout and Markdown).
constexpr int kNumFigures = 3;
double figure(const Figures& f, int which) {
  return which == 0 ? f.global : which == 1 ? f.worst_terms : f.worst_rms;
}
constexpr const char* kFigureTitles[kNumFigures] = {
    "global relative difference, 1 - 2<d,ref>/(<d,d>+<ref,ref>) (DeepGEMM's calc_diff)",
    "worst element, max |d - ref| / sum|a*b| (that element's sum of |terms|)",
    "worst element, max |d - ref| / RMS(ref) (RMS over all of D)",
};
constexpr const char* kFigureTitlesMd[kNumFigures] = {
    "Global relative difference, `1 - 2<d,ref>/(<d,d>+<ref,ref>)` (DeepGEMM's `calc_diff`)",
    "Worst element, `max |d - ref| / sum|a*b|` (that element's sum of absolute terms)",
    "Worst element, `max |d - ref| / RMS(ref)` (RMS over all of D)",
};

std::string cell(const Figures& f, int which) {
  if (!f.available) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", figure(f, which));
  return buf;
}

// ---------------------------------------------------------------------------------------------
// Output: stdout tables, Markdown, SVG.

void print_tables(const std::vector<Row>& rows) {
  for (int w = 0; w < kNumFigures; ++w) {
    std::printf("\n%s:\n", kFigureTitles[w]);
    std::printf("%7s  %-39s  %-39s\n", "", "|---------- unit-scale inputs ---------|",
                "|--------- random-scale inputs --------|");
    std::printf("%7s ", "K");
    for (int r = 0; r < kNumResults; ++r)
      std::printf("%s%9s", r == kFirstRandom ? "  " : " ", kResults[r].column);
    std::printf("\n");
    for (const Row& row : rows) {
      std::printf("%7lld ", (long long)row.k);
      for (int r = 0; r < kNumResults; ++r)
        std::printf("%s%9s", r == kFirstRandom ? "  " : " ", cell(row.f[r], w).c_str());
      std::printf("\n");
    }
  }
}

void write_markdown(const std::string& path, const std::string& about,
                    const std::vector<Row>& rows) {
  std::ofstream md(path);
  md << "# Chapter 06 accuracy study\n\n"
     << about << "\n\n"
     << "Written by `accuracy_study` (chapters/06_fp8_promotion/accuracy.cu). Every figure is "
        "measured against the CPU reference in double, none is derived from a bound.\n\n";
  for (int r = 0; r < kNumResults; ++r)
    md << "- **" << kResults[r].name << "**: " << kResults[r].what << "\n";
  md << "\n![accuracy](accuracy.svg)\n";
  for (int w = 0; w < kNumFigures; ++w) {
    md << "\n## " << kFigureTitlesMd[w] << "\n\n| K |";
    for (const ResultInfo& info : kResults) md << " " << info.name << " |";
    md << "\n| ---: |";
    for (int r = 0; r < kNumResults; ++r) md << " ---: |";
    md << "\n";
    for (const Row& row : rows) {
      md << "| " << row.k << " |";
      for (int r = 0; r < kNumResults; ++r) md << " " << cell(row.f[r], w) << " |";
      md << "\n";
    }
  }
  if (!md) throw gemm::Error("cannot write " + path);
}

std::string k_label(int64_t k) {
  return k >= 1024 && k % 1024 == 0 ? std::to_string(k / 1024) + "K" : std::to_string(k);
}

bool is_floor(int r) {
  return r == kFloorUnit || r == kFloorRandom;
}

// A result's stroke: its colour, dashed for unit-scale inputs; the floors wide and light.
std::string line_style(int r) {
  return std::string("stroke='") + (is_floor(r) ? "#c8c8c8" : kResults[r].colour) +
         "' stroke-width='" + (is_floor(r) ? "5" : "1.5") + "'" +
         (r < kFirstRandom ? " stroke-dasharray='6,3'" : "");
}

// One log-log chart: x = K, y = figure `which`, one line per result, in the plot area (x0, y0,
// w, h) of svg.
void draw_panel(gemm::Svg& svg, double x0, double y0, double w, double h, const std::string& title,
                const std::vector<Row>& rows, int which) {
  char buf[512];
  // The axes' ranges: K's octaves; the figures' decades (at least one).
  double lx0 = std::log2(double(rows.front().k)), lx1 = std::log2(double(rows.back().k));
  if (lx1 - lx0 < 1) lx0 -= 0.5, lx1 += 0.5;
  double lo = INFINITY, hi = -INFINITY;
  for (const Row& row : rows)
    for (const Figures& f : row.f) {
      const double v = figure(f, which);
      if (f.available && std::isfinite(v) && v > 0) lo = std::fmin(lo, v), hi = std::fmax(hi, v);
    }
  if (!(lo <= hi)) lo = 1e-6, hi = 1e-1;
  double ly0 = std::floor(std::log10(lo)), ly1 = std::ceil(std::log10(hi));
  if (ly1 - ly0 < 1) ly1 = ly0 + 1;
  const auto px = [&](double k) { return x0 + w * (std::log2(k) - lx0) / (lx1 - lx0); };
  const auto py = [&](double v) { return y0 + h * (ly1 - std::log10(v)) / (ly1 - ly0); };

  svg.text(x0 + w / 2, y0 - 8, 12, title, "middle");
  // Grid and tick labels.
  for (int d = int(ly0); d <= int(ly1); ++d) {
    const double y = py(std::pow(10.0, d));
    std::snprintf(buf, sizeof buf,
                  "<line x1='%g' y1='%g' x2='%g' y2='%g' stroke='#ddd' stroke-width='1'/>\n", x0, y,
                  x0 + w, y);
    svg.body += buf;
    svg.text(x0 - 5, y + 4, 11, "1e" + std::to_string(d), "end");
    // Fainter lines at 2x and 5x the decade, where there is a decade above to hold them.
    for (double mult : {2.0, 5.0}) {
      if (d == int(ly1)) break;
      const double ym = py(mult * std::pow(10.0, d));
      std::snprintf(buf, sizeof buf,
                    "<line x1='%g' y1='%g' x2='%g' y2='%g' stroke='#ebebeb' stroke-width='1'/>\n",
                    x0, ym, x0 + w, ym);
      svg.body += buf;
    }
  }
  for (const Row& row : rows) {
    const double x = px(double(row.k));
    std::snprintf(buf, sizeof buf,
                  "<line x1='%g' y1='%g' x2='%g' y2='%g' stroke='#ddd' stroke-width='1'/>\n", x, y0,
                  x, y0 + h);
    svg.body += buf;
    svg.text(x, y0 + h + 15, 11, k_label(row.k), "middle");
  }
  svg.text(x0 + w / 2, y0 + h + 30, 11, "K", "middle");
  std::snprintf(buf, sizeof buf,
                "<polyline fill='none' stroke='#555' stroke-width='1' "
                "points='%g,%g %g,%g %g,%g %g,%g %g,%g'/>\n",
                x0, y0, x0 + w, y0, x0 + w, y0 + h, x0, y0 + h, x0, y0);
  svg.body += buf;
  // One line per result (broken where a figure is missing or not positive), a dot per point; the
  // floors first, as wide light bands, so that results lying on them stay visible.
  constexpr int kDrawOrder[kNumResults] = {kFloorUnit,    kFloorRandom, kCh00Unit,   kCh00Random,
                                           kCublasRandom, kCh06Unit,    kCh06Random, kCh05Unit};
  for (int r : kDrawOrder) {
    std::string points;
    const auto flush = [&] {
      if (points.empty()) return;
      svg.body += "<polyline fill='none' " + line_style(r) + " points='" + points + "'/>\n";
      points.clear();
    };
    for (const Row& row : rows) {
      const double v = figure(row.f[r], which);
      if (!row.f[r].available || !std::isfinite(v) || v <= 0) {
        flush();
        continue;
      }
      const double x = px(double(row.k)), y = py(v);
      std::snprintf(buf, sizeof buf, "%g,%g ", x, y);
      points += buf;
      if (is_floor(r)) continue;
      std::snprintf(buf, sizeof buf, "<circle cx='%g' cy='%g' r='2.2' fill='%s'/>\n", x, y,
                    kResults[r].colour);
      svg.body += buf;
    }
    flush();
  }
}

void write_svg(const std::string& path, const std::string& title, const std::vector<Row>& rows) {
  constexpr double kWidth = 900, kHeight = 400;
  gemm::Svg svg;
  svg.text(kWidth / 2, 18, 13, title, "middle");
  draw_panel(svg, 60, 52, 370, 232, "global relative difference (calc_diff)", rows, 0);
  draw_panel(svg, 515, 52, 370, 232, "worst element: max |d - ref| / sum|a*b|", rows, 1);
  // The legend: two rows of four, unit-scale results (dashed) above random-scale ones (solid).
  char buf[256];
  for (int r = 0; r < kNumResults; ++r) {
    const double x = 15 + (r % 4) * 225, y = 348 + (r / 4) * 22;
    std::snprintf(buf, sizeof buf, "<line x1='%g' y1='%g' x2='%g' y2='%g' ", x, y - 4, x + 26,
                  y - 4);
    svg.body += buf + line_style(r) + "/>\n";
    svg.text(x + 32, y, 11, kResults[r].name);
  }
  svg.save(path, kWidth, kHeight, 11);
}

// ---------------------------------------------------------------------------------------------
// The study.

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

const gemm::Chapter& gemm_chapter(int number) {
  const gemm::Chapter* c = gemm::find_chapter(number);
  if (!c || !c->launch)
    throw gemm::Error("chapter " + std::to_string(number) + " is not a registered GEMM chapter");
  return *c;
}

int run(const Options& opt) {
  const gemm::Chapter& ch05 = gemm_chapter(5);
  const gemm::Chapter& ch06 = gemm_chapter(6);
  const gemm::Chapter& ch00 = gemm_chapter(0);
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));

  std::vector<int64_t> ks;
  for (int64_t k : kSweep)
    if (k <= opt.k_max) ks.push_back(k);
  char about[512];
  std::snprintf(
      about, sizeof about,
      "D (bf16) = A (fp8) x B^T (fp8) at M = %lld, N = %lld, K = %lld .. %lld; seed %llu; "
      "%s (%d SMs).",
      (long long)opt.m, (long long)opt.n, (long long)ks.front(), (long long)ks.back(),
      (unsigned long long)opt.seed, prop.name, prop.multiProcessorCount);
  std::printf("%s: chapter 06's accuracy study\n%s\n", kProgram, about);
  std::printf(
      "Every figure is measured on this GPU against the CPU reference in double (not derived "
      "from a bound).\nUnit-scale inputs: N(0,1) values rounded to fp8, every scale 1; "
      "random-scale inputs: values quantised per block, scales varying 256x between blocks.\n");
  for (int r = 0; r < kNumResults; ++r)
    std::printf("  %-8s %-6s %s\n", kResults[r].column, r < kFirstRandom ? "unit" : "random",
                kResults[r].what);
  std::fflush(stdout);

  std::vector<Row> rows;
  std::string cublas_unavailable;
  const auto t_start = std::chrono::steady_clock::now();
  for (int64_t k : ks) {
    const Shape s{opt.m, opt.n, k};
    Row row;
    row.k = k;
    double t_inputs = 0, t_reference = 0, t_gpu = 0;
    for (gemm::Scales scales : {gemm::Scales::Unit, gemm::Scales::Random}) {
      const bool unit = scales == gemm::Scales::Unit;
      auto t = std::chrono::steady_clock::now();
      const gemm::HostProblem host = gemm::make_problem(s, opt.seed, scales);
      t_inputs += seconds_since(t);
      t = std::chrono::steady_clock::now();
      const Reference ref = gemm::reference_gemm(host);
      t_reference += seconds_since(t);
      t = std::chrono::steady_clock::now();
      const gemm::DeviceProblem dev(host);
      if (unit) row.f[kCh05Unit] = measure(gemm::run_and_download(ch05, dev), ref);
      row.f[unit ? kCh06Unit : kCh06Random] = measure(gemm::run_and_download(ch06, dev), ref);
      row.f[unit ? kCh00Unit : kCh00Random] = measure(gemm::run_and_download(ch00, dev), ref);
      if (!unit) {
        try {
          const gemm::CublasLtGemm peer(gemm::Peer::BlockScaled, dev.args());
          dev.poison();
          peer.run(nullptr);
          row.f[kCublasRandom] = measure(dev.download_d(), ref);
        } catch (const gemm::UnsupportedError& e) {
          cublas_unavailable = e.what();  // the column reads n/a
        }
      }
      t_gpu += seconds_since(t);
      row.f[unit ? kFloorUnit : kFloorRandom] = measure(rounded_reference(ref), ref);
    }
    std::fprintf(stderr,
                 "%s: K = %lld: inputs %.2f s, CPU reference %.2f s (%.2g MACs, twice), GPU runs "
                 "%.2f s\n",
                 kProgram, (long long)k, t_inputs, t_reference, double(s.m) * s.n * s.k, t_gpu);
    rows.push_back(row);
  }
  std::fprintf(stderr, "%s: total %.1f s\n", kProgram, seconds_since(t_start));

  print_tables(rows);
  if (!cublas_unavailable.empty())
    std::printf("\ncuBLASLt block-scaled: n/a: %s\n", cublas_unavailable.c_str());

  if (!opt.out.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(opt.out, ec);
    if (ec) throw gemm::Error("cannot create " + opt.out + ": " + ec.message());
    write_markdown(opt.out + "/accuracy.md", about, rows);
    write_svg(opt.out + "/accuracy.svg",
              std::string("Chapter 06 accuracy vs K, M = ") + std::to_string(opt.m) +
                  ", N = " + std::to_string(opt.n) + ", " + prop.name + " (measured)",
              rows);
    std::printf("\nwrote %s/accuracy.md and %s/accuracy.svg\n", opt.out.c_str(), opt.out.c_str());
  }

  bool ok = true;
  for (const Row& row : rows)
    for (int r = 0; r < kNumResults; ++r)
      if (row.f[r].unwritten || row.f[r].nan) {
        std::printf("FAIL: K = %lld, %s: %lld elements of D unwritten, %lld NaN/Inf\n",
                    (long long)row.k, kResults[r].name, (long long)row.f[r].unwritten,
                    (long long)row.f[r].nan);
        ok = false;
      }
  std::printf("%s\n", ok ? "every element of every result written and finite" : "CHECK FAILED");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  try {
    opt = parse_options(argc, argv);
  } catch (const gemm::Error& e) {
    std::fprintf(stderr, "%s: %s\n", kProgram, e.what());
    return 2;
  }
  if (opt.help) {
    std::printf("%s", usage().c_str());
    return 0;
  }
  // The largest problem of the sweep carries every constraint the others do.
  int64_t k_last = 0;
  for (int64_t k : kSweep)
    if (k <= opt.k_max) k_last = k;
  if (std::string why = gemm::shape_error(Shape{opt.m, opt.n, k_last}); !why.empty()) {
    std::fprintf(stderr, "%s: %s\n", kProgram, why.c_str());
    return 2;
  }
  if (std::string why = gemm::hopper_unavailable_reason(); !why.empty()) {
    std::printf("%s: cannot run: %s\n", kProgram, why.c_str());
    return 2;
  }
  try {
    return run(opt);
  } catch (const gemm::UnsupportedError& e) {
    std::printf("%s: cannot run: %s\n", kProgram, e.what());
    return 2;
  } catch (const gemm::Error& e) {
    std::printf("%s: error: %s\n", kProgram, e.what());
    return 1;
  }
}
