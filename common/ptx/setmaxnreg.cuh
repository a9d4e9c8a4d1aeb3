// setmaxnreg: move registers between the warpgroups of a CTA at run time (PTX ISA 9.7.17.1,
// "setmaxnreg"):
// https://docs.nvidia.com/cuda/parallel-thread-execution/#miscellaneous-instructions-setmaxnreg
//
// The kernel starts with the per-thread cap of its launch bounds; a warpgroup that needs few
// registers (the TMA producer) gives some back with dec, and the math warpgroups take them with
// inc. Takes effect only with a cap at entry (__launch_bounds__(threads, 1)) and when every warp of
// the warpgroup executes it; the count must be a multiple of 8 in [24, 256].
#pragma once

namespace ptx {

template <int kRegisters>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(kRegisters % 8 == 0 && kRegisters >= 24 && kRegisters <= 256, "see PTX ISA");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

template <int kRegisters>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(kRegisters % 8 == 0 && kRegisters >= 24 && kRegisters <= 256, "see PTX ISA");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

}  // namespace ptx
