// An optional timeline of what a kernel's warpgroups did, for the pictures in chapters 05 and 09.
//
// A kernel given a trace buffer (GemmArgs::trace, nullptr by default) writes the %globaltimer
// (PTX ISA 10.29, "Special Registers: %globaltimer", a 64-bit nanosecond clock common to all SMs)
// at a few points of its loop, for the first kTraceCtas CTAs only. The host zeroes the buffer, runs
// the kernel once, downloads it and draws the stamps that are not zero (trace_svg).
//
// Tracing is a compile-time choice: a kernel that can record takes `bool kTrace` as a template
// parameter, its launch picks gemm_kernel<true> only when GemmArgs::trace is given, and
// trace_stamp<false> compiles to nothing. A run-time test of the pointer instead (one uniform
// branch in the source) left 20 to 40 instructions per K block in the compiled loop and cost
// chapter 10 about 5% at 4096 x 7168 x 16384 (measured: chapter 06's NOTES.md,
// "2. The cycle accounting of 2026-11-23").
//
// Slot of a stamp: ((cta * kTraceEvents + event) * kTraceLanes + lane) * kTraceSteps + step,
// where lane is the warpgroup (the producer is lane kTraceLanes - 1) and step the loop iteration.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gemm {

enum TraceEvent : int {
  kTraceTmaIssued,      // producer: the TMA loads of a stage were issued
  kTraceFullDone,       // math warpgroup: its wait on the stage's full barrier returned
  kTraceMathDone,       // math warpgroup: its wgmma group for the stage completed (wait returned)
  kTraceEpilogueBegin,  // math warpgroup: the epilogue of a tile began
  kTraceEpilogueEnd,    // math warpgroup: the epilogue of a tile ended
  kTraceEvents
};
inline constexpr int kTraceCtas = 2;
inline constexpr int kTraceLanes = 4;  // up to three math warpgroups and the producer
inline constexpr int kTraceSteps = 4096;
inline constexpr int64_t kTraceSlots =
    int64_t(kTraceCtas) * kTraceEvents * kTraceLanes * kTraceSteps;

inline constexpr int64_t trace_slot(int cta, int event, int lane, int step) {
  return ((int64_t(cta) * kTraceEvents + event) * kTraceLanes + lane) * kTraceSteps + step;
}

#ifdef __CUDACC__
template <bool kEnabled>
__device__ __forceinline__ void trace_stamp(uint64_t* trace, TraceEvent event, int lane, int step) {
  if constexpr (!kEnabled) return;
  if (trace == nullptr) return;
  const unsigned cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  if (cta >= unsigned(kTraceCtas) || step >= kTraceSteps) return;
  uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  trace[trace_slot(int(cta), event, lane, step)] = now;
}
#endif

// An SVG timeline of a downloaded trace: for each traced CTA, one row per lane; the producer's
// TMA issues as ticks, each math warpgroup's stage as a bar from its full-barrier wait to its
// wgmma completion, epilogues as bars of their own. Throws gemm::Error when nothing was recorded.
void trace_svg(const std::vector<uint64_t>& stamps, const std::string& title,
               const std::string& path);

// The stamps a trace recorded, for tests and summaries: how many are non-zero.
int64_t trace_count(const std::vector<uint64_t>& stamps);

}  // namespace gemm
