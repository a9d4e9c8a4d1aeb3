// Chapter 06's host-checkable arithmetic: where scale A comes from and which scale each
// accumulator register takes. Plain C++ (tests/host_chapter06.cpp).
#pragma once

#include <cstdint>
#include <type_traits>

#include "common/problem.hpp"
#include "common/ptx/descriptor.hpp"  // accumulator_position
#include "common/tensor_map.hpp"

namespace ch06 {

// Scale A as TMA sees it: sA[kb * sa_ld + m] is a 2-D fp32 tensor, M innermost (the M-contiguous
// layout of common/problem.hpp), one row of sa_ld floats per K block; sa_ld is a multiple of 4, so
// the row stride is a multiple of 16 bytes as TMA requires. One box = the block_m scales of one
// tile's rows for one K block. Rows past M arrive as zeros (and still count as bytes).
inline gemm::TensorMapSpec<2> scale_a_view(const gemm::Shape& s, uint32_t block_m) {
  gemm::TensorMapSpec<2> spec;
  spec.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  spec.element_bytes = 4;
  spec.dims = {uint64_t(s.m), uint64_t(s.k_blocks())};
  spec.strides = {uint64_t(s.sa_ld()) * 4};
  spec.box = {block_m, 1};
  return spec;
}

// A math thread's accumulators cover two rows of D (ptx::accumulator_position): register r lies
// in the upper row when row_half(r) == 0 and eight rows further down when it is 1. So a thread
// needs two A scales per K block, and picks one per register by a compile-time index.
GEMM_HOST_DEVICE constexpr int row_half(int reg) {
  return (reg / 2) % 2;
}

// The accumulator's reuse: two math warpgroups of 64 rows, each computing block_m / 128 sub-tiles
// of 64 rows in turn into the same `acc`. Sub-tile `sub` of warpgroup `w` is the 64 rows from
// subtile_row(w, sub): at 256 rows warpgroup 0 takes rows 0-63 and 128-191, warpgroup 1 64-127
// and 192-255 (tests/host_chapter06.cpp: every row exactly once; draw.hpp: the picture).
GEMM_HOST_DEVICE constexpr int subtiles(int block_m) {
  return block_m / 128;
}
GEMM_HOST_DEVICE constexpr int subtile_row(int warpgroup, int sub) {
  return warpgroup * 64 + sub * 128;
}

// Calls f(std::true_type{}) if value, f(std::false_type{}) otherwise: a run-time flag turned into
// a compile-time one. The kernel's K loop then exists twice, and the copy that nearly every tile
// runs has no test of the flag in it (README, "The promotion's window in SASS").
template <typename F>
GEMM_HOST_DEVICE void dispatch_bool(bool value, F&& f) {
  if (value)
    f(std::true_type{});
  else
    f(std::false_type{});
}

}  // namespace ch06
