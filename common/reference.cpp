#include "common/reference.hpp"

#include "common/check.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace gemm {

namespace {

// fp8 e4m3 -> double for all 256 encodings (the NaNs included).
const std::array<double, 256>& fp8_values() {
  static const std::array<double, 256> table = [] {
    std::array<double, 256> t{};
    for (int i = 0; i < 256; ++i) {
      fp8 v;
      v.__x = static_cast<__nv_fp8_storage_t>(i);
      t[i] = double(fp8_to_float(v));
    }
    return t;
  }();
  return table;
}

// A tile of D that one thread computes at a time: kTileM rows, kTileN columns.
constexpr int64_t kTileM = 16, kTileN = 32;

// Vector instructions wider than the baseline's, chosen at run time where the CPU has them (GCC's
// function multiversioning). The sums below are exact, so every version gives the same bits.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define GEMM_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define GEMM_VECTOR_CLONES
#endif

// Four doubles as one value (GCC and Clang vector extensions): one AVX register, or two SSE ones.
// (The helpers have internal linkage: GCC's note that such values pass differently with and
// without AVX concerns no caller outside this file.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
typedef double Double4 __attribute__((vector_size(32)));
typedef int64_t Int4 __attribute__((vector_size(32)));
inline Double4 load4(const double* p) {
  Double4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline Double4 abs4(const Double4& x) {
  return (Double4)((Int4)x & INT64_MAX);
}
inline double total4(const Double4& v) {
  return (v[0] + v[1]) + (v[2] + v[3]);
}

// For one 128-wide scale block: sum_k a[i][k] * b[j][k] and sum_k |a[i][k] * b[j][k]| for every
// (i, j) of a tile, a and b holding fp8 values as doubles (rows past the tile's edge hold zeros),
// sum and abs_sum kTileM x kTileN. Exact: a product of two e4m3 values has at most 8 significant
// bits and lies between 2^-18 and 448^2 < 2^18, so every partial sum of 128 of them is a multiple
// of 2^-18 below 2^25, 43 bits, which a double holds exactly. The order of the additions is
// therefore free: two rows by two columns at a time, four lanes each.
GEMM_VECTOR_CLONES
void tile_block_sums(const double* a, const double* b, double* sum, double* abs_sum) {
  for (int64_t i = 0; i < kTileM; i += 2)
    for (int64_t j = 0; j < kTileN; j += 2) {
      const double *a0 = a + i * kScaleBlock, *a1 = a0 + kScaleBlock;
      const double *b0 = b + j * kScaleBlock, *b1 = b0 + kScaleBlock;
      Double4 s00 = {}, s01 = {}, s10 = {}, s11 = {}, t00 = {}, t01 = {}, t10 = {}, t11 = {};
      for (int64_t k = 0; k < kScaleBlock; k += 4) {
        const Double4 x0 = load4(a0 + k), x1 = load4(a1 + k), y0 = load4(b0 + k),
                      y1 = load4(b1 + k);
        const Double4 p00 = x0 * y0, p01 = x0 * y1, p10 = x1 * y0, p11 = x1 * y1;
        s00 += p00, s01 += p01, s10 += p10, s11 += p11;
        t00 += abs4(p00), t01 += abs4(p01), t10 += abs4(p10), t11 += abs4(p11);
      }
      sum[i * kTileN + j] = total4(s00), sum[i * kTileN + j + 1] = total4(s01);
      sum[(i + 1) * kTileN + j] = total4(s10), sum[(i + 1) * kTileN + j + 1] = total4(s11);
      abs_sum[i * kTileN + j] = total4(t00), abs_sum[i * kTileN + j + 1] = total4(t01);
      abs_sum[(i + 1) * kTileN + j] = total4(t10);
      abs_sum[(i + 1) * kTileN + j + 1] = total4(t11);
    }
}

}  // namespace

Reference reference_rows(const HostProblem& p, int64_t begin, int64_t end) {
  const Shape& s = p.shape;
  if (begin < 0 || end > s.m || begin > end) throw Error("reference_rows: rows out of range");
  const int64_t rows = end - begin, kbs = s.k_blocks();
  Reference r{{rows, s.n, s.k}, std::vector<double>(rows * s.n), std::vector<double>(rows * s.n)};
  // Tiles of D: each thread takes whole tiles and walks K one scale block at a time, so that the
  // tile's blocks of A and B, converted to double once, stay in cache. Per element the blocks are
  // added in the order of K, whichever thread computes it: the result does not depend on the
  // number of threads.
  const int64_t tiles_m = (rows + kTileM - 1) / kTileM, tiles_n = (s.n + kTileN - 1) / kTileN;
  const std::array<double, 256>& value_of = fp8_values();
  parallel_for(tiles_m * tiles_n, [&](int64_t first, int64_t last) {
    std::vector<double> a(kTileM * kScaleBlock), b(kTileN * kScaleBlock);
    std::vector<double> block(kTileM * kTileN), abs_block(kTileM * kTileN);
    std::vector<double> value(kTileM * kTileN), abs_value(kTileM * kTileN);
    for (int64_t tile = first; tile < last; ++tile) {
      const int64_t m0 = begin + tile / tiles_n * kTileM, n0 = tile % tiles_n * kTileN;
      const int64_t tm = std::min(kTileM, end - m0), tn = std::min(kTileN, s.n - n0);
      std::fill(a.begin(), a.end(), 0.0);
      std::fill(b.begin(), b.end(), 0.0);
      std::fill(value.begin(), value.end(), 0.0);
      std::fill(abs_value.begin(), abs_value.end(), 0.0);
      for (int64_t kb = 0; kb < kbs; ++kb) {
        for (int64_t i = 0; i < tm; ++i)
          for (int64_t k = 0; k < kScaleBlock; ++k)
            a[i * kScaleBlock + k] = value_of[p.a[(m0 + i) * s.k + kb * kScaleBlock + k].__x];
        for (int64_t j = 0; j < tn; ++j)
          for (int64_t k = 0; k < kScaleBlock; ++k)
            b[j * kScaleBlock + k] = value_of[p.b[(n0 + j) * s.k + kb * kScaleBlock + k].__x];
        tile_block_sums(a.data(), b.data(), block.data(), abs_block.data());
        for (int64_t i = 0; i < tm; ++i) {
          const double sa = p.scale_a(m0 + i, kb);
          for (int64_t j = 0; j < tn; ++j) {
            // sa * sb is exact in double (two 24-bit significands): one rounding per block.
            const double scale = sa * double(p.scale_b(n0 + j, kb));
            value[i * kTileN + j] += block[i * kTileN + j] * scale;
            abs_value[i * kTileN + j] += abs_block[i * kTileN + j] * std::fabs(scale);
          }
        }
      }
      for (int64_t i = 0; i < tm; ++i)
        for (int64_t j = 0; j < tn; ++j) {
          r.value[(m0 - begin + i) * s.n + n0 + j] = value[i * kTileN + j];
          r.abs_sum[(m0 - begin + i) * s.n + n0 + j] = abs_value[i * kTileN + j];
        }
    }
  });
  return r;
}

Reference reference_gemm(const HostProblem& p) {
  return reference_rows(p, 0, p.shape.m);
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

// Elements per chunk of the passes over D below. The chunks are fixed, whatever the number of
// threads, and their partial sums are added in order: the same bits for any number of threads.
constexpr int64_t kChunk = int64_t(1) << 16;

int64_t chunks_of(int64_t count) {
  return (count + kChunk - 1) / kChunk;
}

// One pass over the elements: got(i) is the value under test, want(i) the reference, bound(i) its
// allowed error.
template <class Got, class Want, class Bound>
Comparison compare(int64_t count, const uint16_t* bits, Got got, Want want, Bound bound) {
  struct Part {
    Comparison c;
    double xy = 0, xx = 0, yy = 0, worst = -1;
  };
  std::vector<Part> parts(size_t(chunks_of(count)));
  parallel_for(int64_t(parts.size()), [&](int64_t first, int64_t last) {
    for (int64_t chunk = first; chunk < last; ++chunk) {
      Part& p = parts[size_t(chunk)];
      for (int64_t i = chunk * kChunk, end = std::min(count, i + kChunk); i < end; ++i) {
        if (bits[i] == kPoisonBits) {
          ++p.c.unwritten;
          continue;
        }
        const double x = got(i), y = want(i);
        if (!std::isfinite(x)) {
          ++p.c.nan;
          continue;
        }
        const double err = std::fabs(x - y), b = bound(i);
        p.xy += x * y;
        p.xx += x * x;
        p.yy += y * y;
        p.c.max_abs_err = std::max(p.c.max_abs_err, err);
        p.c.max_abs_ref = std::max(p.c.max_abs_ref, std::fabs(y));
        if (err > b) ++p.c.over_bound;
        const double ratio = b > 0 ? err / b : (err > 0 ? INFINITY : 0.0);
        if (ratio > p.worst) p.worst = ratio, p.c.worst_index = i;
      }
    }
  });
  Comparison c;
  c.count = count;
  double xy = 0, xx = 0, yy = 0, worst = -1;
  for (const Part& p : parts) {
    c.unwritten += p.c.unwritten;
    c.nan += p.c.nan;
    c.over_bound += p.c.over_bound;
    c.max_abs_err = std::max(c.max_abs_err, p.c.max_abs_err);
    c.max_abs_ref = std::max(c.max_abs_ref, p.c.max_abs_ref);
    xy += p.xy;
    xx += p.xx;
    yy += p.yy;
    // Strictly larger: of equal ratios, the first element's index, as one pass in order gives.
    if (p.worst > worst) worst = p.worst, c.worst_index = p.c.worst_index;
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

BandReference reference_on_bands(const HostProblem& p, double max_macs) {
  const Shape& s = p.shape;
  BandReference r{s, reference_row_bands(s, max_macs), Reference{{0, s.n, s.k}, {}, {}}};
  for (auto [b, e] : r.bands) {
    const Reference band = reference_rows(p, b, e);
    r.rows.value.insert(r.rows.value.end(), band.value.begin(), band.value.end());
    r.rows.abs_sum.insert(r.rows.abs_sum.end(), band.abs_sum.begin(), band.abs_sum.end());
    r.rows.shape.m += e - b;
  }
  return r;
}

ReferenceCheck check_against_reference(const BandReference& ref, const std::vector<uint16_t>& d,
                                       const Tolerance& tol) {
  const Shape& s = ref.shape;
  if (int64_t(d.size()) != s.m * s.n) throw Error("check_against_reference: D has the wrong size");
  ReferenceCheck r;
  const int64_t count = int64_t(d.size());
  std::vector<std::pair<int64_t, int64_t>> parts(size_t(chunks_of(count)));  // (poison, NaN/Inf)
  parallel_for(int64_t(parts.size()), [&](int64_t first, int64_t last) {
    for (int64_t chunk = first; chunk < last; ++chunk)
      for (int64_t i = chunk * kChunk, end = std::min(count, i + kChunk); i < end; ++i) {
        if (d[i] == kPoisonBits)
          ++parts[size_t(chunk)].first;
        else if (!std::isfinite(bf16_to_float(d[i])))
          ++parts[size_t(chunk)].second;
      }
  });
  for (auto [poison, nan] : parts) r.unwritten_total += poison, r.nan_total += nan;
  std::vector<uint16_t> got;
  got.reserve(ref.rows.value.size());
  for (auto [b, e] : ref.bands) {
    got.insert(got.end(), d.begin() + b * s.n, d.begin() + e * s.n);
    r.rows_checked += e - b;
  }
  r.on_bands = compare_to_reference(got, ref.rows, tol);
  return r;
}

ReferenceCheck check_against_reference(const HostProblem& p, const std::vector<uint16_t>& d,
                                       const Tolerance& tol, double max_macs) {
  if (int64_t(d.size()) != p.shape.m * p.shape.n)
    throw Error("check_against_reference: D has the wrong size");
  return check_against_reference(reference_on_bands(p, max_macs), d, tol);
}

int64_t count_bit_differences(const std::vector<uint16_t>& x, const std::vector<uint16_t>& y) {
  if (x.size() != y.size()) throw Error("count_bit_differences: sizes differ");
  const int64_t count = int64_t(x.size());
  std::vector<int64_t> parts(size_t(chunks_of(count)));
  parallel_for(int64_t(parts.size()), [&](int64_t first, int64_t last) {
    for (int64_t chunk = first; chunk < last; ++chunk)
      for (int64_t i = chunk * kChunk, end = std::min(count, i + kChunk); i < end; ++i)
        parts[size_t(chunk)] += x[i] != y[i];
  });
  int64_t differ = 0;
  for (int64_t n : parts) differ += n;
  return differ;
}

}  // namespace gemm
