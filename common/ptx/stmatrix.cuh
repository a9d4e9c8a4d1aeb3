// stmatrix: a warp stores 8x8 matrices of 16-bit elements from registers to shared memory (PTX ISA
// 9.0, "stmatrix", Data Movement and Conversion Instructions):
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-stmatrix
//
// With .x4, four matrices: lane l supplies the shared address of row l % 8 of matrix l / 8 (16
// bytes, 16-byte aligned), and register i of every lane holds two elements of matrix i: row l / 4,
// columns 2 (l % 4) and 2 (l % 4) + 1, the lower-numbered column in the lower 16 bits. That is the
// layout of the wgmma accumulator fragment of one 8 x 8 block (ptx::accumulator_position), which is
// why an epilogue can hand its accumulators to stmatrix without shuffling them.
#pragma once

#include <cstdint>

#include "common/ptx/base.cuh"

namespace ptx {

__device__ __forceinline__ void stmatrix_x4(void* smem_row, uint32_t r0, uint32_t r1, uint32_t r2,
                                            uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                   shared_address(smem_row)),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// Two floats rounded to bf16 (round to nearest even) in one register, a in the lower 16 bits.
__device__ __forceinline__ uint32_t pack_bf16x2(float a, float b) {
  uint32_t bits;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(bits) : "f"(b), "f"(a));
  return bits;
}

}  // namespace ptx
