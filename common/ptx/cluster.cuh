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
#include "common/ptx/mbarrier.cuh"

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
// thread leave early. No chapter's kernel uses it since chapter 10 left its clusters by the
// producer's last round of empty waits instead (2026-11-27); chapter 10's "Try this" puts it back
// at the exit, to measure what it cost.
__device__ __forceinline__ void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release;\n"
      "barrier.cluster.wait.acquire;\n" ::
          : "memory");
}

// cluster_sync with the arrival relaxed (PTX ISA, "barrier.cluster": with .relaxed, "no memory
// ordering and visibility guarantees" for what the thread did before it); the wait keeps its
// default, acquire. What a kernel's start needs ordered is only the barrier inits, and
// fence.mbarrier_init.release.cluster (fence_barrier_init, ptx/mbarrier.cuh) is the ISA's
// light-weight fence for exactly that, to be followed by a relaxed arrival ("membar / fence").
// By the SASS (cuobjdump 13.0): cluster_sync is MEMBAR.ALL.CTA, MEMBAR.ALL.GPU, ERRBAR, CGAERRBAR,
// UCGABAR_ARV, UCGABAR_WAIT, CCTL.IVALL; this is UCGABAR_ARV, UCGABAR_WAIT, CCTL.IVALL. The traces
// of chapter 12 measured 1.5 to 2 us from a CTA's first instruction to the end of cluster_sync at
// its start, 0.3 us with this (chapter 10's NOTES.md,
// "The start's cluster barrier, relaxed (2026-11-24)"). Every thread must execute it, as
// cluster_sync.
__device__ __forceinline__ void cluster_sync_relaxed() {
  asm volatile(
      "barrier.cluster.arrive.relaxed;\n"
      "barrier.cluster.wait;\n" ::
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

// The shared::cluster address of the object at the same offset as `p` in the CTA of rank
// `cta_rank` (mapa, as in mbarrier_arrive_cluster), for a kernel that reaches the same CTA's
// barriers many times: mapped once, then offset (chapter 15).
__device__ __forceinline__ uint32_t map_shared_cluster(const void* p, uint32_t cta_rank) {
  uint32_t remote;
  asm("mapa.shared::cluster.u32 %0, %1, %2;\n"
      : "=r"(remote)
      : "r"(shared_address(p)), "r"(cta_rank));
  return remote;
}

// One arrival on the mbarrier at that shared::cluster address, with mbarrier_arrive_cluster's
// memory order (release at CTA scope; its comment says why that is enough).
__device__ __forceinline__ void mbarrier_arrive_remote(uint32_t remote_bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cluster.b64 _, [%0];\n" ::"r"(remote_bar)
               : "memory");
}

// --- Distributed shared memory (chapter 12) ------------------------------------------------------
//
// Chapter 12's CTAs add each other's partial sums: each sends the others the sums they reduce,
// straight into their shared memory (st.async), and reads what it received from its own. Two
// orders matter (PTX ISA, "Memory Consistency Model": a release and an acquire synchronise only if
// each one's scope includes the other thread, so both are at cluster scope):
//
//   "written"  the sender's st.async, whose complete-tx on the receiver's barrier releases at
//              cluster scope; the receiver's wait on that barrier, then its ld.shared of the sums.
//   "read"     the receiver's ld.shared, then its arrival on the sender's barrier; the sender's
//              wait, then its next tile's st.async over the same bytes.
//
// After the loads each thread fences once, fence.acq_rel.cluster, and then arrives, relaxed, on the
// barrier of every CTA of the cluster; after a wait, fence.acquire.sync_restrict::shared::cluster
// .cluster (PTX ISA, "membar / fence"). By the SASS (cuobjdump 13.0): a GPU-wide MEMBAR.ALL.GPU for
// the first, nothing for the second; mbarrier.arrive.release.cluster would put the GPU-wide fence
// before every arrival, and try_wait.acquire.cluster an L1 invalidation (CCTL.IVALL) after every
// completed wait.

// Everything this thread did so far (its loads of the sums received included), ordered at cluster
// scope before its next arrivals.
__device__ __forceinline__ void fence_acq_rel_cluster() {
  asm volatile("fence.acq_rel.cluster;\n" ::: "memory");
}

// One relaxed arrival on the mbarrier at the offset of `bar` in the CTA of rank `cta_rank` (PTX
// ISA, "mbarrier.arrive": .relaxed, .cluster, .shared::cluster): the fence before it orders.
__device__ __forceinline__ void mbarrier_arrive_cluster_relaxed(uint64_t* bar, uint32_t cta_rank) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(shared_address(bar)),
      "r"(cta_rank)
      : "memory");
}

// Whether the phase with the given parity of this CTA's barrier has completed (relaxed, at cluster
// scope: the fence in mbarrier_wait_cluster acquires).
__device__ __forceinline__ bool mbarrier_try_wait_cluster(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.relaxed.cluster.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(shared_address(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

// Blocks until that phase has completed, then acquires at cluster scope, for this thread's shared
// memory accesses after it, what the arrivals' fences (or the st.async stores' complete-tx)
// released (debug builds, GEMM_DEBUG: with mbarrier_wait's watchdog, ptx/mbarrier.cuh).
__device__ __forceinline__ void mbarrier_wait_cluster(uint64_t* bar, uint32_t parity,
                                                      const char* name = "mbarrier") {
#ifdef GEMM_DEBUG
  mbarrier_wait_or_trap<mbarrier_try_wait_cluster>(bar, parity, name);
#else
  (void)name;
  while (!mbarrier_try_wait_cluster(bar, parity)) {
  }
#endif
  asm volatile("fence.acquire.sync_restrict::shared::cluster.cluster;\n" ::: "memory");
}

// 16 bytes stored at the offset of `local` in the shared memory of the CTA of rank `cta_rank`,
// completing 16 bytes of the transaction count of that CTA's mbarrier at the offset of `bar` (PTX
// ISA, "st.async": a weak store into distributed shared memory whose mbarrier complete-tx has
// release semantics at cluster scope; sm_90, PTX 8.1). The thread does not wait for it: the
// receiver's barrier, expecting the bytes of every such store, completes once they have all
// landed, and a wait at cluster scope on it (mbarrier_wait_cluster) then sees them.
__device__ __forceinline__ void st_async_v4(float* local, uint64_t* bar, uint32_t cta_rank,
                                            float4 v) {
  asm volatile(
      "{\n"
      ".reg .b32 remote, remote_bar;\n"
      "mapa.shared::cluster.u32 remote, %0, %2;\n"
      "mapa.shared::cluster.u32 remote_bar, %1, %2;\n"
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [remote], {%3, %4, %5, %6}, "
      "[remote_bar];\n"
      "}\n" ::"r"(shared_address(local)),
      "r"(shared_address(bar)), "r"(cta_rank), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
      : "memory");
}

}  // namespace ptx
