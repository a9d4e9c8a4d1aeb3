// What every PTX wrapper needs: the shared-memory address of a generic pointer, and the sizes of
// the execution groups the instructions are defined for (PTX ISA 2.2, "Thread Hierarchy"; a
// warpgroup is four contiguous warps, PTX ISA 9.7.15.1, "Warpgroup"). Section numbers here and in
// the other wrappers are those of PTX ISA 9.0, the version CUDA 13.0 implements. The sizes are
// plain constants that host code (tests, pictures, layout arithmetic) includes too; only
// shared_address and the shared loads need nvcc.
#pragma once

#include <cstdint>

namespace ptx {

inline constexpr int kWarpSize = 32;
inline constexpr int kWarpgroupSize = 4 * kWarpSize;  // the threads that issue one wgmma together

#ifdef __CUDACC__
// cvta.to.shared: the 32-bit shared-state-space address that mbarrier, TMA and wgmma descriptors
// take (PTX ISA 9.7.9.20, "cvta").
__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ld.shared: a load from a 32-bit shared-state-space address (PTX ISA 9.7.9.8, "ld"). Through a
// generic pointer, the compiler converts the address to shared space before the load; in chapters
// 06-12's K loops ptxas redid that conversion (`S2UR` of the CTA's shared window, then `ULEA`, in
// the SASS) before nearly every block's scale loads. An address converted once with
// shared_address only adds an offset. volatile: NVVM keeps the loads in order with the other asm
// statements around them (the barrier wait before, the wgmmas after); the SASS order is ptxas's.
__device__ __forceinline__ float ld_shared_f32(uint32_t address) {
  float x;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(x) : "r"(address));
  return x;
}
// Two floats at once (ld.shared.v2.f32); the address must be 8-byte aligned.
__device__ __forceinline__ float2 ld_shared_v2_f32(uint32_t address) {
  float2 x;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(x.x), "=f"(x.y) : "r"(address));
  return x;
}
#endif

}  // namespace ptx
