// Thin wrappers over the warpgroup MMA instructions and their ordering fences (PTX ISA 9.7.15,
// "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions"):
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-instructions
//
// The protocol, for every batch of wgmma:
//   wgmma_fence()          order earlier accesses to the accumulator registers before the MMA
//   wgmma ... (async)      issue one or more MMAs
//   wgmma_commit_group()   close the batch
//   wgmma_wait<N>()        block until at most N batches are still in flight
// and before any of this, shared memory written by ordinary stores must be made visible to the
// async proxy the tensor cores read through: fence_proxy_async_shared() in the writing threads,
// then a barrier.
#pragma once

#include <cstdint>

#include "common/ptx/base.cuh"
#include "common/ptx/descriptor.hpp"
#include "common/ptx/wgmma_fp8.cuh"

namespace ptx {

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  static_assert(N >= 0 && N <= 7, "wgmma.wait_group takes 0..7");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// The accumulator registers are written by the asynchronous MMA behind the compiler's back: this
// tells it they may have changed, so it neither caches nor reorders reads of them across a wait.
template <int R>
__device__ __forceinline__ void fence_accumulators(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// fence.proxy.async.shared::cta (PTX ISA 9.7.13.4, "membar / fence"): orders this thread's earlier
// generic-proxy writes to shared memory before later async-proxy reads (wgmma, TMA store).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

}  // namespace ptx
