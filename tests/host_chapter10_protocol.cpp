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
// - the 256-row tile: a math warp reads the stage for each of its warpgroup's sub-tiles in turn
//   and arrives once, after the last one's wgmma.wait_group; sub-tiles wholly past M are skipped
//   (warpgroup 1 may have fewer live sub-tiles than warpgroup 0), and the warp still arrives;
// - the exit: every thread of both CTAs meets at a cluster barrier before either CTA exits.
//
// It checks what a GPU run could only show as a rare wrong answer or a hang: no copy lands in a
// stage before every math warp of that CTA has finished reading the previous contents; every math
// warp reads exactly the tiles of its (tile, K block); nothing deadlocks; no copy or arrival
// reaches a CTA that has exited. And it shows that each part is needed: with the empty barrier
// counting only the CTA's own warps, or the full barrier expecting only the CTA's own copies, or
// the arrival made after the first sub-tile, or no cluster barrier at the exit, some interleaving
// breaks; and so does a ring restarted at every tile (chapter 09).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "chapters/05_warp_specialized_pipeline/pipeline.hpp"
#include "chapters/10_tma_multicast/cluster.hpp"

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
  bool arrive_after_last_subtile = true;  // false: after the first sub-tile's wait
  bool cluster_sync_at_exit = true;       // false: a CTA exits when its own work is done
};

struct Sim {
  // Set by the test.
  Multicast multicast = Multicast::B;
  int stages = 2, k_blocks = 1, warps = 4, pairs_m = 1, pairs_n = 1, group = 1;
  int subtiles = 1;           // 2 at BLOCK_M = 256
  int live_subtiles_wg1 = 1;  // warpgroup 1's sub-tiles before M (warps >= 4); warpgroup 0 all
  Protocol protocol;

  // State: [cta][stage].
  std::vector<std::vector<Barrier>> full, empty;
  std::vector<std::vector<std::array<Tag, kNumPieces>>> contents;
  std::vector<std::vector<std::array<int, kNumPieces>>> unread;  // warps yet to read the piece
  bool exited[2] = {false, false};
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
    if (exited[c.dest_cta] && error.empty())
      error = "a copy landed in CTA " + std::to_string(c.dest_cta) + " after it had exited";
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

  // One math warp of CTA `rank` (kernel.cu, "Math warpgroups"): wait, then per live sub-tile
  // read (the wgmmas, then wgmma.wait_group), then arrive.
  struct MathWarp : Walker {
    MathWarp(int r, int live) : Walker(r), live(live) {}
    int live;  // its warpgroup's sub-tiles before M
    int step_in_block = 0, sub = 0;
    bool arrived = false;
    void check_contents(Sim& sim, uint32_t s) const {
      for (int p = 0; p < kNumPieces; ++p)
        if (!(sim.contents[rank][s][p] == sim.expected(rank, pair, kb, Piece(p))) &&
            sim.error.empty())
          sim.error = "a math warp of CTA " + std::to_string(rank) + " read piece " +
                      std::to_string(p) + " of stage " + std::to_string(s) +
                      " before its copy had landed";
    }
    void arrive(Sim& sim, uint32_t s) {  // lane r arrives on the empty barrier of CTA r
      for (int r = 0; r < 2; ++r) {
        if (!sim.protocol.empty_counts_both_ctas && r != rank) continue;
        if (sim.exited[r] && sim.error.empty())
          sim.error = "a math warp of CTA " + std::to_string(rank) +
                      " arrived on an empty barrier of CTA " + std::to_string(r) +
                      " after it had exited";
        sim.empty[r][s].arrive();
      }
      arrived = true;
    }
    bool step(Sim& sim) {
      if (done) return false;
      const uint32_t s = state.stage;
      if (step_in_block == 0) {  // mbarrier wait on the full barrier, then sub-tile 0's wgmmas
        if (!sim.full[rank][s].passed(state.phase)) return false;
        sub = 0;
        if (live > 0) check_contents(sim, s);
        step_in_block = 1;
      } else if (step_in_block == 1) {  // wgmma.wait_group 0 of sub-tile `sub`
        if (!sim.protocol.arrive_after_last_subtile && sub == 0 && !arrived) arrive(sim, s);
        if (sub + 1 < live) {  // the next sub-tile's wgmmas read the stage again
          ++sub;
          check_contents(sim, s);
        } else {  // the reads are over
          for (int p = 0; p < kNumPieces; ++p) --sim.unread[rank][s][p];
          step_in_block = 2;
        }
      } else {
        if (!arrived) arrive(sim, s);
        arrived = false;
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
    exited[0] = exited[1] = false;
    std::vector<Producer> producers = {Producer(0), Producer(1)};
    std::vector<MathWarp> math;
    for (int r = 0; r < 2; ++r)
      for (int w = 0; w < warps; ++w)
        math.push_back(MathWarp(r, w < 4 ? subtiles : live_subtiles_wg1));
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
      // Without the cluster barrier at the end, a CTA exits as soon as its own producer and math
      // warps are done and nothing is on its way to it.
      if (!protocol.cluster_sync_at_exit)
        for (int r = 0; r < 2; ++r) {
          bool own_done = producers[size_t(r)].done;
          for (const MathWarp& m : math) own_done = own_done && (m.rank != r || m.done);
          for (const Copy& c : in_flight) own_done = own_done && c.dest_cta != r;
          exited[r] = exited[r] || own_done;
        }
    }
  }
};

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

// No cluster barrier at the end: a CTA that has finished its own tiles exits while its partner's
// math warps still arrive on its empty barriers (lane 1 of every warp, until the last K block).
TEST(Chapter10Protocol, ExitingWithoutTheClusterBarrierLetsThePartnerArriveOnAnExitedCta) {
  Protocol wrong;
  wrong.cluster_sync_at_exit = false;
  const std::string e = first_error(wrong, 200);
  EXPECT_NE(e.find("after it had exited"), std::string::npos) << e;
}

}  // namespace
