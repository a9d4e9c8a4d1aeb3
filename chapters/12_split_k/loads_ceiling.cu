// How near the last chapter's kernel is to its own data movement, at M = 64 and 128.
//
// For each shape, three things timed by the benchmark's method (common/timing.hpp: an 8 GB memset
// before every run, CUDA events around the launch, then the kernel alone from CUPTI; median of
// --iters runs):
//
// 1. chapter 12's kernel, as its configuration chooses (chapter 13 runs the same kernels);
// 2. that configuration's loads and stores alone: the same grid, clusters, tiles, K slices and
//    stages, every TMA load its producer issues (the A tile, the B tile with the same L2 policy,
//    A's scales; B's two scales, 8 bytes, are left out), and the epilogue's TMA stores of each
//    tile's D (of whatever the shared tile holds), with one thread releasing each stage as soon as
//    it has landed in place of the math warpgroups: no wgmma, no promotion, no exchange, no
//    stmatrix. What the kernel cannot go below with this configuration on this GPU;
// 3. a sequential read of the same A and B and a write of D (16 bytes per thread per access,
//    every SM, in address order): what the memory gives these bytes, the ceiling of any
//    configuration.
//
// GB/s is the benchmark's measure for every row, (MK + NK + 2MN) / t, so the rows compare.
//   ./build/release/bin/loads_ceiling                  the twelve M = 64 and 128 shapes
//   ./build/release/bin/loads_ceiling --m 64 --n 7168 --k 16384
//   CH12_SPLIT=2 ./build/release/bin/loads_ceiling ...   another split, as the chapter binary takes it
//   CH12_EVICT_B=normal ./build/release/bin/loads_ceiling ...   B's L2 policy, likewise
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "chapters/04_swizzle_128b/swizzle.hpp"
#include "chapters/05_warp_specialized_pipeline/pipeline.hpp"
#include "chapters/06_fp8_promotion/promotion.hpp"
#include "chapters/08_stmatrix_epilogue/epilogue_layout.hpp"
#include "chapters/12_split_k/config.hpp"
#include "chapters/registry.hpp"
#include "common/check.hpp"
#include "common/cli.hpp"
#include "common/device.hpp"
#include "common/inputs.hpp"
#include "common/launch.hpp"
#include "common/ptx/cluster.cuh"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/tma.cuh"
#include "common/tensor_map.hpp"
#include "common/timing.hpp"

namespace ch12 {
Config configured(const gemm::Shape& s);  // kernel.cu: what the chapter launches for s
}  // namespace ch12

namespace {

constexpr int kBlockK = 128;  // one K block: one 128-byte swizzled row, one scale block

// What the loads-only kernel needs of a chapter 12 configuration.
struct LoadsPlan {
  int block_m, block_n, split, stages, tiles_m, tiles_n, num_k_blocks;
  int span;  // bytes per row of a stored panel: chapter 12's swizzle_span_for(block_n / split)
  bool b_evict_first;  // B with L2's evict_first policy, as chapter 12 loads it
};

// Thread 0 is the producer of chapter 12's kernel, thread 32 stands in for its math warpgroups and
// stores each tile's D as chapter 12's epilogue does (the CTA's own columns, one box per panel and
// 64 rows). Tiles in row-major order: at M <= 128 chapter 12 has one row of tiles, where its grouped
// order is the same.
__global__ void __launch_bounds__(64, 1)
    loads_kernel(const __grid_constant__ CUtensorMap map_a,
                 const __grid_constant__ CUtensorMap map_b,
                 const __grid_constant__ CUtensorMap map_sa,
                 const __grid_constant__ CUtensorMap map_d, LoadsPlan p) {
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t tile_a = uint32_t(p.block_m) * kBlockK, tile_b = uint32_t(p.block_n) * kBlockK;
  uint8_t* smem_d = smem;  // first: 1024-byte aligned for the swizzled store
  uint8_t* smem_a = smem_d + p.block_m * p.block_n * 2;
  uint8_t* smem_b = smem_a + p.stages * tile_a;
  auto* smem_sa = reinterpret_cast<float*>(smem_b + p.stages * tile_b);
  auto* full = reinterpret_cast<uint64_t*>(smem_sa + p.stages * p.block_m);
  uint64_t* empty = full + p.stages;
  if (threadIdx.x == 0) {
    ptx::prefetch_tensor_map(&map_a);
    ptx::prefetch_tensor_map(&map_b);
    ptx::prefetch_tensor_map(&map_sa);
    ptx::prefetch_tensor_map(&map_d);
    for (int s = 0; s < p.stages; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], 1);
    }
    ptx::fence_barrier_init();
  }
  __syncthreads();
  const int rank = p.split > 1 ? int(ptx::cluster_ctarank()) : 0;
  const int cluster = int(blockIdx.x) / p.split, clusters = int(gridDim.x) / p.split;
  const ch12::KSlice slice = ch12::k_slice(p.num_k_blocks, p.split, rank);
  const int tiles = p.tiles_m * p.tiles_n;
  if (threadIdx.x != 0 && threadIdx.x != 32) return;
  const bool producer = threadIdx.x == 0;
  ch05::PipelineState state;
  const uint64_t evict_first = ptx::l2_policy_evict_first();
  for (int tile = cluster; tile < tiles; tile += clusters) {
    const int m0 = tile / p.tiles_n * p.block_m, n0 = tile % p.tiles_n * p.block_n;
    for (int kb = slice.begin; kb < slice.end; ++kb, state.advance(p.stages)) {
      if (producer) {
        ptx::mbarrier_wait(&empty[state.stage], state.phase ^ 1);
        uint64_t* bar = &full[state.stage];
        ptx::mbarrier_arrive_expect_tx(bar, tile_a + tile_b + uint32_t(p.block_m) * 4);
        ptx::tma_load_2d(smem_a + state.stage * tile_a, &map_a, bar, kb * kBlockK, m0);
        if (p.b_evict_first)
          ptx::tma_load_2d(smem_b + state.stage * tile_b, &map_b, bar, kb * kBlockK, n0,
                           evict_first);
        else
          ptx::tma_load_2d(smem_b + state.stage * tile_b, &map_b, bar, kb * kBlockK, n0);
        ptx::tma_load_2d(smem_sa + state.stage * p.block_m, &map_sa, bar, m0, kb);
      } else {
        ptx::mbarrier_wait(&full[state.stage], state.phase);
        ptx::mbarrier_arrive(&empty[state.stage]);
      }
    }
    if (producer) continue;
    const int panel_columns = p.span / 2, share = p.block_n / p.split;
    for (int row0 = 0; row0 < p.block_m; row0 += 64)
      for (int panel = 0; panel < p.block_n / panel_columns; ++panel)
        if (panel * panel_columns / share == rank)
          ptx::tma_store_2d(&map_d, smem_d + (panel * p.block_m + row0) * p.span,
                            n0 + panel * panel_columns, m0 + row0);
    ptx::bulk_commit_group();
  }
  if (!producer) ptx::bulk_wait_group_read<0>();
}

// Every SM reads p[0, n) in address order, four independent 16-byte loads per thread in flight.
__device__ __forceinline__ int read_range(const int4* p, size_t n) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  int acc = 0;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const int4 v0 = __ldcs(p + i), v1 = __ldcs(p + i + stride);
    const int4 v2 = __ldcs(p + i + 2 * stride), v3 = __ldcs(p + i + 3 * stride);
    acc ^= v0.x ^ v0.y ^ v0.z ^ v0.w ^ v1.x ^ v1.y ^ v1.z ^ v1.w;
    acc ^= v2.x ^ v2.y ^ v2.z ^ v2.w ^ v3.x ^ v3.y ^ v3.z ^ v3.w;
  }
  for (; i < n; i += stride) {
    const int4 v = __ldcs(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  return acc;
}

// Reads A, then B, then writes D (zeros), each in address order.
__global__ void read_kernel(const int4* a, size_t na, const int4* b, size_t nb, int4* d, size_t nd,
                            int* sink) {
  const int acc = read_range(a, na) ^ read_range(b, nb);
  if (acc == 0x2545f491) *sink = acc;  // keeps the loads; the value does not matter
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < nd; i += stride)
    __stcs(d + i, make_int4(0, 0, 0, 0));
}

void launch_loads(const gemm::GemmArgs& args, const ch12::Config& c, cudaStream_t stream) {
  const gemm::Shape& s = args.shape;
  if (c.variant.multicast != ch12::Multicast::None)
    throw gemm::UnsupportedError("loads_ceiling: the configuration multicasts (" +
                                 ch12::describe(s, c) + "); the loads-only kernel does not");
  const LoadsPlan p{c.variant.block_m,
                    c.variant.block_n,
                    c.split,
                    c.stages,
                    c.tiles_m,
                    c.tiles_n,
                    int(s.k / kBlockK),
                    int(ch08::swizzle_span_for(uint32_t(c.variant.block_n / c.split))),
                    c.b_evict_first};
  const CUtensorMap map_a =
      gemm::make_tensor_map(ch04::swizzled_view(s.m, s.k, uint32_t(p.block_m)), args.a);
  const CUtensorMap map_b =
      gemm::make_tensor_map(ch04::swizzled_view(s.n, s.k, uint32_t(p.block_n)), args.b);
  const CUtensorMap map_sa = gemm::make_tensor_map(ch06::scale_a_view(s, p.block_m), args.sa);
  const CUtensorMap map_d = gemm::make_tensor_map(ch08::d_store_view(s, uint32_t(p.span)), args.d);
  const uint32_t smem = uint32_t(p.block_m * p.block_n * 2) +
                        uint32_t(p.stages) * (uint32_t(p.block_m + p.block_n) * kBlockK +
                                              uint32_t(p.block_m) * 4 + 16);
  gemm::LaunchConfig launch{dim3(c.grid), dim3(64), smem, stream, unsigned(c.cluster_size)};
  // As chapter 12's launch: no more clusters than fit at once.
  if (c.cluster_size > 1) {
    const int fit = gemm::max_active_clusters("loads_ceiling", loads_kernel, launch);
    if (fit > 0 && fit < c.clusters) launch.grid = dim3(fit * c.cluster_size);
  }
  gemm::launch("loads_ceiling", loads_kernel, launch, map_a, map_b, map_sa, map_d, p);
  CUDA_CHECK_LAUNCH();
}

void print(const char* what, const gemm::Shape& s, const gemm::Timing& t) {
  std::printf("  %-18s %8.1f %7.0f %10.1f %7.0f\n", what, t.median_ms * 1e3,
              gemm::gbps(s, t.median_ms), t.kernel_ms * 1e3,
              t.kernel_ms > 0 ? gemm::gbps(s, t.kernel_ms) : 0.0);
}

void measure(const gemm::Shape& s, const gemm::TimingOptions& opt, const gemm::L2Flusher& flusher) {
  const gemm::DeviceProblem dev(gemm::make_problem(s, gemm::kDefaultSeed, gemm::Scales::Random));
  const gemm::GemmArgs args = dev.args();
  const ch12::Config c = ch12::configured(s);
  std::printf("%s\n  chapter 12's configuration: %s\n", s.str().c_str(),
              ch12::describe(s, c).c_str());
  std::printf("  %-18s %8s %7s %10s %7s\n", "", "us", "GB/s", "kernel us", "GB/s");
  const gemm::Chapter* ch = gemm::find_chapter(12);
  print("chapter 12", s,
        gemm::time_launch([&](cudaStream_t st) { ch->launch(args, st); }, flusher, nullptr, opt));
  print("its loads, stores", s,
        gemm::time_launch([&](cudaStream_t st) { launch_loads(args, c, st); }, flusher, nullptr,
                          opt));
  const gemm::DeviceBuffer<int> sink(1);
  const int blocks = 4 * gemm::multiprocessor_count();
  print("sequential", s,
        gemm::time_launch(
            [&](cudaStream_t st) {
              read_kernel<<<blocks, 512, 0, st>>>(
                  reinterpret_cast<const int4*>(args.a), size_t(s.m * s.k) / 16,
                  reinterpret_cast<const int4*>(args.b), size_t(s.n * s.k) / 16,
                  reinterpret_cast<int4*>(args.d), size_t(s.m * s.n) * 2 / 16, sink.get());
              CUDA_CHECK_LAUNCH();
            },
            flusher, nullptr, opt));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const gemm::CliOptions cli = gemm::parse_cli(argc, argv, gemm::kDefaultShape);
    if (cli.help) {
      std::printf("%s", gemm::cli_usage(argv[0],
                                        "chapter 12's kernel beside its loads alone and "
                                        "a sequential read of its bytes")
                            .c_str());
      return 0;
    }
    bool shape_given = false;
    for (int i = 1; i < argc; ++i)
      for (const char* flag : {"--m", "--n", "--k"}) shape_given |= std::strcmp(argv[i], flag) == 0;
    std::vector<gemm::Shape> shapes;
    if (shape_given)
      shapes.push_back(cli.shape);
    else
      for (const gemm::Shape& s : gemm::kDeepGemmShapes)
        if (s.m <= 128) shapes.push_back(s);
    gemm::require_hopper();
    gemm::TimingOptions opt;
    opt.runs = cli.iters;
    opt.kernel_time = true;
    const gemm::L2Flusher flusher;
    for (const gemm::Shape& s : shapes) measure(s, opt, flusher);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "loads_ceiling: %s\n", e.what());
    return 1;
  }
}
