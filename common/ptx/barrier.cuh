// Named barriers: synchronise a subset of a CTA's warps (PTX ISA 9.0, "bar, barrier", Parallel
// Synchronization and Communication Instructions):
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-bar-barrier
//
// bar.sync id, count waits until `count` threads (a multiple of the warp size) have arrived at
// barrier `id` (0..15; __syncthreads() uses 0). One warpgroup can wait for its own four warps
// without holding up the others.
#pragma once

#include "common/ptx/base.cuh"

namespace ptx {

__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace ptx
