// Chapters running at the same time. (a) Two streams, each running a chapter on its own buffers,
// launches interleaved so that the kernels overlap on the GPU: each D must be, bit for bit, what
// the chapter gives alone (which is itself checked against the CPU reference). Every pair of GEMM
// chapters, a chapter with itself included. (b) The one-time setup of a launch (the device check,
// cached per device, and prepare_kernel's cudaFuncSetAttribute, once per kernel and device, under
// a mutex; the tensor-map entry point; the kernels' lazy loading) when two host threads make their
// first calls at the same moment: that must be the first call of a fresh process, so it runs in
// a death test's child (threadsafe style: the binary re-executed), which exits 0 only when both
// threads' results are right.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "chapters/registry.hpp"
#include "tests/gpu.hpp"

namespace gemm {
namespace {

class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// ---- (a) two streams -----------------------------------------------------------------------

// Ragged in M (1000 = 7 x 128 + 104) and N (2056 = 8 x 256 + 8); 24 K blocks, so that chapter 00
// runs for milliseconds and the fast chapters launch several times beside it.
constexpr Shape kStreamShape{1000, 2056, 3072};
constexpr int kLaunchesPerStream = 6;

// A chapter's problem and what it gives alone; two per chapter (slot 0 and 1, different inputs)
// so that a chapter can be paired with itself. Built once for the whole suite.
struct Solo {
  uint64_t seed;
  HostProblem host;
  std::unique_ptr<DeviceProblem> dev;
  std::vector<uint16_t> alone;
};

class TwoStreams : public ::testing::TestWithParam<std::tuple<int, int>> {
 protected:
  static void TearDownTestSuite() { solos().clear(); }  // device memory freed while CUDA lives
  static std::map<std::pair<int, int>, Solo>& solos() {
    static std::map<std::pair<int, int>, Solo> m;
    return m;
  }
  static const Solo& solo(const Chapter& ch, int slot) {
    auto& m = solos();
    const auto key = std::make_pair(ch.number, slot);
    if (auto it = m.find(key); it != m.end()) return it->second;
    // A seed of its own per chapter and slot, whichever test builds it first; moved by
    // GEMM_TEST_SEED like every other.
    uint64_t seed =
        std::hash<std::string>{}(std::string("TwoStreams.") + ch.dir + "." + std::to_string(slot));
    if (const char* env = std::getenv("GEMM_TEST_SEED")) seed ^= std::strtoull(env, nullptr, 10);
    Solo s;
    s.seed = seed;
    s.host = make_problem(kStreamShape, seed, scales_for(ch));
    s.dev = std::make_unique<DeviceProblem>(s.host);
    s.alone = run_and_download(ch, *s.dev);
    testing::expect_matches_reference(
        check_against_reference(s.host, s.alone, ch.tolerance(kStreamShape), kCpuReferenceMacs),
        ch.max_rel_diff,
        std::string(ch.dir) + " alone, " + kStreamShape.str() + " seed " + std::to_string(seed));
    return m.emplace(key, std::move(s)).first->second;
  }
};

TEST_P(TwoStreams, EachDIsBitForBitWhatItIsAlone) {
  SKIP_WITHOUT_HOPPER();
  const auto [nx, ny] = GetParam();
  const Chapter &cx = *find_chapter(nx), &cy = *find_chapter(ny);
  const Solo &x = solo(cx, 0), &y = solo(cy, 1);
  // Every launch writes a D of its own, poisoned beforehand, so that each one is checked, not
  // only the last.
  const std::vector<uint16_t> poison(size_t(kStreamShape.m * kStreamShape.n), kPoisonBits);
  std::vector<DeviceBuffer<uint16_t>> dx, dy;
  for (int i = 0; i < kLaunchesPerStream; ++i) {
    dx.emplace_back(poison);
    dy.emplace_back(poison);
  }
  Stream sx, sy;
  for (int i = 0; i < kLaunchesPerStream; ++i) {  // interleaved: both queues full at once
    GemmArgs ax = x.dev->args(), ay = y.dev->args();
    ax.d = reinterpret_cast<__nv_bfloat16*>(dx[i].get());
    ay.d = reinterpret_cast<__nv_bfloat16*>(dy[i].get());
    cx.launch(ax, sx.get());
    cy.launch(ay, sy.get());
  }
  CUDA_CHECK(cudaStreamSynchronize(sx.get()));
  CUDA_CHECK(cudaStreamSynchronize(sy.get()));
  const std::string both = std::string(cx.dir) + " beside " + cy.dir;
  for (int i = 0; i < kLaunchesPerStream; ++i) {
    EXPECT_EQ(count_bit_differences(dx[i].download(), x.alone), 0)
        << cx.dir << " seed " << x.seed << ", launch " << i << ", " << both
        << ": elements differ from its run alone";
    EXPECT_EQ(count_bit_differences(dy[i].download(), y.alone), 0)
        << cy.dir << " seed " << y.seed << ", launch " << i << ", " << both
        << ": elements differ from its run alone";
  }
}

std::vector<std::tuple<int, int>> chapter_pairs() {
  std::vector<std::tuple<int, int>> v;
  const std::vector<int> c = gemm_chapter_numbers();
  for (size_t i = 0; i < c.size(); ++i)
    for (size_t j = i; j < c.size(); ++j) v.emplace_back(c[i], c[j]);
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllPairs, TwoStreams, ::testing::ValuesIn(chapter_pairs()),
                         [](const auto& info) {
                           return std::string(find_chapter(std::get<0>(info.param))->dir) +
                                  "_beside_" + find_chapter(std::get<1>(info.param))->dir;
                         });

// ---- (b) first calls from two threads ------------------------------------------------------

constexpr Shape kThreadShape{200, 264, 640};

// The child's whole life. Inputs and buffers are made first (that launches only the poison
// kernel); then two threads, released together, each launch every chapter once on their own
// buffers and their own stream, so that every chapter's first call happens in both at once.
// Both threads get the same inputs: their results must agree bit for bit and match the CPU
// reference. Exits 0 when all is well, 1 otherwise, saying why on stderr.
[[noreturn]] void first_calls_from_two_threads_then_exit(uint64_t seed) {
  int failures = 0;
  try {
    struct Work {
      const Chapter* ch;
      HostProblem host;
      std::unique_ptr<DeviceProblem> dev[2];
    };
    std::vector<Work> work;
    for (const Chapter& ch : chapters()) {
      if (!ch.launch) continue;
      Work w{&ch, make_problem(kThreadShape, seed, scales_for(ch)), {}};
      for (auto& d : w.dev) {
        d = std::make_unique<DeviceProblem>(w.host);
        d->poison();
      }
      work.push_back(std::move(w));
    }
    CUDA_CHECK(cudaDeviceSynchronize());

    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::string errors[2];
    auto body = [&](int t) {
      try {
        Stream stream;
        ready.fetch_add(1);
        while (!go.load()) std::this_thread::yield();
        for (const Work& w : work) w.ch->launch(w.dev[t]->args(), stream.get());
        CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    };
    std::thread t0(body, 0), t1(body, 1);
    while (ready.load() < 2) std::this_thread::yield();
    go.store(true);
    t0.join();
    t1.join();
    for (int t = 0; t < 2; ++t)
      if (!errors[t].empty()) {
        std::fprintf(stderr, "thread %d: %s\n", t, errors[t].c_str());
        ++failures;
      }

    for (const Work& w : work) {
      const std::vector<uint16_t> d0 = w.dev[0]->download_d(), d1 = w.dev[1]->download_d();
      if (const int64_t n = count_bit_differences(d0, d1); n != 0) {
        std::fprintf(stderr, "%s: the two threads' D differ in %lld elements\n", w.ch->dir,
                     (long long)n);
        ++failures;
      }
      for (const auto* d : {&d0, &d1}) {
        const ReferenceCheck r =
            check_against_reference(w.host, *d, w.ch->tolerance(kThreadShape), kCpuReferenceMacs);
        if (r.unwritten_total || r.nan_total || r.on_bands.over_bound ||
            r.on_bands.rel_diff > w.ch->max_rel_diff) {
          std::fprintf(stderr, "%s, thread %d, %s seed %llu: %lld unwritten, %lld NaN, %s\n",
                       w.ch->dir, d == &d0 ? 0 : 1, kThreadShape.str().c_str(),
                       (unsigned long long)seed, (long long)r.unwritten_total,
                       (long long)r.nan_total, r.on_bands.str().c_str());
          ++failures;
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    ++failures;
  }
  std::fflush(stderr);
  std::exit(failures == 0 ? 0 : 1);
}

TEST(ConcurrencyDeathTest, FirstLaunchesFromTwoThreadsAtOnce) {
  SKIP_WITHOUT_HOPPER();
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: nothing prepared yet
  EXPECT_EXIT(first_calls_from_two_threads_then_exit(testing::test_seed()),
              ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace gemm
