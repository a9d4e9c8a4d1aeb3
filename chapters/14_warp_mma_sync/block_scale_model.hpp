// The arithmetic of a block-scaled MMA (mma.sync ... kind::mxf8f6f4.block_scale on sm_120a,
// tcgen05.mma ... block_scale on sm_100a), on the CPU, for tests/host_chapter14.cpp. Plain C++.
//
// MX formats (OCP Microscaling Formats v1.0) pair each block of 32 consecutive elements along K
// with one UE8M0 scale: an 8-bit exponent e, the value 2^(e - 127), 255 for NaN, no sign, no
// mantissa. A block-scaled MMA multiplies each row of A and each column of B, 32 k at a time, by
// its scale inside the instruction. Chapter 06 does the same in software with fp32 scales per
// 128 x 128 block of B and 1 x 128 of A, promoting the tensor core's partial sums into fp32
// registers after every 128 k: the identity below (block_dot == scaled_dot) is why both are the
// same product, and why power-of-two scales make the rescaling exact.
//
// What the model does not claim: how the hardware rounds inside one instruction. mma_model sums
// exactly (in double) and rounds once to fp32; nothing here has run on a GPU that has the
// instruction.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace ch14::mx {

inline constexpr int kBlock = 32;  // elements of K per scale (scale_vec::1X for kind::mxf8f6f4)

// UE8M0: 2^(e - 127); 255 is NaN.
inline double ue8m0(uint8_t e) {
  return e == 255 ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, int(e) - 127);
}

// fp8 e4m3 (1 sign, 4 exponent bits with bias 7, 3 mantissa bits; no infinities, S.1111.111 NaN).
inline double e4m3(uint8_t bits) {
  const int sign = bits >> 7, exponent = (bits >> 3) & 0xF, mantissa = bits & 0x7;
  if (exponent == 0xF && mantissa == 0x7) return std::numeric_limits<double>::quiet_NaN();
  const double magnitude = exponent == 0 ? std::ldexp(mantissa, -9)  // subnormal: m / 8 * 2^-6
                                         : std::ldexp(8 + mantissa, exponent - 10);
  return sign ? -magnitude : magnitude;
}

// x rounded to the nearest e4m3 (ties to an even mantissa), saturated to +-448.
inline uint8_t to_e4m3(double x) {
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const double a = std::fabs(x);
  uint8_t best = 0;
  for (uint8_t b = 1; b <= 0x7E; ++b) {
    const double d = std::fabs(e4m3(b) - a), db = std::fabs(e4m3(best) - a);
    if (d < db || (d == db && (b & 1) == 0)) best = b;
  }
  return uint8_t(sign | best);
}

// One block of 32 values quantised as OCP MX does it: the shared exponent X = floor(log2(amax))
// - 8 (8: the exponent of e4m3's largest power of two, 256), the scale byte X + 127, each element
// x / 2^X rounded to e4m3 (saturating). An all-zero block gets the smallest scale.
inline uint8_t quantize_block(const double* x, uint8_t* elements) {
  double amax = 0.0;
  for (int i = 0; i < kBlock; ++i) amax = std::fmax(amax, std::fabs(x[i]));
  int e = amax > 0.0 ? int(std::floor(std::log2(amax))) - 8 : -127;
  e = e < -127 ? -127 : e > 127 ? 127 : e;
  for (int i = 0; i < kBlock; ++i) elements[i] = to_e4m3(std::ldexp(x[i], -e));
  return uint8_t(e + 127);
}

// The scale of element (row, k) of a K-major operand (A: M x K, B: N x K): row-major, K / 32
// scales per row.
inline int64_t scale_index(int64_t row, int64_t k, int64_t K) {
  return row * (K / kBlock) + k / kBlock;
}

// One output element of a block-scaled product, as the hardware defines it: every product scaled.
inline double scaled_dot(const uint8_t* a, const uint8_t* b, const uint8_t* sa, const uint8_t* sb,
                         int64_t K) {
  double sum = 0.0;
  for (int64_t k = 0; k < K; ++k)
    sum += (e4m3(a[k]) * ue8m0(sa[k / kBlock])) * (e4m3(b[k]) * ue8m0(sb[k / kBlock]));
  return sum;
}

// The same element as chapter 06 computes it: each block's unscaled dot product (what the tensor
// core sums), then scaled once and added in fp64 here (fp32 on the GPU: the promotion).
inline double block_dot(const uint8_t* a, const uint8_t* b, const uint8_t* sa, const uint8_t* sb,
                        int64_t K) {
  double sum = 0.0;
  for (int64_t k0 = 0; k0 < K; k0 += kBlock) {
    double block = 0.0;
    for (int64_t k = k0; k < k0 + kBlock; ++k) block += e4m3(a[k]) * e4m3(b[k]);
    sum += block * ue8m0(sa[k0 / kBlock]) * ue8m0(sb[k0 / kBlock]);
  }
  return sum;
}

// One mma.sync m16n8k32 kind::mxf8f6f4 scale_vec::1X: D = C + (A * sA) x (B * sB), A 16 x 32 and
// B 8 x 32 (N x K) bytes, one scale per row of A and per column of B; summed exactly, rounded once
// to fp32 (the model's assumption).
inline std::vector<float> mma_model(const uint8_t (&a)[16][32], const uint8_t (&b)[8][32],
                                    const uint8_t (&sa)[16], const uint8_t (&sb)[8],
                                    const float (&c)[16][8]) {
  std::vector<float> d(16 * 8);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n)
      d[m * 8 + n] = float(double(c[m][n]) + scaled_dot(a[m], b[n], &sa[m], &sb[n], kBlock));
  return d;
}

}  // namespace ch14::mx
