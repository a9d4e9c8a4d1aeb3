// Chapter 01's host API, for its binary and its tests: one wgmma m64n8k16 on one warpgroup, and the
// CPU product it is checked against.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "chapters/01_wgmma_m64n8k16/layout.hpp"
#include "common/reference.hpp"  // bf16_to_float

namespace ch01 {

// D = A * B by one wgmma.mma_async m64n8k16 (bf16 in, fp32 out) on one warpgroup.
//   a_bf16_bits: A, 64 x 16, row-major (bf16 bit patterns)
//   b_bf16_bits: B, 16 x 8, as b_layout says: KMajor = stored as B^T (8 x 16 row-major),
//                NMajor = stored as B (16 x 8 row-major)
// Returns D, 64 x 8 row-major fp32. Throws gemm::UnsupportedError for operands of the wrong size,
// gemm::Error where there is no Hopper GPU or a CUDA call fails.
std::vector<float> run_wgmma_m64n8k16(const std::vector<uint16_t>& a_bf16_bits,
                                      const std::vector<uint16_t>& b_bf16_bits, BLayout b_layout);

// The exact product in double, and per element the bound the tensor core's arithmetic allows.
// Products of two bf16 values (8 significant bits each) are exact in fp32 (24 bits); what can err
// is the fp32 accumulation of the 16 products plus the final rounding: 17 roundings, each off by at
// most one fp32 ulp of a magnitude no larger than sum |terms|. The tensor core may truncate instead
// of rounding to nearest, so a rounding costs up to 2^-23 (not 2^-24) relative:
//   |d - exact| <= (16 + 1) * 2^-23 * sum_k |a[m][k] * b[k][n]|.
struct Reference {
  std::vector<double> value;  // 64 x 8 row-major
  std::vector<double> bound;  // 64 x 8 row-major
};

inline Reference reference_d(const std::vector<uint16_t>& a_bf16_bits,
                             const std::vector<uint16_t>& b_bf16_bits, BLayout b_layout) {
  Reference r{std::vector<double>(kM * kN), std::vector<double>(kM * kN)};
  for (int m = 0; m < kM; ++m)
    for (int n = 0; n < kN; ++n) {
      double sum = 0.0, abs_sum = 0.0;
      for (int k = 0; k < kK; ++k) {
        const double term =
            double(gemm::bf16_to_float(a_bf16_bits[m * kK + k])) *
            double(gemm::bf16_to_float(b_bf16_bits[b_global_index(k, n, b_layout)]));
        sum += term;
        abs_sum += std::fabs(term);
      }
      r.value[m * kN + n] = sum;
      r.bound[m * kN + n] = (kK + 1) * 0x1.0p-23 * abs_sum;
    }
  return r;
}

// How D compares with the reference.
struct Check {
  int not_finite = 0;  // NaN (including the never-written poison) or Inf
  int over_bound = 0;  // finite but further from the exact value than the bound allows
  double max_abs_err = 0.0;
  double max_err_over_bound = 0.0;  // below 1 everywhere means PASS
  bool pass() const { return not_finite == 0 && over_bound == 0; }
};

inline Check check_d(const std::vector<float>& d, const Reference& ref) {
  Check c;
  for (size_t i = 0; i < d.size(); ++i) {
    if (!std::isfinite(d[i])) {
      ++c.not_finite;
      continue;
    }
    const double err = std::fabs(double(d[i]) - ref.value[i]);
    c.over_bound += err > ref.bound[i];
    c.max_abs_err = std::fmax(c.max_abs_err, err);
    if (ref.bound[i] > 0)
      c.max_err_over_bound = std::fmax(c.max_err_over_bound, err / ref.bound[i]);
    else if (err > 0)
      c.max_err_over_bound = INFINITY;
  }
  return c;
}

}  // namespace ch01
