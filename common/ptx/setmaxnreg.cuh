// setmaxnreg: move registers between the warpgroups of a CTA at run time (PTX ISA 9.7.19.5,
// "Miscellaneous Instructions: setmaxnreg"):
// https://docs.nvidia.com/cuda/parallel-thread-execution/#miscellaneous-instructions-setmaxnreg
//
// What the ISA says:
//   - the CTA keeps a pool of free registers; setmaxnreg.dec releases a warp's registers above
//     the new per-thread count into it, setmaxnreg.inc takes them from it;
//   - setmaxnreg.inc blocks until the pool holds enough, and the registers it obtains start
//     undefined;
//   - the same setmaxnreg must be executed by all warps of a warpgroup (.sync.aligned), or the
//     behaviour is undefined;
//   - the count is a multiple of 8 in [24, 256]; .dec must not raise and .inc must not lower the
//     warp's current count;
//   - the kernel must have been compiled with a valid maximum register count (a compile option or
//     a launch-bounds directive), "otherwise, the setmaxnreg instruction may have no effect".
// Hence the exchange must balance: the math warpgroups' inc can only take what the producer's dec
// put into the pool (plus whatever was free), or the inc waits forever.
//
// What ptxas adds (its behaviour, not the ISA's): __launch_bounds__(threads, 1), with the minimum
// of one CTA per SM, fixes the count at entry to 65536 / threads rounded down to a multiple of 8,
// and setmaxnreg starts from that count. Without a minimum ptxas cannot know the count at entry
// and drops every setmaxnreg, saying so only in its verbose output (-Xptxas -v, which the chapters
// build with): "(C7508) Potential Performance Loss: 'setmaxnreg' ignored; unable to determine
// register count at entry".
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
