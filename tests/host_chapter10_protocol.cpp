// Chapter 10's barrier protocol, simulated on the CPU: the two CTAs of a cluster, their producers,
// their math warps and the multicast copies in flight, run as independent agents in random
// interleavings. The model follows kernel.cu step by step (README, "The protocol, step by step"):
//
// - full barrier: initialised with 1; the producer's arrive.expect_tx announces the whole stage,
//   and every copy that lands in this CTA counts its bytes down, the partner's multicast half too;
// - empty barrier: initialised with 2 x the math warps; lane r of each math warp arrives on the
//   barrier of the CTA of rank r;
// - both sides walk the ring with ch05::PipelineState over the same tiles (ch10::cta_tile);
// - mbarrier semantics as the PTX ISA gives them ("mbarrier" object contents; try_wait.parity): a
//   phase completes when its pending arrivals and its tx-count are both zero, and the tx-count may
//   go negative (bytes landing before the expect_tx).
//
// It checks what a GPU run could only show as a rare wrong answer or a hang: no copy lands in a
// stage before every math warp of that CTA has finished reading the previous contents; every math
// warp reads exactly the tiles of its (tile, K block); nothing deadlocks. And it shows that the two
// counts are needed: with the empty barrier counting only the CTA's own warps, or the full barrier
// expecting only the CTA's own copies, some interleaving breaks; and so does a ring restarted at
// every tile (chapter 09).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "chapters/05_warp_specialized_pipeline/pipeline.hpp"
#include "chapters/10_tma_multicast/config.hpp"

namespace {

using ch10::Multicast;

// One mbarrier: phase = number of completed phases; its parity is the PTX "current phase" bit.
struct Barrier {
  int count = 0, pending = 0, tx = 0, phase = 0;
  explicit Barrier(int c = 0) : count(c), pending(c) {}
  void complete_if_done() {
    if (pending == 0 && tx == 0) {
      ++phase;
      pending = count;
    }
  }
  void arrive() {
    --pending;
    complete_if_done();
  }
  void arrive_expect_tx(int bytes) {
    tx += bytes;
    arrive();
  }
  void complete_tx(int bytes) {
    tx -= bytes;
    complete_if_done();
  }
  // mbarrier.try_wait.parity P: true once the phase of parity P has completed.
  bool passed(uint32_t parity) const { return uint32_t(phase & 1) != parity; }
};

// The pieces of one stage and their bytes (units, not the real sizes): the CTA's own operand tile,
// the two halves of the shared (multicast) operand tile, the A scales.
enum Piece { kOwn, kHalf0, kHalf1, kScales, kNumPieces };
constexpr int kBytes[kNumPieces] = {4, 2, 2, 1};

struct Tag {
  int coord = -1, kb = -1;  // the tile coordinate the piece belongs to, and its K block
  bool operator==(const Tag& o) const { return coord == o.coord && kb == o.kb; }
};

// The deliberate mistakes, for the tests that show each count is needed.
struct Protocol {
  bool empty_counts_both_ctas = true;  // false: init count = own warps, lane 0 arrives locally only
  bool full_expects_whole_stage = true;   // false: expect_tx of this CTA's own copies only
  bool ring_carried_across_tiles = true;  // false: a fresh PipelineState for every tile
};

struct Sim {
  // Set by the test.
  Multicast multicast = Multicast::B;
  int stages = 2, k_blocks = 1, warps = 4, pairs_m = 1, pairs_n = 1, group = 1;
  Protocol protocol;

  // State: [cta][stage].
  std::vector<std::vector<Barrier>> full, empty;
  std::vector<std::vector<std::array<Tag, kNumPieces>>> contents;
  std::vector<std::vector<std::array<int, kNumPieces>>> unread;  // warps yet to read the piece
  std::string error;

  struct Copy {
    int dest_cta, stage;
    Piece piece;
    Tag tag;
  };
  std::vector<Copy> in_flight;

  int pairs() const { return pairs_m * pairs_n; }
  // The tile coordinate each piece of the CTA of rank r carries at pair p.
  Tag expected(int rank, int pair, int kb, Piece piece) const {
    const ch09::TileCoord t = ch10::cta_tile(pair, rank, pairs_m, pairs_n, group, multicast);
    const int shared = multicast == Multicast::B ? t.n_block : t.m_block;
    const int own = multicast == Multicast::B ? t.m_block : t.n_block;
    if (piece == kScales) return {t.m_block, kb};
    return {piece == kOwn ? own : shared, kb};
  }

  void land(const Copy& c) {
    if (unread[c.dest_cta][c.stage][c.piece] > 0 && error.empty())
      error = "a copy overwrote stage " + std::to_string(c.stage) + " of CTA " +
              std::to_string(c.dest_cta) + " before all its math warps had read it";
    contents[c.dest_cta][c.stage][c.piece] = c.tag;
    unread[c.dest_cta][c.stage][c.piece] = warps;
    full[c.dest_cta][c.stage].complete_tx(kBytes[c.piece]);
  }

  // Where a producer or a math warp of CTA `rank` is in its walk: the cluster's pairs of tiles,
  // each pair's K blocks, and the ring position carried across them.
  struct Walker {
    explicit Walker(int r) : rank(r) {}
    int rank, pair = 0, kb = 0;
    ch05::PipelineState state;
    bool done = false;
    void next_k_block(const Sim& sim) {
      state.advance(uint32_t(sim.stages));
      if (++kb == sim.k_blocks) {
        kb = 0;
        done = ++pair == sim.pairs();
        if (!sim.protocol.ring_carried_across_tiles) state = ch05::PipelineState{};
      }
    }
  };

  // The producer of CTA `rank` (kernel.cu, "Producer warpgroup"), one action per call.
  struct Producer : Walker {
    using Walker::Walker;
    bool step(Sim& sim) {
      if (done) return false;
      if (!sim.empty[rank][state.stage].passed(state.phase ^ 1)) return false;
      const int own_bytes = kBytes[kOwn] + kBytes[kHalf0 + rank] + kBytes[kScales];
      sim.full[rank][state.stage].arrive_expect_tx(sim.protocol.full_expects_whole_stage
                                                       ? kBytes[kOwn] + kBytes[kHalf0] +
                                                             kBytes[kHalf1] + kBytes[kScales]
                                                       : own_bytes);
      const Piece half = Piece(kHalf0 + rank);
      sim.in_flight.push_back({rank, int(state.stage), kOwn, sim.expected(rank, pair, kb, kOwn)});
      for (int dest = 0; dest < 2; ++dest)  // multicast: the same half into both CTAs
        sim.in_flight.push_back({dest, int(state.stage), half, sim.expected(rank, pair, kb, half)});
      sim.in_flight.push_back(
          {rank, int(state.stage), kScales, sim.expected(rank, pair, kb, kScales)});
      next_k_block(sim);
      return true;
    }
  };

  // One math warp of CTA `rank` (kernel.cu, "Math warpgroups"): wait, read (the wgmmas, then
  // wgmma.wait_group), arrive.
  struct MathWarp : Walker {
    using Walker::Walker;
    int step_in_block = 0;
    bool step(Sim& sim) {
      if (done) return false;
      const uint32_t s = state.stage;
      if (step_in_block == 0) {  // mbarrier wait on the full barrier, then the wgmmas start
        if (!sim.full[rank][s].passed(state.phase)) return false;
        for (int p = 0; p < kNumPieces; ++p)
          if (!(sim.contents[rank][s][p] == sim.expected(rank, pair, kb, Piece(p))) &&
              sim.error.empty())
            sim.error = "a math warp of CTA " + std::to_string(rank) + " read piece " +
                        std::to_string(p) + " of stage " + std::to_string(s) +
                        " before its copy had landed";
        step_in_block = 1;
      } else if (step_in_block == 1) {  // wgmma.wait_group 0: the reads are over
        for (int p = 0; p < kNumPieces; ++p) --sim.unread[rank][s][p];
        step_in_block = 2;
      } else {  // lane r arrives on the empty barrier of the CTA of rank r
        if (sim.protocol.empty_counts_both_ctas) {
          for (int r = 0; r < 2; ++r) sim.empty[r][s].arrive();
        } else {
          sim.empty[rank][s].arrive();
        }
        step_in_block = 0;
        next_k_block(sim);
      }
      return true;
    }
  };

  // Runs to the end in an interleaving drawn from `seed`; returns the first error, "" if none.
  std::string run(uint64_t seed) {
    const int empty_count = protocol.empty_counts_both_ctas ? 2 * warps : warps;
    full.assign(2, std::vector<Barrier>(size_t(stages), Barrier(1)));
    empty.assign(2, std::vector<Barrier>(size_t(stages), Barrier(empty_count)));
    contents.assign(2, std::vector<std::array<Tag, kNumPieces>>(size_t(stages)));
    unread.assign(2, std::vector<std::array<int, kNumPieces>>(size_t(stages)));
    error.clear();
    in_flight.clear();
    std::vector<Producer> producers = {Producer(0), Producer(1)};
    std::vector<MathWarp> math;
    for (int r = 0; r < 2; ++r)
      for (int w = 0; w < warps; ++w) math.push_back(MathWarp(r));
    std::mt19937_64 rng(seed);
    for (;;) {
      // Every agent that can act: each producer, each math warp, each copy in flight.
      std::vector<int> ready;  // < 2: producer; < 2 + math: warp; else copy
      for (int i = 0; i < 2; ++i)
        if (!producers[size_t(i)].done) ready.push_back(i);
      for (size_t i = 0; i < math.size(); ++i)
        if (!math[i].done) ready.push_back(2 + int(i));
      for (size_t i = 0; i < in_flight.size(); ++i) ready.push_back(2 + int(math.size() + i));
      if (ready.empty()) return error;
      std::shuffle(ready.begin(), ready.end(), rng);
      bool moved = false;
      for (int a : ready) {
        if (a < 2) {
          moved = producers[size_t(a)].step(*this);
        } else if (a < 2 + int(math.size())) {
          moved = math[size_t(a - 2)].step(*this);
        } else {
          const size_t i = size_t(a - 2) - math.size();
          const Copy c = in_flight[i];
          in_flight.erase(in_flight.begin() + long(i));
          land(c);
          moved = true;
        }
        if (moved) break;
      }
      if (!error.empty()) return error;
      if (!moved) return "deadlock: no agent can act";
    }
  }
};

// Small rings, short K loops and several pairs per cluster, so that the producers lap the math
// warps and the ring wraps across tiles: the cases where a wrong count or phase would show.
struct Case {
  Multicast multicast;
  int stages, k_blocks, warps, pairs_m, pairs_n;
};
std::vector<Case> cases() {
  std::vector<Case> out;
  for (Multicast m : {Multicast::A, Multicast::B})
    for (int stages : {2, 3, 5})
      for (int k_blocks : {1, 2, 7})
        for (int warps : {4, 8})  // BLOCK_M = 64 and 128
          out.push_back({m, stages, k_blocks, warps, 2, 3});
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
    sim.protocol = protocol;
    for (int seed = 0; seed < seeds; ++seed)
      if (std::string e = sim.run(uint64_t(seed)); !e.empty())
        return e + " (multicast " + ch10::name(c.multicast) + ", " + std::to_string(c.stages) +
               " stages, " + std::to_string(c.k_blocks) + " K blocks, " + std::to_string(c.warps) +
               " warps, seed " + std::to_string(seed) + ")";
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

}  // namespace
