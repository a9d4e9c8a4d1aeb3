// Timing a GPU launch the way the anchors were measured: before every timed run a large memset
// flushes L2 (and gives the GPU the same pause between runs that DeepGEMM's benchmark does);
// CUDA events around the launch only; the median of many runs after warm-up.
#pragma once

#include <cuda_runtime.h>

#include <functional>

#include "common/device.hpp"
#include "common/problem.hpp"

namespace gemm {

class L2Flusher {
 public:
  // 8 GB as in the anchors' method, or a quarter of the free memory if that is less.
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
};

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int runs = 0;
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
