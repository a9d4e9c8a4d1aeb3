// Chapter 10's barrier protocol as a model that runs on the CPU: the two CTAs of a cluster, their
// producers, their math warps and the multicast copies in flight, as independent agents taking
// one action at a time. The model follows kernel.cu step by step (README, "The protocol, step by
// step"):
//
// - full barrier: initialised with 1; the producer's arrive.expect_tx announces the whole stage,
//   and every copy that lands in this CTA counts its bytes down, the partner's multicast half too
//   (the kernel's barrier expects a second arrival, from the cp.async of scale B that chapter 06
//   added; it stays inside the CTA, and the model leaves it out);
// - empty barrier: initialised with 2 x the math warps; lane r of each math warp arrives on the
//   barrier of the CTA of rank r (the kernel now has every math thread arrive on both CTAs'
//   barriers, initialised with 2 x the math threads, for the memory model's sake (chapter 06's
//   NOTES.md, "8. Scale B through the stage (2026-11-24)"); the model keeps one arrival per warp:
//   the same protocol, counted per warp);
// - both sides walk the ring with ch05::PipelineState over the same tiles (ch10::cta_tile);
// - mbarrier semantics as the PTX ISA gives them ("mbarrier" object contents; try_wait.parity): a
//   phase completes when its pending arrivals and its tx-count are both zero, and the tx-count may
//   go negative (bytes landing before the expect_tx).
//
// - the 256-row tile: a math warp reads the stage for each of its warpgroup's sub-tiles in turn
//   and arrives once, after the last one's wgmma.wait_group; sub-tiles wholly past M are skipped
//   (warpgroup 1 may have fewer live sub-tiles than warpgroup 0), and the warp still arrives;
// - the exit: each producer, past its last K block, waits once more on each empty barrier (its
//   last round: each wait passes once both CTAs' warps have released the stage's last use); a
//   CTA exits when its producer's last round is over, its math warps are done and no copy is on
//   its way to it. (Before 2026-11-27 the kernel had every thread of both CTAs meet at a cluster
//   barrier instead, which the model still runs: Exit::kClusterBarrier.)
//
// Sim::run(seed) runs it to the end in a random interleaving and returns the first broken rule:
// a copy landing in a stage before every math warp of that CTA has finished reading the previous
// contents; a math warp reading anything but the tiles of its (tile, K block); a deadlock; a copy
// or an arrival reaching a CTA that has exited. Protocol holds the deliberate mistakes, each of
// which some interleaving breaks (tests/host_chapter10_protocol.cpp). Sim::run_cta0_first() runs
// one fixed interleaving, and with `record` set the Sim keeps a log of what happened at each step
// (Event), which draw.hpp draws (draw_protocol). Plain C++, host only.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "chapters/05_warp_specialized_pipeline/pipeline.hpp"
#include "chapters/10_tma_multicast/cluster.hpp"

namespace ch10::protocol {

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
// the two halves of the shared (multicast) operand tile (half r loaded by the CTA of rank r), the
// A scales.
enum Piece { kOwn, kHalf0, kHalf1, kScales, kNumPieces };
constexpr int kBytes[kNumPieces] = {4, 2, 2, 1};

struct Tag {
  int coord = -1, kb = -1;  // the tile coordinate the piece belongs to, and its K block
  bool operator==(const Tag& o) const { return coord == o.coord && kb == o.kb; }
};

// How a CTA leaves (kernel.cu, the end of the producer's branch and of the kernel).
enum class Exit {
  kLastEmptyRound,  // the kernel's: the producer's last round of empty waits, then each CTA exits
  kClusterBarrier,  // every agent of both CTAs meets at a cluster barrier, then both exit
  kNone,            // (a mistake) a CTA exits when its own work is done
};

// The deliberate mistakes, for the tests that show each count is needed.
struct Protocol {
  bool empty_counts_both_ctas = true;  // false: init count = own warps, lane 0 arrives locally only
  bool full_expects_whole_stage = true;   // false: expect_tx of this CTA's own copies only
  bool ring_carried_across_tiles = true;  // false: a fresh PipelineState for every tile
  bool arrive_after_last_subtile = true;  // false: after the first sub-tile's wait
  Exit exit = Exit::kLastEmptyRound;
};

// One entry of the log a Sim keeps when `record` is set.
struct Event {
  enum Kind {
    kEmptyWaitPassed,  // a producer's wait on its own empty barrier passes (kb -1: its last round)
    kArriveExpectTx,   // a producer's arrive.expect_tx on its own full barrier (`bytes`)
    kCopyIssued,       // a copy of `piece` on its way to CTA `target` (a multicast: two of them)
    kCopyLanded,       // it lands in CTA `target`'s stage, its bytes done on that full barrier
    kFullWaitPassed,   // a math warp's wait on its own full barrier passes
    kReadsDone,        // the math warp's last wgmma.wait_group: its reads of the stage are over
    kArriveEmpty,      // a math warp arrives on the empty barrier of CTA `target`
    kPhaseCompleted,   // a phase of CTA `target`'s full (`full_barrier`) or empty barrier completes
    kWalkDone,         // the agent is done (a producer: its last round too); it exits, or waits
                       // at the cluster barrier (Exit::kClusterBarrier)
    kClusterBarrier,   // every agent of both CTAs is at the cluster barrier: both CTAs exit
    kExited,           // CTA `target` exits (Exit::kLastEmptyRound, Exit::kNone)
  };
  enum Agent { kProducer, kMathWarp, kCopy, kCluster };
  int time = 0;  // the step of the run: one agent acts per step
  Kind kind = kWalkDone;
  Agent agent = kCluster;
  int cta = -1;     // the acting agent's CTA (a copy: the CTA whose producer issued it)
  int warp = -1;    // a math warp: its index in its CTA
  int target = -1;  // the CTA whose barrier or stage the event reaches
  int stage = -1, pair = -1, kb = -1;
  Piece piece = kNumPieces;
  int bytes = 0;
  bool full_barrier = false;
  int phase = -1;  // kPhaseCompleted: the number of the phase that completed (0, 1, ...)
  // kArriveExpectTx, kCopyLanded, kArriveEmpty: the barrier's tx-count and pending arrivals just
  // after (a completed phase has reset them to 0 and the count).
  int tx = 0, pending = 0;
};

struct Sim {
  // Set by the caller.
  Multicast multicast = Multicast::B;
  int stages = 2, k_blocks = 1, warps = 4, pairs_m = 1, pairs_n = 1, group = 1;
  int subtiles = 1;           // 2 at BLOCK_M = 256
  int live_subtiles_wg1 = 1;  // warpgroup 1's sub-tiles before M (warps >= 4); warpgroup 0 all
  Protocol protocol;
  bool record = false;  // keep the log of events (off for the random runs)

  // State: [cta][stage].
  std::vector<std::vector<Barrier>> full, empty;
  std::vector<std::vector<std::array<Tag, kNumPieces>>> contents;
  std::vector<std::vector<std::array<int, kNumPieces>>> unread;  // warps yet to read the piece
  bool exited[2] = {false, false};
  std::string error;
  int time = 0;               // the current step
  std::vector<Event> events;  // when `record`: what happened, in order

  struct Copy {
    int dest_cta, stage;
    Piece piece;
    Tag tag;
    int from_cta;  // the CTA whose producer issued it
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

  void log(Event e) {
    if (!record) return;
    e.time = time;
    events.push_back(e);
  }
  // After an operation on barrier [cta][stage] whose phase was `before`: log a completion.
  void log_phase(Event::Agent agent, int from_cta, bool is_full, int cta, int stage, int before) {
    if (!record) return;
    const Barrier& b = (is_full ? full : empty)[size_t(cta)][size_t(stage)];
    if (b.phase == before) return;
    Event e;
    e.kind = Event::kPhaseCompleted;
    e.agent = agent;
    e.cta = from_cta;
    e.target = cta;
    e.stage = stage;
    e.full_barrier = is_full;
    e.phase = before;
    log(e);
  }

  void land(const Copy& c) {
    if (exited[c.dest_cta] && error.empty())
      error = "a copy landed in CTA " + std::to_string(c.dest_cta) + " after it had exited";
    if (unread[c.dest_cta][c.stage][c.piece] > 0 && error.empty())
      error = "a copy overwrote stage " + std::to_string(c.stage) + " of CTA " +
              std::to_string(c.dest_cta) + " before all its math warps had read it";
    contents[c.dest_cta][c.stage][c.piece] = c.tag;
    unread[c.dest_cta][c.stage][c.piece] = warps;
    const int before = full[c.dest_cta][c.stage].phase;
    full[c.dest_cta][c.stage].complete_tx(kBytes[c.piece]);
    if (record) {
      Event e;
      e.kind = Event::kCopyLanded;
      e.agent = Event::kCopy;
      e.cta = c.from_cta;
      e.target = c.dest_cta;
      e.stage = c.stage;
      e.kb = c.tag.kb;
      e.piece = c.piece;
      e.bytes = kBytes[c.piece];
      e.tx = full[c.dest_cta][c.stage].tx;
      e.pending = full[c.dest_cta][c.stage].pending;
      log(e);
      log_phase(Event::kCopy, c.from_cta, true, c.dest_cta, c.stage, before);
    }
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
    // An event of this agent at its current place in the walk.
    Event event(Event::Kind kind, Event::Agent agent, int warp = -1) const {
      Event e;
      e.kind = kind;
      e.agent = agent;
      e.cta = rank;
      e.warp = warp;
      e.target = rank;
      e.stage = int(state.stage);
      e.pair = pair;
      e.kb = kb;
      return e;
    }
    void note(Sim& sim, Event::Kind kind, Event::Agent agent, int warp = -1) const {
      if (!sim.record) return;
      Event e = event(kind, agent, warp);
      if (kind == Event::kWalkDone) e.stage = e.pair = e.kb = -1;  // past the walk's end
      sim.log(e);
    }
  };

  // The producer of CTA `rank` (kernel.cu, "Producer warpgroup"), one action per call.
  struct Producer : Walker {
    using Walker::Walker;
    void issue(Sim& sim, const Copy& c) const {
      sim.in_flight.push_back(c);
      if (!sim.record) return;
      Event e = event(Event::kCopyIssued, Event::kProducer);
      e.target = c.dest_cta;
      e.piece = c.piece;
      e.bytes = kBytes[c.piece];
      sim.log(e);
    }
    int last_round = -1;  // waits left in the last round, once the walk is done (-1: not yet)
    bool finished() const { return done && last_round == 0; }
    bool step(Sim& sim) {
      if (finished()) return false;
      if (!sim.empty[rank][state.stage].passed(state.phase ^ 1)) return false;
      if (done) {  // the last round: one more wait on each empty barrier, nothing issued
        Event e = event(Event::kEmptyWaitPassed, Event::kProducer);
        e.pair = e.kb = -1;
        sim.log(e);
        state.advance(uint32_t(sim.stages));
        if (--last_round == 0) note(sim, Event::kWalkDone, Event::kProducer);
        return true;
      }
      note(sim, Event::kEmptyWaitPassed, Event::kProducer);
      const int own_bytes = kBytes[kOwn] + kBytes[kHalf0 + rank] + kBytes[kScales];
      const int bytes = sim.protocol.full_expects_whole_stage
                            ? kBytes[kOwn] + kBytes[kHalf0] + kBytes[kHalf1] + kBytes[kScales]
                            : own_bytes;
      const int before = sim.full[rank][state.stage].phase;
      sim.full[rank][state.stage].arrive_expect_tx(bytes);
      if (sim.record) {
        Event e = event(Event::kArriveExpectTx, Event::kProducer);
        e.bytes = bytes;
        e.tx = sim.full[rank][state.stage].tx;
        e.pending = sim.full[rank][state.stage].pending;
        sim.log(e);
        sim.log_phase(Event::kProducer, rank, true, rank, int(state.stage), before);
      }
      const Piece half = Piece(kHalf0 + rank);
      issue(sim, {rank, int(state.stage), kOwn, sim.expected(rank, pair, kb, kOwn), rank});
      for (int dest = 0; dest < 2; ++dest)  // multicast: the same half into both CTAs
        issue(sim, {dest, int(state.stage), half, sim.expected(rank, pair, kb, half), rank});
      issue(sim, {rank, int(state.stage), kScales, sim.expected(rank, pair, kb, kScales), rank});
      next_k_block(sim);
      if (done) {
        last_round = sim.protocol.exit == Exit::kLastEmptyRound ? sim.stages : 0;
        if (last_round == 0) note(sim, Event::kWalkDone, Event::kProducer);
      }
      return true;
    }
  };

  // One math warp of CTA `rank` (kernel.cu, "Math warpgroups"): wait, then per live sub-tile
  // read (the wgmmas, then wgmma.wait_group), then arrive.
  struct MathWarp : Walker {
    MathWarp(int r, int w, int live) : Walker(r), warp(w), live(live) {}
    int warp;  // its index in its CTA
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
        const int before = sim.empty[r][s].phase;
        sim.empty[r][s].arrive();
        if (sim.record) {
          Event e = event(Event::kArriveEmpty, Event::kMathWarp, warp);
          e.target = r;
          e.pending = sim.empty[r][s].pending;
          sim.log(e);
          sim.log_phase(Event::kMathWarp, rank, false, r, int(s), before);
        }
      }
      arrived = true;
    }
    bool step(Sim& sim) {
      if (done) return false;
      const uint32_t s = state.stage;
      if (step_in_block == 0) {  // mbarrier wait on the full barrier, then sub-tile 0's wgmmas
        if (!sim.full[rank][s].passed(state.phase)) return false;
        note(sim, Event::kFullWaitPassed, Event::kMathWarp, warp);
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
          note(sim, Event::kReadsDone, Event::kMathWarp, warp);
        }
      } else {
        if (!arrived) arrive(sim, s);
        arrived = false;
        step_in_block = 0;
        next_k_block(sim);
        if (done) note(sim, Event::kWalkDone, Event::kMathWarp, warp);
      }
      return true;
    }
  };

  // Runs to the end in an interleaving drawn from `seed`; returns the first error, "" if none.
  std::string run(uint64_t seed) {
    std::mt19937_64 rng(seed);
    return run_with(
        [&rng](std::vector<int>& ready) { std::shuffle(ready.begin(), ready.end(), rng); });
  }

  // Runs to the end in one fixed interleaving, CTA 1 behind CTA 0: at each step the first agent
  // that can act in the order CTA 0's producer, the copies in flight (the oldest first), CTA 0's
  // math warps, CTA 1's producer, CTA 1's math warps. Returns the first error, "" if none.
  std::string run_cta0_first() {
    const int math = 2 * warps;
    return run_with([math, this](std::vector<int>& ready) {
      auto rank = [math, this](int a) {
        if (a < 2) return a == 0 ? 0 : 3;                  // producers
        if (a < 2 + math) return (a - 2) < warps ? 2 : 4;  // math warps of CTA 0, CTA 1
        return 1;                                          // copies, in the order issued
      };
      std::stable_sort(ready.begin(), ready.end(),
                       [&rank](int x, int y) { return rank(x) < rank(y); });
    });
  }

  // Runs to the end, `order` putting the agents that may act at each step into the order they are
  // tried in; returns the first error, "" if none.
  template <class Order>
  std::string run_with(Order order) {
    const int empty_count = protocol.empty_counts_both_ctas ? 2 * warps : warps;
    full.assign(2, std::vector<Barrier>(size_t(stages), Barrier(1)));
    empty.assign(2, std::vector<Barrier>(size_t(stages), Barrier(empty_count)));
    contents.assign(2, std::vector<std::array<Tag, kNumPieces>>(size_t(stages)));
    unread.assign(2, std::vector<std::array<int, kNumPieces>>(size_t(stages)));
    error.clear();
    in_flight.clear();
    events.clear();
    time = 0;
    exited[0] = exited[1] = false;
    std::vector<Producer> producers = {Producer(0), Producer(1)};
    std::vector<MathWarp> math;
    for (int r = 0; r < 2; ++r)
      for (int w = 0; w < warps; ++w)
        math.push_back(MathWarp(r, w, w < 4 ? subtiles : live_subtiles_wg1));
    for (;; ++time) {
      // Every agent that can act: each producer, each math warp, each copy in flight.
      std::vector<int> ready;  // < 2: producer; < 2 + math: warp; else copy
      for (int i = 0; i < 2; ++i)
        if (!producers[size_t(i)].finished()) ready.push_back(i);
      for (size_t i = 0; i < math.size(); ++i)
        if (!math[i].done) ready.push_back(2 + int(i));
      for (size_t i = 0; i < in_flight.size(); ++i) ready.push_back(2 + int(math.size() + i));
      if (ready.empty()) {
        if (protocol.exit == Exit::kClusterBarrier) {
          Event e;
          e.kind = Event::kClusterBarrier;
          log(e);
        }
        return error;
      }
      order(ready);
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
      // Without the cluster barrier at the end, a CTA exits as soon as its own producer (its last
      // round included) and math warps are done and nothing is on its way to it.
      if (protocol.exit != Exit::kClusterBarrier)
        for (int r = 0; r < 2; ++r) {
          bool own_done = producers[size_t(r)].finished();
          for (const MathWarp& m : math) own_done = own_done && (m.rank != r || m.done);
          for (const Copy& c : in_flight) own_done = own_done && c.dest_cta != r;
          if (own_done && !exited[r]) {
            Event e;
            e.kind = Event::kExited;
            e.target = r;
            log(e);
          }
          exited[r] = exited[r] || own_done;
        }
    }
  }
};

}  // namespace ch10::protocol
