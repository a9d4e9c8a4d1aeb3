#include "common/reference.hpp"

#include "common/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace gemm {

Reference reference_gemm(const HostProblem& p) {
  const Shape s = p.shape;
  Reference r{s, std::vector<double>(s.m * s.n), std::vector<double>(s.m * s.n)};
  // Dequantise B once per thread block of rows would cost N*K doubles; instead dequantise A (small
  // per row) and apply B's scale per 128-wide block.
  parallel_for(s.m, [&](int64_t begin, int64_t end) {
    std::vector<double> a_row(s.k), b_row(s.k);
    for (int64_t m = begin; m < end; ++m) {
      for (int64_t k = 0; k < s.k; ++k)
        a_row[k] = double(fp8_to_float(p.a[m * s.k + k])) * p.scale_a(m, k / kScaleBlock);
      for (int64_t n = 0; n < s.n; ++n) {
        const fp8* b = &p.b[n * s.k];
        double sum = 0.0, abs_sum = 0.0;
        for (int64_t kb = 0; kb < s.k_blocks(); ++kb) {
          double block = 0.0, abs_block = 0.0;
          for (int64_t k = kb * kScaleBlock; k < (kb + 1) * kScaleBlock; ++k) {
            const double t = a_row[k] * double(fp8_to_float(b[k]));
            block += t;
            abs_block += std::fabs(t);
          }
          const double sb = p.scale_b(n, kb);
          sum += block * sb;
          abs_sum += abs_block * sb;
        }
        r.value[m * s.n + n] = sum;
        r.abs_sum[m * s.n + n] = abs_sum;
      }
    }
  });
  return r;
}

float bf16_to_float(uint16_t bits) {
  const uint32_t u = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t float_to_bf16_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if (std::isnan(x)) return 0x7FC0;
  u += 0x7FFF + ((u >> 16) & 1);  // round to nearest, ties to even
  return uint16_t(u >> 16);
}

namespace {

// 1 - 2<x,y> / (<x,x> + <y,y>) from the three sums; 0 for two zero vectors.
double rel_diff_of_sums(double xy, double xx, double yy) {
  return xx + yy == 0.0 ? 0.0 : 1.0 - 2.0 * xy / (xx + yy);
}

}  // namespace

double rel_diff(const std::vector<double>& x, const std::vector<double>& y) {
  double xy = 0, xx = 0, yy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    xy += x[i] * y[i];
    xx += x[i] * x[i];
    yy += y[i] * y[i];
  }
  return rel_diff_of_sums(xy, xx, yy);
}

namespace {

// One pass over the elements: got(i) is the value under test, want(i) the reference, bound(i) its
// allowed error.
template <class Got, class Want, class Bound>
Comparison compare(int64_t count, const uint16_t* bits, Got got, Want want, Bound bound) {
  Comparison c;
  c.count = count;
  double xy = 0, xx = 0, yy = 0, worst = -1;
  for (int64_t i = 0; i < count; ++i) {
    if (bits[i] == kPoisonBits) {
      ++c.unwritten;
      continue;
    }
    const double x = got(i), y = want(i);
    if (!std::isfinite(x)) {
      ++c.nan;
      continue;
    }
    const double err = std::fabs(x - y), b = bound(i);
    xy += x * y;
    xx += x * x;
    yy += y * y;
    c.max_abs_err = std::max(c.max_abs_err, err);
    c.max_abs_ref = std::max(c.max_abs_ref, std::fabs(y));
    if (err > b) ++c.over_bound;
    const double ratio = b > 0 ? err / b : (err > 0 ? INFINITY : 0.0);
    if (ratio > worst) worst = ratio, c.worst_index = i;
  }
  c.rel_diff = rel_diff_of_sums(xy, xx, yy);
  return c;
}

}  // namespace

Comparison compare_to_reference(const std::vector<uint16_t>& d, const Reference& ref,
                                const Tolerance& tol) {
  if (d.size() != ref.value.size()) throw Error("compare_to_reference: size mismatch");
  return compare(
      int64_t(d.size()), d.data(), [&](int64_t i) { return double(bf16_to_float(d[i])); },
      [&](int64_t i) { return ref.value[i]; },
      [&](int64_t i) {
        return tol.out_rel * std::fabs(ref.value[i]) + tol.terms_rel * ref.abs_sum[i] +
               tol.abs_floor;
      });
}

Comparison compare_outputs(const std::vector<uint16_t>& x, const std::vector<uint16_t>& y,
                           const Tolerance& tol) {
  if (x.size() != y.size()) throw Error("compare_outputs: size mismatch");
  return compare(
      int64_t(x.size()), x.data(), [&](int64_t i) { return double(bf16_to_float(x[i])); },
      [&](int64_t i) { return double(bf16_to_float(y[i])); },
      [&](int64_t i) {
        return tol.out_rel * std::fabs(double(bf16_to_float(y[i]))) + tol.abs_floor;
      });
}

std::string Comparison::str() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "rel_diff %.3g, max |err| %.3g (max |ref| %.3g), %lld over bound, %lld unwritten, "
                "%lld NaN/Inf of %lld",
                rel_diff, max_abs_err, max_abs_ref, (long long)over_bound, (long long)unwritten,
                (long long)nan, (long long)count);
  return buf;
}

}  // namespace gemm

namespace gemm {

Tolerance fp32_accumulation_tolerance(int64_t k) {
  return {0x1.0p-8, double(k + 3) * 0x1.0p-24, 0.0};
}

Tolerance tensor_core_fp8_tolerance(int64_t k, int64_t promote_every) {
  const double losses = double(promote_every);
  return {0x1.0p-8, losses * 0x1.0p-13 + double(k / 128 + 3) * 0x1.0p-24, 0.0};
}

double tensor_core_accumulate(const std::vector<double>& products) {
  constexpr size_t kGroup = 32;  // the K of one fp8 wgmma instruction
  double acc = 0.0;
  for (size_t g = 0; g < products.size(); g += kGroup) {
    const size_t end = std::min(products.size(), g + kGroup);
    double larger = std::fabs(acc);
    for (size_t i = g; i < end; ++i) larger = std::max(larger, std::fabs(products[i]));
    if (larger == 0.0) continue;
    const double quantum = std::ldexp(1.0, std::ilogb(larger) - 13);
    double sum = 0.0;
    for (size_t i = g; i < end; ++i) sum += std::trunc(products[i] / quantum) * quantum;
    acc += sum;
  }
  return acc;
}

Tolerance bf16_inputs_tolerance(int64_t k) {
  return {0x1.0p-8, 2.0 * 0x1.0p-8 + double(k + 3) * 0x1.0p-24, 0.0};
}

std::vector<std::pair<int64_t, int64_t>> reference_row_bands(const Shape& s, double max_macs) {
  const double macs = double(s.m) * double(s.n) * double(s.k);
  if (macs <= max_macs) return {{0, s.m}};
  const int64_t band = 64;
  std::vector<std::pair<int64_t, int64_t>> bands;
  for (int64_t start : {int64_t(0), (s.m / 2) / band * band, s.m - band}) {
    const int64_t b = std::max<int64_t>(0, start), e = std::min(s.m, b + band);
    if (!bands.empty() && b <= bands.back().second)
      bands.back().second = std::max(bands.back().second, e);
    else
      bands.emplace_back(b, e);
  }
  return bands;
}

ReferenceCheck check_against_reference(const HostProblem& p, const std::vector<uint16_t>& d,
                                       const Tolerance& tol, double max_macs) {
  const Shape& s = p.shape;
  if (int64_t(d.size()) != s.m * s.n) throw Error("check_against_reference: D has the wrong size");
  ReferenceCheck r;
  for (uint16_t bits : d) {
    if (bits == kPoisonBits)
      ++r.unwritten_total;
    else if (!std::isfinite(bf16_to_float(bits)))
      ++r.nan_total;
  }
  Reference all{{0, s.n, s.k}, {}, {}};
  std::vector<uint16_t> got;
  for (auto [b, e] : reference_row_bands(s, max_macs)) {
    const Reference ref = reference_gemm(b == 0 && e == s.m ? p : p.rows(b, e));
    all.value.insert(all.value.end(), ref.value.begin(), ref.value.end());
    all.abs_sum.insert(all.abs_sum.end(), ref.abs_sum.begin(), ref.abs_sum.end());
    got.insert(got.end(), d.begin() + b * s.n, d.begin() + e * s.n);
    r.rows_checked += e - b;
  }
  all.shape.m = r.rows_checked;
  r.on_bands = compare_to_reference(got, all, tol);
  return r;
}

int64_t count_bit_differences(const std::vector<uint16_t>& x, const std::vector<uint16_t>& y) {
  if (x.size() != y.size()) throw Error("count_bit_differences: sizes differ");
  int64_t differ = 0;
  for (size_t i = 0; i < x.size(); ++i) differ += x[i] != y[i];
  return differ;
}

}  // namespace gemm
