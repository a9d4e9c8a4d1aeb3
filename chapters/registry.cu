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
namespace ch06 {
void gemm(const gemm::GemmArgs&, cudaStream_t);
void gemm_block_m_128(const gemm::GemmArgs&, cudaStream_t);
}  // namespace ch06
namespace ch07 {
void gemm(const gemm::GemmArgs&, cudaStream_t);
void gemm_block_m_128(const gemm::GemmArgs&, cudaStream_t);
}  // namespace ch07
namespace ch08 {
void gemm(const gemm::GemmArgs&, cudaStream_t);
void gemm_block_m_128(const gemm::GemmArgs&, cudaStream_t);
}  // namespace ch08
namespace ch09 {
void gemm(const gemm::GemmArgs&, cudaStream_t);
void gemm_row_major(const gemm::GemmArgs&, cudaStream_t);
void gemm_block_m_128(const gemm::GemmArgs&, cudaStream_t);
}  // namespace ch09
namespace ch10 {
void gemm(const gemm::GemmArgs&, cudaStream_t);
void gemm_multicast_off(const gemm::GemmArgs&, cudaStream_t);
void gemm_multicast_a(const gemm::GemmArgs&, cudaStream_t);
void gemm_multicast_b(const gemm::GemmArgs&, cudaStream_t);
}  // namespace ch10
namespace ch11 {
void gemm(const gemm::GemmArgs&, cudaStream_t);
void gemm_tile_ch07(const gemm::GemmArgs&, cudaStream_t);
void gemm_multicast_off(const gemm::GemmArgs&, cudaStream_t);
void gemm_multicast_a(const gemm::GemmArgs&, cudaStream_t);
void gemm_multicast_b(const gemm::GemmArgs&, cudaStream_t);
void gemm_block_m_64(const gemm::GemmArgs&, cudaStream_t);
void gemm_block_m_256(const gemm::GemmArgs&, cudaStream_t);
void gemm_block_m_128(const gemm::GemmArgs&, cudaStream_t);
}  // namespace ch11
namespace ch12 {
void gemm(const gemm::GemmArgs&, cudaStream_t);
void gemm_split_1(const gemm::GemmArgs&, cudaStream_t);
void gemm_split_2(const gemm::GemmArgs&, cudaStream_t);
void gemm_split_4(const gemm::GemmArgs&, cudaStream_t);
void gemm_split_8(const gemm::GemmArgs&, cudaStream_t);
void gemm_evict_b_normal(const gemm::GemmArgs&, cudaStream_t);
}  // namespace ch12
namespace ch13 {
void gemm(const gemm::GemmArgs&, cudaStream_t);
void gemm_alternate(const gemm::GemmArgs&, cudaStream_t);
void gemm_no_yield(const gemm::GemmArgs&, cudaStream_t);
void gemm_no_reuse(const gemm::GemmArgs&, cudaStream_t);
}  // namespace ch13
namespace ch14 {
void gemm(const gemm::GemmArgs&, cudaStream_t);
void gemm_f16(const gemm::GemmArgs&, cudaStream_t);
}  // namespace ch14

namespace gemm {

namespace {
Tolerance fp32_cuda_cores(const Shape& s) {
  return fp32_accumulation_tolerance(s.k);
}
// Chapters 02-05 accumulate all of K inside the tensor core's fp32-ish accumulator.
Tolerance tensor_cores_all_k(const Shape& s) {
  return tensor_core_fp8_tolerance(s.k, s.k);
}
// Chapter 06 on: the tensor core sums one 128-wide K block, fp32 on the CUDA cores across blocks.
Tolerance promoted_every_block(const Shape& s) {
  return tensor_core_fp8_tolerance(s.k, kScaleBlock);
}
}  // namespace

const std::vector<Chapter>& chapters() {
  static const std::vector<Chapter> list = {
      {.number = 0,
       .dir = "00_reference",
       .idea = "naive CUDA kernel: one thread per output, fp32 accumulation of dequantised values",
       .launch = ch00::gemm,
       .applies_scales = true,
       .tolerance = fp32_cuda_cores,
       .max_rel_diff = kRelDiffFp32},
      {.number = 1,
       .dir = "01_wgmma_m64n8k16",
       .idea = "one wgmma m64n8k16 (bf16) from shared memory with hand-built matrix descriptors"},
      {.number = 2,
       .dir = "02_wgmma_fp8_gemm",
       .idea = "fp8 wgmma m64n128k32 over a 128x128 tile, operands staged by ordinary loads",
       .launch = ch02::gemm,
       .tolerance = tensor_cores_all_k,
       .max_rel_diff = kRelDiffTensorCore},
      {.number = 3,
       .dir = "03_tma_mbarrier",
       .idea = "TMA loads (3-D view into core matrices) completing on an mbarrier with expect_tx",
       .launch = ch03::gemm,
       .bitwise_equal_to_previous = true,
       .tolerance = tensor_cores_all_k,
       .max_rel_diff = kRelDiffTensorCore},
      {.number = 4,
       .dir = "04_swizzle_128b",
       .idea = "128-byte swizzle: TMA writes it, the wgmma descriptor reads it",
       .launch = ch04::gemm,
       .bitwise_equal_to_previous = true,
       .tolerance = tensor_cores_all_k,
       .max_rel_diff = kRelDiffTensorCore},
      {.number = 5,
       .dir = "05_warp_specialized_pipeline",
       .idea = "a ring of stages with full/empty barriers, a TMA producer warpgroup, setmaxnreg",
       .launch = ch05::gemm,
       .bitwise_equal_to_previous = true,
       .tolerance = tensor_cores_all_k,
       .max_rel_diff = kRelDiffTensorCore,
       .records_trace = true},
      {.number = 6,
       .dir = "06_fp8_promotion",
       .idea = "fine-grained scales: fp32 promotion per K block; a 256 x 128 tile by reusing the "
               "accumulator",
       .launch = ch06::gemm,
       .applies_scales = true,
       .tolerance = promoted_every_block,
       .max_rel_diff = kRelDiffTensorCore,
       .records_trace = true,
       // The 128-row tile everywhere: what the sub-tile loop's 256-row tile buys (README).
       .ablations = {{"block_m=128", ch06::gemm_block_m_128}}},
      {.number = 7,
       .dir = "07_two_scale_b",
       .idea =
           "BLOCK_N of 144 or 160: two B scales per tile, num_former_iters fixed at compile time",
       .launch = ch07::gemm,
       .applies_scales = true,
       .bitwise_equal_to_previous = true,
       .tolerance = promoted_every_block,
       .max_rel_diff = kRelDiffTensorCore,
       .records_trace = true,
       // The 128-row widths everywhere: what the 256 x 128 tile is worth where choose_tile takes it.
       .ablations = {{"block_m=128", ch07::gemm_block_m_128}}},
      {.number = 8,
       .dir = "08_stmatrix_epilogue",
       .idea = "bf16 through stmatrix into a swizzled shared tile, written out by a TMA store",
       .launch = ch08::gemm,
       .applies_scales = true,
       .bitwise_equal_to_previous = true,
       .tolerance = promoted_every_block,
       .max_rel_diff = kRelDiffTensorCore,
       .records_trace = true,
       // The 128-row widths everywhere, as in chapter 07.
       .ablations = {{"block_m=128", ch08::gemm_block_m_128}}},
      {.number = 9,
       .dir = "09_persistent_scheduler",
       .idea = "one CTA per SM walking tiles in groups along M; the epilogue overlaps the next "
               "tile's loads",
       .launch = ch09::gemm,
       .applies_scales = true,
       .bitwise_equal_to_previous = true,
       .tolerance = promoted_every_block,
       .max_rel_diff = kRelDiffTensorCore,
       .records_trace = true,
       // Persistent in chapter 08's row-major order (group 1): persistence alone; the chapter
       // against it is the grouped order. Then the 128-row widths everywhere, as in chapter 07.
       .ablations = {{"group=1", ch09::gemm_row_major}, {"block_m=128", ch09::gemm_block_m_128}}},
      {.number = 10,
       .dir = "10_tma_multicast",
       .idea = "2-CTA clusters sharing the A or B tile by TMA multicast, on chapter 09's tile",
       .launch = ch10::gemm,
       .applies_scales = true,
       .bitwise_equal_to_previous = true,
       .tolerance = promoted_every_block,
       .max_rel_diff = kRelDiffTensorCore,
       .records_trace = true,
       // The multicast forced: "off" is chapter 09's kernel (a cluster of one), so the chapter
       // against "off" is what multicast is worth; A and B where the tiles pair up.
       .ablations = {{"multicast=off", ch10::gemm_multicast_off},
                     {"multicast=A", ch10::gemm_multicast_a},
                     {"multicast=B", ch10::gemm_multicast_b}}},
      {.number = 11,
       .dir = "11_configuration",
       .idea = "BLOCK_M, BLOCK_N, stages and multicast chosen per shape: the full kernel",
       .launch = ch11::gemm,
       .applies_scales = true,
       .bitwise_equal_to_previous = true,
       .tolerance = promoted_every_block,
       .max_rel_diff = kRelDiffTensorCore,
       .records_trace = true,
       // Chapters 06-10's tile without a cluster: what the configuration's tile is worth. Then
       // the heuristic with the multicast forced (off: what step 3's multicast on A is worth
       // where it takes it; A, B: what chapter 10's clusters would add elsewhere) and with
       // BLOCK_M forced: 64 rows at M = 128, the 128-row tiles at M = 4096, 256 everywhere.
       .ablations = {{"tile=ch07", ch11::gemm_tile_ch07},
                     {"multicast=off", ch11::gemm_multicast_off},
                     {"multicast=A", ch11::gemm_multicast_a},
                     {"multicast=B", ch11::gemm_multicast_b},
                     {"block_m=64", ch11::gemm_block_m_64},
                     {"block_m=128", ch11::gemm_block_m_128},
                     {"block_m=256", ch11::gemm_block_m_256}}},
      {.number = 12,
       .dir = "12_split_k",
       .idea = "split-K across a cluster, the partial sums added through distributed shared "
               "memory: wide tiles for every SM at M = 64 and 128",
       .launch = ch12::gemm,
       .applies_scales = true,
       // A split adds the slices' sums in another order than one K loop: not bit for bit chapter
       // 11 where it splits (split=1 is, tests/gpu_chapter12.cu).
       .bitwise_equal_to_previous = false,
       .tolerance = promoted_every_block,
       .max_rel_diff = kRelDiffTensorCore,
       .records_trace = true,
       // The split forced: 1 is chapter 11's configuration (what the split is worth), then 2, 4 and
       // 8 at the width with the fewest bytes per SM, whatever their waves. And B loaded with L2's
       // default policy (what the chapter's second change, evict_first, is worth).
       .ablations = {{"split=1", ch12::gemm_split_1},
                     {"split=2", ch12::gemm_split_2},
                     {"split=4", ch12::gemm_split_4},
                     {"split=8", ch12::gemm_split_8},
                     {"evict_b=normal", ch12::gemm_evict_b_normal}}},
      {.number = 13,
       .dir = "13_ffma_interleave",
       .idea =
           "chapter 12's kernels loaded from a rewritten cubin: the yield and reuse bits of the "
           "promotion's FFMAs",
       .launch = ch13::gemm,
       .applies_scales = true,
       // The same kernels and configuration as chapter 12; the control bits change the schedule,
       // never the arithmetic.
       .bitwise_equal_to_previous = true,
       .tolerance = promoted_every_block,
       .max_rel_diff = kRelDiffTensorCore,
       .records_trace = true,
       // The rewrites (rewrite.hpp); the chapter itself runs the unrewritten copy.
       .ablations = {{"alternate", ch13::gemm_alternate},
                     {"no_yield", ch13::gemm_no_yield},
                     {"no_reuse", ch13::gemm_no_reuse}}},
      {.number = 14,
       .dir = "14_warp_mma_sync",
       .idea = "the pre-Hopper way on Hopper: cp.async stages, ldmatrix fragments, fp8 mma.sync "
               "m16n8k32 (a side chapter)",
       .launch = ch14::gemm,
       // fp32 sums of exact fp8 products, one mma.sync (two f16 HMMAs on sm_90a) at a time: the
       // arithmetic of chapter 00, within the same bound. Against chapters 02-05 only within the
       // two bounds (tests/gpu_chapter14.cu): their tensor-core accumulator truncates.
       .tolerance = fp32_cuda_cores,
       .max_rel_diff = kRelDiffFp32,
       .side = true,
       // The operands converted to f16 once per stage, f16 mma.sync m16n8k16 on them: the same
       // products, without the conversion that the e4m3 instruction does per warp on sm_90a.
       .ablations = {{"operands=f16", ch14::gemm_f16}}},
      // Not a dense GEMM: G problems in one launch (chapters/15_grouped_gemm/grouped.hpp), with its
      // own binary, tests and the benchmark's grouped table.
      {.number = 15,
       .dir = "15_grouped_gemm",
       .idea = "the scheduler learns groups: contiguous and masked grouped GEMM for "
               "mixture-of-experts, on chapter 12's kernel"},
  };
  return list;
}

std::vector<int> gemm_chapter_numbers() {
  std::vector<int> v;
  for (const Chapter& c : chapters())
    if (c.launch) v.push_back(c.number);
  return v;
}

std::vector<uint16_t> run_and_download(const Chapter& c, const DeviceProblem& dev) {
  dev.poison();
  c.launch(dev.args(), nullptr);
  return dev.download_d();
}

const Chapter* find_chapter(int number) {
  for (const Chapter& c : chapters())
    if (c.number == number) return &c;
  return nullptr;
}

const Chapter* previous_gemm(const Chapter& c) {
  if (c.side) return find_chapter(0);
  const Chapter* prev = nullptr;
  for (const Chapter& p : chapters())
    if (p.number < c.number && p.launch && !p.side) prev = &p;
  return prev;
}

}  // namespace gemm
