// Chapter 01's binary: runs the one wgmma on random bf16 inputs, with B stored both ways, checks
// all 512 outputs against the exact product, and prints which thread holds which element of D.
// --draw DIR writes the chapter's pictures, from the same functions the kernel uses. The command
// line is the one every chapter shares (common/cli.hpp), less the flags of a GEMM.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "chapters/01_wgmma_m64n8k16/ch01.hpp"
#include "common/check.hpp"
#include "common/cli.hpp"
#include "common/device.hpp"
#include "common/inputs.hpp"
#include "common/ptx/descriptor.hpp"
#include "common/reference.hpp"
#include "common/svg.hpp"

namespace {

using ch01::BLayout;
using ch01::kK;
using ch01::kM;
using ch01::kN;

const char* kProgram = "chapter 01_wgmma_m64n8k16";
const char* kAbout =
    "chapter 01_wgmma_m64n8k16: one wgmma.mma_async m64n8k16 (bf16, fp32 accumulators) on one "
    "warpgroup, D(64x8) = A(64x16) * B(16x8), with B stored K-major and N-major; --draw writes "
    "fragment_d.svg, smem_a.svg and smem_b.svg";
// Why the problem and timing flags of the GEMM chapters are refused here.
const char* kNotAGemm =
    "chapter 01 runs one wgmma of fixed shape (D 64 x 8 = A 64 x 16 * B 16 x 8) "
    "and times nothing";

// ---- pictures -------------------------------------------------------------------------------

// D, 64 x 8: each cell names the thread and register that hold it; colour = warp.
void draw_fragment_d(const std::string& path) {
  const double w = 58, h = 14, x0 = 34, y0 = 56;
  gemm::Svg s;
  s.text(x0, 16, 12, "wgmma m64n8k16, D (64 x 8 fp32):");
  s.text(x0, 31, 12, "thread T, register d holding each element");
  s.text(x0, 44, 10, "colour = warp; ptx::accumulator_position()");
  for (int n = 0; n < kN; ++n) s.text(x0 + n * w + w / 2, y0 - 2, 9, std::to_string(n), "middle");
  for (int m = 0; m < kM; ++m) s.text(x0 - 4, y0 + m * h + h - 3, 9, std::to_string(m), "end");
  for (int t = 0; t < ptx::kWarpgroupSize; ++t)
    for (int r = 0; r < ch01::kAccumulatorsPerThread; ++r) {
      const ptx::RowCol p = ptx::accumulator_position(t, r);
      s.cell(x0 + p.col * w, y0 + p.row * h, w, h, t / ptx::kWarpSize,
             "T" + std::to_string(t) + " d" + std::to_string(r));
    }
  s.save(path, x0 + kN * w + 10, y0 + kM * h + 10, 9);
}

// One operand as a logical rows x cols grid: each cell holds its byte offset in shared memory;
// colour = the 128-byte core matrix it lands in (offset / 128).
template <class Offset>
void draw_operand(gemm::Svg& s, double x0, double y0, int rows, int cols, const std::string& title,
                  const std::string& row_name, const std::string& col_name, Offset offset) {
  const double w = 30, h = 13;
  s.text(x0, y0 - 22, 11, title);
  s.text(x0 + cols * w / 2, y0 - 4, 9, col_name + " ->", "middle");
  s.text(x0 - 4, y0 - 4, 9, row_name, "end");
  for (int i = 0; i < rows; ++i) {
    s.text(x0 - 4, y0 + i * h + h - 3, 8, std::to_string(i), "end");
    for (int j = 0; j < cols; ++j) {
      const uint32_t byte = offset(i, j);
      s.cell(x0 + j * w, y0 + i * h, w, h, byte / ch01::kCoreMatrixBytes, std::to_string(byte));
    }
  }
}

void draw_smem_a(const std::string& path) {
  gemm::Svg s;
  s.text(20, 16, 12, "A (64 x 16 bf16) in shared memory: byte offset of each element");
  s.text(20, 30, 10, "colour = core matrix (offset / 128: 8 rows x 16 bytes)");
  s.text(20, 43, 10, "LBO = 128 (next core matrix along K), SBO = 256 (next 8 rows of M)");
  draw_operand(s, 40, 80, kM, kK, "ch01::a_offset(m, k)", "m", "k",
               [](int m, int k) { return ch01::a_offset(m, k); });
  s.save(path, 40 + kK * 30 + 20, 80 + kM * 13 + 10, 8);
}

void draw_smem_b(const std::string& path) {
  gemm::Svg s;
  s.text(20, 16, 12, "B (16 x 8 bf16) in shared memory: byte offset of each element");
  s.text(20, 30, 10, "k down, n across; colour = core matrix (offset / 128);");
  s.text(20, 43, 10, "LBO = 128 along K in both layouts (SBO = 256 is unused: N = 8)");
  draw_operand(s, 40, 80, kK, kN, "K-major, imm-trans-b = 0", "k", "n",
               [](int k, int n) { return ch01::b_offset(k, n, BLayout::KMajor); });
  draw_operand(s, 40 + kN * 30 + 50, 80, kK, kN, "N-major, imm-trans-b = 1", "k", "n",
               [](int k, int n) { return ch01::b_offset(k, n, BLayout::NMajor); });
  s.save(path, 40 + 2 * kN * 30 + 70, 80 + kK * 13 + 10, 8);
}

// ---- text output ----------------------------------------------------------------------------

// The fragment map twice: as a grid of D (who holds each element) and per thread (what each
// thread holds).
void print_fragment_map() {
  int owner[kM][kN];
  for (int t = 0; t < ptx::kWarpgroupSize; ++t)
    for (int r = 0; r < ch01::kAccumulatorsPerThread; ++r) {
      const ptx::RowCol p = ptx::accumulator_position(t, r);
      owner[p.row][p.col] = t * ch01::kAccumulatorsPerThread + r;
    }
  std::printf("\nD element -> thread.register (Tt.dr), from ptx::accumulator_position:\n     ");
  for (int n = 0; n < kN; ++n) std::printf("  col %-3d", n);  // 9 wide, as the cells
  std::printf("\n");
  for (int m = 0; m < kM; ++m) {
    std::printf("  %2d ", m);
    for (int n = 0; n < kN; ++n) {
      const int o = owner[m][n];
      const std::string cell = "T" + std::to_string(o / ch01::kAccumulatorsPerThread) + ".d" +
                               std::to_string(o % ch01::kAccumulatorsPerThread);
      std::printf("  %-7s", cell.c_str());
    }
    std::printf("%s\n", m % 16 == 15 && m + 1 < kM ? "\n" : "");
  }
  std::printf("\nthread -> (row,col) of d0 d1 d2 d3:\n");
  for (int t = 0; t < ptx::kWarpgroupSize; ++t) {
    std::printf("  T%-3d", t);
    for (int r = 0; r < ch01::kAccumulatorsPerThread; ++r) {
      const ptx::RowCol p = ptx::accumulator_position(t, r);
      std::printf(" %2d,%d", p.row, p.col);
    }
    std::printf("%s", t % 4 == 3 ? "\n" : "   ");
  }
}

bool report(const char* what, const ch01::Check& c) {
  std::printf("  %-28s max |err| %.3g, max |err|/bound %.3f, %d over bound, %d NaN/Inf  [%s]\n",
              what, c.max_abs_err, c.max_err_over_bound, c.over_bound, c.not_finite,
              c.pass() ? "PASS" : "FAIL");
  return c.pass();
}

}  // namespace

int main(int argc, char** argv) {
  gemm::CliOptions opt;
  try {
    opt = gemm::parse_cli(argc, argv, gemm::kDefaultShape, kNotAGemm);
  } catch (const gemm::Error& e) {
    std::fprintf(stderr, "%s: %s\n", kProgram, e.what());
    return 2;
  }
  if (opt.help) {
    std::printf("%s", gemm::cli_usage(argv[0], kAbout, kNotAGemm).c_str());
    return 0;
  }
  const uint64_t seed = opt.seed;

  try {
    if (!opt.draw.empty()) {
      draw_fragment_d(opt.draw + "/fragment_d.svg");
      draw_smem_a(opt.draw + "/smem_a.svg");
      draw_smem_b(opt.draw + "/smem_b.svg");
      std::printf("wrote %s/{fragment_d,smem_a,smem_b}.svg\n", opt.draw.c_str());
    }
    if (!opt.check) {  // nothing on the GPU: the fragment map is plain arithmetic
      print_fragment_map();
      return 0;
    }
    if (const std::string why = gemm::hopper_unavailable_reason(); !why.empty()) {
      std::printf("%s: cannot run: %s\n", kProgram, why.c_str());
      return 2;
    }

    // Random bf16 operands. B is drawn as the logical 16 x 8 matrix, then stored both ways.
    std::vector<uint16_t> a(kM * kK), b_k(kK * kN), b_n(kK * kN);
    for (int i = 0; i < kM * kK; ++i) a[i] = gemm::float_to_bf16_bits(gemm::normal_at(seed, 0, i));
    for (int k = 0; k < kK; ++k)
      for (int n = 0; n < kN; ++n) {
        const uint16_t v = gemm::float_to_bf16_bits(gemm::normal_at(seed, 1, k * kN + n));
        b_k[ch01::b_global_index(k, n, BLayout::KMajor)] = v;
        b_n[ch01::b_global_index(k, n, BLayout::NMajor)] = v;
      }

    std::printf(
        "01_wgmma_m64n8k16: D(64x8 fp32) = A(64x16 bf16) * B(16x8 bf16), one "
        "wgmma.mma_async on one warpgroup, seed %llu\n",
        (unsigned long long)seed);
    std::printf(
        "descriptors: LBO %u B (next core matrix along K), SBO %u B (next 8 rows of M/N), "
        "no swizzle\n",
        ch01::kLeadingByteOffset, ch01::kStrideByteOffset);
    std::printf(
        "bound per element: (16 + 1) * 2^-23 * sum_k |a*b| (products exact in fp32, 16 "
        "fp32 additions and one final rounding, truncating)\n");
    const ch01::Reference ref = ch01::reference_d(a, b_k, BLayout::KMajor);
    const std::vector<float> d_k = ch01::run_wgmma_m64n8k16(a, b_k, BLayout::KMajor);
    const std::vector<float> d_n = ch01::run_wgmma_m64n8k16(a, b_n, BLayout::NMajor);
    bool ok = report("B K-major (imm-trans-b 0):", ch01::check_d(d_k, ref));
    ok &= report("B N-major (imm-trans-b 1):", ch01::check_d(d_n, ref));
    const bool same = std::memcmp(d_k.data(), d_n.data(), d_k.size() * sizeof(float)) == 0;
    std::printf("  %-28s %s\n", "the two layouts agree:", same ? "bit for bit" : "NO (differ)");
    ok &= same;
    print_fragment_map();
    std::printf("\n%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
  } catch (const gemm::Error& e) {
    std::fprintf(stderr, "%s: %s\n", kProgram, e.what());
    return 2;
  }
}
