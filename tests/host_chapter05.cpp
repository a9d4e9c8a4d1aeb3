// Chapter 05's plain arithmetic: stage counts from the shared-memory budget, and the phase
// bookkeeping of the ring, run against a model of mbarrier parity waits.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "chapters/05_warp_specialized_pipeline/pipeline.hpp"

namespace {

TEST(Chapter05, StagesFromTheBudget) {
  const uint32_t stage = 128 * 128 + 256 * 128;  // A + B of a 128 x 256 tile, BLOCK_K 128
  EXPECT_EQ(ch05::stages_for_budget(227 * 1024 - 1024, stage, 128, 8), 4);
  EXPECT_EQ(ch05::stages_for_budget(227 * 1024, 128 * 128 * 2, 128, 8), 7);
  EXPECT_EQ(ch05::stages_for_budget(227 * 1024, 128 * 128 * 2, 128, 6), 6);  // capped
  EXPECT_EQ(ch05::stages_for_budget(100, stage, 128, 8), 0);
}

TEST(Chapter05, StateWalksTheRing) {
  ch05::PipelineState s;
  for (int kb = 0; kb < 50; ++kb, s.advance(3)) {
    EXPECT_EQ(s.stage, uint32_t(kb % 3));
    EXPECT_EQ(s.phase, uint32_t((kb / 3) % 2));
  }
}

// An mbarrier: `completed` phases so far and the arrivals still missing in the current one.
// try_wait(parity) succeeds when the phase with that parity has completed, i.e. when the current
// (incomplete) phase has the other parity. A fresh barrier is in phase 0, so waiting for parity 1
// succeeds at once: the "previous phase" counts as complete.
struct Barrier {
  int expected = 1, pending = 1, completed = 0;
  bool try_wait(uint32_t parity) const { return uint32_t(completed % 2) != parity; }
  void arrive() {
    if (--pending == 0) ++completed, pending = expected;
  }
};

TEST(Chapter05, RingNeverOverwritesAnUnreadStage) {
  const int kStages = 4, kMathWarps = 8, kBlocks = 37;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Barrier> full(kStages), empty(kStages);
    for (auto& b : empty) b.expected = b.pending = kMathWarps;
    std::vector<int> slot(kStages, -1);  // which K block each stage holds
    ch05::PipelineState producer;
    std::vector<ch05::PipelineState> warp(kMathWarps);
    std::vector<int> warp_kb(kMathWarps, 0), warp_seen(kMathWarps, 0);
    int produced = 0;
    // Random interleaving of the producer and the math warps, each a step at a time.
    while (true) {
      bool all_done = produced == kBlocks;
      for (int w = 0; w < kMathWarps; ++w) all_done &= warp_kb[w] == kBlocks;
      if (all_done) break;
      const int who = int(rng() % (kMathWarps + 1));
      if (who == kMathWarps) {
        if (produced == kBlocks || !empty[producer.stage].try_wait(producer.phase ^ 1)) continue;
        // Every warp must have released the stage's previous block.
        for (int w = 0; w < kMathWarps; ++w)
          ASSERT_TRUE(slot[producer.stage] < 0 || warp_seen[w] > slot[producer.stage]);
        slot[producer.stage] = produced++;
        full[producer.stage].arrive();  // TMA's bytes landed
        producer.advance(kStages);
      } else {
        auto& s = warp[who];
        if (warp_kb[who] == kBlocks || !full[s.stage].try_wait(s.phase)) continue;
        ASSERT_EQ(slot[s.stage], warp_kb[who]) << "a warp read the wrong K block";
        warp_seen[who] = ++warp_kb[who];
        empty[s.stage].arrive();
        s.advance(kStages);
      }
    }
  }
}

}  // namespace
