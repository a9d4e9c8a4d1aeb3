// Chapter 14's block-scaled mma.sync, for sm_120a only: compiled to a cubin by the build
// (chapters/CMakeLists.txt), never run here (the book's GPU is an H100, where the instruction does
// not exist). tests/host_chapter14.cpp reads the cubin for its QMMA.SF. One warp: a 16 x 8 tile of
// D from one 16 x 32 fp8 tile of A and 32 x 8 of B, each row of A and column of B scaled by its
// UE8M0 factor inside the instruction (block_scale_model.hpp is the arithmetic, on the CPU).
#include <cstdint>

#include "common/ptx/mma_sync.cuh"

// fragments: 4 words of A and 2 of B per lane (chapter 14's maps); scales: one word per lane for
// A and one for B, byte 0 read (selectors 0, 0).
__global__ void block_scaled_mma(const uint32_t* fragments, const uint32_t* scales, float* d) {
  const int lane = int(threadIdx.x);
  const uint32_t a[4] = {fragments[lane * 6], fragments[lane * 6 + 1], fragments[lane * 6 + 2],
                         fragments[lane * 6 + 3]};
  const uint32_t b[2] = {fragments[lane * 6 + 4], fragments[lane * 6 + 5]};
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  ptx::mma_m16n8k32_e4m3_block_scale<0, 0, 0, 0>(acc, a, b, scales[lane], scales[32 + lane]);
  for (int i = 0; i < 4; ++i) d[lane * 4 + i] = acc[i];
}
