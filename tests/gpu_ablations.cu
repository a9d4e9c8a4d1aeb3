// Every chapter's ablations (registry.cu; chapters 10 and 11, whose forced multicasts may be
// refused, have their own tests): each variation computes the same function with the same
// per-element arithmetic, only on other tiles, so its D must equal the chapter's bit for bit. Shapes with ragged M and N, M = 1 (one row of
// tiles, a warpgroup with nothing to compute), and M = 4097 (a last row of tiles with one live row).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/registry.hpp"
#include "common/reference.hpp"
#include "tests/gpu.hpp"

namespace gemm {
namespace {

std::vector<int> chapters_with_ablations() {
  std::vector<int> v;
  for (const Chapter& c : chapters())
    if (c.launch && !c.ablations.empty() && c.number < 10) v.push_back(c.number);
  return v;
}

class ChapterAblations : public ::testing::TestWithParam<int> {};

TEST_P(ChapterAblations, MatchTheChapterBitForBit) {
  SKIP_WITHOUT_HOPPER();
  const Chapter& ch = *find_chapter(GetParam());
  for (const Shape& s : {Shape{257, 1168, 1024}, Shape{1, 256, 384}, Shape{4097, 2120, 1024},
                         Shape{300, 1032, 1536}}) {
    const uint64_t seed = testing::test_seed() + uint64_t(s.m);
    const DeviceProblem dev(make_problem(s, seed, scales_for(ch)));
    const std::vector<uint16_t> d = run_and_download(ch, dev);
    for (const Ablation& a : ch.ablations) {
      dev.poison();
      a.launch(dev.args(), nullptr);
      EXPECT_EQ(count_bit_differences(dev.download_d(), d), 0)
          << ch.dir << " [" << a.name << "] " << s.str() << " seed " << seed;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, ChapterAblations, ::testing::ValuesIn(chapters_with_ablations()),
                         [](const auto& info) {
                           return std::string(find_chapter(info.param)->dir);
                         });

}  // namespace
}  // namespace gemm
