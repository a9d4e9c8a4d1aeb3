// Timing a GPU launch the way DeepGEMM's own benchmark times its kernels (bench_kineto in
// deep_gemm/testing/bench.py), so that the numbers compare with DeepGEMM's published ones: before
// every timed run an 8 GB memset flushes L2 (and gives the GPU the same pause between runs); CUDA
// events around the launch only; the median of many runs after warm-up.
//
// Where asked (TimingOptions::kernel_time, the progression benchmark), also the kernels' own
// durations, from CUPTI's activity records: what bench_kineto reads from the profiler, and what
// the bracketed kernel times of DeepGEMM in docs/method.md are. Events add a launch overhead that
// took one of two values in one process, about 2.4 or 3.0 us, depending on what the process had
// timed before: two kernels with the same SASS read 0.35 to 0.90 us apart by events and within
// 0.3 us by CUPTI (H100, 2026-11-24; chapter 12's NOTES.md,
// "Remeasured, 2026-11-24, with the relaxed cluster barriers and the new rule"). It is not this
// harness nor anything our kernels ask of the launch: a kernel that only spins reads 2.2 to 2.5 us
// above CUPTI here and in PyTorch, whatever its shared memory, cluster, parameters or stores, and
// DeepGEMM's kernels 2.2 to 2.8 at M = 64 and 128, timed beside ours (H100, 2026-11-25; the same
// NOTES.md, "What the events add").
#pragma once

#include <cuda_runtime.h>

#include <functional>

#include "common/device.hpp"
#include "common/problem.hpp"

namespace gemm {

class L2Flusher {
 public:
  // 8 GB as DeepGEMM's benchmark uses, or a quarter of the free memory if that is less.
  explicit L2Flusher(size_t bytes = size_t(8) << 30);
  void flush(cudaStream_t stream) const;
  size_t bytes() const { return buffer_.size(); }

 private:
  DeviceBuffer<unsigned char> buffer_;
};

struct TimingOptions {
  int warmup = 3;
  int runs = 30;
  // A kernel slower than this budget allows gets fewer runs (at least 3), so that the reference
  // kernel does not hold the benchmark up for minutes. The count used is reported.
  double max_total_ms = 3000.0;
  // Also the kernels' own time through CUPTI, in as many runs again after the event-timed ones:
  // Timing::kernel_ms.
  bool kernel_time = false;
  // With kernel_time: each run's kernel time is the sum of its kernels' durations instead of the
  // span from the first one's start to the last one's end. For a launch of several kernels one
  // after another (the progression benchmark's dense_per_group rows: chapter 13 once per group),
  // where the span would also count the gaps between them.
  bool kernel_time_sum = false;
};

struct Timing {
  double median_ms = 0;
  int runs = 0;  // how many timed runs the median is of (fewer than asked for a slow kernel)
  // With kernel_time: the median over its own runs of the span from the first kernel's start to
  // the last one's end (a peer may launch two), or with kernel_time_sum of the sum of the kernels'
  // durations, from CUPTI; 0 where not asked for, or where CUPTI could not record (another tool
  // holding it: ncu, compute-sanitizer).
  double kernel_ms = 0;
};

// launch(stream) must enqueue exactly the work to time on that stream and check its launch.
Timing time_launch(const std::function<void(cudaStream_t)>& launch, const L2Flusher& flusher,
                   cudaStream_t stream, const TimingOptions& opt = {});

inline double tflops(const Shape& s, double ms) {
  return s.flops() / (ms * 1e-3) / 1e12;
}
inline double gbps(const Shape& s, double ms) {
  return s.min_bytes() / (ms * 1e-3) / 1e9;
}

}  // namespace gemm
