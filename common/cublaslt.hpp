// The peers every chapter is measured beside: three cuBLASLt GEMMs on the same D = A * B^T.
//
//   BlockScaled: fp8, A scaled per 1x128 (VEC128_32F), B per 128x128 (BLK128x128_32F); the same
//                problem our kernels solve from chapter 06 on.
//   PerTensor:   fp8 with one scale per tensor (1.0 here): the unscaled product of chapters 02-05.
//   Bf16:        bf16 operands holding the dequantised values; what FP8 has to beat.
//
// cuBLASLt is column-major, we are row-major. D (M x N, row-major) is D^T (N x M, column-major),
// and D^T = B * A^T where B (N x K row-major) is a K x N column-major matrix used transposed and A
// (M x K row-major) a K x M column-major one used as is: the "TN" form FP8 requires.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>

#include "common/device.hpp"
#include "common/problem.hpp"

namespace gemm {

enum class Peer { BlockScaled, PerTensor, Bf16 };
inline constexpr Peer kAllPeers[] = {Peer::BlockScaled, Peer::PerTensor, Peer::Bf16};

const char* peer_name(Peer p);  // short, for tables: "cublasLt-blk", ...

class CublasLtGemm {
 public:
  // Prepares descriptors and operands and picks cuBLASLt's top heuristic algorithm; args' buffers
  // must outlive this object. Throws UnsupportedError if cuBLASLt has no algorithm for the shape
  // (block-scaled FP8 has none for M % 4 != 0 on cuBLASLt 13.1), gemm::Error if a call fails.
  CublasLtGemm(Peer peer, const GemmArgs& args);
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  // Writes D of the args given at construction.
  void run(cudaStream_t stream) const;

 private:
  Peer peer_;
  GemmArgs args_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, d_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  DeviceBuffer<unsigned char> workspace_;
  DeviceBuffer<bf16> a_bf16_, b_bf16_;  // Bf16 only
  DeviceBuffer<float> sa_compact_;      // BlockScaled with M % 4 != 0: sA with leading dim M
  DeviceBuffer<float> sb_padded_;       // BlockScaled with K/128 % 4 != 0: sB rows padded to 4
  DeviceBuffer<float> unit_scale_;      // PerTensor: 1.0f
};

}  // namespace gemm
