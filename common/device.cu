#include "common/device.hpp"

#include "common/reference.hpp"

namespace gemm {

namespace {
__global__ void fill_u16(uint16_t* p, size_t count, uint16_t bits) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) p[i] = bits;
}
}  // namespace

std::string hopper_unavailable_reason() {
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so later calls see a clean state
    return std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")";
  }
  if (count == 0) return "no CUDA device";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return "cannot query CUDA device 0";
  if (prop.major != 9 || prop.minor != 0)
    return std::string("device 0 (") + prop.name + ") is sm_" + std::to_string(prop.major) +
           std::to_string(prop.minor) + "; these kernels are built for sm_90a (Hopper) only";
  return {};
}

void require_hopper() {
  if (std::string why = hopper_unavailable_reason(); !why.empty()) throw Error(why);
}

DeviceProblem::DeviceProblem(const HostProblem& p)
    : shape_(p.shape), a_(p.a), b_(p.b), sa_(p.sa), sb_(p.sb), d_(size_t(p.shape.m * p.shape.n)) {}

void poison_bf16(bf16* d, size_t count, cudaStream_t stream) {
  if (count == 0) return;
  fill_u16<<<unsigned((count + 255) / 256), 256, 0, stream>>>(reinterpret_cast<uint16_t*>(d), count,
                                                              kPoisonBits);
  CUDA_CHECK_LAUNCH();
}

void DeviceProblem::poison(cudaStream_t stream) const {
  poison_bf16(d_.get(), d_.size(), stream);
}

std::vector<uint16_t> DeviceProblem::download_d() const {
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint16_t> host(d_.size());
  CUDA_CHECK(cudaMemcpy(host.data(), d_.get(), d_.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

}  // namespace gemm
