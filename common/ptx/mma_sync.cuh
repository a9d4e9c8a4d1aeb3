// mma.sync: the warp-level tensor-core instruction of Volta to Ada, still on Hopper beside wgmma
// (PTX ISA 9.0, "Multiply-and-Accumulate Instruction: mma", and its fragment sections "Matrix
// Fragments for mma.m16n8k16 with floating point type" and "Matrix Fragments for mma.m16n8k32"):
// https://docs.nvidia.com/cuda/parallel-thread-execution/#warp-level-matrix-instructions-mma
// https://docs.nvidia.com/cuda/parallel-thread-execution/#warp-level-matrix-fragment-mma-16816-float
// https://docs.nvidia.com/cuda/parallel-thread-execution/#warp-level-matrix-fragment-mma-16832
//
// One warp computes D (16 x 8, fp32) = A (16 x K) * B (K x 8) + C with every operand in registers:
// no shared-memory descriptors, no fences, no commit groups; the result is there for the next
// instruction in program order. .row.col: A is stored K-major (a row of A along K), B too (a
// column of B along K), which is how this book stores both (N x K, "B^T"). Which lane holds which
// element is chapter 14's fragments.hpp.
//
//   m16n8k32 .e4m3 (sm_89 and later): A 4 registers of 4 fp8, B 2 registers of 4 fp8. On sm_90a
//            ptxas has no FP8 mma.sync unit to target: it converts the operands to f16
//            (F2FP.F16.E4M3.UNPACK_B) and issues two HMMA.16816.F32 (chapter 14's README).
//   m16n8k16 .f16: A 4 registers of 2 f16, B 2 registers of 2 f16; one HMMA.16816.F32.
//
// D and C are the same registers here (d += a * b), accumulated in fp32.
#pragma once

#include <cstdint>

namespace ptx {

__device__ __forceinline__ void mma_m16n8k32_e4m3(float (&d)[4], const uint32_t (&a)[4],
                                                  const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ void mma_m16n8k16_f16(float (&d)[4], const uint32_t (&a)[4],
                                                 const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Two e4m3 values (the low and high byte of `bits`) to two f16 in one register, the low byte's in
// the lower half; exact, since every e4m3 value is an f16 value (PTX ISA 9.0, "cvt"; sm_89 and
// later). What ptxas emits for the e4m3 mma.sync on sm_90a, written out: chapter 14's f16 variant
// converts its operands once, in shared memory, with it.
__device__ __forceinline__ uint32_t cvt_e4m3x2_to_f16x2(uint16_t bits) {
  uint32_t out;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(out) : "h"(bits));
  return out;
}

// The block-scaled form (sm_120a; not on sm_90a or sm_100a), PTX ISA 9.0 "mma" with .block_scale
// and its section "Block Scaling for mma.sync": A and B e4m3 as above, each row of A and each
// column of B multiplied by a UE8M0 scale (2^(e - 127)) before the products are summed.
// scale_vec::1X: one scale per row (column) for the instruction's 32 k, the MX block size.
// scale_a and scale_b are registers of every lane; the selectors BYTE (0-3) and THREAD (0-1),
// immediates, say which byte of which lanes' registers the hardware reads (the section's figures).
// ptxas emits QMMA.SF.16832.F32.E4M3.E4M3.E8 (chapter 14's README).
template <int BYTE_A, int THREAD_A, int BYTE_B, int THREAD_B>
__device__ __forceinline__ void mma_m16n8k32_e4m3_block_scale(float (&d)[4], const uint32_t (&a)[4],
                                                              const uint32_t (&b)[2],
                                                              uint32_t scale_a, uint32_t scale_b) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X"
      ".f32.e4m3.e4m3.f32.ue8m0 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3}, "
      "%10, {%12, %13}, %11, {%14, %15};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(scale_a),
        "r"(scale_b), "n"(BYTE_A), "n"(THREAD_A), "n"(BYTE_B), "n"(THREAD_B));
}

}  // namespace ptx
