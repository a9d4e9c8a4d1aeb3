// The accuracy side of block-scaled MMA, on the CPU (promotion_price --accuracy; host-tested in
// tests/host_chapter14.cpp). Plain C++ over common/inputs.hpp.
//
// One question: on the same unquantised inputs, how far is D from the exact product when A and B
// are quantised
//   (a) as DeepGEMM and this book do: e4m3 values, one fp32 scale per 1 x 128 of A and per
//       128 x 128 of B (gemm::quantize_a, gemm::quantize_b: the largest magnitude maps to 448);
//   (b) as a block-scaled MMA (kind::mxf8f6f4, scale_vec::1X) takes them: e4m3 values, one UE8M0
//       (power-of-two) scale per 1 x 32 along K, for every row of A and every row of B (N x K),
//       chosen as OCP MX does (block_scale_model.hpp: 2^(floor(log2 amax) - 8), saturating);
//   (c) the same as (b) with the exponent rounded up instead, 2^ceil(log2(amax / 448)): no element
//       saturates, at the price of up to one bit of range (an addition, not in the issue).
// Both products are summed exactly (in double), so only the quantisation differs. The inputs are
// those of gemm::make_problem(shape, seed, Scales::Random) before its quantiser: normal values
// times a magnitude 2^u (u uniform in [-4, 4)) per scale block of A (1 x 128) and of B (128 x 128).
// unquantised_a/_b regenerate them; a host test checks that gemm::quantize_a/_b of them give
// make_problem's bytes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "chapters/14_warp_mma_sync/block_scale_model.hpp"
#include "common/inputs.hpp"

namespace ch14::accuracy {

// make_problem's per-block magnitudes (common/inputs.cpp, RandomStream::magnitude), restated: that
// stream is private to inputs.cpp. splitmix64 keyed by (seed, stream), uniform in (0, 1), 2^(8u-4).
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
inline float block_magnitude(uint64_t seed, uint64_t stream, uint64_t block) {
  const uint64_t key = splitmix64(seed ^ (stream * 0x632be59bd9b4e019ull));
  const double u = (double(splitmix64(key + block) >> 11) + 0.5) * 0x1.0p-53;
  return float(std::exp2(8.0 * u - 4.0));
}
// inputs.cpp's streams: values of A 1, of B 2; block magnitudes of A 3, of B 4.
inline constexpr uint64_t kValuesA = 1, kValuesB = 2, kBlocksA = 3, kBlocksB = 4;

// Columns [k0, k0 + width) of the unquantised A (rows x width, row-major) of a problem of depth K.
inline void unquantised_a(uint64_t seed, int64_t rows, int64_t K, int64_t k0, int64_t width,
                          float* x) {
  const int64_t kbs = K / gemm::kScaleBlock;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < width; ++c) {
      const int64_t k = k0 + c;
      const float mag = block_magnitude(seed, kBlocksA, uint64_t(r * kbs + k / gemm::kScaleBlock));
      x[r * width + c] = gemm::normal_at(seed, kValuesA, uint64_t(r * K + k)) * mag;
    }
}
// The same for B (rows x width of the N x K operand).
inline void unquantised_b(uint64_t seed, int64_t rows, int64_t K, int64_t k0, int64_t width,
                          float* x) {
  const int64_t kbs = K / gemm::kScaleBlock;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < width; ++c) {
      const int64_t k = k0 + c;
      const uint64_t block = uint64_t((r / gemm::kScaleBlock) * kbs + k / gemm::kScaleBlock);
      x[r * width + c] = gemm::normal_at(seed, kValuesB, uint64_t(r * K + k)) *
                         block_magnitude(seed, kBlocksB, block);
    }
}

// x rounded to the nearest e4m3, ties to even, saturated to +-448: mx::to_e4m3, by the CUDA
// conversion (__NV_SATFINITE) instead of a search over the 126 magnitudes (host-tested equal).
inline uint8_t to_e4m3(double x) {
  return gemm::fp8(x).__x;
}

enum class Ue8m0Rounding {
  Floor,  // OCP MX: 2^(floor(log2 amax) - 8); amax / scale lies in [256, 512), above 448 saturates
  Ceil,   // 2^ceil(log2(amax / 448)): amax / scale <= 448, nothing saturates
};

// mx::quantize_block (Floor) or its rounded-up twin (Ceil), with the fast conversion: the scale
// byte, and the 32 elements.
inline uint8_t quantize_mx_block(const double* x, uint8_t* elements, Ue8m0Rounding rounding) {
  double amax = 0.0;
  for (int i = 0; i < mx::kBlock; ++i) amax = std::fmax(amax, std::fabs(x[i]));
  int e = -127;
  if (amax > 0.0) {
    if (rounding == Ue8m0Rounding::Floor) {
      e = std::ilogb(amax) - 8;  // floor(log2 amax), exact (std::log2 can round up near 2^n)
    } else {
      e = std::ilogb(amax) - 8;  // the smallest e with amax <= 448 * 2^e: floor's or one more
      if (amax > std::ldexp(448.0, e)) ++e;
    }
  }
  e = std::clamp(e, -127, 127);
  for (int i = 0; i < mx::kBlock; ++i) elements[i] = to_e4m3(std::ldexp(x[i], -e));
  return uint8_t(e + 127);
}

// One operand (rows x width, K contiguous, width a multiple of 32) quantised 1 x 32 and
// dequantised: out[i] = e4m3 element * 2^(scale - 127), exact in double.
inline void mx_dequantised(const float* x, int64_t rows, int64_t width, Ue8m0Rounding rounding,
                           double* out) {
  double block[mx::kBlock];
  uint8_t q[mx::kBlock];
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < width; c += mx::kBlock) {
      for (int i = 0; i < mx::kBlock; ++i) block[i] = x[r * width + c + i];
      const double scale = mx::ue8m0(quantize_mx_block(block, q, rounding));
      for (int i = 0; i < mx::kBlock; ++i) out[r * width + c + i] = mx::e4m3(q[i]) * scale;
    }
}

// (a): A (rows x width, width a multiple of 128, starting on a block) quantised by
// gemm::quantize_a, dequantised; B likewise by gemm::quantize_b (rows a multiple of 128, or the
// last block short, as in make_problem).
inline void deepgemm_dequantised_a(const float* x, int64_t rows, int64_t width, double* out) {
  std::vector<gemm::fp8> q(size_t(rows * width));
  std::vector<float> s(size_t(rows * (width / gemm::kScaleBlock)));
  gemm::quantize_a(x, rows, width, q.data(), s.data(), rows);  // scale of (row, kb): s[kb*rows+row]
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < width; ++c)
      out[r * width + c] = double(gemm::fp8_to_float(q[r * width + c])) *
                           double(s[(c / gemm::kScaleBlock) * rows + r]);
}
inline void deepgemm_dequantised_b(const float* x, int64_t rows, int64_t width, double* out) {
  const int64_t kbs = width / gemm::kScaleBlock;
  std::vector<gemm::fp8> q(size_t(rows * width));
  std::vector<float> s(size_t((rows + gemm::kScaleBlock - 1) / gemm::kScaleBlock * kbs));
  gemm::quantize_b(x, rows, width, q.data(), s.data());  // scale of (nb, kb): s[nb * kbs + kb]
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < width; ++c)
      out[r * width + c] = double(gemm::fp8_to_float(q[r * width + c])) *
                           double(s[(r / gemm::kScaleBlock) * kbs + c / gemm::kScaleBlock]);
}

// d (M x N) += a (M x w) * b (N x w)^T, in double.
template <class T>
void add_product(const T* a, const T* b, int64_t M, int64_t N, int64_t w, double* d) {
  gemm::parallel_for(M, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        const T *x = a + i * w, *y = b + j * w;
        for (int64_t k = 0; k < w; k += 4) {
          s0 += double(x[k]) * double(y[k]);
          s1 += double(x[k + 1]) * double(y[k + 1]);
          s2 += double(x[k + 2]) * double(y[k + 2]);
          s3 += double(x[k + 3]) * double(y[k + 3]);
        }
        d[i * N + j] += (s0 + s1) + (s2 + s3);
      }
  });
}

// The quantisation schemes, in the table's order.
inline constexpr int kSchemes = 3;
inline constexpr const char* kSchemeNames[kSchemes] = {
    "(a) fp32 1x128 / 128x128", "(b) UE8M0 1x32, OCP floor", "(c) UE8M0 1x32, rounded up"};

// The error of one scheme's D against the exact product D0 (both in double, M x N).
struct Error {
  double norm_rel = 0;      // ||D - D0||_2 / ||D0||_2 over all elements
  double calc_diff = 0;     // 1 - 2<D,D0> / (<D,D> + <D0,D0>): DeepGEMM's calc_diff
  double max_over_rms = 0;  // max |d - d0| / RMS(D0)
};
inline Error error_of(const std::vector<double>& d, const std::vector<double>& d0) {
  double ee = 0, xy = 0, xx = 0, yy = 0, worst = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    const double e = d[i] - d0[i];
    ee += e * e, xy += d[i] * d0[i], xx += d[i] * d[i], yy += d0[i] * d0[i];
    worst = std::max(worst, std::fabs(e));
  }
  Error r;
  r.norm_rel = yy > 0 ? std::sqrt(ee / yy) : 0.0;
  r.calc_diff = xx + yy > 0 ? 1.0 - 2.0 * xy / (xx + yy) : 0.0;
  r.max_over_rms = yy > 0 ? worst / std::sqrt(yy / double(d.size())) : 0.0;
  return r;
}

// One row of the study: M x N x K, the inputs of make_problem(seed), each scheme's error. K is
// walked 128 columns at a time (one scale block of (a), four of (b)), so memory stays O(M N).
struct Row {
  int64_t k = 0;
  Error error[kSchemes];
};
inline Row study(int64_t M, int64_t N, int64_t K, uint64_t seed) {
  constexpr int64_t w = gemm::kScaleBlock;
  std::vector<float> xa(size_t(M * w)), xb(size_t(N * w));
  std::vector<double> qa(xa.size()), qb(xb.size());
  std::vector<double> exact(size_t(M * N), 0.0);
  std::vector<std::vector<double>> d(kSchemes, std::vector<double>(size_t(M * N), 0.0));
  for (int64_t k0 = 0; k0 < K; k0 += w) {
    unquantised_a(seed, M, K, k0, w, xa.data());
    unquantised_b(seed, N, K, k0, w, xb.data());
    add_product(xa.data(), xb.data(), M, N, w, exact.data());
    deepgemm_dequantised_a(xa.data(), M, w, qa.data());
    deepgemm_dequantised_b(xb.data(), N, w, qb.data());
    add_product(qa.data(), qb.data(), M, N, w, d[0].data());
    const Ue8m0Rounding roundings[2] = {Ue8m0Rounding::Floor, Ue8m0Rounding::Ceil};
    for (int s = 0; s < 2; ++s) {
      mx_dequantised(xa.data(), M, w, roundings[s], qa.data());
      mx_dequantised(xb.data(), N, w, roundings[s], qb.data());
      add_product(qa.data(), qb.data(), M, N, w, d[1 + s].data());
    }
  }
  Row row;
  row.k = K;
  for (int s = 0; s < kSchemes; ++s) row.error[s] = error_of(d[s], exact);
  return row;
}

}  // namespace ch14::accuracy
