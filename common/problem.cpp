#include "common/problem.hpp"

#include "common/check.hpp"

namespace gemm {

std::string Shape::str() const {
  return "M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k);
}

std::string shape_error(const Shape& s) {
  const std::string at = " (got " + s.str() + ")";
  if (s.m < 1) return "M must be at least 1" + at;
  if (s.n < 8 || s.n % 8 != 0)
    return "N must be a positive multiple of 8, so that every bf16 row of D is 16-byte aligned" +
           at;
  if (s.k < kScaleBlock || s.k % kScaleBlock != 0)
    return "K must be a positive multiple of 128, one A scale per 128 columns" + at;
  // Indices are computed in 32 bits inside the kernels; keep every tensor below 2^31 elements.
  const int64_t limit = int64_t(1) << 31;
  if (s.m * s.k >= limit || s.n * s.k >= limit || s.m * s.n >= limit)
    return "each of A, B and D must hold fewer than 2^31 elements" + at;
  return {};
}

void validate(const Shape& s) {
  if (std::string why = shape_error(s); !why.empty()) throw UnsupportedError(why);
}

}  // namespace gemm
