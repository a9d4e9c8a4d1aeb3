// The problem every chapter solves, and the constraints on its shape.
//
//   D[m][n] = sum_k (A[m][k] * sA[m][k/128]) * (B[n][k] * sB[n/128][k/128])
//
//   A  : M x K fp8 e4m3, row-major (K contiguous)
//   sA : fp32, one per (row, 128-wide K block), M-major: sA[kb * sa_ld + m],
//        sa_ld = M rounded up to 4
//   B  : N x K fp8 e4m3, row-major (K contiguous), i.e. the transpose of the math's B
//   sB : fp32, one per 128 x 128 block, sB[nb * k_blocks + kb]
//   D  : M x N bf16, row-major
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <string>

#include "common/host_device.hpp"

namespace gemm {

inline constexpr int kScaleBlock = 128;  // K (and N, for B) extent that one scale covers

// The SMs of the H100 SXM the book measures on. Only a default: where a kernel is launched, the
// configuration is taken for the device's own count (gemm::multiprocessor_count()); host tests and
// the GPU-less --print-config use this one.
inline constexpr int kH100Sms = 132;

struct Shape {
  int64_t m = 0, n = 0, k = 0;

  GEMM_HOST_DEVICE int64_t k_blocks() const { return k / kScaleBlock; }
  GEMM_HOST_DEVICE int64_t n_blocks() const { return (n + kScaleBlock - 1) / kScaleBlock; }
  // Leading dimension of sA: TMA needs 16-byte aligned strides, i.e. 4 floats.
  GEMM_HOST_DEVICE int64_t sa_ld() const { return (m + 3) / 4 * 4; }
  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
  // Fewest bytes a GEMM must move: A and B once (fp8), D once (bf16). Scales are negligible.
  double min_bytes() const { return double(m * k + n * k + 2 * m * n); }
  std::string str() const;
};

// DeepGEMM's 18 dense test shapes (DeepSeek-V3 projections; M = 64, 128, 4096): the benchmark's
// rows and the GPU tests' shapes.
inline constexpr Shape kDeepGemmShapes[] = {
    {64, 2112, 7168},   {64, 24576, 1536},   {64, 32768, 512},   {64, 7168, 16384},
    {64, 4096, 7168},   {64, 7168, 2048},    {128, 2112, 7168},  {128, 24576, 1536},
    {128, 32768, 512},  {128, 7168, 16384},  {128, 4096, 7168},  {128, 7168, 2048},
    {4096, 2112, 7168}, {4096, 24576, 1536}, {4096, 32768, 512}, {4096, 7168, 16384},
    {4096, 4096, 7168}, {4096, 7168, 2048},
};
// The shape a chapter binary runs without --m/--n/--k, and the seed without --seed.
inline constexpr Shape kDefaultShape{4096, 4096, 7168};
inline constexpr uint64_t kDefaultSeed = 2026;

// Empty when the shape is legal; otherwise a sentence naming the broken constraint.
//   M >= 1; N >= 8 and a multiple of 8 (rows of D are 16-byte aligned); K >= 128 and a multiple of
//   128 (one A scale per 128 columns).
std::string shape_error(const Shape& s);
// Throws UnsupportedError with shape_error()'s sentence.
void validate(const Shape& s);

// Device pointers of one problem, as every kernel from chapter 00 on receives them.
struct GemmArgs {
  Shape shape;
  const __nv_fp8_e4m3* a = nullptr;
  const float* sa = nullptr;
  const __nv_fp8_e4m3* b = nullptr;
  const float* sb = nullptr;
  __nv_bfloat16* d = nullptr;
  // Optional: a kTraceSlots-long buffer of %globaltimer stamps (common/trace.hpp), for the kernels
  // that record a timeline. nullptr records nothing.
  uint64_t* trace = nullptr;
};

}  // namespace gemm
