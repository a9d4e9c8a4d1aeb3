// Chapter 13's own GPU checks: every rewrite of chapter 12's machine code gives chapter 12's D bit
// for bit (the yield and reuse bits must not change the arithmetic), on the shapes whose
// configurations cover the kernels the heuristic picks (256 x 128, 256 x 96, 128-row tiles with a
// split, 64-row tiles with and without multicast) and on ragged ones; and the same bits run after
// run.
#include <string>
#include <vector>

#include "chapters/registry.hpp"
#include "common/reference.hpp"
#include "tests/gpu.hpp"

namespace gemm {
namespace {

TEST(Chapter13, EveryRewriteGivesChapter12sBits) {
  SKIP_WITHOUT_HOPPER();
  const Chapter& ch = *find_chapter(13);
  ASSERT_EQ(ch.ablations.size(), 3u);
  for (const Shape& s :
       {Shape{4096, 1792, 1024}, Shape{4096, 2112, 512}, Shape{128, 2112, 7168},
        Shape{64, 7168, 2048}, Shape{257, 1168, 1024}, Shape{1, 256, 384}, Shape{200, 264, 640}}) {
    const HostProblem host = make_problem(s, testing::test_seed() + uint64_t(s.n), Scales::Random);
    const DeviceProblem dev(host);
    const std::vector<uint16_t> d12 = run_and_download(*find_chapter(12), dev);
    testing::expect_matches_reference(
        check_against_reference(host, d12, ch.tolerance(s), kCpuReferenceMacs), ch.max_rel_diff,
        "chapter 12 " + s.str());
    EXPECT_EQ(count_bit_differences(run_and_download(ch, dev), d12), 0) << "original " << s.str();
    for (const Ablation& a : ch.ablations) {
      for (int run = 0; run < 2; ++run) {
        dev.poison();
        a.launch(dev.args(), nullptr);
        EXPECT_EQ(count_bit_differences(dev.download_d(), d12), 0)
            << a.name << " " << s.str() << " run " << run;
      }
    }
  }
}

}  // namespace
}  // namespace gemm
