#include "common/arguments.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>

#include "common/check.hpp"

namespace gemm {

Extents extents(const Shape& s) {
  return {s.m * s.k, s.sa_ld() * s.k_blocks() * int64_t(sizeof(float)), s.n * s.k,
          s.n_blocks() * s.k_blocks() * int64_t(sizeof(float)), s.m * s.n * 2};
}

std::string k_error(const Shape& s, int64_t max_k, const char* who) {
  if (max_k <= 0 || s.k <= max_k) return {};
  return std::string(who) + ": K must be at most " + std::to_string(max_k) +
         ": it sums all of K in the tensor core's accumulator, whose error grows with K and passes "
         "the 1e-3 relative difference its checks hold it to beyond that; from chapter 06 on, the "
         "kernels promote the sum to fp32 every 128 (got " +
         s.str() + ")";
}

std::string grid_error(const Shape& s, int64_t block_m, int64_t block_n, const char* who) {
  if (block_m <= 0 || block_n <= 0) return {};
  const int64_t tiles_m = (s.m + block_m - 1) / block_m, tiles_n = (s.n + block_n - 1) / block_n;
  if (tiles_m > 65535 || tiles_n > (int64_t(1) << 31) - 1)
    return std::string(who) + ": M must be at most " + std::to_string(65535 * block_m) +
           " (one grid row per " + std::to_string(block_m) + " rows of D; got " + s.str() + ")";
  return {};
}

namespace {

struct Tensor {
  const char* name;
  const void* ptr;
  int align;  // 0: not read by this kernel
  int64_t bytes;
};

bool overlap(const Tensor& x, const Tensor& y) {
  const auto a = reinterpret_cast<uintptr_t>(x.ptr), b = reinterpret_cast<uintptr_t>(y.ptr);
  return a < b + uintptr_t(y.bytes) && b < a + uintptr_t(x.bytes);
}

}  // namespace

std::string pointer_error(const GemmArgs& args, const KernelNeeds& needs) {
  return pointer_error(args, needs, extents(args.shape));
}

std::string pointer_error(const GemmArgs& args, const KernelNeeds& needs, const Extents& e) {
  const Tensor d{"D", args.d, needs.align_d, e.d};
  const Tensor inputs[] = {{"A", args.a, needs.align_a, e.a},
                           {"B", args.b, needs.align_b, e.b},
                           {"scale A", args.sa, needs.align_sa, e.sa},
                           {"scale B", args.sb, needs.align_sb, e.sb}};
  const std::string who = std::string(needs.who) + ": ";
  for (const Tensor& t : {inputs[0], inputs[1], inputs[2], inputs[3], d}) {
    if (t.align == 0) continue;
    if (!t.ptr) return who + "the pointer to " + t.name + " is null";
    if (reinterpret_cast<uintptr_t>(t.ptr) % uintptr_t(t.align) != 0)
      return who + "the pointer to " + t.name + " must be " + std::to_string(t.align) +
             "-byte aligned (its loads and stores are " + std::to_string(t.align) +
             " bytes wide); it is " +
             std::to_string(reinterpret_cast<uintptr_t>(t.ptr) % uintptr_t(t.align)) +
             " bytes past a boundary";
  }
  for (const Tensor& t : inputs)
    if (t.align != 0 && overlap(d, t))
      return who + "D overlaps " + t.name + ": the kernel would overwrite its own input";
  return {};
}

std::string device_error() {
  int device = 0;
  if (cudaError_t err = cudaGetDevice(&device); err != cudaSuccess) {
    cudaGetLastError();
    return std::string("no usable CUDA device (cudaGetDevice: ") + cudaGetErrorString(err) + ")";
  }
  static std::mutex mutex;
  static std::map<int, std::string> known;
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto it = known.find(device); it != known.end()) return it->second;
  int major = 0, minor = 0;
  std::string why;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();
    why = "cannot query CUDA device " + std::to_string(device);
  } else if (major != 9 || minor != 0) {
    why = "device " + std::to_string(device) + " is sm_" + std::to_string(major) +
          std::to_string(minor) + "; these kernels are built for sm_90a (Hopper) only";
  }
  known[device] = why;
  return why;
}

void check_arguments(const GemmArgs& args, const KernelNeeds& needs) {
  if (std::string why = shape_error(args.shape); !why.empty())
    throw UnsupportedError(std::string(needs.who) + ": " + why);
  if (std::string why = k_error(args.shape, needs.max_k, needs.who); !why.empty())
    throw UnsupportedError(why);
  if (std::string why = grid_error(args.shape, needs.block_m, needs.block_n, needs.who);
      !why.empty())
    throw UnsupportedError(why);
  if (std::string why = pointer_error(args, needs); !why.empty()) throw UnsupportedError(why);
  if (std::string why = device_error(); !why.empty())
    throw UnsupportedError(std::string(needs.who) + ": " + why);
}

}  // namespace gemm
