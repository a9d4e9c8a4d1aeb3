// Chapter 05: the warp-specialized pipeline.
//
// Chapter 04 loaded a K block, waited, multiplied, waited, and only then loaded the next: the copy
// engine and the tensor cores took turns. Here the CTA's shared memory holds a ring of stages and
// the warpgroups split the work. One producer warpgroup (one elected thread of it, in fact) keeps
// TMA busy filling stages; two math warpgroups multiply whatever stage is full. Two mbarriers per
// stage carry the hand-off:
//   full[s]   TMA -> math:  "stage s holds K block kb"   (arrival + transaction bytes)
//   empty[s]  math -> TMA:  "we are done reading stage s" (one arrival per math warp)
// The producer needs a few registers, the math warpgroups many: setmaxnreg moves them. With loads
// running ahead the tile can grow to 128 x 256 (wgmma m64n256k32): each CTA reuses its A tile
// across twice the columns, so A is read from L2 half as often.
//
// Same arithmetic per output element as chapter 04 (the same k32 steps, in the same order), so D
// must be bit-for-bit identical.
#include "chapters/04_swizzle_128b/swizzle.hpp"
#include "chapters/05_warp_specialized_pipeline/pipeline.hpp"
#include "chapters/registry.hpp"
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/setmaxnreg.cuh"
#include "common/ptx/tma.cuh"
#include "common/ptx/wgmma.cuh"
#include "common/tensor_map.hpp"

namespace ch05 {

using ch04::kStrideByteOffset;
using ch04::kSwizzleAtomBytes;
using ch04::kSwizzleBytes;

constexpr int BLOCK_M = 128;  // two math warpgroups of 64 rows
constexpr int BLOCK_N = 256;  // one wgmma m64n256k32 per math warpgroup and 32-wide K step
constexpr int BLOCK_K = 128;  // one 128-byte swizzled row
constexpr int WGMMA_K = 32;
constexpr int kNumMathWarpgroups = 2;
constexpr int kNumMathThreads = 128 * kNumMathWarpgroups;
constexpr int kNumThreads = kNumMathThreads + 128;  // + the producer warpgroup, last

// Registers: 65536 per SM, one CTA per SM; the launch bound caps everyone at 168. The producer
// drops to 40, the math threads rise to 232: 128 * 40 + 256 * 232 = 64512 <= 65536.
constexpr int kProducerRegisters = 40;
constexpr int kMathRegisters = 232;

// Shared-memory budget, in named sizes.
constexpr uint32_t SMEM_A_SIZE_PER_STAGE = BLOCK_M * BLOCK_K;  // 16 KB
constexpr uint32_t SMEM_B_SIZE_PER_STAGE = BLOCK_N * BLOCK_K;  // 32 KB
constexpr uint32_t kSmemBudget = 227 * 1024;                   // sm_90's largest opt-in per block
constexpr uint32_t kBarrierBytes = 2 * 8 * 8;                  // full + empty, up to 8 stages
constexpr int kNumStages =
    stages_for_budget(kSmemBudget, SMEM_A_SIZE_PER_STAGE + SMEM_B_SIZE_PER_STAGE, kBarrierBytes, 8);
constexpr uint32_t kSmemBytes =
    kNumStages * (SMEM_A_SIZE_PER_STAGE + SMEM_B_SIZE_PER_STAGE) + 2 * kNumStages * 8;
static_assert(kNumStages >= 2, "a pipeline needs at least two stages");
static_assert(SMEM_A_SIZE_PER_STAGE % kSwizzleAtomBytes == 0 &&
                  SMEM_B_SIZE_PER_STAGE % kSwizzleAtomBytes == 0,
              "every stage must stay 1024-byte aligned for the 128B swizzle");

gemm::TensorMapSpec<2> swizzled_view(uint64_t rows, uint64_t k, uint32_t box_rows) {
  gemm::TensorMapSpec<2> spec;
  spec.dims = {k, rows};
  spec.strides = {k};
  spec.box = {BLOCK_K, box_rows};
  spec.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  return spec;
}

__device__ __forceinline__ uint64_t make_descriptor(const uint8_t* smem) {
  return ptx::encode({ptx::shared_address(smem), 0, kStrideByteOffset, 0, ptx::Swizzle::B128});
}

__global__ void __launch_bounds__(kNumThreads, 1)
    gemm_kernel(const __grid_constant__ CUtensorMap tensor_map_a,
                const __grid_constant__ CUtensorMap tensor_map_b, gemm::GemmArgs args) {
  using Wgmma = ptx::WgmmaFp8<BLOCK_N>;
  // Align to 1024 bytes for the 128B swizzle. Layout: A stages, B stages, then the barriers.
  extern __shared__ __align__(1024) uint8_t smem[];
  uint8_t* smem_a = smem;
  uint8_t* smem_b = smem + kNumStages * SMEM_A_SIZE_PER_STAGE;
  auto* full_barriers = reinterpret_cast<uint64_t*>(smem_b + kNumStages * SMEM_B_SIZE_PER_STAGE);
  uint64_t* empty_barriers = full_barriers + kNumStages;

  const auto [M, N, K] = args.shape;
  const int64_t m0 = int64_t(blockIdx.y) * BLOCK_M, n0 = int64_t(blockIdx.x) * BLOCK_N;
  const int warpgroup = threadIdx.x / 128;
  const int num_k_blocks = int(K / BLOCK_K);

  if (threadIdx.x == kNumMathThreads) {
    // __align__ on dynamic shared memory is a request the launch honours in practice; a tile off
    // the 1024-byte pattern would be read back scrambled, so check once rather than trust.
    if (ptx::shared_address(smem) % kSwizzleAtomBytes != 0) {
      printf("chapter 05: dynamic shared memory is not 1024-byte aligned\n");
      __trap();
    }
    ptx::prefetch_tensor_map(&tensor_map_a);
    ptx::prefetch_tensor_map(&tensor_map_b);
    for (int s = 0; s < kNumStages; ++s) {
      ptx::mbarrier_init(&full_barriers[s], 1);                      // the producer's arrival
      ptx::mbarrier_init(&empty_barriers[s], kNumMathThreads / 32);  // one per math warp
    }
    ptx::fence_barrier_init();
  }
  __syncthreads();

  if (warpgroup == kNumMathWarpgroups) {
    // ---- Producer warpgroup: one thread drives TMA around the ring. ----
    ptx::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == kNumMathThreads) {
      PipelineState state;
      for (int kb = 0; kb < num_k_blocks; ++kb, state.advance(kNumStages)) {
        ptx::mbarrier_wait(&empty_barriers[state.stage], state.phase ^ 1, "empty_barrier");
        uint64_t* full = &full_barriers[state.stage];
        ptx::mbarrier_arrive_expect_tx(full, SMEM_A_SIZE_PER_STAGE + SMEM_B_SIZE_PER_STAGE);
        ptx::tma_load_2d(smem_a + state.stage * SMEM_A_SIZE_PER_STAGE, &tensor_map_a, full,
                         kb * BLOCK_K, int32_t(m0));
        ptx::tma_load_2d(smem_b + state.stage * SMEM_B_SIZE_PER_STAGE, &tensor_map_b, full,
                         kb * BLOCK_K, int32_t(n0));
      }
    }
  } else {
    // ---- Math warpgroups: multiply each full stage, then hand it back. ----
    ptx::setmaxnreg_inc<kMathRegisters>();
    const int math_wg_idx = warpgroup;

    float acc[Wgmma::kAccumulators];
#pragma unroll
    for (float& x : acc) x = 0.0f;

    PipelineState state;
    for (int kb = 0; kb < num_k_blocks; ++kb, state.advance(kNumStages)) {
      ptx::mbarrier_wait(&full_barriers[state.stage], state.phase, "full_barrier");
      const uint8_t* a = smem_a + state.stage * SMEM_A_SIZE_PER_STAGE;
      const uint8_t* b = smem_b + state.stage * SMEM_B_SIZE_PER_STAGE;

      ptx::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BLOCK_K / WGMMA_K; ++kk) {
        const uint64_t desc_a =
            make_descriptor(a + math_wg_idx * 64 * kSwizzleBytes + kk * WGMMA_K);
        const uint64_t desc_b = make_descriptor(b + kk * WGMMA_K);
        Wgmma::mma(desc_a, desc_b, acc, kb > 0 || kk > 0);
      }
      ptx::wgmma_commit_group();
      ptx::wgmma_wait<0>();
      ptx::fence_accumulators(acc);
      // This warp is done reading the stage: one arrival per warp releases it to the producer.
      if (threadIdx.x % 32 == 0) ptx::mbarrier_arrive(&empty_barriers[state.stage]);
    }

    // Epilogue, unchanged from chapter 02 (now 128 accumulators per thread).
    const int t = threadIdx.x % 128;
#pragma unroll
    for (int r = 0; r < Wgmma::kAccumulators; r += 2) {
      const ptx::RowCol p = ptx::accumulator_position(t, r);
      const int64_t row = m0 + math_wg_idx * 64 + p.row, col = n0 + p.col;
      if (row < M && col < N)
        *reinterpret_cast<__nv_bfloat162*>(args.d + row * N + col) =
            __floats2bfloat162_rn(acc[r], acc[r + 1]);
    }
  }
}

void gemm(const gemm::GemmArgs& args, cudaStream_t stream) {
  gemm::validate(args.shape);
  const auto [M, N, K] = args.shape;
  int device = 0, optin = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (uint32_t(optin) < kSmemBytes)
    throw gemm::UnsupportedError("chapter 05 needs " + std::to_string(kSmemBytes) +
                                 " bytes of shared memory per block; this device allows " +
                                 std::to_string(optin));
  static const bool configured = [] {
    CUDA_CHECK(cudaFuncSetAttribute(gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    int(kSmemBytes)));
    return true;
  }();
  (void)configured;
  const CUtensorMap map_a = gemm::make_tensor_map(swizzled_view(M, K, BLOCK_M), args.a);
  const CUtensorMap map_b = gemm::make_tensor_map(swizzled_view(N, K, BLOCK_N), args.b);
  const dim3 grid = gemm::tile_grid(args.shape, BLOCK_M, BLOCK_N, "chapter 05");
  gemm_kernel<<<grid, kNumThreads, kSmemBytes, stream>>>(map_a, map_b, args);
  CUDA_CHECK_LAUNCH();
}

}  // namespace ch05
