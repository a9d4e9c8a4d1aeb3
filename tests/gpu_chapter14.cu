// Chapter 14's own GPU checks (a side chapter). Its arithmetic is chapter 00's: fp32 sums of exact
// fp8 products, so the registry holds it to chapter 00's bound and tests/gpu_chapters.cu compares
// it with chapter 00. Here: against chapters 02 to 05, which compute the same unscaled product but
// truncate in the tensor core's accumulator, only within the two bounds added (never bit for bit);
// its f16 ablation within the same bound; and the sum that separates the two accumulators,
// 448 x 448 over K = 16384, exact here where chapters 02-05 return 2^31.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "chapters/registry.hpp"
#include "common/reference.hpp"
#include "tests/gpu.hpp"

namespace gemm {
namespace {

double bound(const Tolerance& t, double ref, double abs_sum) {
  return t.out_rel * std::fabs(ref) + t.terms_rel * abs_sum + t.abs_floor;
}

std::vector<uint16_t> run_f16(const DeviceProblem& dev) {
  const Chapter& ch = *find_chapter(14);
  dev.poison();
  ch.ablations.at(0).launch(dev.args(), nullptr);
  return dev.download_d();
}

// No GPU needed: the registry keeps side chapters out of the main line's chain. Chapter 14's
// predecessor is chapter 00; no chapter's predecessor is a side chapter, so a chapter after 14
// would still be compared, bit for bit where it says so, with chapter 13.
TEST(Chapter14, IsASideChapter) {
  const Chapter& ch = *find_chapter(14);
  EXPECT_TRUE(ch.side);
  EXPECT_FALSE(ch.bitwise_equal_to_previous);
  EXPECT_FALSE(ch.applies_scales);
  ASSERT_NE(previous_gemm(ch), nullptr);
  EXPECT_EQ(previous_gemm(ch)->number, 0);
  ASSERT_EQ(ch.ablations.size(), 1u);
  EXPECT_STREQ(ch.ablations[0].name, "operands=f16");
  for (const Chapter& c : chapters())
    if (c.launch && !c.side)
      if (const Chapter* p = previous_gemm(c)) EXPECT_FALSE(p->side) << c.dir;
}

const Shape kShapes[] = {{257, 136, 1024}, {100, 2120, 7168}, {130, 264, 16384}, {64, 7168, 2048}};

// On the CPU reference's bands: |D14 - Dx| <= bound14 + boundx for x = 02..05, and both within
// their own bound; the f16 ablation within chapter 14's.
TEST(Chapter14, WithinTheBoundsOfChapters02To05) {
  SKIP_WITHOUT_HOPPER();
  const Chapter& ch = *find_chapter(14);
  for (const Shape& s : kShapes) {
    const uint64_t seed = testing::seed_for("Chapter14." + testing::shape_param_name(s));
    const HostProblem host = make_problem(s, seed, Scales::Unit);
    const DeviceProblem dev(host);
    const BandReference ref = reference_on_bands(host, kCpuReferenceMacs);
    const std::string context = s.str() + " seed " + std::to_string(seed);
    const std::vector<uint16_t> d = run_and_download(ch, dev);
    testing::expect_matches_reference(check_against_reference(ref, d, ch.tolerance(s)),
                                      ch.max_rel_diff, "14 " + context);
    testing::expect_matches_reference(check_against_reference(ref, run_f16(dev), ch.tolerance(s)),
                                      ch.max_rel_diff, "14 operands=f16 " + context);
    for (int number : {2, 3, 4, 5}) {
      const Chapter& other = *find_chapter(number);
      const std::vector<uint16_t> dx = run_and_download(other, dev);
      const Tolerance t14 = ch.tolerance(s), tx = other.tolerance(s);
      int64_t row_in_bands = 0, over = 0;
      for (const auto& [begin, end] : ref.bands)
        for (int64_t m = begin; m < end; ++m, ++row_in_bands)
          for (int64_t n = 0; n < s.n; ++n) {
            const size_t i = size_t(row_in_bands * s.n + n);
            const double r = ref.rows.value[i], a = ref.rows.abs_sum[i];
            const double x = bf16_to_float(d[size_t(m * s.n + n)]);
            const double y = bf16_to_float(dx[size_t(m * s.n + n)]);
            over += !(std::fabs(x - y) <= bound(t14, r, a) + bound(tx, r, a));
          }
      EXPECT_EQ(over, 0) << context << ": elements where chapter 14 and " << other.dir
                         << " differ by more than their two bounds";
    }
  }
}

// +448 everywhere (the largest e4m3), K = 16384: every element of D is 448^2 * 16384 = 49 * 2^26
// = 3288334336, exactly representable in fp32 and bf16. mma.sync adds each instruction's products
// to the fp32 accumulator exactly here (every partial sum is a multiple of 2^17 below 2^32), so D
// is exact; chapters 02-05's wgmma accumulator gives 2^31 (tests/gpu_special_values.cu).
TEST(Chapter14, LargestInputsSumExactly) {
  SKIP_WITHOUT_HOPPER();
  const Shape s{65, 136, 16384};
  HostProblem host = make_problem(s, testing::test_seed(), Scales::Unit);
  std::fill(host.a.begin(), host.a.end(), fp8(448.0f));
  std::fill(host.b.begin(), host.b.end(), fp8(448.0f));
  const DeviceProblem dev(host);
  const uint16_t want = float_to_bf16_bits(3288334336.0f);
  ASSERT_EQ(double(bf16_to_float(want)), 3288334336.0);
  for (bool f16 : {false, true}) {
    const std::vector<uint16_t> d = f16 ? run_f16(dev) : run_and_download(*find_chapter(14), dev);
    int64_t off = 0;
    for (uint16_t x : d) off += x != want;
    EXPECT_EQ(off, 0) << (f16 ? "operands=f16" : "e4m3") << ": elements away from 3288334336";
  }
}

}  // namespace
}  // namespace gemm
