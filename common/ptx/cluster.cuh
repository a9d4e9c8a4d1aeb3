// Thread block clusters (sm_90): the CTAs of one cluster run at the same time on one GPC and can
// reach each other's shared memory ("distributed shared memory"). Chapter 10 uses three things:
// a CTA's rank in its cluster, the cluster-wide barrier, and an mbarrier arrival on another CTA's
// barrier.
//
// PTX ISA 9.0, by section title: "Special Registers: %cluster_ctarank"; "Parallel Synchronization
// and Communication Instructions: barrier.cluster"; "Data Movement and Conversion Instructions:
// mapa"; "Parallel Synchronization and Communication Instructions: mbarrier.arrive" (its
// .shared::cluster form).
#pragma once

#include <cstdint>

#include "common/ptx/base.cuh"

namespace ptx {

// This CTA's rank in its cluster, 0 .. cluster size - 1 (0 in a launch without clusters: every
// CTA is then a cluster of one).
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

// Every thread of every CTA of the cluster arrives, then waits for all the others. The arrive
// releases and the wait acquires at cluster scope, so the shared-memory writes (and barrier inits,
// after fence.mbarrier_init) before it are visible to every CTA of the cluster after it. Every
// thread must execute it: a thread that has exited cannot arrive, so kernels that use it let no
// thread leave early.
__device__ __forceinline__ void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release;\n"
      "barrier.cluster.wait.acquire;\n" ::
          : "memory");
}

// One arrival on the mbarrier at the same shared-memory offset as `bar`, in the CTA of rank
// `cta_rank` of this cluster (this CTA's own rank works too). mapa turns this CTA's address into
// that CTA's shared::cluster address; the arrival releases at cluster scope, so this thread's
// earlier reads of the stage are ordered before the producer over there overwrites it.
__device__ __forceinline__ void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta_rank) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(shared_address(bar)),
      "r"(cta_rank)
      : "memory");
}

}  // namespace ptx
