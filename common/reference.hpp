// The CPU reference, in double precision, and the comparison every check uses.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/inputs.hpp"

namespace gemm {

// D for rows [0, M) of a HostProblem, exactly dequantised and summed in double, before any bf16
// rounding. abs_sum[i] = sum_k |a*sa * b*sb| bounds how much any floating-point accumulation of
// that dot product can err: fp32 recursive summation of K terms is off by at most K * 2^-24 of it.
struct Reference {
  Shape shape;
  std::vector<double> value;    // M x N, row-major
  std::vector<double> abs_sum;  // M x N, row-major
};

Reference reference_gemm(const HostProblem& p);
// The same for rows [begin, end) of D only (shape.m = end - begin): a band of rows, for references
// that cannot afford the whole of M. Each 128-wide block of K is summed exactly (fp8 products fit a
// double's significand many times over), then scaled by sa * sb and added in the order of K; any
// number of threads (host_threads) gives the same bits.
Reference reference_rows(const HostProblem& p, int64_t begin, int64_t end);

// bf16 bit pattern written into D before every run: a NaN no arithmetic produces by accident.
inline constexpr uint16_t kPoisonBits = 0x7FB1;

// Per-element error bound |d - ref| <= out_rel * |ref| + terms_rel * abs_sum + abs_floor.
// out_rel covers the final rounding to bf16 (2^-8, half an ulp at 8 significant bits);
// terms_rel covers the accumulation and any rounding of the inputs, relative to sum |terms|.
struct Tolerance {
  double out_rel = 0x1.0p-8;
  double terms_rel = 0.0;
  double abs_floor = 0.0;
};

struct Comparison {
  int64_t count = 0;       // elements compared
  int64_t unwritten = 0;   // still holding the poison pattern
  int64_t nan = 0;         // other NaN or Inf
  int64_t over_bound = 0;  // finite, but outside the Tolerance
  double rel_diff = 0.0;   // 1 - 2<x,y> / (<x,x> + <y,y>), as DeepGEMM's calc_diff
  double max_abs_err = 0.0;
  double max_abs_ref = 0.0;
  int64_t worst_index = -1;  // row-major index of the largest error relative to its bound

  std::string str() const;
};

float bf16_to_float(uint16_t bits);
// Round-to-nearest-even float -> bf16 bits, as the hardware's cvt.rn.bf16.f32.
uint16_t float_to_bf16_bits(float x);

// d holds bf16 bit patterns, M x N row-major.
Comparison compare_to_reference(const std::vector<uint16_t>& d, const Reference& ref,
                                const Tolerance& tol);
// Two kernels' outputs, element by element; bounds are relative to y (max(|x|,|y|) would do too).
Comparison compare_outputs(const std::vector<uint16_t>& x, const std::vector<uint16_t>& y,
                           const Tolerance& tol);

// The relative difference of two real vectors (exposed for its own test).
double rel_diff(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace gemm

namespace gemm {

// Tolerances derived from each kind of arithmetic (u = unit roundoff; bf16 output u = 2^-8).
// fp32 accumulation on CUDA cores: two dequantising multiplies and one product rounding per term,
// then K additions: |err| <= (K + 3) * 2^-24 * sum|terms|, plus the bf16 rounding of D.
Tolerance fp32_accumulation_tolerance(int64_t k);
// Tensor-core FP8 accumulation. Measured on the H100 (tests/gpu_special_values.cu, 2026-11-23):
// with +448 in every element, chapters 02-05 return 0.8722 of the exact sum at K = 8192 and
// exactly 2^31 (0.6531 of it) at K = 16384. tensor_core_accumulate() below reproduces both: the
// 32 products of one k32 instruction are aligned to the largest of them and the running sum, and
// each is truncated toward zero to 14 significant bits there (a quantum of 2^(e - 13), e that
// largest magnitude's exponent), close to the "about 14 bits" of the DeepSeek-V3 report (section
// 3.3.2). Each product can thus lose up to
// 2^-13 of a running sum that is at most sum|terms|: with promotion into fp32 every
// `promote_every` elements of K (= K when there is none), up to promote_every such losses pile up.
// (An earlier version charged one loss per 32-product instruction; same-sign inputs refuted it.)
Tolerance tensor_core_fp8_tolerance(int64_t k, int64_t promote_every);
// The model above, 32 products (one k32 instruction) at a time, from zero: what the tensor core's
// accumulator holds after adding `products` in order. Fitted on constant same-sign inputs; used to
// check exactly those.
double tensor_core_accumulate(const std::vector<double>& products);
// bf16 operands holding dequantised fp8 values: each operand is rounded once more (2 * 2^-8 per
// term), accumulation as fp32.
Tolerance bf16_inputs_tolerance(int64_t k);

// 1 - 2<x,y>/(<x,x>+<y,y>) for a result whose elements each carry relative error <= u is at most
// u^2 / 2: with u = 2^-8 that is 7.6e-6. Kernels accumulating in fp32 must stay under this bound.
inline constexpr double kRelDiffFp32 = 1e-5;
// DeepGEMM's own acceptance threshold for its FP8 kernels, used for tensor-core accumulation.
inline constexpr double kRelDiffTensorCore = 1e-3;
// The largest K that chapters 02-05, which sum all of K in the tensor core's accumulator, take:
// their difference from the reference grows with K, and passes kRelDiffTensorCore beyond about
// 2^21 on random inputs (chapter 05 at M = 128, N = 256, H100, 2026-11-27: 1.17e-4 at K = 2^18,
// 5.15e-4 at 2^20, 2.05e-3 at 2^22, 4.07e-3 at 2^23 - 128). Chapter 06 on promote every 128.
inline constexpr int64_t kMaxKUnpromoted = int64_t(1) << 20;

// The rows that a CPU reference checks when the whole problem would cost more than max_macs
// multiply-adds: bands of 64 rows at the start, the middle and the end of M (tile edges
// included); the whole of M when it is affordable. Sorted, disjoint, half-open.
std::vector<std::pair<int64_t, int64_t>> reference_row_bands(const Shape& s, double max_macs);

// Compares D (all of it, bf16 bits) with the CPU reference on reference_row_bands(): also checks
// that every element of D was written, including the rows the reference skips.
struct ReferenceCheck {
  Comparison on_bands;          // the rows compared with the reference
  int64_t unwritten_total = 0;  // poison left anywhere in D
  int64_t nan_total = 0;        // NaN or Inf anywhere in D
  int64_t rows_checked = 0;
};
// Above this many multiply-adds, check_against_reference compares bands of rows rather than all
// of M (the CPU reference in double runs at a few GMAC/s).
inline constexpr double kCpuReferenceMacs = 4e9;

// How many bf16 bit patterns of x and y differ (same size).
int64_t count_bit_differences(const std::vector<uint16_t>& x, const std::vector<uint16_t>& y);

ReferenceCheck check_against_reference(const HostProblem& p, const std::vector<uint16_t>& d,
                                       const Tolerance& tol, double max_macs);

// The reference on reference_row_bands(), computed once for a problem whose D several runs produce
// (every chapter on the same inputs, in the tests): check_against_reference(p, d, tol, max_macs) is
// check_against_reference(reference_on_bands(p, max_macs), d, tol).
struct BandReference {
  Shape shape;                                     // the whole problem's
  std::vector<std::pair<int64_t, int64_t>> bands;  // reference_row_bands(shape, max_macs)
  Reference rows;                                  // the bands' rows, one after another
};
BandReference reference_on_bands(const HostProblem& p, double max_macs);
ReferenceCheck check_against_reference(const BandReference& ref, const std::vector<uint16_t>& d,
                                       const Tolerance& tol);

}  // namespace gemm
