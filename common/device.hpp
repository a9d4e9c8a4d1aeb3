// Device memory and the device-side copy of a problem.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/arguments.hpp"
#include "common/check.hpp"
#include "common/inputs.hpp"

namespace gemm {

// Empty when device 0 is a Hopper GPU (compute capability 9.0) these kernels can run on;
// otherwise one line saying what is missing, e.g. "no CUDA device (cudaGetDeviceCount: ...)".
std::string hopper_unavailable_reason();
// Throws gemm::Error with that line.
void require_hopper();

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (count) CUDA_CHECK(cudaMalloc(&ptr_, count * sizeof(T)));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }

  T* get() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throw Error("DeviceBuffer::upload: size mismatch");
    CUDA_CHECK(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    CUDA_CHECK(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

// The grid of a kernel that gives each CTA one block_m x block_n tile of D: x walks N, y walks M.
// Throws UnsupportedError when M needs more than the 65535 blocks grid.y allows (grid_error).
inline dim3 tile_grid(const Shape& s, int64_t block_m, int64_t block_n, const char* who) {
  if (std::string why = grid_error(s, block_m, block_n, who); !why.empty())
    throw UnsupportedError(why);
  return dim3(unsigned((s.n + block_n - 1) / block_n), unsigned((s.m + block_m - 1) / block_m));
}

// Writes kPoisonBits (common/reference.hpp) into count bf16 values at d, on stream.
void poison_bf16(bf16* d, size_t count, cudaStream_t stream = nullptr);

// A HostProblem on the device, with an output buffer D.
class DeviceProblem {
 public:
  explicit DeviceProblem(const HostProblem& p);

  const Shape& shape() const { return shape_; }
  GemmArgs args() const { return {shape_, a_.get(), sa_.get(), b_.get(), sb_.get(), d_.get()}; }
  // Fills D with kPoisonBits, so a check can tell "never written" from "written wrong".
  void poison(cudaStream_t stream = nullptr) const;
  // D as bf16 bit patterns, M x N row-major (synchronises).
  std::vector<uint16_t> download_d() const;

 private:
  Shape shape_;
  DeviceBuffer<fp8> a_, b_;
  DeviceBuffer<float> sa_, sb_;
  DeviceBuffer<bf16> d_;
};

}  // namespace gemm
