#include "chapters/registry.hpp"

// Each chapter's kernel.cu defines chNN::gemm.
namespace ch00 {
void gemm(const gemm::GemmArgs&, cudaStream_t);
}
namespace ch02 {
void gemm(const gemm::GemmArgs&, cudaStream_t);
}
namespace ch03 {
void gemm(const gemm::GemmArgs&, cudaStream_t);
}
namespace ch04 {
void gemm(const gemm::GemmArgs&, cudaStream_t);
}
namespace ch05 {
void gemm(const gemm::GemmArgs&, cudaStream_t);
}

namespace gemm {

namespace {
Tolerance fp32_cuda_cores(const Shape& s) {
  return fp32_accumulation_tolerance(s.k);
}
// Chapters 02-05 accumulate all of K inside the tensor core's fp32-ish accumulator.
Tolerance tensor_cores_all_k(const Shape& s) {
  return tensor_core_fp8_tolerance(s.k, s.k);
}
}  // namespace

const std::vector<Chapter>& chapters() {
  static const std::vector<Chapter> list = {
      {0, "00_reference",
       "naive CUDA kernel: one thread per output, fp32 accumulation of dequantised values",
       ch00::gemm, true, false, fp32_cuda_cores, kRelDiffFp32},
      {1, "01_wgmma_m64n8k16",
       "one wgmma m64n8k16 (bf16) from shared memory with hand-built matrix descriptors", nullptr,
       false, false, nullptr, 0.0},
      {2, "02_wgmma_fp8_gemm",
       "fp8 wgmma m64n128k32 over a 128x128 tile, operands staged by ordinary loads", ch02::gemm,
       false, false, tensor_cores_all_k, kRelDiffTensorCore},
      {3, "03_tma_mbarrier",
       "TMA loads (3-D view into core matrices) completing on an mbarrier with expect_tx",
       ch03::gemm, false, true, tensor_cores_all_k, kRelDiffTensorCore},
      {4, "04_swizzle_128b", "128-byte swizzle: TMA writes it, the wgmma descriptor reads it",
       ch04::gemm, false, true, tensor_cores_all_k, kRelDiffTensorCore},
      {5, "05_warp_specialized_pipeline",
       "a ring of stages with full/empty barriers, a TMA producer warpgroup, setmaxnreg",
       ch05::gemm, false, true, tensor_cores_all_k, kRelDiffTensorCore},
  };
  return list;
}

const Chapter* find_chapter(int number) {
  for (const Chapter& c : chapters())
    if (c.number == number) return &c;
  return nullptr;
}

const Chapter* previous_gemm(const Chapter& c) {
  const Chapter* prev = nullptr;
  for (const Chapter& p : chapters())
    if (p.number < c.number && p.launch) prev = &p;
  return prev;
}

}  // namespace gemm
