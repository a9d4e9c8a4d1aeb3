// Chapter 01 on the GPU: the one wgmma against the exact product, with B stored either way.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "chapters/01_wgmma_m64n8k16/ch01.hpp"
#include "tests/gpu.hpp"

namespace {

using ch01::BLayout;
using ch01::kK;
using ch01::kM;
using ch01::kN;

struct Operands {
  std::vector<uint16_t> a;    // 64 x 16 row-major
  std::vector<uint16_t> b_k;  // B stored K-major (8 x 16 row-major)
  std::vector<uint16_t> b_n;  // B stored N-major (16 x 8 row-major)
};

// B[k][n] = b(k, n), written both ways.
template <class A, class B>
Operands make_operands(A a_value, B b_value) {
  Operands o{std::vector<uint16_t>(kM * kK), std::vector<uint16_t>(kK * kN),
             std::vector<uint16_t>(kK * kN)};
  for (int m = 0; m < kM; ++m)
    for (int k = 0; k < kK; ++k) o.a[m * kK + k] = gemm::float_to_bf16_bits(a_value(m, k));
  for (int k = 0; k < kK; ++k)
    for (int n = 0; n < kN; ++n) {
      const uint16_t v = gemm::float_to_bf16_bits(b_value(k, n));
      o.b_k[ch01::b_global_index(k, n, BLayout::KMajor)] = v;
      o.b_n[ch01::b_global_index(k, n, BLayout::NMajor)] = v;
    }
  return o;
}

void expect_within_bound(const std::vector<float>& d, const ch01::Reference& ref,
                         const std::string& context) {
  const ch01::Check c = ch01::check_d(d, ref);
  EXPECT_EQ(c.not_finite, 0) << context << ": NaN/Inf or never-written elements of D";
  EXPECT_EQ(c.over_bound, 0) << context << ": max |err| " << c.max_abs_err << ", max |err|/bound "
                             << c.max_err_over_bound;
  // Name the first bad element: a layout mistake shows as a pattern of rows or columns.
  for (int i = 0; i < kM * kN; ++i)
    if (!(std::fabs(double(d[i]) - ref.value[i]) <= ref.bound[i])) {
      ADD_FAILURE() << context << ": first bad element D[" << i / kN << "][" << i % kN
                    << "] = " << d[i] << ", expected " << ref.value[i];
      break;
    }
}

// Random normal inputs, several seeds: all 512 outputs within the bound, both layouts of B, and
// the two layouts give the same bits (the same products summed by the same hardware).
TEST(Chapter01, RandomInputsMatchTheExactProductBothLayouts) {
  SKIP_WITHOUT_HOPPER();
  for (uint64_t seed : {uint64_t(1), uint64_t(2), uint64_t(2026), gemm::testing::test_seed()}) {
    const Operands o =
        make_operands([&](int m, int k) { return gemm::normal_at(seed, 0, m * kK + k); },
                      [&](int k, int n) { return gemm::normal_at(seed, 1, k * kN + n); });
    const ch01::Reference ref = ch01::reference_d(o.a, o.b_k, BLayout::KMajor);
    const std::vector<float> d_k = ch01::run_wgmma_m64n8k16(o.a, o.b_k, BLayout::KMajor);
    const std::vector<float> d_n = ch01::run_wgmma_m64n8k16(o.a, o.b_n, BLayout::NMajor);
    const std::string ctx = "seed " + std::to_string(seed);
    expect_within_bound(d_k, ref, ctx + ", B K-major (imm-trans-b 0)");
    expect_within_bound(d_n, ref, ctx + ", B N-major (imm-trans-b 1)");
    EXPECT_EQ(std::memcmp(d_k.data(), d_n.data(), d_k.size() * sizeof(float)), 0)
        << ctx << ": the two layouts of B gave different bits";
  }
}

// A selects one row of B per row of D: A[m][k] = 1 where k = m % 16, else 0, and B[k][n] =
// 8 k + n (integers below 256 are exact in bf16). Then D[m][n] = 8 (m % 16) + n exactly: a wrong
// LBO, SBO or fragment map shows up as a recognisable wrong integer.
TEST(Chapter01, SelectionMatrixGivesExactIntegers) {
  SKIP_WITHOUT_HOPPER();
  const Operands o = make_operands([](int m, int k) { return k == m % kK ? 1.0f : 0.0f; },
                                   [](int k, int n) { return float(kN * k + n); });
  for (BLayout layout : {BLayout::KMajor, BLayout::NMajor}) {
    const std::vector<float> d =
        ch01::run_wgmma_m64n8k16(o.a, layout == BLayout::KMajor ? o.b_k : o.b_n, layout);
    for (int m = 0; m < kM; ++m)
      for (int n = 0; n < kN; ++n)
        ASSERT_EQ(d[m * kN + n], float(kN * (m % kK) + n))
            << (layout == BLayout::KMajor ? "B K-major" : "B N-major") << ": D[" << m << "][" << n
            << "]";
  }
}

TEST(Chapter01, RejectsOperandsOfTheWrongSize) {
  // No GPU needed: the sizes are checked before anything touches the device.
  const std::vector<uint16_t> a(kM * kK), b(kK * kN);
  EXPECT_THROW(ch01::run_wgmma_m64n8k16(std::vector<uint16_t>(10), b, BLayout::KMajor),
               gemm::UnsupportedError);
  EXPECT_THROW(ch01::run_wgmma_m64n8k16(a, std::vector<uint16_t>(64), BLayout::NMajor),
               gemm::UnsupportedError);
}

}  // namespace
