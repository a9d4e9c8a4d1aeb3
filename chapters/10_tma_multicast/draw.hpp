// Chapter 10's pictures. draw_clusters, drawn from the functions the kernel and its launch use
// (cluster.hpp, ch07's choose_tile, ch09's scheduler.hpp): the tiles of one shape coloured by the
// wave that computes them, in chapter 09's order (one CTA per tile at a time) and in chapter 10's
// (clusters of two CTAs walking pairs of tiles that share a multicast operand, each pair
// outlined). draw_protocol, drawn from protocol.hpp's model of the kernel's barriers: one
// schedule of the two CTAs' producers, math warps and copies, step by step, with the state of
// every stage of both CTAs. Host only.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "chapters/07_two_scale_b/scale_blocks.hpp"
#include "chapters/09_persistent_scheduler/draw.hpp"
#include "chapters/10_tma_multicast/cluster.hpp"
#include "chapters/10_tma_multicast/protocol.hpp"
#include "common/check.hpp"
#include "common/svg.hpp"

namespace ch10 {

inline void draw_clusters(const std::string& path, const gemm::Shape& s = {4096, 7168, 16384},
                          int num_sms = ch09::kH100Sms) {
  const ch07::TileChoice v = ch07::choose_tile(s, num_sms);  // the kernel's plan, as in kernel.cu
  const int tiles_m = int((s.m + v.block_m - 1) / v.block_m);
  const int tiles_n = int((s.n + v.block_n - 1) / v.block_n);
  const Clusters c = plan_clusters(s, v.block_m, v.block_n,
                                   multicast_for(tiles_m, tiles_n, v.block_m, v.block_n, num_sms),
                                   num_sms, "draw");
  const int tiles = c.tiles_m * c.tiles_n;
  const int group09 = ch09::pick_group(c.tiles_m, c.tiles_n, v.block_m, v.block_n, num_sms);
  const int clusters = c.grid / c.cluster_size;
  const int grid09 = ch09::persistent_grid(tiles, num_sms);  // chapter 09's CTAs
  char line[400];
  std::vector<std::string> heading;
  std::snprintf(line, sizeof line,
                "Clusters of two CTAs at %lld x %lld: %d x %d tiles of %d x %d, multicast %s, %d "
                "CTAs",
                (long long)s.m, (long long)s.n, c.tiles_m, c.tiles_n, v.block_m, v.block_n,
                name(c.multicast), c.grid);
  heading.push_back(line);
  heading.push_back(
      "cell (m_block, n_block): the wave that computes it; outlined: the two tiles of one "
      "cluster, which share the multicast operand's tile");
  std::snprintf(line, sizeof line,
                "left: chapter 09, tile index / %d; right: chapter 10, pair index / %d clusters "
                "(both tiles of a pair in the same wave)",
                grid09, clusters);
  heading.push_back(line);
  heading.push_back(
      "from ch07::choose_tile, ch10::multicast_for, cta_tile and ch09::tile_at, pick_group (host "
      "arithmetic, not "
      "measured)");

  std::vector<ch09::OrderPanel> panels(2);
  // Chapter 09: one CTA per tile, grouped along M.
  ch09::OrderPanel& left = panels[0];
  std::snprintf(line, sizeof line, "chapter 09: tiles grouped along M, group = %d", group09);
  left.title = line;
  left.group_rows = group09;
  left.wave.assign(size_t(tiles), 0);
  for (int index = 0; index < tiles; ++index) {
    const ch09::TileCoord t = ch09::tile_at(index, c.tiles_m, c.tiles_n, group09);
    left.wave[size_t(t.m_block) * c.tiles_n + t.n_block] = index / grid09;
  }
  std::snprintf(line, sizeof line, "L2 to SMs per K block and wave: %.2f MB",
                wave_l2_bytes(grid09, v.block_m, v.block_n, Multicast::None) / 1e6);
  left.line1 = line;
  // Chapter 10: pairs, grouped along M over the grid of pairs.
  ch09::OrderPanel& right = panels[1];
  std::snprintf(line, sizeof line, "chapter 10: pairs (%d x %d) grouped along M, group = %d",
                c.pairs_m, c.pairs_n, c.group);
  right.title = line;
  right.group_rows = c.group * (c.multicast == Multicast::B ? 2 : 1);
  right.outline_rows = c.multicast == Multicast::B ? 2 : 1;
  right.outline_cols = c.multicast == Multicast::A ? 2 : 1;
  right.wave.assign(size_t(tiles), 0);
  const int pairs = c.pairs_m * c.pairs_n;
  for (int pair = 0; pair < pairs; ++pair)
    for (int rank = 0; rank < c.cluster_size; ++rank) {
      const TileCoord t = cta_tile(pair, rank, c.pairs_m, c.pairs_n, c.group, c.multicast);
      right.wave[size_t(t.m_block) * c.tiles_n + t.n_block] = pair / clusters;
    }
  std::snprintf(line, sizeof line, "L2 to SMs per K block and wave: %.2f MB (multicast on %s)",
                wave_l2_bytes(c.grid, v.block_m, v.block_n, c.multicast) / 1e6, name(c.multicast));
  right.line1 = line;

  int waves = 0;
  for (const auto& p : panels)
    for (int w : p.wave) waves = w + 1 > waves ? w + 1 : waves;
  std::vector<std::string> legend;
  for (int wv = 0; wv < waves; ++wv) legend.push_back(std::to_string(wv));
  ch09::draw_panels(path, heading, c.tiles_m, c.tiles_n, panels, legend);
}

// The schedule draw_protocol draws: one pair of tiles with multicast on A (each CTA loads its own
// B tile and half of the shared A tile, into both CTAs), 2 stages, 3 K blocks, 2 math warps per
// CTA, the log kept. Run it with run_cta0_first().
inline protocol::Sim protocol_sim() {
  protocol::Sim sim;
  sim.multicast = Multicast::A;
  sim.stages = 2;
  sim.k_blocks = 3;
  sim.warps = 2;
  sim.record = true;
  return sim;
}

// The protocol as a timeline: one row per agent (each CTA's producer and math warps) and one band
// per stage of each CTA, time to the right in steps of the simulation (one agent acts per step).
// Producer: a box where its empty wait passes and it arms its full barrier and issues its copies.
// Math warp: a box from its full wait to its last wgmma.wait_group, then its arrival, a line to
// the empty barrier of each CTA it reaches. Stage band: free (the empty phase completed), filling
// (an expect_tx or a copy has come; the full phase has not completed) and full (read, until the
// last math warp of both CTAs has arrived); in its top half the expect_tx and the copies landing,
// coloured by the CTA that issued them; in its bottom half the arrivals, coloured by the CTA of
// the arriving warp. Dashed: an agent blocked on a barrier; dotted: done. The producer's last
// round (boxes "end"): a wait on each empty barrier and nothing issued; then its CTA exits.
inline void draw_protocol(const std::string& path) {
  using protocol::Event;
  protocol::Sim sim = protocol_sim();
  const std::string error = sim.run_cta0_first();
  if (!error.empty()) throw gemm::Error("draw_protocol: " + error);
  const std::vector<Event>& events = sim.events;
  const int steps = sim.time + 1;  // 0 .. time; the last CTA exits at `time`
  const int warps = sim.warps, stages = sim.stages;
  const char shared = sim.multicast == Multicast::B ? 'B' : 'A';
  const char own = shared == 'A' ? 'B' : 'A';
  int stage_bytes = 0;
  for (int b : protocol::kBytes) stage_bytes += b;

  const char* strong[2] = {"#2f6db5", "#d9661f"};
  const char* light[2] = {"#dbe8f6", "#fbe3cf"};
  const char* tint[2] = {"#f6f9fd", "#fefaf5"};
  const double dx = 22, x0 = 210, agent_h = 28, band_h = 46, band_gap = 8, block_gap = 30;
  const double rows_y = 150;
  const double block_h = agent_h * (1 + warps) + band_gap + band_h * stages;
  const double rows_end = rows_y + 2 * block_h + block_gap;
  const double width = x0 + steps * dx + 90;  // room for "CTA r exits" right of the last step
  auto xc = [&](int t) { return x0 + (t + 0.5) * dx; };
  auto block_y = [&](int r) { return rows_y + r * (block_h + block_gap); };
  auto producer_y = [&](int r) { return block_y(r); };
  auto warp_y = [&](int r, int w) { return block_y(r) + agent_h * (1 + w); };
  auto band_y = [&](int r, int st) {
    return block_y(r) + agent_h * (1 + warps) + band_gap + band_h * st;
  };

  gemm::Svg svg;
  char buf[640];
  auto rect = [&](double x, double y, double w, double h, const char* fill, const char* stroke,
                  double stroke_w) {
    std::snprintf(buf, sizeof buf,
                  "<rect x='%g' y='%g' width='%g' height='%g' style='fill:%s;stroke:%s;"
                  "stroke-width:%g'/>\n",
                  x, y, w, h, fill, stroke, stroke_w);
    svg.body += buf;
  };
  auto line = [&](double x1, double y1, double x2, double y2, const char* colour, double w,
                  const char* dash) {
    std::snprintf(buf, sizeof buf,
                  "<line x1='%g' y1='%g' x2='%g' y2='%g' stroke='%s' stroke-width='%g'%s%s%s/>\n",
                  x1, y1, x2, y2, colour, w, dash[0] ? " stroke-dasharray='" : "", dash,
                  dash[0] ? "'" : "");
    svg.body += buf;
  };
  auto label = [&](double x, double y, double size, const std::string& text, const char* fill,
                   const char* anchor = "middle", const char* weight = "normal") {
    std::snprintf(buf, sizeof buf,
                  "<text x='%g' y='%g' font-size='%g' text-anchor='%s' fill='%s' "
                  "font-weight='%s'>%s</text>\n",
                  x, y, size, anchor, fill, weight, text.c_str());
    svg.body += buf;
  };
  auto triangle = [&](double x, double y_tip, double size, const char* fill) {  // pointing down
    std::snprintf(buf, sizeof buf,
                  "<polygon points='%g,%g %g,%g %g,%g' style='fill:%s;stroke:none'/>\n",
                  x - size / 2, y_tip - size, x + size / 2, y_tip - size, x, y_tip, fill);
    svg.body += buf;
  };
  auto note_mark = [&](double x, double y, int n) {  // a numbered circle, for the notes below
    std::snprintf(buf, sizeof buf,
                  "<circle cx='%g' cy='%g' r='7' style='fill:#222;stroke:white;stroke-width:1'/>"
                  "<text x='%g' y='%g' font-size='10' text-anchor='middle' fill='white' "
                  "font-weight='bold'>%d</text>\n",
                  x, y, x, y + 3.5, n);
    svg.body += buf;
  };
  auto piece_name = [&](protocol::Piece p) {
    if (p == protocol::kOwn) return std::string(1, own);
    if (p == protocol::kScales) return std::string("s") + "A";
    return std::string(1, shared) + (p == protocol::kHalf0 ? "0" : "1");
  };

  // Heading.
  svg.text(20, 24, 15,
           "Chapter 10's cross-CTA barrier protocol: who arrives where, and when a stage is free");
  std::snprintf(buf, sizeof buf,
                "one cluster of 2 CTAs, multicast on %c: each producer loads its own %c tile and "
                "half of the shared %c tile into both CTAs; %d stages, %d K blocks, %d math warps "
                "per CTA",
                shared, own, shared, stages, sim.k_blocks, warps);
  svg.text(20, 46, 11, buf);
  std::snprintf(buf, sizeof buf,
                "full barrier: 1 arrival (the producer's arrive.expect_tx of the whole stage, %d "
                "units) + the bytes of every copy landing in the CTA; empty barrier: %d arrivals, "
                "lane r of every math warp of both CTAs on CTA r's",
                stage_bytes, 2 * warps);
  svg.text(20, 62, 11, buf);
  svg.text(20, 78, 11,
           "the schedule: at each step the first agent that can act, in the order CTA 0's "
           "producer, copies in flight (oldest first), CTA 0's math warps, CTA 1's producer, "
           "CTA 1's math warps: CTA 1 runs behind");
  svg.text(20, 94, 11,
           "drawn from ch10::protocol's simulation of the kernel's barrier counts "
           "(Sim::run_cta0_first; host arithmetic, not measured)");

  // Row backgrounds and names, the step axis, a grid line every 5 steps.
  for (int r = 0; r < 2; ++r) {
    rect(10, block_y(r) - 2, width - 20, block_h + 4, tint[r], "none", 0);
    auto name_row = [&](double y, double h, const std::string& text, const std::string& sub) {
      label(x0 - 10, y + h / 2 + (sub.empty() ? 4 : -1), 11, text, "#222", "end");
      if (!sub.empty()) label(x0 - 10, y + h / 2 + 12, 9, sub, "#666", "end");
    };
    name_row(producer_y(r), agent_h, "CTA " + std::to_string(r) + " producer", "");
    for (int w = 0; w < warps; ++w)
      name_row(warp_y(r, w), agent_h,
               "CTA " + std::to_string(r) + " math warp " + std::to_string(w), "");
    for (int st = 0; st < stages; ++st)
      name_row(band_y(r, st), band_h, "CTA " + std::to_string(r) + " stage " + std::to_string(st),
               "full barrier / empty barrier");
  }
  for (int t = 0; t < steps; t += 5) {
    line(xc(t), rows_y - 8, xc(t), rows_end, "#e4e4e4", 1, "");
    label(xc(t), rows_y - 12, 10, std::to_string(t), "#444");
  }
  label(x0 - 10, rows_y - 12, 10, "step", "#444", "end");

  // Stage bands: free, filling, full, from the events on the stage's two barriers.
  for (int r = 0; r < 2; ++r)
    for (int st = 0; st < stages; ++st) {
      const double y = band_y(r, st);
      int state = 0, start = -1, kb = -1;  // 0 free, 1 filling, 2 full
      auto segment = [&](int to) {
        const double xa = start < 0 ? x0 : xc(start), xb = to < 0 ? x0 + steps * dx : xc(to);
        const char* fill = state == 0 ? "#ffffff" : state == 1 ? "#fff2b3" : "#cdeac0";
        rect(xa, y + 2, xb - xa, band_h - 4, fill, "none", 0);
        if (state == 2 && xb - xa > 3 * dx)
          label(xa + dx / 2 + 4, y + 15, 9, "full, K block " + std::to_string(kb), "#2d6a1f",
                "start");
        if (state == 0 && xb - xa > 3 * dx) label(xa + 4, y + 15, 9, "free", "#888", "start");
      };
      for (const Event& e : events) {
        if (e.target != r || e.stage != st) continue;
        const bool fill_event = e.kind == Event::kArriveExpectTx || e.kind == Event::kCopyLanded;
        if (fill_event && state == 0) {
          segment(e.time);
          state = 1;
          start = e.time;
          kb = e.kb;
        } else if (e.kind == Event::kPhaseCompleted && e.full_barrier) {
          segment(e.time);
          state = 2;
          start = e.time;
        } else if (e.kind == Event::kPhaseCompleted) {
          segment(e.time);
          state = 0;
          start = e.time;
        }
      }
      segment(-1);
      rect(x0, y + 2, steps * dx, band_h - 4, "none", "#999", 0.8);
      line(x0, y + band_h / 2, x0 + steps * dx, y + band_h / 2, "#bbb", 0.6, "2,2");
    }

  // Blocked (dashed) and done (dotted, until its CTA exits), on the agents' rows.
  struct Note {
    int from = -1, to = -1, cta = -1, stage = -1;
  } longest_wait;
  for (int r = 0; r < 2; ++r)
    for (int w = -1; w < warps; ++w) {  // -1: the producer
      const bool math = w >= 0;
      const double y = (math ? warp_y(r, w) : producer_y(r)) + agent_h / 2;
      int prev = -1;
      for (const Event& e : events) {
        const bool mine = e.cta == r && (math ? e.agent == Event::kMathWarp && e.warp == w
                                              : e.agent == Event::kProducer);
        if (!mine) continue;
        if (e.kind == (math ? Event::kFullWaitPassed : Event::kEmptyWaitPassed)) {
          // The phase it waited for: the last one of that barrier completed before it passed.
          int done_at = -1;
          for (const Event& c : events)
            if (c.time <= e.time && c.kind == Event::kPhaseCompleted && c.target == r &&
                c.stage == e.stage && c.full_barrier == math)
              done_at = c.time;
          if (done_at > prev) {
            const double xa = prev < 0 ? x0 : xc(prev);
            line(xa, y, xc(done_at), y, math ? "#777" : strong[r], 1.4, "5,3");
            if (xc(done_at) - xa > 9 * dx)
              label((xa + xc(done_at)) / 2, y - 4, 9,
                    std::string("blocked on its stage ") + std::to_string(e.stage) +
                        (math ? " full" : " empty") + " barrier",
                    "#444");
            if (!math && done_at - prev > longest_wait.to - longest_wait.from)
              longest_wait = {prev, done_at, r, e.stage};
          }
        }
        if (e.kind == Event::kWalkDone) {
          int exit_at = sim.time;
          for (const Event& x : events)
            if (x.kind == Event::kExited && x.target == r) exit_at = x.time;
          if (exit_at > e.time) line(xc(e.time) + dx / 2, y, xc(exit_at), y, "#555", 1.4, "1.5,3");
        }
        if (e.kind == Event::kEmptyWaitPassed || e.kind == Event::kFullWaitPassed ||
            e.kind == Event::kReadsDone || e.kind == Event::kArriveEmpty)
          prev = e.time;
      }
    }

  // Arrivals: a line from the math warp to the empty barrier of each CTA it reaches (under the
  // marks).
  for (const Event& e : events)
    if (e.kind == Event::kArriveEmpty) {
      const double ya = warp_y(e.cta, e.warp) + agent_h / 2;
      const double yb = band_y(e.target, e.stage) + band_h - 5;
      line(xc(e.time), ya, xc(e.time), yb - 2, strong[e.cta], 1, "");
    }

  // The marks.
  int first_early_half = -1;  // a partner's half landing before this CTA's expect_tx
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    const double x = x0 + e.time * dx;
    switch (e.kind) {
      case Event::kEmptyWaitPassed:
        rect(x + 1, producer_y(e.cta) + 5, dx - 2, agent_h - 10, strong[e.cta], "#333", 0.6);
        label(xc(e.time), producer_y(e.cta) + agent_h / 2 + 3.5, 9,
              e.kb < 0 ? std::string("end") : "k" + std::to_string(e.kb), "white", "middle",
              "bold");
        break;
      case Event::kFullWaitPassed: {
        int end = e.time;
        for (size_t j = i + 1; j < events.size(); ++j)
          if (events[j].kind == Event::kReadsDone && events[j].cta == e.cta &&
              events[j].warp == e.warp) {
            end = events[j].time;
            break;
          }
        const double y = warp_y(e.cta, e.warp);
        rect(x + 1, y + 5, (end - e.time + 1) * dx - 2, agent_h - 10, light[e.cta], strong[e.cta],
             1);
        label((x + x0 + (end + 1) * dx) / 2, y + agent_h / 2 + 3.5, 9, "k" + std::to_string(e.kb),
              "#222");
        break;
      }
      case Event::kArriveEmpty:
        if (e.target == e.cta)  // once per arrival step, on the warp's row
          triangle(xc(e.time), warp_y(e.cta, e.warp) + agent_h - 6, 11, strong[e.cta]);
        triangle(xc(e.time), band_y(e.target, e.stage) + band_h - 5, 10, strong[e.cta]);
        break;
      case Event::kArriveExpectTx:
        rect(x + 2, band_y(e.target, e.stage) + 4, dx - 4, band_h / 2 - 6, "white", "#222", 1);
        label(xc(e.time), band_y(e.target, e.stage) + 15.5, 8, "+" + std::to_string(e.bytes),
              "#222");
        break;
      case Event::kCopyLanded:
        rect(x + 2, band_y(e.target, e.stage) + 4, dx - 4, band_h / 2 - 6, strong[e.cta], "#333",
             0.6);
        label(xc(e.time), band_y(e.target, e.stage) + 15.5, 8, piece_name(e.piece), "white",
              "middle", "bold");
        if (first_early_half < 0 && e.cta != e.target && e.tx < 0) first_early_half = int(i);
        break;
      default:
        break;
    }
  }

  // Each CTA's exit, over its rows: once its producer's last round is over, its math warps are
  // done and nothing is on its way to it.
  for (const Event& e : events)
    if (e.kind == Event::kExited) {
      const double xe = xc(e.time) + dx / 2, ye = warp_y(e.target, warps - 1) + agent_h;
      line(xe, producer_y(e.target) - 4, xe, ye, strong[e.target], 3, "");
      label(xe + 5, producer_y(e.target) + agent_h / 2 + 3.5, 10,
            "CTA " + std::to_string(e.target) + " exits", "#222", "start");
    }

  // Notes on two moments of this schedule, found in the log.
  std::vector<std::string> notes;
  if (first_early_half >= 0) {
    const Event& e = events[size_t(first_early_half)];
    int armed = -1;
    for (const Event& a : events)
      if (a.time > e.time && a.kind == Event::kArriveExpectTx && a.target == e.target &&
          a.stage == e.stage) {
        armed = a.time;
        break;
      }
    note_mark(x0 + (e.time + 1) * dx + 3, band_y(e.target, e.stage) + 4, 1);
    std::snprintf(buf, sizeof buf,
                  "step %d: CTA %d's half of %c lands in CTA %d's stage %d before CTA %d's "
                  "producer has armed it (its expect_tx comes at step %d): the tx-count goes to "
                  "%d, and the phase waits for that arrival",
                  e.time, e.cta, shared, e.target, e.stage, e.target, armed, e.tx);
    notes.push_back(buf);
  }
  if (longest_wait.cta >= 0) {
    const int r = longest_wait.cta, st = longest_wait.stage;
    int last_cta = -1, last_warp = -1;
    for (const Event& e : events)
      if (e.kind == Event::kArriveEmpty && e.target == r && e.stage == st &&
          e.time == longest_wait.to) {
        last_cta = e.cta;
        last_warp = e.warp;
      }
    note_mark(xc(longest_wait.to), producer_y(r) + agent_h / 2, 2);
    std::snprintf(buf, sizeof buf,
                  "steps %d to %d: CTA %d's producer waits to refill its stage %d: the empty "
                  "barrier counts the math warps of both CTAs, and the last to arrive is CTA %d's "
                  "warp %d",
                  longest_wait.from, longest_wait.to, r, st, last_cta, last_warp);
    notes.push_back(buf);
  }

  // Legend and notes.
  double ly = rows_end + 36;
  auto legend_swatch = [&](double x, const char* fill, const char* stroke) {
    rect(x, ly - 10, 14, 12, fill, stroke, 0.8);
  };
  legend_swatch(20, strong[0], "#333");
  label(40, ly, 10, "CTA 0", "#222", "start");
  legend_swatch(90, strong[1], "#333");
  label(110, ly, 10, "CTA 1: the agent's CTA; a copy landing: the CTA whose producer issued it",
        "#222", "start");
  legend_swatch(620, "#ffffff", "#999");
  label(640, ly, 10, "free", "#222", "start");
  legend_swatch(690, "#fff2b3", "#999");
  label(710, ly, 10, "filling", "#222", "start");
  legend_swatch(780, "#cdeac0", "#999");
  label(800, ly, 10, "full: being read until the last empty arrival", "#222", "start");
  ly += 18;
  label(20, ly, 10,
        "producer box kN: its empty wait passes for K block N, arrive.expect_tx on its own full "
        "barrier (+" +
            std::to_string(stage_bytes) + ", white box), its copies issued; copies land as " +
            std::string(1, own) + " (its own tile), " + std::string(1, shared) + "0/" +
            std::string(1, shared) +
            "1 (the half loaded by CTA 0/1, in both CTAs), sA (scales); box end: a wait of its "
            "last round, nothing issued",
        "#222", "start");
  ly += 16;
  label(20, ly, 10,
        "math warp box kN: full wait passed to last wgmma.wait_group; triangle and line: its "
        "arrival on the empty barrier of each CTA (lane r to CTA r); dashed: blocked on a "
        "barrier; dotted: done; blank: free to act, not yet its turn",
        "#222", "start");
  for (size_t i = 0; i < notes.size(); ++i) {
    ly += 20;
    note_mark(27, ly - 4, int(i) + 1);
    label(40, ly, 10, notes[i], "#222", "start");
  }
  svg.save(path, width, ly + 16, 9);
}

}  // namespace ch10
