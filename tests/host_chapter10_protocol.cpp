// Chapter 10's barrier protocol, simulated on the CPU (the model: chapters/10_tma_multicast/
// protocol.hpp): the two CTAs of a cluster, their producers, their math warps and the multicast
// copies in flight, run as independent agents in random interleavings, with the kernel's barrier
// counts, ch05::PipelineState and ch10::cta_tile, and the PTX ISA's mbarrier rules.
//
// It checks what a GPU run could only show as a rare wrong answer or a hang: no copy lands in a
// stage before every math warp of that CTA has finished reading the previous contents; every math
// warp reads exactly the tiles of its (tile, K block); nothing deadlocks; no copy or arrival
// reaches a CTA that has exited. And it shows that each part is needed: with the empty barrier
// counting only the CTA's own warps, or the full barrier expecting only the CTA's own copies, or
// the arrival made after the first sub-tile, or an exit without the producer's last round of empty
// waits, some interleaving breaks; and so does a ring restarted at every tile (chapter 09). The
// exit the kernel had before (every thread of both CTAs at a cluster barrier) is right too.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "chapters/10_tma_multicast/cluster.hpp"
#include "chapters/10_tma_multicast/protocol.hpp"

namespace {

using ch10::Multicast;
using ch10::protocol::Protocol;
using ch10::protocol::Sim;

// Small rings, short K loops and several pairs per cluster, so that the producers lap the math
// warps and the ring wraps across tiles: the cases where a wrong count or phase would show.
struct Case {
  Multicast multicast;
  int stages, k_blocks, warps, pairs_m, pairs_n;
  int subtiles = 1, live_subtiles_wg1 = 1;
};
std::vector<Case> cases() {
  std::vector<Case> out;
  for (Multicast m : {Multicast::A, Multicast::B})
    for (int stages : {2, 3, 5})
      for (int k_blocks : {1, 2, 7}) {
        out.push_back({m, stages, k_blocks, 4, 2, 3});  // BLOCK_M = 64
        out.push_back({m, stages, k_blocks, 8, 2, 3});  // BLOCK_M = 128
        // BLOCK_M = 256: two sub-tiles each; warpgroup 1 with both, one or none before M.
        for (int live : {2, 1, 0}) out.push_back({m, stages, k_blocks, 8, 2, 3, 2, live});
      }
  return out;
}

std::string first_error(const Protocol& protocol, int seeds) {
  for (const Case& c : cases()) {
    Sim sim;
    sim.multicast = c.multicast;
    sim.stages = c.stages;
    sim.k_blocks = c.k_blocks;
    sim.warps = c.warps;
    sim.pairs_m = c.pairs_m;
    sim.pairs_n = c.pairs_n;
    sim.subtiles = c.subtiles;
    sim.live_subtiles_wg1 = c.warps == 8 && c.subtiles == 1 ? 1 : c.live_subtiles_wg1;
    sim.protocol = protocol;
    for (int seed = 0; seed < seeds; ++seed)
      if (std::string e = sim.run(uint64_t(seed)); !e.empty())
        return e + " (multicast " + ch10::name(c.multicast) + ", " + std::to_string(c.stages) +
               " stages, " + std::to_string(c.k_blocks) + " K blocks, " + std::to_string(c.warps) +
               " warps, " + std::to_string(c.subtiles) + " sub-tiles, seed " +
               std::to_string(seed) + ")";
  }
  return "";
}

TEST(Chapter10Protocol, NoOverwriteNoStaleReadNoDeadlockInAnyInterleavingTried) {
  EXPECT_EQ(first_error(Protocol{}, 200), "");
}

// The empty barrier counting only this CTA's math warps: the partner's producer refills its half
// of a stage while this CTA's warps are still reading it.
TEST(Chapter10Protocol, AnEmptyBarrierOfOneCtaLetsThePartnerOverwrite) {
  Protocol wrong;
  wrong.empty_counts_both_ctas = false;
  const std::string e = first_error(wrong, 200);
  EXPECT_NE(e.find("overwrote"), std::string::npos) << e;
}

// The full barrier expecting only this CTA's own copies: the phase can complete before the
// partner's half has landed, and the math warps read the previous K block's half.
TEST(Chapter10Protocol, AFullBarrierExpectingOnlyItsOwnCopiesLetsAStaleHalfBeRead) {
  Protocol wrong;
  wrong.full_expects_whole_stage = false;
  const std::string e = first_error(wrong, 200);
  EXPECT_NE(e.find("before its copy had landed"), std::string::npos) << e;
}

// Chapter 09's point, seen here too: a ring restarted at every tile (stage 0, phase 0) while the
// barriers carry on from where the last tile left them. Unless a tile's K blocks are a whole
// number of double laps of the ring (a multiple of 2 x stages: none of the cases), the producer's
// wait on an empty barrier passes on a phase that completed a lap ago.
TEST(Chapter10Protocol, ARingRestartedAtEveryTileBreaks) {
  Protocol wrong;
  wrong.ring_carried_across_tiles = false;
  const std::string e = first_error(wrong, 200);
  EXPECT_FALSE(e.empty());
}

// The 256-row tile's arrival made after the first sub-tile instead of the last: the producers
// refill the stage while the second sub-tile's wgmmas still read it.
TEST(Chapter10Protocol, AnArrivalBeforeTheLastSubtileLetsAProducerOverwrite) {
  Protocol wrong;
  wrong.arrive_after_last_subtile = false;
  const std::string e = first_error(wrong, 200);
  EXPECT_NE(e.find("overwrote"), std::string::npos) << e;
}

// The former exit: every thread of both CTAs meets at a cluster barrier, and then both exit.
TEST(Chapter10Protocol, TheClusterBarrierAtTheExitIsRightToo) {
  Protocol cluster_barrier;
  cluster_barrier.exit = ch10::protocol::Exit::kClusterBarrier;
  EXPECT_EQ(first_error(cluster_barrier, 200), "");
}

// Neither the last round nor a cluster barrier: a CTA that has finished its own tiles exits while
// its partner's math warps still arrive on its empty barriers (lane 1 of every warp, until the last
// K block).
TEST(Chapter10Protocol, ExitingWithoutTheLastRoundLetsThePartnerArriveOnAnExitedCta) {
  Protocol wrong;
  wrong.exit = ch10::protocol::Exit::kNone;
  const std::string e = first_error(wrong, 200);
  EXPECT_NE(e.find("after it had exited"), std::string::npos) << e;
}

}  // namespace
