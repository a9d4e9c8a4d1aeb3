// Chapter 12's own GPU checks: every compiled split variant, not only those the heuristic picks,
// against the CPU reference on ragged shapes (uneven slices of K, slices with no K block at all,
// clusters walking several tiles), the same bits from run to run, and the benchmark's ablation
// entries (B's L2 policy among them).
#include <string>
#include <vector>

#include "chapters/12_split_k/config.hpp"
#include "chapters/registry.hpp"
#include "common/launch.hpp"
#include "common/reference.hpp"
#include "tests/gpu.hpp"

namespace ch12 {
void gemm_variant(const gemm::GemmArgs& args, Variant v, cudaStream_t stream);  // kernel.cu
ClusterFit device_cluster_fit(int num_sms);                                     // kernel.cu
}  // namespace ch12

namespace gemm {
namespace {

std::string name_of(const ch12::Variant& v) {
  return std::to_string(v.block_m) + "x" + std::to_string(v.block_n) + " split " +
         std::to_string(v.split);
}

// The variant's D on fresh inputs (D poisoned first), checked against the CPU reference with
// chapter 12's bound.
std::vector<uint16_t> run_and_check(const ch12::Variant& v, const Shape& s, uint64_t seed) {
  const std::string what = name_of(v) + " " + s.str() + " seed " + std::to_string(seed);
  const HostProblem host = make_problem(s, seed, Scales::Random);
  const DeviceProblem dev(host);
  dev.poison();
  ch12::gemm_variant(dev.args(), v, nullptr);
  const std::vector<uint16_t> d = dev.download_d();
  const Chapter& ch = *find_chapter(12);
  testing::expect_matches_reference(
      check_against_reference(host, d, ch.tolerance(s), kCpuReferenceMacs), ch.max_rel_diff, what);
  return d;
}

// One row of ragged tiles (M and N stop 7 rows and 8 columns short) with K blocks that do not
// divide evenly among the CTAs; K of one block, so that all CTAs but one have an empty slice; and
// more tiles than clusters run at once, so that clusters walk several tiles and the partial sums'
// barriers turn over their phases.
TEST(Chapter12, EverySplitVariantMatchesTheReference) {
  SKIP_WITHOUT_HOPPER();
  const ch12::ClusterFit fit = ch12::device_cluster_fit(multiprocessor_count());
  for (const ch12::Variant& v : ch12::kSplitVariants) {
    const int64_t more_tiles = fit.clusters[v.split] + 3;
    for (const Shape& s :
         {Shape{v.block_m - 7, 3 * int64_t(v.block_n) - 8, 128 * (2 * v.split + 1)},
          Shape{v.block_m - 7, 2 * int64_t(v.block_n), 128},
          Shape{2 * v.block_m - 7, more_tiles * v.block_n - 8, 640}})
      run_and_check(v, s, testing::test_seed() + uint64_t(v.block_n * 10 + v.split) + s.k);
  }
}

// Each CTA adds the cluster's sums in rank order, whatever the timing: the same inputs give the
// same bits, run after run.
TEST(Chapter12, TheSameBitsEveryRun) {
  SKIP_WITHOUT_HOPPER();
  for (const ch12::Variant v : {ch12::Variant{64, 128, ch12::Multicast::None, 4},
                                ch12::Variant{128, 96, ch12::Multicast::None, 3},
                                ch12::Variant{64, 128, ch12::Multicast::None, 8}}) {
    const Shape s{v.block_m - 3, 40 * int64_t(v.block_n), 7168};
    const uint64_t seed = testing::test_seed() + uint64_t(v.split);
    const std::vector<uint16_t> first = run_and_check(v, s, seed);
    const DeviceProblem dev(make_problem(s, seed, Scales::Random));
    for (int run = 0; run < 3; ++run) {
      dev.poison();
      ch12::gemm_variant(dev.args(), v, nullptr);
      EXPECT_EQ(count_bit_differences(dev.download_d(), first), 0)
          << name_of(v) << " " << s.str() << " run " << run;
    }
  }
}

// The benchmark's ablation entries (registry.cu): split=1 is chapter 11's configuration, bit for
// bit; evict_b=normal is this chapter's configuration, bit for bit (B's L2 policy changes where
// its lines stay, not what arrives); the forced splits are right against the reference.
TEST(Chapter12, TheAblationsAreRight) {
  SKIP_WITHOUT_HOPPER();
  const Chapter& ch = *find_chapter(12);
  ASSERT_EQ(ch.ablations.size(), 5u);
  for (const Shape& s : {Shape{64, 2112, 1024}, Shape{257, 1168, 1024}, Shape{1, 256, 384},
                         Shape{100, 4096, 2048}}) {
    const HostProblem host = make_problem(s, testing::test_seed(), Scales::Random);
    const DeviceProblem dev(host);
    const std::vector<uint16_t> d11 = run_and_download(*find_chapter(11), dev);
    const std::vector<uint16_t> d12 = run_and_download(ch, dev);
    for (const Ablation& a : ch.ablations) {
      dev.poison();
      a.launch(dev.args(), nullptr);
      const std::vector<uint16_t> d = dev.download_d();
      if (std::string(a.name) == "split=1")
        EXPECT_EQ(count_bit_differences(d, d11), 0) << a.name << " " << s.str();
      if (std::string(a.name) == "evict_b=normal")
        EXPECT_EQ(count_bit_differences(d, d12), 0) << a.name << " " << s.str();
      testing::expect_matches_reference(
          check_against_reference(host, d, ch.tolerance(s), kCpuReferenceMacs), ch.max_rel_diff,
          std::string(a.name) + " " + s.str());
    }
  }
}

}  // namespace
}  // namespace gemm
