// The non-bulk asynchronous copy, for the few bytes of scale B a stage needs (chapters 06-12). PTX
// ISA, "Data Movement and Conversion Instructions: cp.async" and "mbarrier: cp.async.mbarrier.arrive":
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-cp-async-mbarrier-arrive
//
// TMA moves whole boxes of at least 16 bytes, and a row of scale B (one float per K block) is not
// 16-byte aligned for every K; cp.async copies 4, 8 or 16 bytes from global to shared memory
// without the thread waiting for them. cp.async.mbarrier.arrive then has the hardware arrive on an
// mbarrier once all of the thread's earlier cp.async have landed, so the copy completes a stage's
// full barrier beside the TMA loads, and the thread that issued it never waits on its latency.
#pragma once

#include <cstdint>

#include "common/ptx/base.cuh"

namespace ptx {

// 4 bytes from global to shared memory (both 4-byte aligned), through L1 (.ca: .cg takes only 16).
__device__ __forceinline__ void cp_async_4(void* smem_dst, const void* gmem_src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(shared_address(smem_dst)),
               "l"(gmem_src)
               : "memory");
}

// An arrival on `bar` once every cp.async this thread issued before it has landed. With .noinc
// the barrier's pending count is not raised first, so the arrival is one of the arrivals the
// barrier was initialised to expect (without it, the count would be raised and lowered again: a
// net zero that only delays the phase).
__device__ __forceinline__ void cp_async_mbarrier_arrive_noinc(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(shared_address(bar))
               : "memory");
}

// 16 bytes from global to shared memory (both 16-byte aligned), bypassing L1 (.cg), as chapter
// 14's stages are filled. `valid` false copies nothing and writes 16 zero bytes (src-size 0): the
// rows of a tile past the end of A or B (gmem_src must still be a valid address).
__device__ __forceinline__ void cp_async_16_zfill(void* smem_dst, const void* gmem_src,
                                                  bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(smem_dst)),
               "l"(gmem_src), "r"(valid ? 16 : 0)
               : "memory");
}

// Closes a group of this thread's cp.async (PTX ISA "cp.async.commit_group").
__device__ __forceinline__ void cp_async_commit_group() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most N of this thread's committed groups are still in flight
// (PTX ISA "cp.async.wait_group"). Other threads' copies need a barrier after it.
template <int N>
__device__ __forceinline__ void cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

}  // namespace ptx
