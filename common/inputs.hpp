// Random problems on the host: values, fp8 quantisation with fine-grained scales, and the layouts
// of common/problem.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "common/problem.hpp"

namespace gemm {

using fp8 = __nv_fp8_e4m3;
using bf16 = __nv_bfloat16;

inline constexpr float kFp8Max = 448.0f;  // largest finite e4m3 value
inline constexpr float kMinAmax = 1e-4f;  // floor on a block's amax, so scales never vanish

enum class Scales {
  Unit,    // fp8 values drawn directly, every scale 1: the unscaled product (chapters 02 to 05)
  Random,  // values of varying magnitude quantised per block: the real problem (chapter 06 on)
};

struct HostProblem {
  Shape shape;
  std::vector<fp8> a;     // M x K
  std::vector<float> sa;  // k_blocks x sa_ld, M contiguous; padding rows hold 0
  std::vector<fp8> b;     // N x K
  std::vector<float> sb;  // n_blocks x k_blocks

  float scale_a(int64_t m, int64_t kb) const { return sa[kb * shape.sa_ld() + m]; }
  float scale_b(int64_t n, int64_t kb) const {
    return sb[(n / kScaleBlock) * shape.k_blocks() + kb];
  }
  // Rows [begin, end) of A (and their scales) with all of B: the same product restricted to a band
  // of rows, for references that cannot afford the whole of M.
  HostProblem rows(int64_t begin, int64_t end) const;
};

// A fresh problem; the same (shape, seed, scales) always gives the same bytes, however many threads
// produce it. Validates the shape first.
HostProblem make_problem(const Shape& shape, uint64_t seed, Scales scales);

// The quantiser. x is row-major with K contiguous, like the fp8 tensor it fills.
// A: one scale per (row, 128-wide K block), written M-major into sa (leading dimension sa_ld).
// B: one scale per 128 x 128 block, written row-major into sb ([n/128][k/128]).
// scale = max(amax, 1e-4) / 448 and q = fp8(x / scale): the largest magnitude maps to 448.
void quantize_a(const float* x, int64_t m, int64_t k, fp8* a, float* sa, int64_t sa_ld);
void quantize_b(const float* x, int64_t n, int64_t k, fp8* b, float* sb);

// fp8 e4m3 -> float through a 256-entry table (exact).
float fp8_to_float(fp8 v);

// The n-th number of a reproducible standard normal stream. Pure function of (seed, stream, n).
float normal_at(uint64_t seed, uint64_t stream, uint64_t n);

// Runs body(begin, end) over [0, count) split across host_threads() threads. Whatever runs through
// it (make_problem, the reference) gives the same bytes for any number of threads.
void parallel_for(int64_t count, const std::function<void(int64_t, int64_t)>& body);
// The threads parallel_for uses: the machine's (std::thread::hardware_concurrency), unless
// set_host_threads(n) chose n; set_host_threads(0) goes back to the machine's.
int host_threads();
void set_host_threads(int threads);

}  // namespace gemm
