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
// `cta_rank` of this cluster (this CTA's own rank works too): mapa turns this CTA's address into
// that CTA's shared::cluster address.
//
// Its memory order is release at CTA scope, the ISA's default for mbarrier.arrive, as for a local
// arrival. What a math warp's arrival must order before the producers refill the stage: its
// wgmma reads of the A and B tiles, and its ld.shared of the A scales. The scales only this CTA's
// own producer overwrites, which the CTA-scope release covers. The multicast half of A or B the
// partner's producer overwrites, and there the memory model gives no guarantee: a release at CTA
// scope does not synchronise with an acquire in another CTA. What makes the overwrite safe is that
// the reads are over before the arrival is issued: wgmma.wait_group has returned (PTX ISA,
// "wgmma.wait_group": the wgmma operations, their reads of shared memory included, are complete).
// CUTLASS's ClusterBarrier::arrive(cta_id) and DeepGEMM use the same default order. Asked for a
// release at cluster scope (mbarrier.arrive.release.cluster), ptxas puts MEMBAR.ALL.CTA and
// MEMBAR.ALL.GPU before every arrival (SASS of chapter 10 by cuobjdump 13.5): a GPU-scope fence,
// which would also wait for the scale-B load of the next K block that the math warps have in
// flight.
__device__ __forceinline__ void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta_rank) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.release.cta.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(shared_address(bar)),
      "r"(cta_rank)
      : "memory");
}

}  // namespace ptx
