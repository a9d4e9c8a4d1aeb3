// The Tensor Memory Accelerator (TMA): bulk tensor copies between global and shared memory,
// described by a CUtensorMap built on the host (common/tensor_map.hpp). PTX ISA 9.7.9.27.1.2,
// "cp.async.bulk.tensor":
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async-bulk-tensor
#pragma once

#include <cuda.h>

#include <cstdint>

#include "common/ptx/base.cuh"

namespace ptx {

// Pulls the descriptor into the TMA unit's cache ahead of the first copy.
__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// One box of a 2-D tensor at coordinates (c0 innermost, c1) into smem; completes `bar` with the
// box's byte count. Out-of-bounds elements of the box arrive as zeros (and still count).
__device__ __forceinline__ void tma_load_2d(void* smem, const CUtensorMap* map, uint64_t* bar,
                                            int32_t c0, int32_t c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(shared_address(smem)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(shared_address(bar)), "r"(c0), "r"(c1)
      : "memory");
}

// An L2 eviction policy for the copies below (PTX ISA 9.7.9.18, "createpolicy"): the lines a copy
// with this policy brings into L2 are the first candidates for replacement (`evict_first`), so
// data read once does not push out what L2 held before. An opaque 64-bit value, made per thread.
__device__ __forceinline__ uint64_t l2_policy_evict_first() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

// tma_load_2d with an L2 eviction policy (".L2::cache_hint", PTX ISA 9.7.9.27.1.2).
__device__ __forceinline__ void tma_load_2d(void* smem, const CUtensorMap* map, uint64_t* bar,
                                            int32_t c0, int32_t c1, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(shared_address(smem)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(shared_address(bar)), "r"(c0), "r"(c1), "l"(policy)
      : "memory");
}

// The same box, written into the shared memory of every CTA of the cluster whose bit is set in
// cta_mask (bit i: the CTA of %cluster_ctarank i), at the same offset `smem` in each, and
// completing the barrier at the same offset `bar` in each of them with the bytes it received
// (".multicast::cluster", same section). Each destination CTA's barrier must expect those bytes.
__device__ __forceinline__ void tma_load_2d_multicast(void* smem, const CUtensorMap* map,
                                                      uint64_t* bar, int32_t c0, int32_t c1,
                                                      uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(shared_address(smem)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(shared_address(bar)), "r"(c0), "r"(c1),
      "h"(cta_mask)
      : "memory");
}

// The same for a 3-D tensor (c0 innermost).
__device__ __forceinline__ void tma_load_3d(void* smem, const CUtensorMap* map, uint64_t* bar,
                                            int32_t c0, int32_t c1, int32_t c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(shared_address(smem)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(shared_address(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// The other direction: one box of a 2-D tensor from shared memory to global memory at coordinates
// (c0 innermost, c1). Elements of the box outside the tensor are not written, so a partial tile
// needs no special case. Completion is tracked per thread with bulk async-groups (below), not
// with an mbarrier. The shared memory must have been written through the generic proxy before a
// fence.proxy.async.shared::cta (ptx::fence_proxy_async_shared) in the writing threads and a
// barrier.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* smem, int32_t c0,
                                             int32_t c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
          reinterpret_cast<uint64_t>(map)),
      "r"(shared_address(smem)), "r"(c0), "r"(c1)
      : "memory");
}

// Closes the bulk copies this thread issued so far into one group (PTX ISA 9.0,
// "cp.async.bulk.commit_group").
__device__ __forceinline__ void bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// Waits until at most N of this thread's bulk groups are pending their reads of shared memory
// ("cp.async.bulk.wait_group.read"): after it, the shared source may be reused or released. The
// writes to global memory may still be in flight; they complete before the grid does.
template <int N>
__device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}

}  // namespace ptx
