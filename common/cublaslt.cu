#include "common/cublaslt.hpp"

namespace gemm {

const char* peer_name(Peer p) {
  switch (p) {
    case Peer::BlockScaled:
      return "cublasLt-blk";
    case Peer::PerTensor:
      return "cublasLt-scalar";
    case Peer::Bf16:
      return "cublasLt-bf16";
  }
  return "?";
}

namespace {

// x (rows x k fp8) times its scale -> bf16. The scale of (row, kb) is
// s[(row / row_div) * row_stride + kb * kb_stride].
__global__ void dequantize_to_bf16(const fp8* x, const float* s, int64_t rows, int64_t k,
                                   int row_div, int64_t row_stride, int64_t kb_stride, bf16* out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * k) return;
  const int64_t row = i / k, kb = (i % k) / kScaleBlock;
  out[i] = __float2bfloat16(float(x[i]) * s[(row / row_div) * row_stride + kb * kb_stride]);
}

constexpr size_t kWorkspaceBytes = size_t(32) << 20;

template <class T>
void set_attr(cublasLtMatmulDesc_t op, cublasLtMatmulDescAttributes_t attr, const T& v) {
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, attr, &v, sizeof v));
}

}  // namespace

CublasLtGemm::CublasLtGemm(Peer peer, const GemmArgs& args)
    : peer_(peer), args_(args), workspace_(kWorkspaceBytes) {
  const Shape& s = args.shape;
  validate(s);
  CUBLAS_CHECK(cublasLtCreate(&handle_));
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  set_attr(op_, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  set_attr(op_, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);

  // cuBLASLt's A is our B (weights), its B is our A (activations); see the header.
  cudaDataType_t in_type = CUDA_R_8F_E4M3;
  if (peer == Peer::Bf16) {
    in_type = CUDA_R_16BF;
    a_bf16_ = DeviceBuffer<bf16>(size_t(s.m * s.k));
    b_bf16_ = DeviceBuffer<bf16>(size_t(s.n * s.k));
    const unsigned threads = 256;
    dequantize_to_bf16<<<unsigned((s.m * s.k + threads - 1) / threads), threads>>>(
        args.a, args.sa, s.m, s.k, 1, 1, s.sa_ld(), a_bf16_.get());
    CUDA_CHECK_LAUNCH();
    dequantize_to_bf16<<<unsigned((s.n * s.k + threads - 1) / threads), threads>>>(
        args.b, args.sb, s.n, s.k, kScaleBlock, s.k_blocks(), 1, b_bf16_.get());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
  } else if (peer == Peer::BlockScaled) {
    set_attr(op_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
             int32_t(CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F));
    set_attr(op_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
             int32_t(CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F));
    // Layouts cuBLASLt 13.1 accepted on the H100 (measured, see tests/gpu_peers.cu):
    // activation scales [k/128][m] with no padding between K blocks, weight scales [n/128][k/128]
    // with each row of K blocks padded to a multiple of 4 floats (16 bytes).
    const float* sa = args.sa;
    if (s.sa_ld() != s.m) {
      sa_compact_ = DeviceBuffer<float>(size_t(s.m * s.k_blocks()));
      CUDA_CHECK(cudaMemcpy2D(sa_compact_.get(), s.m * sizeof(float), args.sa,
                              s.sa_ld() * sizeof(float), s.m * sizeof(float), s.k_blocks(),
                              cudaMemcpyDeviceToDevice));
      sa = sa_compact_.get();
    }
    const float* sb = args.sb;
    if (const int64_t ld = (s.k_blocks() + 3) / 4 * 4; ld != s.k_blocks()) {
      sb_padded_ = DeviceBuffer<float>(size_t(s.n_blocks() * ld));
      CUDA_CHECK(cudaMemcpy2D(sb_padded_.get(), ld * sizeof(float), args.sb,
                              s.k_blocks() * sizeof(float), s.k_blocks() * sizeof(float),
                              s.n_blocks(), cudaMemcpyDeviceToDevice));
      sb = sb_padded_.get();
    }
    set_attr(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(sb));
    set_attr(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(sa));
  } else {
    unit_scale_ = DeviceBuffer<float>(std::vector<float>{1.0f});
    set_attr(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
             static_cast<const void*>(unit_scale_.get()));
    set_attr(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
             static_cast<const void*>(unit_scale_.get()));
  }

  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_layout_, in_type, s.k, s.n, s.k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_layout_, in_type, s.k, s.m, s.k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d_layout_, CUDA_R_16BF, s.n, s.m, s.n));

  cublasLtMatmulPreference_t pref = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const size_t ws = kWorkspaceBytes;
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &ws, sizeof ws));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(
      handle_, op_, a_layout_, b_layout_, d_layout_, d_layout_, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || found == 0)
    throw UnsupportedError(std::string("cuBLASLt has no algorithm for ") + peer_name(peer) +
                           " at " + s.str() + " (" + cublasLtGetStatusString(st) + ")");
  algo_ = result.algo;
}

CublasLtGemm::~CublasLtGemm() {
  if (d_layout_) cublasLtMatrixLayoutDestroy(d_layout_);
  if (b_layout_) cublasLtMatrixLayoutDestroy(b_layout_);
  if (a_layout_) cublasLtMatrixLayoutDestroy(a_layout_);
  if (op_) cublasLtMatmulDescDestroy(op_);
  if (handle_) cublasLtDestroy(handle_);
}

void CublasLtGemm::run(cudaStream_t stream) const {
  const float alpha = 1.0f, beta = 0.0f;
  const void* a = peer_ == Peer::Bf16 ? static_cast<const void*>(b_bf16_.get()) : args_.b;
  const void* b = peer_ == Peer::Bf16 ? static_cast<const void*>(a_bf16_.get()) : args_.a;
  CUBLAS_CHECK(cublasLtMatmul(handle_, op_, &alpha, a, a_layout_, b, b_layout_, &beta, args_.d,
                              d_layout_, args_.d, d_layout_, &algo_, workspace_.get(),
                              workspace_.size(), stream));
}

}  // namespace gemm
