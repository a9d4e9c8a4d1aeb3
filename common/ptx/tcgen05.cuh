// tcgen05: Blackwell's (sm_100a) tensor-core instructions, for chapter 14's block-scaled example
// only; nothing in this book runs them (its GPU is an H100). PTX ISA 9.0, "TensorCore 5th
// Generation Family Instructions": "tcgen05.alloc, tcgen05.dealloc, tcgen05.relinquish_alloc_permit",
// "tcgen05.mma" with .block_scale, and "tcgen05.commit":
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tensorcore-5th-generation-family-instructions
//
// The accumulator lives in tensor memory (TMEM), allocated by one warp; the operands come from
// shared memory through descriptors, as wgmma's do, and so do A's and B's scale factors, from
// TMEM: tcgen05.mma ... block_scale multiplies each 32-wide K block of a row of A and of a column
// of B by its UE8M0 scale inside the MMA. One thread issues it for the whole CTA.
#pragma once

#include <cstdint>

namespace ptx {

// One warp allocates `columns` (a power of two, at least 32) columns of TMEM and writes their
// address to the shared-memory word at slot_address; then gives up the right to allocate more.
template <uint32_t columns>
__device__ __forceinline__ void tcgen05_alloc(uint32_t slot_address) {
  asm volatile(
      "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n"
      "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::"r"(slot_address),
      "n"(columns)
      : "memory");
}

template <uint32_t columns>
__device__ __forceinline__ void tcgen05_dealloc(uint32_t tmem_address) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" ::"r"(tmem_address),
               "n"(columns)
               : "memory");
}

// D (TMEM) (+)= (A * scale A) x (B * scale B), kind::mxf8f6f4, one UE8M0 scale per 32 elements of
// K (scale_vec::1X) for each row of A and column of B, the scales in TMEM. idesc is the instruction
// descriptor (shapes, types, transposes); accumulate false overwrites D.
__device__ __forceinline__ void tcgen05_mma_mxf8f6f4_block_scale(uint32_t d_tmem, uint64_t desc_a,
                                                                 uint64_t desc_b, uint32_t idesc,
                                                                 uint32_t scale_a_tmem,
                                                                 uint32_t scale_b_tmem,
                                                                 bool accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
      "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X "
      "[%0], %1, %2, %3, [%5], [%6], p;\n}\n" ::"r"(d_tmem),
      "l"(desc_a), "l"(desc_b), "r"(idesc), "r"(int32_t(accumulate)), "r"(scale_a_tmem),
      "r"(scale_b_tmem)
      : "memory");
}

// An arrival on the mbarrier `bar` (shared address) once every tcgen05.mma this thread issued
// before it has completed: how a kernel learns that D in TMEM is ready (or that TMEM may be freed).
__device__ __forceinline__ void tcgen05_commit(uint32_t bar) {
  asm volatile(
      "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(bar)
      : "memory");
}

}  // namespace ptx
