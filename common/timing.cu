#include "common/timing.hpp"

#include <cupti.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>
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

// The kernels' own durations, from CUPTI's activity API (cupti_activity.h): kernel records, each
// with the GPU's start and end timestamps in ns, handed over in buffers that CUPTI asks for and
// returns (the two callbacks), all of them on cuptiActivityFlushAll. One process-wide recorder,
// recording only between start() and stop(); where CUPTI refuses (another profiling tool holds
// it), start() says so and nothing is recorded.
class KernelRecorder {
 public:
  static KernelRecorder& get() {
    static KernelRecorder r;
    return r;
  }
  bool start() {
    spans_.clear();
    return registered_ &&
           cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS;
  }
  void stop() {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    spans_.clear();
  }
  // Drops what is recorded so far (after flushing it), so that the next span is of new launches.
  void clear() {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    spans_.clear();
  }
  // First start to last end of the kernels since clear(), in ms; 0 if none was recorded.
  double span_ms() {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (spans_.empty()) return 0;
    uint64_t first = spans_[0].first, last = spans_[0].second;
    for (const auto& [start, end] : spans_)
      first = std::min(first, start), last = std::max(last, end);
    return double(last - first) * 1e-6;
  }
  // The sum of the kernels' own durations since clear(), in ms (the gaps between them left out).
  double sum_ms() {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    uint64_t total = 0;
    for (const auto& [start, end] : spans_) total += end - start;
    return double(total) * 1e-6;
  }

 private:
  KernelRecorder() {
    registered_ = cuptiActivityRegisterCallbacks(requested, completed) == CUPTI_SUCCESS;
  }
  static constexpr size_t kBufferBytes = size_t(1) << 20;
  static void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *max_records = 0;  // as many as fit
  }
  static void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel9*>(record);
        get().spans_.push_back({uint64_t(k->start), uint64_t(k->end)});
      }
    std::free(buffer);
  }
  bool registered_ = false;
  std::vector<std::pair<uint64_t, uint64_t>> spans_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

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
  KernelRecorder* kernels = nullptr;  // recording in the kernel-time runs only
  std::vector<double> kernel_ms;
  auto timed_run = [&] {
    flusher.flush(stream);
    if (kernels) kernels->clear();
    CUDA_CHECK(cudaEventRecord(start.get(), stream));
    launch(stream);
    CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    if (kernels) kernel_ms.push_back(opt.kernel_time_sum ? kernels->sum_ms() : kernels->span_ms());
    return double(ms);
  };

  double warm_ms = 0;
  for (int i = 0; i < std::max(opt.warmup, 1); ++i) warm_ms = timed_run();
  int runs = opt.runs;
  if (warm_ms * runs > opt.max_total_ms)
    runs = std::clamp(int(opt.max_total_ms / warm_ms), std::min(3, opt.runs), opt.runs);

  std::vector<double> ms(runs);
  for (auto& t : ms) t = timed_run();
  Timing t;
  t.runs = runs;
  t.median_ms = median(ms);

  // The kernels' own time, in as many runs again, after the events': with CUPTI recording, the
  // events of the same kernels read 0.1 to 0.4 us longer at most M = 64 and 128 shapes (two whole
  // progression runs, H100, 2026-11-24), so the events are timed without it.
  if (opt.kernel_time && KernelRecorder::get().start()) {
    kernels = &KernelRecorder::get();
    timed_run();  // the first recorded run, not counted
    kernel_ms.clear();
    for (int i = 0; i < runs; ++i) timed_run();
    kernels->stop();
    t.kernel_ms = median(kernel_ms);
  }
  return t;
}

}  // namespace gemm
