// Special values through every GEMM chapter: a NaN in one element of A reaches exactly the row of D
// it touches, and a NaN in B exactly its column, with every other element bit for bit what the
// clean inputs give (a tile that mixes rows or columns up, or reads past its edge, shows here);
// an Inf scale and zero scales do the same for the chapters that read scales; and the
// largest-magnitude fp8 inputs (+-448 everywhere, long K) stay finite and exact within the
// chapter's tolerance on their way through fp32 to bf16.
//
// fp8 e4m3 has NaN encodings (0x7F, 0xFF) but no Inf: an Inf can only come in through an fp32
// scale, so the Inf and zero-scale tests apply to chapters that read their scales (the registry's
// applies_scales) and skip, saying so, for those computing the unscaled product.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "chapters/registry.hpp"
#include "tests/gpu.hpp"

// Skips a test on scales in a chapter that does not read them.
#define SKIP_UNLESS_READS_SCALES()                                                           \
  do {                                                                                       \
    if (!ch.applies_scales)                                                                  \
      GTEST_SKIP() << ch.dir << " computes the unscaled product and never reads its scales"; \
  } while (0)

namespace gemm {
namespace {

// Ragged in M (200 = 128 + 72) and N (264 = 256 + 8), an odd number of K blocks (5).
constexpr Shape kShape{200, 264, 640};

bool is_nan_bits(uint16_t bits) {
  return (bits & 0x7F80) == 0x7F80 && (bits & 0x007F) != 0;
}
bool is_nonfinite_bits(uint16_t bits) {
  return (bits & 0x7F80) == 0x7F80;
}
bool is_zero_bits(uint16_t bits) {
  return (bits & 0x7FFF) == 0;  // +0 or -0
}

fp8 fp8_bits(uint8_t bits) {
  fp8 v;
  v.__x = bits;
  return v;
}

class SpecialValues : public ::testing::TestWithParam<int> {
 protected:
  const Chapter& ch = *find_chapter(GetParam());
  const uint64_t seed = testing::test_seed();
  std::mt19937_64 rng{seed};

  std::string context(const Shape& s, const std::string& what) const {
    return std::string(ch.dir) + " " + s.str() + " seed " + std::to_string(seed) + ", " + what;
  }
  HostProblem problem(const Shape& s) const { return make_problem(s, seed, scales_for(ch)); }
  std::vector<uint16_t> run(const HostProblem& p) const {
    const DeviceProblem dev(p);
    return run_and_download(ch, dev);  // poisons D first
  }
  // The clean run, itself checked against the CPU reference.
  std::vector<uint16_t> run_clean(const HostProblem& p) const {
    const std::vector<uint16_t> d = run(p);
    testing::expect_matches_reference(
        check_against_reference(p, d, ch.tolerance(p.shape), kCpuReferenceMacs), ch.max_rel_diff,
        context(p.shape, "clean inputs"));
    return d;
  }
  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }

  // Elements where hit(row, col) must satisfy want(bits) (and not be poison); every other element
  // must equal `clean` bit for bit.
  template <class Hit, class Want>
  void expect_exactly(const std::vector<uint16_t>& d, const std::vector<uint16_t>& clean,
                      const Shape& s, Hit hit, Want want, const std::string& wanted,
                      const std::string& what) const {
    int64_t hits = 0, bad_hit = 0, bad_rest = 0, first_hit = -1, first_rest = -1;
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        const int64_t at = i * s.n + j;
        if (hit(i, j)) {
          ++hits;
          if (d[at] == kPoisonBits || !want(d[at])) {
            if (bad_hit++ == 0) first_hit = at;
          }
        } else if (d[at] != clean[at]) {
          if (bad_rest++ == 0) first_rest = at;
        }
      }
    auto where = [&](int64_t at) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "row %lld col %lld (bits 0x%04x, clean 0x%04x)",
                    (long long)(at / s.n), (long long)(at % s.n), unsigned(d[at]),
                    unsigned(clean[at]));
      return std::string(buf);
    };
    EXPECT_GT(hits, 0) << context(s, what);
    EXPECT_EQ(bad_hit, 0) << context(s, what) << ": " << bad_hit << " of " << hits
                          << " elements are not " << wanted << ", first at " << where(first_hit);
    EXPECT_EQ(bad_rest, 0) << context(s, what) << ": " << bad_rest
                           << " other elements differ from the clean run, first at "
                           << where(first_rest);
  }
};

TEST_P(SpecialValues, NanInAReachesExactlyItsRow) {
  SKIP_WITHOUT_HOPPER();
  const Shape s = kShape;
  HostProblem p = problem(s);
  const std::vector<uint16_t> clean = run_clean(p);
  // The first row, one inside, and the last (in the ragged last tile); each at a random k, with
  // both NaN encodings.
  const int64_t rows[] = {0, pick(1, s.m - 2), s.m - 1};
  for (int i = 0; i < 3; ++i)
    p.a[rows[i] * s.k + pick(0, s.k - 1)] = fp8_bits(i == 1 ? 0xFF : 0x7F);
  const auto hit = [&](int64_t r, int64_t) { return r == rows[0] || r == rows[1] || r == rows[2]; };
  expect_exactly(run(p), clean, s, hit, is_nan_bits, "NaN",
                 "NaN in A at rows " + std::to_string(rows[0]) + ", " + std::to_string(rows[1]) +
                     ", " + std::to_string(rows[2]));
}

TEST_P(SpecialValues, NanInBReachesExactlyItsColumn) {
  SKIP_WITHOUT_HOPPER();
  const Shape s = kShape;
  HostProblem p = problem(s);
  const std::vector<uint16_t> clean = run_clean(p);
  const int64_t cols[] = {0, pick(1, s.n - 2), s.n - 1};
  for (int i = 0; i < 3; ++i)
    p.b[cols[i] * s.k + pick(0, s.k - 1)] = fp8_bits(i == 1 ? 0xFF : 0x7F);
  const auto hit = [&](int64_t, int64_t c) { return c == cols[0] || c == cols[1] || c == cols[2]; };
  expect_exactly(run(p), clean, s, hit, is_nan_bits, "NaN",
                 "NaN in B at columns " + std::to_string(cols[0]) + ", " + std::to_string(cols[1]) +
                     ", " + std::to_string(cols[2]));
}

TEST_P(SpecialValues, InfScaleReachesExactlyItsRowAndColumns) {
  // fp8 e4m3 has no Inf: an Inf reaches a kernel only through a scale.
  SKIP_UNLESS_READS_SCALES();
  SKIP_WITHOUT_HOPPER();
  const Shape s = kShape;
  HostProblem p = problem(s);
  const std::vector<uint16_t> clean = run_clean(p);
  // One A scale (one row, one K block) and one B scale (the ragged last block of 128 columns, one
  // K block). A term times Inf is +-Inf, or NaN where the fp8 value is 0: either way not finite.
  const int64_t row = pick(0, s.m - 1), nb = s.n_blocks() - 1;
  p.sa[pick(0, s.k_blocks() - 1) * s.sa_ld() + row] = INFINITY;
  p.sb[nb * s.k_blocks() + pick(0, s.k_blocks() - 1)] = INFINITY;
  const auto hit = [&](int64_t r, int64_t c) { return r == row || c / kScaleBlock == nb; };
  expect_exactly(run(p), clean, s, hit, is_nonfinite_bits, "Inf or NaN",
                 "Inf scale of row " + std::to_string(row) + " and of columns " +
                     std::to_string(nb * kScaleBlock) + " on");
}

TEST_P(SpecialValues, ZeroScalesGiveExactZeros) {
  SKIP_UNLESS_READS_SCALES();
  SKIP_WITHOUT_HOPPER();
  const Shape s = kShape;
  const HostProblem p = problem(s);
  const std::vector<uint16_t> clean = run_clean(p);
  const auto everywhere = [](int64_t, int64_t) { return true; };
  {
    HostProblem z = p;
    std::fill(z.sa.begin(), z.sa.end(), 0.0f);
    expect_exactly(run(z), clean, s, everywhere, is_zero_bits, "exactly zero", "every A scale 0");
  }
  {
    HostProblem z = p;
    std::fill(z.sb.begin(), z.sb.end(), 0.0f);
    expect_exactly(run(z), clean, s, everywhere, is_zero_bits, "exactly zero", "every B scale 0");
  }
  {  // One row's scales and one block of columns' scales, every K block.
    HostProblem z = p;
    const int64_t row = pick(0, s.m - 1), nb = pick(0, s.n_blocks() - 1);
    for (int64_t kb = 0; kb < s.k_blocks(); ++kb) {
      z.sa[kb * s.sa_ld() + row] = 0.0f;
      z.sb[nb * s.k_blocks() + kb] = 0.0f;
    }
    const auto hit = [&](int64_t r, int64_t c) { return r == row || c / kScaleBlock == nb; };
    expect_exactly(
        run(z), clean, s, hit, is_zero_bits, "exactly zero",
        "row " + std::to_string(row) + " and column block " + std::to_string(nb) + " scaled by 0");
  }
  {  // One K block scaled by 0 everywhere: D is the product of the other blocks.
    HostProblem z = p;
    const int64_t kb = pick(0, s.k_blocks() - 1);
    for (int64_t m = 0; m < s.m; ++m) z.sa[kb * s.sa_ld() + m] = 0.0f;
    testing::expect_matches_reference(
        check_against_reference(z, run(z), ch.tolerance(s), kCpuReferenceMacs), ch.max_rel_diff,
        context(s, "K block " + std::to_string(kb) + " scaled by 0"));
  }
}

// Chapters 02-05 leave all of K to the tensor core's accumulator, which truncates every product to
// 14 significant bits relative to the running sum (measured on the H100, 2026-11-23, and modelled
// by gemm::tensor_core_accumulate; common/reference.hpp). With same-sign inputs nothing cancels:
// at K = 16384 and +448 everywhere they return 2^31 for 3288334336. For those chapters and inputs
// the test asserts the model's value bit for bit instead of the exact one, which is stricter than
// any tolerance; the random-sign case and every other chapter are held to the exact value.
// (Side chapter 14 uses mma.sync, which adds in fp32 after every instruction: held to the exact
// value like the rest.)
bool accumulates_all_k_in_tensor_core(const Chapter& ch) {
  return ch.number >= 2 && !ch.applies_scales && !ch.side;
}

TEST_P(SpecialValues, LargestInputsStayFiniteAndExact) {
  SKIP_WITHOUT_HOPPER();
  // Ragged M and N, a long K: each element sums 16384 products of magnitude 448^2 = 200704.
  const Shape s{65, 136, 16384};
  const HostProblem p = problem(s);
  // Chapters that read scales get 2^44 for every scale: |D| reaches 448^2 * 2^14 * 2^88, about
  // 2^119.6, within 2^8.4 of the largest fp32 (and bf16) value, so an intermediate that overflows
  // shows as Inf. Powers of two keep the exact value exact.
  const float big_scale = std::ldexp(1.0f, 44);
  std::vector<int> row_sign(size_t(s.m)), col_sign(size_t(s.n));
  for (int& x : row_sign) x = pick(0, 1) ? 1 : -1;
  for (int& x : col_sign) x = pick(0, 1) ? 1 : -1;
  const fp8 plus = fp8(448.0f), minus = fp8(-448.0f);
  ASSERT_EQ(plus.__x, 0x7E);  // the largest finite e4m3

  enum Signs { All, PerRow, PerElement };
  for (Signs signs : {All, PerRow, PerElement}) {
    HostProblem x = p;
    for (int64_t m = 0; m < s.m; ++m)
      for (int64_t k = 0; k < s.k; ++k)
        x.a[m * s.k + k] = signs == All      ? plus
                           : signs == PerRow ? (row_sign[m] > 0 ? plus : minus)
                           : pick(0, 1)      ? plus
                                             : minus;
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t k = 0; k < s.k; ++k)
        x.b[n * s.k + k] = signs == All      ? plus
                           : signs == PerRow ? (col_sign[n] > 0 ? plus : minus)
                           : pick(0, 1)      ? plus
                                             : minus;
    if (ch.applies_scales) {
      for (int64_t kb = 0; kb < s.k_blocks(); ++kb)
        for (int64_t m = 0; m < s.m; ++m) x.sa[kb * s.sa_ld() + m] = big_scale;
      std::fill(x.sb.begin(), x.sb.end(), big_scale);
    }
    const char* what = signs == All      ? "+448 everywhere"
                       : signs == PerRow ? "+-448 by row of A and of B"
                                         : "+-448 at random";
    const std::vector<uint16_t> d = run(x);
    if (signs != PerElement && accumulates_all_k_in_tensor_core(ch)) {
      // Every |D| is what the tensor core's truncating accumulator makes of K equal products.
      const float model =
          float(tensor_core_accumulate(std::vector<double>(size_t(s.k), 448.0 * 448.0)));
      int64_t off = 0;
      for (int64_t m = 0; m < s.m; ++m)
        for (int64_t n = 0; n < s.n; ++n) {
          const float sign = signs == All ? 1.0f : float(row_sign[m] * col_sign[n]);
          off += d[m * s.n + n] != float_to_bf16_bits(sign * model);
        }
      EXPECT_EQ(off, 0) << context(s, what) << ": elements away from the model's +-" << model
                        << " (exact: 3288334336)";
      continue;
    }
    const ReferenceCheck r = check_against_reference(x, d, ch.tolerance(s), kCpuReferenceMacs);
    testing::expect_matches_reference(r, ch.max_rel_diff, context(s, what));
    if (signs != PerElement) {  // every |D| is exactly 448^2 * K (times the scales)
      const double want = 448.0 * 448.0 * double(s.k) *
                          (ch.applies_scales ? double(big_scale) * double(big_scale) : 1.0);
      int64_t off = 0;
      for (int64_t m = 0; m < s.m; ++m)
        for (int64_t n = 0; n < s.n; ++n) {
          const double sign = signs == All ? 1.0 : double(row_sign[m] * col_sign[n]);
          const double got = bf16_to_float(d[m * s.n + n]);
          const Tolerance t = ch.tolerance(s);
          if (!(std::fabs(got - sign * want) <= (t.out_rel + t.terms_rel) * want + t.abs_floor))
            ++off;
        }
      EXPECT_EQ(off, 0) << context(s, what) << ": elements away from +-" << want;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, SpecialValues, ::testing::ValuesIn(gemm_chapter_numbers()),
                         [](const auto& info) {
                           return std::string(find_chapter(info.param)->dir);
                         });

}  // namespace
}  // namespace gemm
