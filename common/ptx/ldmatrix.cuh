// ldmatrix: a warp loads 8x8 matrices of 16-bit elements from shared memory into registers (PTX
// ISA 9.0, "Warp-level matrix load instruction: ldmatrix", Warp Level Matrix Multiply-Accumulate
// Instructions):
// https://docs.nvidia.com/cuda/parallel-thread-execution/#warp-level-matrix-instructions-ldmatrix
//
// With .x4, four matrices: lane l supplies the shared address of row l % 8 of matrix l / 8 (16
// bytes, 16-byte aligned; with .x2 lanes 0-15 supply them, with .x1 lanes 0-7). Register i of every
// lane then holds two elements of matrix i: row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1, the
// lower-numbered column in the lower 16 bits. With .trans the matrix arrives transposed: register
// i holds rows 2 (l % 4) and 2 (l % 4) + 1 of column l / 4 (chapter 14's fragments.hpp has both
// maps in plain C++, host-tested).
//
// The instruction only knows 16-bit elements. A row of 16 bytes is also 16 fp8 values, and lane l
// then receives bytes 4 (l % 4) .. 4 (l % 4) + 3 of row l / 4: four consecutive fp8 values, which
// is what mma.sync's 8-bit fragments want (common/ptx/mma_sync.cuh). .trans moves 16-bit elements,
// so it cannot transpose an fp8 matrix.
#pragma once

#include <cstdint>

#include "common/ptx/base.cuh"

namespace ptx {

// Four 8x8 b16 matrices; `row_address` is this lane's row (shared_address of it).
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(row_address)
               : "memory");
}

// Two matrices: lanes 0-15 supply the rows (the other lanes' addresses are ignored).
__device__ __forceinline__ void ldmatrix_x2(uint32_t (&r)[2], uint32_t row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(row_address)
               : "memory");
}

// Four matrices, each transposed on the way: for an operand stored MN-major (16-bit elements).
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(row_address)
               : "memory");
}

}  // namespace ptx
