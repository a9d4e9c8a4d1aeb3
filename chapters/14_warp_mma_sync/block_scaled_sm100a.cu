// Chapter 14's tcgen05.mma ... block_scale, for sm_100a only: compiled to a cubin by the build
// (chapters/CMakeLists.txt), never run here (the book's GPU is an H100). tests/host_chapter14.cpp
// reads the cubin for its UTCQMMA with scale operands. The kernel is the skeleton of one MMA: a
// warp allocates tensor memory, one thread issues the block-scaled MMA on operands described by
// the caller (descriptors and instruction descriptor as arguments; the scale factors already in
// TMEM columns 128 and 160), tcgen05.commit arrives on an mbarrier when it completes, and the
// warp frees the memory. No data is loaded or stored.
#include <cstdint>

#include "common/ptx/mbarrier.cuh"
#include "common/ptx/tcgen05.cuh"

__global__ void block_scaled_tcgen05(uint64_t desc_a, uint64_t desc_b, uint32_t idesc,
                                     uint32_t* tmem_out) {
  __shared__ uint32_t tmem_slot;
  __shared__ uint64_t done;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&done, 1);
    ptx::fence_barrier_init();
  }
  constexpr uint32_t kColumns = 256;  // D 128 x 128 fp32 in columns 0-127; the scales after it
  if (threadIdx.x < 32)
    ptx::tcgen05_alloc<kColumns>(uint32_t(__cvta_generic_to_shared(&tmem_slot)));
  __syncthreads();
  const uint32_t tmem = tmem_slot;
  if (threadIdx.x == 0) {
    ptx::tcgen05_mma_mxf8f6f4_block_scale(tmem, desc_a, desc_b, idesc, tmem + 128, tmem + 160,
                                          false);
    ptx::tcgen05_commit(uint32_t(__cvta_generic_to_shared(&done)));
  }
  ptx::mbarrier_wait(&done, 0);
  __syncthreads();
  if (threadIdx.x < 32) ptx::tcgen05_dealloc<kColumns>(tmem);
  if (threadIdx.x == 0) *tmem_out = tmem;
}
