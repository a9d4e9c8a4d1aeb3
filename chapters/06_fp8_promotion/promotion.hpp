// Chapter 06's host-checkable arithmetic: where scale A comes from and which scale each
// accumulator register takes. Plain C++ (tests/host_chapter06.cpp).
#pragma once

#include <cstdint>
#include <type_traits>

#include "chapters/05_warp_specialized_pipeline/pipeline.hpp"
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
// runs has no test of the flag in it (NOTES.md, "4. The promotion's window in SASS (2026-11-24)").
template <typename F>
GEMM_HOST_DEVICE void dispatch_bool(bool value, F&& f) {
  if (value)
    f(std::true_type{});
  else
    f(std::false_type{});
}

// The K loop's walk over the ring (NOTES.md, "7. The K loop unrolled by the ring (2026-11-24)").
// Calls body(kb, stage, phase) for kb = begin, ..., end - 1 in order, each with the ring position
// the plain loop (`for (...; state.advance(kNumStages))`) would give it, and leaves `state` where
// that loop would. Wherever the ring stands at stage 0 with a whole round still to go, the next
// kNumStages calls are unrolled: in each copy of the body the stage is a constant, its barriers'
// and tiles' addresses are immediates, and ptxas schedules the next stage's barrier test among
// the promotion's FFMAs. Rings longer than kMaxUnrolledStages (the small tiles' 8 to 16 stages)
// keep the plain loop: as many copies of the body would only cost code size. The body must be
// inlined (a lambda marked always_inline): a call between wgmmas serialises them (ptxas C7510).
inline constexpr int kMaxUnrolledStages = 4;

template <int kNumStages, typename Body>
GEMM_HOST_DEVICE inline void for_each_k_block(int begin, int end, ch05::PipelineState& state,
                                              Body&& body) {
  int kb = begin;
  if constexpr (kNumStages <= kMaxUnrolledStages) {
    for (; kb < end && state.stage != 0; ++kb, state.advance(kNumStages))
      body(kb, state.stage, state.phase);
    for (; kb + kNumStages <= end; kb += kNumStages) {
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
      for (int s = 0; s < kNumStages; ++s) body(kb + s, uint32_t(s), state.phase);
      state.phase ^= 1;
    }
  }
  for (; kb < end; ++kb, state.advance(kNumStages)) body(kb, state.stage, state.phase);
}

}  // namespace ch06
