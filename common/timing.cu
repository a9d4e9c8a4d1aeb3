#include "common/timing.hpp"

#include <algorithm>
#include <vector>

namespace gemm {

L2Flusher::L2Flusher(size_t bytes) {
  size_t free_bytes = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  buffer_ = DeviceBuffer<unsigned char>(std::min(bytes, free_bytes / 4));
}

void L2Flusher::flush(cudaStream_t stream) const {
  CUDA_CHECK(cudaMemsetAsync(buffer_.get(), 0, buffer_.size(), stream));
}

namespace {
class Event {
 public:
  Event() { CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_{};
};
}  // namespace

Timing time_launch(const std::function<void(cudaStream_t)>& launch, const L2Flusher& flusher,
                   cudaStream_t stream, const TimingOptions& opt) {
  Event start, stop;
  auto timed_run = [&] {
    flusher.flush(stream);
    CUDA_CHECK(cudaEventRecord(start.get(), stream));
    launch(stream);
    CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    return double(ms);
  };

  double warm_ms = 0;
  for (int i = 0; i < std::max(opt.warmup, 1); ++i) warm_ms = timed_run();
  int runs = opt.runs;
  if (warm_ms * runs > opt.max_total_ms)
    runs = std::clamp(int(opt.max_total_ms / warm_ms), std::min(3, opt.runs), opt.runs);

  std::vector<double> ms(runs);
  for (auto& t : ms) t = timed_run();
  std::sort(ms.begin(), ms.end());
  Timing t;
  t.runs = runs;
  t.median_ms = runs % 2 ? ms[runs / 2] : 0.5 * (ms[runs / 2 - 1] + ms[runs / 2]);
  return t;
}

}  // namespace gemm
