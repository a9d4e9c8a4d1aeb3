// mbarrier: the shared-memory barrier that asynchronous copies complete on (PTX ISA 9.7.13.15,
// "Parallel Synchronization and Communication Instructions: mbarrier"):
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-mbarrier
//
// A barrier counts two things per phase: arrivals (threads calling arrive) and transaction bytes
// (announced by arrive.expect_tx, delivered by TMA's complete_tx). When both reach zero the phase
// completes and its parity bit flips; waiters ask "has the phase with parity p completed?".
#pragma once

#include <cstdint>
#include <cstdio>

#include "common/ptx/base.cuh"

namespace ptx {

__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(arrivals)
               : "memory");
}

// Issued once by the thread that ran mbarrier_init, after the last init; then every thread that
// will use the barriers must be synchronised with it (__syncthreads() in chapters 03-05; a cluster
// barrier once barriers serve a cluster). What each user of a barrier needs, by the PTX ISA
// (9.7.13.4 "membar / fence", 9.7.13.15.9 "mbarrier.init", 9.7.9.27.1.2 "cp.async.bulk.tensor",
// and the memory consistency model's proxies):
//
//   the CTA's threads   arrive and try_wait access the barrier through the generic proxy, as the
//                       init does: __syncthreads() (bar.sync) orders the init before them, which
//                       is all the ISA's own mbarrier.init example does. No fence needed.
//   TMA's complete_tx   "This instruction accesses its mbarrier operand using generic-proxy"
//                       (cp.async.bulk.tensor); only the copied data goes through the async
//                       proxy. The init reaches it by the issuing thread's program order (init,
//                       then arrive.expect_tx and the copy) or by the same __syncthreads(). So
//                       complete_tx relies on ordinary generic-proxy ordering, not on a fence.
//   other CTAs          (clusters, chapter 10) need fence.mbarrier_init.release.cluster: a
//                       release fence at cluster scope whose effect is restricted to this
//                       thread's prior mbarrier.init; it is not a proxy fence. Paired with
//                       barrier.cluster.arrive.relaxed + barrier.cluster.wait it publishes the
//                       barriers to the cluster.
//
// So: fence.mbarrier_init.release.cluster, for the cluster case (harmless before it), and
// fence.proxy.async.shared::cta, the generic <-> async proxy fence on this CTA's shared memory, in
// case any barrier state is read through the async proxy. The ISA's fence section shows that
// pattern for "release local barrier state via async proxy" (mbarrier.init;
// fence.mbarrier_init.release.cluster; a generic-to-async proxy release fence; cluster arrive),
// and DeepGEMM's kernel issues cutlass::arch::fence_view_async_shared() (this same proxy fence)
// after its inits, adding cutlass::arch::fence_barrier_init() (fence.mbarrier_init) only when it
// runs in clusters. CUTLASS's sm90 pipelines (PipelineTmaAsync::init_barriers) issue
// fence_barrier_init() alone and rely on the CTA or cluster barrier that follows. Cost: two
// instructions per CTA.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile(
      "fence.mbarrier_init.release.cluster;\n"
      "fence.proxy.async.shared::cta;\n" ::
          : "memory");
}

// One arrival, announcing `bytes` more transaction bytes for the current phase.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(bar)),
      "r"(bytes)
      : "memory");
}

__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(bar)) : "memory");
}

__device__ __forceinline__ bool mbarrier_try_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(shared_address(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

// Blocks until the phase with the given parity has completed, or traps after about a second
// (2^31 clocks) printing the barrier's name and parity: a pipeline bug then ends the program with
// a message instead of hanging the GPU. mbarrier_wait uses it in debug builds. TryWait: this
// file's try_wait, or another form of it (chapter 12's at cluster scope, ptx/cluster.cuh).
template <bool (*TryWait)(uint64_t*, uint32_t) = mbarrier_try_wait>
inline __device__ __noinline__ void mbarrier_wait_or_trap(uint64_t* bar, uint32_t parity,
                                                          const char* name) {
  const long long start = clock64();
  while (!TryWait(bar, parity)) {
    if (clock64() - start > (1ll << 31)) {
      printf("mbarrier_wait timed out: %s (parity %u) block (%d,%d) thread %d\n", name, parity,
             blockIdx.x, blockIdx.y, threadIdx.x);
      __trap();
    }
  }
}

// Blocks until the phase with the given parity has completed. Debug builds (GEMM_DEBUG, the debug
// preset) add the watchdog above. The loop is written in PTX, one asm statement (the form CUTLASS's
// ClusterBarrier::wait takes), not as a C++ loop around mbarrier_try_wait: with the C++ loop, ptxas
// emitted the test as a loop of its own (`TRYWAIT P; @!P BRA` to itself) after the promotion's
// FFMAs; with this one it issues the first test among them and branches out of line only to
// retry (cuobjdump -sass of chapter 11's 256 x 128 kernel with chapter 06's unrolled K loop).
// The braces make the label local to each inlined copy.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity,
                                              const char* name = "mbarrier") {
#ifdef GEMM_DEBUG
  mbarrier_wait_or_trap(bar, parity, name);
#else
  (void)name;
  asm volatile(
      "{\n.reg .pred p;\nWAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT;\n}\n" ::"r"(shared_address(bar)),
      "r"(parity)
      : "memory");
#endif
}

}  // namespace ptx
