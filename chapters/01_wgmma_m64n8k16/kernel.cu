// Chapter 01: the smallest complete use of a Hopper tensor core.
//
// One warpgroup (4 warps, 128 threads) computes D (64 x 8, fp32) = A (64 x 16, bf16) * B (16 x 8,
// bf16) with a single wgmma.mma_async m64n8k16. Everything the instruction needs is built here by
// hand: the operands in shared memory in the no-swizzle core-matrix layout (layout.hpp), the two
// 64-bit matrix descriptors, the fences around the asynchronous MMA, and the map from accumulator
// registers to elements of D.
//
// PTX ISA 9.7.15, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions":
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-async
#include <string>

#include "chapters/01_wgmma_m64n8k16/ch01.hpp"
#include "common/check.hpp"
#include "common/device.hpp"
#include "common/ptx/descriptor.hpp"
#include "common/ptx/wgmma.cuh"

namespace ch01 {

namespace {

static_assert(kAccumulatorsPerThread == 4, "m64n8 with fp32 accumulators: 4 registers a thread");
static_assert(kLeadingByteOffset % 16 == 0 && kStrideByteOffset % 16 == 0,
              "the descriptor stores LBO and SBO in 16-byte units");

// The two operands, one after the other. Without swizzle wgmma needs only 16-byte alignment; 128
// keeps every core matrix inside one 128-byte line.
struct SharedStorage {
  alignas(128) uint16_t a[kABytes / kElementBytes];  // 16 core matrices
  alignas(128) uint16_t b[kBBytes / kElementBytes];  // 2 core matrices
};

// a: A, 64 x 16 row-major. b: B in global memory as kBLayout says. d: D, 64 x 8 row-major.
template <BLayout kBLayout>
__global__ void __launch_bounds__(kNumThreads, 1)
    wgmma_m64n8k16_kernel(const uint16_t* __restrict__ a, const uint16_t* __restrict__ b,
                          float* __restrict__ d) {
  __shared__ SharedStorage smem;
  const int thread = threadIdx.x;  // 0..127: the warpgroup is the whole block

  // 1. Ordinary loads and stores put A and B into the core-matrix layout. The tensor core does not
  //    read row-major tiles: it reads 8 x 16-byte core matrices, which layout.hpp places.
  for (int i = thread; i < kM * kK; i += kNumThreads) {
    const int m = i / kK, k = i % kK;
    smem.a[a_offset(m, k) / kElementBytes] = a[i];
  }
  for (int i = thread; i < kK * kN; i += kNumThreads) {
    const int k = i / kN, n = i % kN;
    smem.b[b_offset(k, n, kBLayout) / kElementBytes] = b[b_global_index(k, n, kBLayout)];
  }

  // 2. wgmma reads shared memory through the async proxy, which does not see this thread's generic
  //    stores until a proxy fence orders them; the barrier then makes every thread's stores (and
  //    fences) complete before any warp issues the MMA.
  ptx::fence_proxy_async_shared();
  __syncthreads();

  // 3. The matrix descriptors (PTX ISA 9.7.15.5.1.2.2, "Matrix Descriptor Format"), field by field:
  //    start address  shared-window byte address of the operand's first core matrix (bits 0-13,
  //                   >> 4: every field counts 16-byte units);
  //    LBO (16-29)    bytes from one core matrix to the next along K: 128, the k = 8..15 half of
  //                   a group of 8 rows sits right after its k = 0..7 half;
  //    SBO (32-45)    bytes from one core matrix to the next along M (A) or N (B): 256, past the
  //                   two core matrices of the previous 8 rows. B has one group of 8 columns
  //                   (N = 8), so its SBO is never used; it stays 256 so that N = 16 would work;
  //    base offset    (49-51) only for swizzled tiles that start off the swizzle pattern: 0;
  //    layout type    (62-63) Swizzle::None, "interleave": core matrices stored as they are.
  //    B N-major keeps the same meanings (LBO along K, SBO along N) with rows of 8 n instead of
  //    8 k; imm-trans-b below tells the tensor core which of the two it is reading.
  const uint64_t desc_a = ptx::encode(
      {ptx::shared_address(smem.a), kLeadingByteOffset, kStrideByteOffset, 0, ptx::Swizzle::None});
  const uint64_t desc_b = ptx::encode(
      {ptx::shared_address(smem.b), kLeadingByteOffset, kStrideByteOffset, 0, ptx::Swizzle::None});

  // 4. The MMA. The accumulators live in registers: 64 x 8 fp32 values spread over 128 threads,
  //    4 each. wgmma.fence orders the registers' earlier writes (the zeros) before the asynchronous
  //    MMA; commit_group closes the batch of MMAs issued so far (one); wait_group 0 blocks until
  //    no batch is in flight, after which the registers hold D.
  float acc[kAccumulatorsPerThread] = {0.0f, 0.0f, 0.0f, 0.0f};
  const int accumulate = 0;  // scale-d: 0 gives D = A * B (the registers' old values are ignored)
  ptx::wgmma_fence();
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %6, 0;\n"  // scale-d is a predicate: D = A * B + (p ? D : 0)
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3},"  // d: this thread's 4 fp32 accumulators
      " %4,"               // a-desc: A from shared memory
      " %5,"               // b-desc: B from shared memory
      " p,"                // scale-d
      " %7, %8,"           // imm-scale-a, imm-scale-b: 1 (-1 would negate the operand)
      " %9, %10;\n"        // imm-trans-a, imm-trans-b: 0 = K-major, 1 = M- (N-) major
      "}\n"
      : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(1), "n"(1), "n"(0), "n"(trans_b(kBLayout)));
  ptx::wgmma_commit_group();
  ptx::wgmma_wait<0>();
  ptx::fence_accumulators(acc);

  // 5. Register r of this thread holds D at accumulator_position(thread, r) (PTX ISA 9.7.15.5.1.1,
  //    "Register Fragments"): warp w owns rows 16w..16w+15, each quad of lanes a row pair.
#pragma unroll
  for (int r = 0; r < kAccumulatorsPerThread; ++r) {
    const ptx::RowCol p = ptx::accumulator_position(thread, r);
    d[p.row * kN + p.col] = acc[r];
  }
}

}  // namespace

std::vector<float> run_wgmma_m64n8k16(const std::vector<uint16_t>& a_bf16_bits,
                                      const std::vector<uint16_t>& b_bf16_bits, BLayout b_layout) {
  if (a_bf16_bits.size() != size_t(kM * kK))
    throw gemm::UnsupportedError("ch01: A must hold 64 x 16 = 1024 bf16 values, got " +
                                 std::to_string(a_bf16_bits.size()));
  if (b_bf16_bits.size() != size_t(kK * kN))
    throw gemm::UnsupportedError("ch01: B must hold 16 x 8 = 128 bf16 values, got " +
                                 std::to_string(b_bf16_bits.size()));
  gemm::require_hopper();

  const gemm::DeviceBuffer<uint16_t> a(a_bf16_bits), b(b_bf16_bits);
  const gemm::DeviceBuffer<float> d(size_t(kM * kN));
  // All-ones bytes are a NaN: an element the kernel never writes cannot pass the check.
  CUDA_CHECK(cudaMemset(d.get(), 0xFF, d.bytes()));
  if (b_layout == BLayout::KMajor)
    wgmma_m64n8k16_kernel<BLayout::KMajor><<<1, kNumThreads>>>(a.get(), b.get(), d.get());
  else
    wgmma_m64n8k16_kernel<BLayout::NMajor><<<1, kNumThreads>>>(a.get(), b.get(), d.get());
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  return d.download();
}

}  // namespace ch01
