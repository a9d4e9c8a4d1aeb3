// Chapter 14's probe: how fast each tensor-core instruction issues on this GPU, with no memory
// traffic, and what each accumulator makes of the largest fp8 sum.
//
// Issue rate. Every warp of a full grid issues one instruction over and over from registers (or,
// for wgmma, from a few KB of shared memory that never changes), eight independent accumulators
// per warp for mma.sync so that no instruction waits for the previous one's result. The rate is
// the FLOPs issued over the kernel's time (CUDA events, best of 5 runs): an upper bound on what a
// GEMM built on that instruction can reach, before any load, barrier or epilogue.
//   mma.sync m16n8k32 e4m3 (f32 accumulate)  2 * 16 * 8 * 32 FLOPs per warp-instruction
//   mma.sync m16n8k16 f16  (f32 accumulate)  2 * 16 * 8 * 16
//   wgmma m64n256k32 e4m3  (f32 accumulate)  2 * 64 * 256 * 32 per warpgroup-instruction
//
// Accuracy. +448 (the largest e4m3) in every element of A and B, summed over K = 16384: the exact
// value is 448^2 * 16384 = 3288334336 (49 * 2^26, exact in fp32). mma.sync adds each
// instruction's products to the fp32 accumulator; wgmma's fp8 accumulator keeps about 14 bits
// relative to the running sum (chapter 06's README) and stops growing at 2^31.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "common/check.hpp"
#include "common/device.hpp"
#include "common/ptx/base.cuh"
#include "common/ptx/descriptor.hpp"
#include "common/ptx/mma_sync.cuh"
#include "common/ptx/wgmma.cuh"
#include "common/ptx/wgmma_fp8.cuh"

namespace {

constexpr int kIters = 4096;               // loop trips per warp
constexpr int kChains = 8;                 // independent accumulators per warp (mma.sync)
constexpr int kThreads = 256;              // 8 warps, 2 warpgroups per block
constexpr uint32_t kE4m3One = 0x38383838;  // 1.0 in each byte
constexpr uint32_t kE4m3Max = 0x7E7E7E7E;  // 448 in each byte
constexpr uint32_t kF16One = 0x3C003C00;   // 1.0 in each half
constexpr uint32_t kF16448 = 0x5F005F00;   // 448 in each half
constexpr int kAccK = 16384;               // K of the accuracy check

// mma.sync, kChains independent accumulators: a kernel that only issues. The operands differ per
// lane and per chain (so that nothing folds) and the sums are written once at the end.
// kFresh false: the operands never change, and ptxas converts the e4m3 ones to f16 once, before
// the loop (operands reused, as a fragment of A is by all the n8 tiles of a warp). kFresh true:
// each chain's six operand registers change every trip (one XOR each), so the e4m3 instruction
// converts its operands every time (12 F2FP and 2 HMMA per mma.sync), as on freshly loaded
// fragments; the f16 instruction pays the same XORs and no conversion.
template <bool kE4m3, bool kFresh>
__global__ void __launch_bounds__(kThreads) mma_sync_rate(float* out, uint32_t seed) {
  uint32_t a[kChains][4], b[kChains][2];
  const uint32_t base = kE4m3 ? kE4m3One : kF16One;
#pragma unroll
  for (int c = 0; c < kChains; ++c) {
    for (int i = 0; i < 4; ++i) a[c][i] = base ^ ((threadIdx.x + i + c + seed) & 0x00030003u);
    for (int i = 0; i < 2; ++i) b[c][i] = base ^ ((threadIdx.x * 3 + i + c + seed) & 0x00030003u);
  }
  float acc[kChains][4] = {};
  for (int it = 0; it < kIters; ++it) {
    const uint32_t flip = uint32_t(it) & 0x00010001u;
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
      if constexpr (kFresh) {
        for (uint32_t& x : a[c]) x ^= flip;
        for (uint32_t& x : b[c]) x ^= flip;
      }
      if constexpr (kE4m3)
        ptx::mma_m16n8k32_e4m3(acc[c], a[c], b[c]);
      else
        ptx::mma_m16n8k16_f16(acc[c], a[c], b[c]);
    }
  }
  float s = 0.0f;
  for (int c = 0; c < kChains; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// The wgmma operands: A 64 x 32 and B 256 x 32 bytes, no swizzle, core matrices K first
// (LBO 128: the next 16 bytes of K; SBO 256: the next 8 rows), as chapter 01 lays them out.
constexpr int kWgmmaN = 256;
constexpr uint32_t kABytes = 64 * 32, kBBytes = kWgmmaN * 32;

__device__ void fill_operands(uint8_t* smem, uint8_t byte) {
  for (uint32_t i = threadIdx.x; i < kABytes + kBBytes; i += blockDim.x) smem[i] = byte;
  ptx::fence_proxy_async_shared();  // generic stores, read by the async proxy
  __syncthreads();
}

__device__ uint64_t descriptor(const uint8_t* p) {
  return ptx::encode({ptx::shared_address(p), 128, 256, 0, ptx::Swizzle::None});
}

// Each warpgroup issues 4 chained wgmma m64n256k32 per commit group, as a GEMM's K block does.
__global__ void __launch_bounds__(kThreads) wgmma_rate(float* out) {
  __shared__ alignas(128) uint8_t smem[kABytes + kBBytes];
  fill_operands(smem, 0x38);
  using W = ptx::WgmmaFp8<kWgmmaN>;
  float acc[W::kAccumulators] = {};
  const uint64_t da = descriptor(smem), db = descriptor(smem + kABytes);
  for (int it = 0; it < kIters / 4; ++it) {
    ptx::wgmma_fence();
#pragma unroll
    for (int j = 0; j < 4; ++j) W::mma(da, db, acc, true);
    ptx::wgmma_commit_group();
    ptx::wgmma_wait<0>();
  }
  ptx::fence_accumulators(acc);
  float s = 0.0f;
  for (float x : acc) s += x;
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// One warp, 448 everywhere, K = 16384: D of mma.sync (kE4m3: m16n8k32, 512 instructions; else
// f16 m16n8k16, 1024), each lane's four elements to out.
template <bool kE4m3>
__global__ void mma_sync_largest(float* out) {
  const uint32_t v = kE4m3 ? kE4m3Max : kF16448;
  const uint32_t a[4] = {v, v, v, v}, b[2] = {v, v};
  float acc[4] = {};
  for (int k = 0; k < kAccK; k += kE4m3 ? 32 : 16) {
    if constexpr (kE4m3)
      ptx::mma_m16n8k32_e4m3(acc, a, b);
    else
      ptx::mma_m16n8k16_f16(acc, a, b);
  }
  for (int i = 0; i < 4; ++i) out[threadIdx.x * 4 + i] = acc[i];
}

// One warpgroup, wgmma m64n256k32 from shared memory full of 448, 512 instructions.
__global__ void wgmma_largest(float* out) {
  __shared__ alignas(128) uint8_t smem[kABytes + kBBytes];
  fill_operands(smem, 0x7E);
  using W = ptx::WgmmaFp8<kWgmmaN>;
  float acc[W::kAccumulators] = {};
  const uint64_t da = descriptor(smem), db = descriptor(smem + kABytes);
  ptx::wgmma_fence();
  for (int k = 0; k < kAccK; k += 32) W::mma(da, db, acc, true);
  ptx::wgmma_commit_group();
  ptx::wgmma_wait<0>();
  ptx::fence_accumulators(acc);
  for (int i = 0; i < W::kAccumulators; ++i) out[threadIdx.x * W::kAccumulators + i] = acc[i];
}

// Best of 5 runs of `launch`, in milliseconds (CUDA events; one warm-up first).
template <class F>
float best_ms(F launch) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  launch();
  CUDA_CHECK(cudaGetLastError());
  float best = 1e30f;
  for (int r = 0; r < 5; ++r) {
    CUDA_CHECK(cudaEventRecord(start));
    launch();
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    best = std::min(best, ms);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return best;
}

std::vector<float> download(const float* d, size_t n) {
  std::vector<float> h(n);
  CUDA_CHECK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

// Every value equal to the first? Prints it, and how many differ.
void report_sum(const char* what, const std::vector<float>& v, double exact) {
  int64_t differ = 0;
  for (float x : v) differ += x != v[0];
  std::printf("  %-46s %.0f  (%s exact; %lld of %zu elements differ from the first)\n", what,
              double(v[0]), double(v[0]) == exact ? "=" : "!=", (long long)differ, v.size());
}

}  // namespace

int main() {
  if (std::string why = gemm::hopper_unavailable_reason(); !why.empty()) {
    std::printf("mma_rate_probe: cannot run: %s\n", why.c_str());
    return 2;
  }
  try {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    std::printf("mma_rate_probe: %s (%d SMs)\n", prop.name, sms);

    const int blocks = sms * 4;  // 32 warps per SM
    const size_t threads = size_t(blocks) * kThreads;
    gemm::DeviceBuffer<float> out{threads};

    std::printf("issue rate, no memory traffic (%d blocks of %d threads, best of 5):\n", blocks,
                kThreads);
    const double warp_instr = double(threads / 32) * kIters * kChains;
    const double e4m3_flops = warp_instr * 2 * 16 * 8 * 32,
                 f16_flops = warp_instr * 2 * 16 * 8 * 16;
    auto row = [&](const char* what, double flops, float ms) {
      std::printf("  %-46s %8.1f TFLOPS\n", what, flops / (ms * 1e-3) / 1e12);
    };
    row("mma.sync m16n8k32 e4m3, operands reused", e4m3_flops,
        best_ms([&] { mma_sync_rate<true, false><<<blocks, kThreads>>>(out.get(), 1); }));
    row("mma.sync m16n8k32 e4m3, operands fresh", e4m3_flops,
        best_ms([&] { mma_sync_rate<true, true><<<blocks, kThreads>>>(out.get(), 1); }));
    row("mma.sync m16n8k16 f16, operands reused", f16_flops,
        best_ms([&] { mma_sync_rate<false, false><<<blocks, kThreads>>>(out.get(), 1); }));
    row("mma.sync m16n8k16 f16, operands fresh", f16_flops,
        best_ms([&] { mma_sync_rate<false, true><<<blocks, kThreads>>>(out.get(), 1); }));
    // wgmma: 2 warpgroups per block, 2 blocks per SM (128 accumulators per thread).
    const int wg_blocks = sms * 2;
    const double wg_instr = double(wg_blocks) * (kThreads / 128) * (kIters / 4) * 4;
    row("wgmma m64n256k32 e4m3 (4 per commit group)", wg_instr * 2 * 64 * kWgmmaN * 32,
        best_ms([&] { wgmma_rate<<<wg_blocks, kThreads>>>(out.get()); }));

    std::printf("448 x 448 summed over K = %d (exact: 3288334336):\n", kAccK);
    const double exact = 448.0 * 448.0 * kAccK;
    gemm::DeviceBuffer<float> sums{size_t(128) * ptx::WgmmaFp8<kWgmmaN>::kAccumulators};
    mma_sync_largest<true><<<1, 32>>>(sums.get());
    CUDA_CHECK(cudaGetLastError());
    report_sum("mma.sync m16n8k32 e4m3", download(sums.get(), 128), exact);
    mma_sync_largest<false><<<1, 32>>>(sums.get());
    CUDA_CHECK(cudaGetLastError());
    report_sum("mma.sync m16n8k16 f16", download(sums.get(), 128), exact);
    wgmma_largest<<<1, 128>>>(sums.get());
    CUDA_CHECK(cudaGetLastError());
    report_sum("wgmma m64n256k32 e4m3", download(sums.get(), sums.size()), exact);
    return 0;
  } catch (const gemm::Error& e) {
    std::printf("mma_rate_probe: error: %s\n", e.what());
    return 1;
  }
}
