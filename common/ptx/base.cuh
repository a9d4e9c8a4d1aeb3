// What every PTX wrapper needs: the shared-memory address of a generic pointer, and the sizes of
// the execution groups the instructions are defined for (PTX ISA 2.2, "Thread Hierarchy"; a
// warpgroup is four contiguous warps, PTX ISA 9.7.15.1, "Warpgroup"). Section numbers here and in
// the other wrappers are those of PTX ISA 9.0, the version CUDA 13.0 implements. The sizes are
// plain constants that host code (tests, pictures, layout arithmetic) includes too; only
// shared_address needs nvcc.
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
#endif

}  // namespace ptx
