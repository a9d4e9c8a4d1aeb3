// Chapter 13's probe: how busy the tensor pipe stays when two math warpgroups run this book's K loop
// with no memory traffic, and what the phase between the two warpgroups does to it.
//
// The loop of the last chapters, without its loads and barriers: per K block, each warpgroup issues
// one group of four chained wgmma m64nNk32 per 64-row sub-tile (the first with scale-d 0), waits
// for it (wgmma.wait_group 0), then promotes: one FFMA per accumulator into the sum it keeps. While
// one warpgroup promotes, only the other's wgmmas can keep the tensor pipe busy.
//
// Each row runs one CTA of two warpgroups per SM (one for "alone"), 2000 K blocks, from 64 KB of
// shared memory that never changes (e4m3 1.0, the 128-byte swizzle of the kernels' tiles), and
// reads each warpgroup's cycles from clock64: busy = the wgmmas' cycles at the full rate (N / 2
// cycles of the SM per m64nNk32, 8192 fp8 FLOPs a cycle: the rate the two warpgroups reach to the
// cycle without the promotion, chapter 13's NOTES.md) over the slower warpgroup's cycles, averaged
// over the SMs, the best of three launches. The starts:
//   together   both warpgroups begin at once (after __syncthreads), as the kernels' do
//   1 late     warpgroup 1 begins 300 cycles after warpgroup 0 (a group of 128 x 128 is 256)
//   turns      warpgroup 1 issues each group only once warpgroup 0's group is half done, and
//              warpgroup 0 its next once warpgroup 1's is (named barriers; the group committed in
//              three parts so that wgmma.wait_group 2 can tell)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/check.hpp"
#include "common/device.hpp"
#include "common/ptx/base.cuh"
#include "common/ptx/descriptor.hpp"
#include "common/ptx/wgmma.cuh"
#include "common/ptx/wgmma_fp8.cuh"

namespace {

constexpr int kIters = 2000;                      // K blocks per warpgroup
constexpr int kWgmmas = 4;                        // m64nNk32 per 128-wide K block
constexpr int kOperandBytes = 64 * 1024;          // A (256 rows) and B (256 rows), 128 bytes each
constexpr int kSmemBytes = kOperandBytes + 1024;  // and room to align to the swizzle atom

enum class Start { Together, OneLate, Turns };

// kPromote: 1 promotes every accumulator, p > 1 every p-th (a shorter promotion), 0 none (then
// every wgmma accumulates, so that none of them is dead code that ptxas removes).
template <int N, int kSub, int kWarpgroups, int kPromote, Start kStart>
__global__ void __launch_bounds__(kWarpgroups * 128, 1) phase(float* out, long long* cycles) {
  extern __shared__ uint8_t raw[];
  uint8_t* smem =
      reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  for (int i = threadIdx.x; i < kOperandBytes; i += blockDim.x) smem[i] = 0x38;  // e4m3 1.0
  ptx::fence_proxy_async_shared();  // generic stores, read by the async proxy
  __syncthreads();

  using W = ptx::WgmmaFp8<N>;
  const int wg = threadIdx.x / 128;
  float acc[W::kAccumulators], sum[kPromote > 0 ? kSub * W::kAccumulators : 1];
  for (float& x : acc) x = 0.0f;
  for (float& x : sum) x = 0.0f;
  // As the kernels address them: warpgroup w's sub-tile i at rows w * 64 + 128 i of A, all of B.
  const uint64_t a0 =
      ptx::encode({ptx::shared_address(smem + wg * 64 * 128), 0, 1024, 0, ptx::Swizzle::B128});
  const uint64_t b0 =
      ptx::encode({ptx::shared_address(smem + 32 * 1024), 0, 1024, 0, ptx::Swizzle::B128});
  constexpr bool kTurns = kStart == Start::Turns;
  if (kStart == Start::OneLate && wg == 1) {
    const long long begin = clock64();
    while (clock64() - begin < 300) {
    }
  }
  const long long t0 = clock64();
  float scale = 1.0f;
  for (int it = 0; it < kIters; ++it) {
    scale += 1e-7f;
#pragma unroll
    for (int sub = 0; sub < kSub; ++sub) {
      // Barrier 1: warpgroup 0 may issue; 2: warpgroup 1 may (each 128 arrive, 128 wait).
      if (kTurns && wg == 1) asm volatile("bar.sync 2, 256;" ::: "memory");
      if (kTurns && wg == 0 && (it > 0 || sub > 0)) asm volatile("bar.sync 1, 256;" ::: "memory");
      ptx::wgmma_fence();
#pragma unroll
      for (int k = 0; k < kWgmmas; ++k) {
        W::mma(ptx::advance(a0, (sub * 128 * 128 + k * 32) / 16), ptx::advance(b0, k * 32 / 16),
               acc, kPromote == 0 || k > 0);
        if (kTurns && (k == 1 || k == 2)) ptx::wgmma_commit_group();  // [0, 1], [2], [3]
      }
      ptx::wgmma_commit_group();
      if constexpr (kTurns) {
        ptx::wgmma_wait<2>();  // wgmmas 0 and 1 done: the other warpgroup's group queues behind
        if (wg == 0)
          asm volatile("bar.arrive 2, 256;" ::: "memory");
        else
          asm volatile("bar.arrive 1, 256;" ::: "memory");
      }
      ptx::wgmma_wait<0>();
      ptx::fence_accumulators(acc);
      if constexpr (kPromote > 0) {
#pragma unroll
        for (int r = 0; r < W::kAccumulators; r += kPromote)
          sum[sub * W::kAccumulators + r] = fmaf(acc[r], scale, sum[sub * W::kAccumulators + r]);
      }
    }
  }
  if (kTurns && wg == 0) asm volatile("bar.sync 1, 256;" ::: "memory");  // 1's last arrival
  const long long t1 = clock64();
  float s = 0.0f;
  if constexpr (kPromote > 0) {
    for (float x : sum) s += x;
  } else {
    for (float x : acc) s += x;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x % 128 == 0) cycles[blockIdx.x * 2 + wg] = t1 - t0;
}

template <int N, int kSub, int kWarpgroups, int kPromote, Start kStart>
void row(const char* loop, const char* start, int sms) {
  auto* kernel = phase<N, kSub, kWarpgroups, kPromote, kStart>;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  gemm::DeviceBuffer<float> out{size_t(sms) * kWarpgroups * 128};
  gemm::DeviceBuffer<long long> cycles{size_t(sms) * 2};
  double best = 1e300;
  for (int launch = 0; launch < 3; ++launch) {
    CUDA_CHECK(cudaMemset(cycles.get(), 0, cycles.bytes()));
    kernel<<<sms, kWarpgroups * 128, kSmemBytes>>>(out.get(), cycles.get());
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<long long> c(size_t(sms) * 2);
    CUDA_CHECK(cudaMemcpy(c.data(), cycles.get(), cycles.bytes(), cudaMemcpyDeviceToHost));
    double total = 0;
    for (int b = 0; b < sms; ++b) total += double(std::max(c[2 * b], c[2 * b + 1]));
    best = std::min(best, total / sms);
  }
  const double wgmma_cycles = double(kWarpgroups) * kIters * kSub * kWgmmas * (N / 2);
  std::printf("  %-36s %-10s %8.0f %7.1f%%\n", loop, start, best / kIters,
              100.0 * wgmma_cycles / best);
}

}  // namespace

int main(int argc, char** argv) {
  // No options: the rows are fixed (the comment at the top of this file says what each measures).
  if (argc > 1) {
    const bool help = std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h";
    std::printf(
        "usage: %s\n  the K loop alone, two warpgroups per SM, no memory traffic: how busy "
        "the tensor pipe stays, by the phase between the warpgroups (no options)\n",
        argv[0]);
    if (!help) std::fprintf(stderr, "phase_probe: unknown argument '%s'\n", argv[1]);
    return help ? 0 : 1;
  }
  if (std::string why = gemm::hopper_unavailable_reason(); !why.empty()) {
    std::printf("phase_probe: cannot run: %s\n", why.c_str());
    return 2;
  }
  try {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    std::printf("phase_probe: %s (%d SMs), %d K blocks, no memory traffic\n", prop.name, sms,
                kIters);
    std::printf("  %-36s %-10s %8s %8s\n", "loop (per warpgroup and K block)", "start", "cycles",
                "busy");
    constexpr Start T = Start::Together, L = Start::OneLate, R = Start::Turns;
    row<128, 2, 2, 1, T>("256 x 128: 2 sub-tiles x (4 + 64 FFMA)", "together", sms);
    row<128, 2, 2, 1, L>("256 x 128: 2 sub-tiles x (4 + 64 FFMA)", "1 late", sms);
    row<128, 2, 2, 1, R>("256 x 128: 2 sub-tiles x (4 + 64 FFMA)", "turns", sms);
    row<192, 1, 2, 1, T>("128 x 192: 4 + 96 FFMA", "together", sms);
    row<192, 1, 2, 1, L>("128 x 192: 4 + 96 FFMA", "1 late", sms);
    row<192, 1, 2, 1, R>("128 x 192: 4 + 96 FFMA", "turns", sms);
    row<128, 1, 2, 1, T>("128 x 128: 4 + 64 FFMA", "together", sms);
    row<128, 1, 2, 1, R>("128 x 128: 4 + 64 FFMA", "turns", sms);
    row<128, 2, 2, 0, T>("256 x 128, no promotion", "together", sms);
    row<128, 2, 2, 2, T>("256 x 128, 32 FFMA a promotion", "together", sms);
    row<128, 2, 2, 4, T>("256 x 128, 16 FFMA a promotion", "together", sms);
    row<128, 2, 1, 1, T>("one warpgroup alone, 2 x (4 + 64 FFMA)", "alone", sms);
    row<128, 2, 1, 0, T>("one warpgroup alone, no promotion", "alone", sms);
  } catch (const std::exception& e) {
    std::printf("phase_probe: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
