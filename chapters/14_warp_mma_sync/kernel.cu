// Chapter 14 (a side chapter): the FP8 GEMM the way it was written before Hopper, run on Hopper.
//
// One CTA of 8 warps computes a 128 x 128 tile of D. Every thread copies its share of each 64-wide
// K block of A and B into shared memory with cp.async, four stages ahead, without waiting. Each
// warp owns a 64 x 32 piece of the tile: per 32-wide K step it loads its fragments of A (four
// m16 tiles) and B (four n8 tiles) from shared memory with ldmatrix, the next step's while the
// tensor cores work on this one, and issues sixteen mma.sync m16n8k32 (e4m3 in, fp32 accumulators
// in registers). No descriptors, no fences, no commit groups: the warp's registers are the
// operands, in program order. The epilogue rounds to bf16 and stores straight to global memory.
//
// Unit scales, like chapters 02 to 05: this computes sum_k A[m][k] * B[n][k], fp32 sums of exact
// products, and ignores sA and sB.
//
// gemm_f16 is the ablation "operands=f16": the same copies, but each landed stage is converted
// once, by the whole CTA, into f16 tiles, and the warps issue f16 mma.sync m16n8k16 on them. The
// products are the same (every e4m3 value is an f16 value): what the e4m3 instruction pays for
// converting its operands on sm_90a, where it becomes F2FP conversions and two f16 HMMAs.
#include <cuda_fp16.h>

#include "chapters/14_warp_mma_sync/fragments.hpp"
#include "chapters/registry.hpp"
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/launch.hpp"
#include "common/ptx/base.cuh"
#include "common/ptx/cp_async.cuh"
#include "common/ptx/ldmatrix.cuh"
#include "common/ptx/mma_sync.cuh"

namespace ch14 {

constexpr int kMTiles = WARP_M / 16;                                      // 4 m16 tiles per warp
constexpr int kNTiles = WARP_N / 8;                                       // 4 n8 tiles per warp
constexpr uint32_t kSmemE4m3 = kStages * kStageBytes;                     // 64 KB
constexpr uint32_t kSmemF16 = kStages * kStageBytes + 2 * kF16TileBytes;  // 96 KB

// One K block of A and B into stage `stage`: 4 x 16 bytes per thread. A warp writes 8 whole rows
// (512 contiguous bytes, permuted inside each row by the swizzle): no bank conflicts. Rows past M
// or N are zero-filled and compute zeros.
__device__ __forceinline__ void load_stage(uint8_t* stage, const gemm::GemmArgs& args, int64_t m0,
                                           int64_t n0, int64_t k0) {
  const auto [M, N, K] = args.shape;
#pragma unroll
  for (int i = 0; i < 2 * kChunksPerTile / kNumThreads; ++i) {
    const StageChunk s = stage_chunk(int(threadIdx.x) + i * kNumThreads);
    const int64_t g_row = (s.tile ? n0 : m0) + s.row, rows = s.tile ? N : M;
    const bool valid = g_row < rows;
    const __nv_fp8_e4m3* src = (s.tile ? args.b : args.a) + (valid ? g_row : 0) * K + k0 + s.kbyte;
    ptx::cp_async_16_zfill(stage + s.tile * kTileBytes + fp8_offset(s.row, s.kbyte), src, valid);
  }
}

// The e4m3 fragments of one 32-wide K step: A for 4 m16 tiles, B for 4 n8 tiles (2 per x4).
struct FragE4m3 {
  uint32_t a[kMTiles][4];
  uint32_t b[kNTiles][2];
};

__device__ __forceinline__ void load_fragments(FragE4m3& f, uint32_t smem_a, uint32_t smem_b,
                                               int warp_row, int warp_col, int kk, int lane) {
  const RowCol pa = a_e4m3_ldmatrix_row(lane), pb = b_e4m3_ldmatrix_row(lane);
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
    ptx::ldmatrix_x4(f.a[mt], smem_a + fp8_offset(warp_row + mt * 16 + pa.row, kk * 32 + pa.col));
#pragma unroll
  for (int np = 0; np < kNTiles / 2; ++np) {
    uint32_t r[4];
    ptx::ldmatrix_x4(r, smem_b + fp8_offset(warp_col + np * 16 + pb.row, kk * 32 + pb.col));
    f.b[2 * np][0] = r[0], f.b[2 * np][1] = r[1];
    f.b[2 * np + 1][0] = r[2], f.b[2 * np + 1][1] = r[3];
  }
}

// The f16 fragments of one 16-wide K step, from the converted tiles.
__device__ __forceinline__ void load_fragments_f16(FragE4m3& f, uint32_t smem_a, uint32_t smem_b,
                                                   int warp_row, int warp_col, int kk, int lane) {
  const RowCol pa = a_f16_ldmatrix_row(lane), pb = b_f16_ldmatrix_row(lane);
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
    ptx::ldmatrix_x4(f.a[mt], smem_a + f16_offset(warp_row + mt * 16 + pa.row, kk * 16 + pa.col));
#pragma unroll
  for (int np = 0; np < kNTiles / 2; ++np) {
    uint32_t r[4];
    ptx::ldmatrix_x4(r, smem_b + f16_offset(warp_col + np * 16 + pb.row, kk * 16 + pb.col));
    f.b[2 * np][0] = r[0], f.b[2 * np][1] = r[1];
    f.b[2 * np + 1][0] = r[2], f.b[2 * np + 1][1] = r[3];
  }
}

// The f16 variant: a landed stage (fp8) converted into the f16 tiles, 16 bytes in, 32 out.
__device__ __forceinline__ void convert_stage(const uint8_t* stage, uint8_t* f16_tiles) {
#pragma unroll
  for (int i = 0; i < 2 * kChunksPerTile / kNumThreads; ++i) {
    const StageChunk s = stage_chunk(int(threadIdx.x) + i * kNumThreads);
    const uint4 v =
        *reinterpret_cast<const uint4*>(stage + s.tile * kTileBytes + fp8_offset(s.row, s.kbyte));
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
    uint32_t h[8];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      h[2 * j] = ptx::cvt_e4m3x2_to_f16x2(uint16_t(w[j] & 0xFFFF));
      h[2 * j + 1] = ptx::cvt_e4m3x2_to_f16x2(uint16_t(w[j] >> 16));
    }
    // fp8 byte k of the row is element k: elements k .. k + 7, then k + 8 .. k + 15, in halves.
    uint8_t* out = f16_tiles + s.tile * kF16TileBytes;
    *reinterpret_cast<uint4*>(out + f16_offset(s.row, s.kbyte)) =
        make_uint4(h[0], h[1], h[2], h[3]);
    *reinterpret_cast<uint4*>(out + f16_offset(s.row, s.kbyte + 8)) =
        make_uint4(h[4], h[5], h[6], h[7]);
  }
}

template <bool kF16>
__global__ void __launch_bounds__(kNumThreads) gemm_kernel(gemm::GemmArgs args) {
  extern __shared__ __align__(128) uint8_t smem[];
  const auto [M, N, K] = args.shape;
  const int64_t m0 = int64_t(blockIdx.y) * BLOCK_M, n0 = int64_t(blockIdx.x) * BLOCK_N;
  const int warp = int(threadIdx.x) / kLanes, lane = int(threadIdx.x) % kLanes;
  const int warp_row = (warp / kWarpsN) * WARP_M, warp_col = (warp % kWarpsN) * WARP_N;
  const int num_k_blocks = int(K / BLOCK_K);

  float acc[kMTiles][kNTiles][4] = {};  // 64 fp32 accumulators per thread

  // The first kStages - 1 blocks in flight, one commit group each (empty past the end of K, so
  // that the group count per iteration stays the same).
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < num_k_blocks) load_stage(smem + s * kStageBytes, args, m0, n0, int64_t(s) * BLOCK_K);
    ptx::cp_async_commit_group();
  }

  for (int kb = 0; kb < num_k_blocks; ++kb) {
    // This thread's copies of block kb have landed; the barrier makes everyone's visible, and
    // tells us every warp is done with block kb - 1, whose stage the next copy reuses.
    ptx::cp_async_wait_group<kStages - 2>();
    __syncthreads();
    if (const int next = kb + kStages - 1; next < num_k_blocks)
      load_stage(smem + (next % kStages) * kStageBytes, args, m0, n0, int64_t(next) * BLOCK_K);
    ptx::cp_async_commit_group();

    const uint8_t* stage = smem + (kb % kStages) * kStageBytes;
    FragE4m3 frag[2];  // double-buffered: step s + 1 loads while step s computes
    if constexpr (!kF16) {
      const uint32_t sa = ptx::shared_address(stage), sb = sa + kTileBytes;
      load_fragments(frag[0], sa, sb, warp_row, warp_col, 0, lane);
#pragma unroll
      for (int kk = 0; kk < BLOCK_K / 32; ++kk) {
        if (kk + 1 < BLOCK_K / 32)
          load_fragments(frag[(kk + 1) % 2], sa, sb, warp_row, warp_col, kk + 1, lane);
        const FragE4m3& f = frag[kk % 2];
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt)
            ptx::mma_m16n8k32_e4m3(acc[mt][nt], f.a[mt], f.b[nt]);
      }
    } else {
      uint8_t* f16_tiles = smem + kStages * kStageBytes;
      convert_stage(stage, f16_tiles);
      __syncthreads();
      const uint32_t sa = ptx::shared_address(f16_tiles), sb = sa + kF16TileBytes;
      load_fragments_f16(frag[0], sa, sb, warp_row, warp_col, 0, lane);
#pragma unroll
      for (int kk = 0; kk < BLOCK_K / 16; ++kk) {
        if (kk + 1 < BLOCK_K / 16)
          load_fragments_f16(frag[(kk + 1) % 2], sa, sb, warp_row, warp_col, kk + 1, lane);
        const FragE4m3& f = frag[kk % 2];
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
          for (int nt = 0; nt < kNTiles; ++nt) ptx::mma_m16n8k16_f16(acc[mt][nt], f.a[mt], f.b[nt]);
      }
    }
  }

  // Epilogue: c_f32 puts elements i and i + 1 side by side in a row, so each pair is one 4-byte
  // bf16x2 store. N % 8 == 0 keeps pairs whole.
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
      for (int i = 0; i < 4; i += 2) {
        const RowCol p = c_f32(lane, i);
        const int64_t row = m0 + warp_row + mt * 16 + p.row, col = n0 + warp_col + nt * 8 + p.col;
        if (row < M && col < N)
          *reinterpret_cast<__nv_bfloat162*>(args.d + row * N + col) =
              __floats2bfloat162_rn(acc[mt][nt][i], acc[mt][nt][i + 1]);
      }
}

namespace {
template <bool kF16>
void launch(const gemm::GemmArgs& args, cudaStream_t stream, const char* who) {
  // 16-byte cp.async of A and B, 4-byte bf16x2 stores of D; scales not read (unit scales).
  gemm::check_arguments(args, {.who = who,
                               .align_a = 16,
                               .align_b = 16,
                               .align_d = 4,
                               .block_m = BLOCK_M,
                               .block_n = BLOCK_N});
  const dim3 grid = gemm::tile_grid(args.shape, BLOCK_M, BLOCK_N, who);
  gemm::launch(who, gemm_kernel<kF16>, {grid, kNumThreads, kF16 ? kSmemF16 : kSmemE4m3, stream},
               args);
}
}  // namespace

void gemm(const gemm::GemmArgs& args, cudaStream_t stream) {
  launch<false>(args, stream, "chapter 14");
}

void gemm_f16(const gemm::GemmArgs& args, cudaStream_t stream) {
  launch<true>(args, stream, "chapter 14 (operands=f16)");
}

}  // namespace ch14
