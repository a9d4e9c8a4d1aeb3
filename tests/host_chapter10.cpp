// Chapter 10's plain arithmetic (cluster.hpp): when the tiles pair up for a multicast, which
// operand the chapter shares, the refusal of a multicast that cannot pair, the override's text, the
// walk of the clusters over the pairs of tiles (every tile exactly once, both CTAs of a cluster
// busy together, the pair sharing the multicast operand), and the picture.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chapters/07_two_scale_b/scale_blocks.hpp"
#include "chapters/10_tma_multicast/cluster.hpp"
#include "chapters/10_tma_multicast/draw.hpp"
#include "tests/cluster_walk.hpp"
#include "tests/read_text.hpp"

namespace {

using ch10::Multicast;

// Multicast needs the tiles to pair up exactly; the larger tile wins when both do.
TEST(Chapter10, TheMulticastRule) {
  EXPECT_EQ(ch10::multicast_for(32, 45, 128, 160), Multicast::B);
  EXPECT_EQ(ch10::multicast_for(33, 46, 128, 160), Multicast::A);
  EXPECT_EQ(ch10::multicast_for(33, 45, 128, 160), Multicast::None);
  EXPECT_EQ(ch10::multicast_for(1, 1, 128, 128), Multicast::None);
  EXPECT_EQ(ch10::multicast_for(2, 2, 128, 128), Multicast::B);
  EXPECT_EQ(ch10::multicast_for(2, 2, 256, 128), Multicast::A);
  EXPECT_EQ(ch10::multicast_for(2, 2, 128, 160, 1), Multicast::None);  // one SM: no pair fits
  EXPECT_TRUE(ch10::pairs_up(3, 3, Multicast::None, 1));
  EXPECT_FALSE(ch10::pairs_up(3, 2, Multicast::B, 132));
  EXPECT_TRUE(ch10::pairs_up(3, 2, Multicast::A, 132));
  // The benchmark's headline shape: chapter 09's 256 x 128 tile, 16 x 56 tiles, A is the larger.
  const gemm::Shape s{4096, 7168, 16384};
  const ch07::TileChoice t = ch07::choose_tile(s);
  EXPECT_EQ(ch10::multicast_for(16, 56, t.block_m, t.block_n), Multicast::A);
}

// plan_clusters: the grid of pairs, whole clusters, never more CTAs than SMs; a multicast the tiles
// cannot pair is refused naming the chapter and the pairing.
TEST(Chapter10, PlanAndRefusal) {
  const gemm::Shape s{4096, 7168, 16384};
  const ch10::Clusters a = ch10::plan_clusters(s, 256, 128, Multicast::A, 132, "chapter 10");
  EXPECT_EQ(a.tiles_m, 16);
  EXPECT_EQ(a.tiles_n, 56);
  EXPECT_EQ(a.pairs_m, 16);
  EXPECT_EQ(a.pairs_n, 28);
  EXPECT_EQ(a.cluster_size, 2);
  EXPECT_EQ(a.clusters, 64);  // 448 pairs: 7 rounds of 66 clusters, or of 64 (persistent_grid)
  EXPECT_EQ(a.grid, 128);
  const ch10::Clusters off = ch10::plan_clusters(s, 256, 128, Multicast::None, 132, "chapter 10");
  EXPECT_EQ(off.cluster_size, 1);
  EXPECT_EQ(off.pairs_n, 56);
  EXPECT_EQ(off.grid, 128);
  const ch10::Clusters few = ch10::plan_clusters({128, 256, 512}, 128, 128, Multicast::A, 132, "x");
  EXPECT_EQ(few.grid, 2);  // one pair of tiles: one cluster
  try {
    ch10::plan_clusters({3 * 128, 3 * 160, 256}, 128, 160, Multicast::B, 132, "chapter 10");
    ADD_FAILURE() << "an odd number of tile rows was accepted for multicast on B";
  } catch (const gemm::UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("chapter 10: multicast on B needs the tiles to pair up"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(ch10::plan_clusters(s, 256, 128, Multicast::A, 1, "chapter 10"),
               gemm::UnsupportedError);
}

// CH10_MULTICAST's text: unset or empty keeps the choice; off, A and B; anything else is refused
// naming the variable.
TEST(Chapter10, MulticastOverrideText) {
  EXPECT_EQ(ch10::multicast_override(nullptr, Multicast::A, "chapter 10", "CH10_MULTICAST"),
            Multicast::A);
  EXPECT_EQ(ch10::multicast_override("", Multicast::B, "chapter 10", "CH10_MULTICAST"),
            Multicast::B);
  EXPECT_EQ(ch10::multicast_override("off", Multicast::A, "chapter 10", "CH10_MULTICAST"),
            Multicast::None);
  EXPECT_EQ(ch10::multicast_override("A", Multicast::None, "chapter 10", "CH10_MULTICAST"),
            Multicast::A);
  EXPECT_EQ(ch10::multicast_override("B", Multicast::None, "chapter 10", "CH10_MULTICAST"),
            Multicast::B);
  for (const char* bad : {"a", "on", "AB", "0", " B"}) {
    try {
      ch10::multicast_override(bad, Multicast::None, "chapter 10", "CH10_MULTICAST");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const gemm::UnsupportedError& e) {
      EXPECT_NE(std::string(e.what()).find("chapter 10: CH10_MULTICAST must be off, A or B"),
                std::string::npos)
          << e.what();
    }
  }
}

// The kernel's walk (tests/cluster_walk.hpp: every tile once, both CTAs of a cluster busy
// together, a pair sharing its multicast operand), on chapter 09's tile for each shape, with each
// multicast that pairs.
TEST(Chapter10, ClustersVisitEveryTileOnce) {
  for (const Multicast m : {Multicast::None, Multicast::A, Multicast::B})
    for (const int num_sms : {132, 114, 8, 2})
      for (const gemm::Shape& s : gemm::testing::walk_shapes()) {
        const ch07::TileChoice t = ch07::choose_tile(s, num_sms);
        const int tiles_m = int((s.m + t.block_m - 1) / t.block_m);
        const int tiles_n = int((s.n + t.block_n - 1) / t.block_n);
        if (!ch10::pairs_up(tiles_m, tiles_n, m, num_sms)) continue;
        gemm::testing::expect_every_tile_once(
            ch10::plan_clusters(s, t.block_m, t.block_n, m, num_sms, "test"), num_sms,
            s.str() + " multicast " + ch10::name(m) + " on " + std::to_string(num_sms) + " SMs");
      }
}

// The picture's arithmetic and the picture: per K block and wave, 132 CTAs x (128 + 160) rows of
// 128 bytes without multicast, (128 + 80) with multicast on B.
TEST(Chapter10, DrawsTheClusters) {
  EXPECT_EQ(ch10::wave_l2_bytes(132, 128, 160, Multicast::None), 132.0 * 288 * 128);
  EXPECT_EQ(ch10::wave_l2_bytes(132, 128, 160, Multicast::B), 132.0 * 208 * 128);
  EXPECT_EQ(ch10::wave_l2_bytes(132, 256, 128, Multicast::A), 132.0 * 256 * 128);
  const std::string path = testing::TempDir() + "/clusters_test.svg";
  ch10::draw_clusters(path);
  const std::string text = gemm::testing::read_text(path);
  EXPECT_NE(text.find("</svg>"), std::string::npos);
  EXPECT_NE(text.find("pairs (16 x 28) grouped along M, group = 8"), std::string::npos);
  EXPECT_NE(text.find("4.19 MB (multicast on A)"), std::string::npos);  // 128 x (128 + 128) rows
  EXPECT_NE(text.find("6.29 MB"), std::string::npos);  // chapter 09: 128 x (256 + 128) rows
  // A small-M shape and a shape whose tiles pair for neither operand draw too.
  ch10::draw_clusters(path, {64, 2112, 7168});
  ch10::draw_clusters(path, {4097, 7176, 256});
}

// The protocol's picture: the schedule it draws (protocol.hpp's model, one fixed interleaving)
// runs to the end without breaking a rule, every agent finishes (the producers their last round of
// empty waits too), both CTAs exit, and a partner's half lands before the local expect_tx (the
// tx-count below zero), which the picture points out; then the picture itself.
TEST(Chapter10, DrawsTheProtocol) {
  ch10::protocol::Sim sim = ch10::protocol_sim();
  ASSERT_EQ(sim.run_cta0_first(), "");
  ASSERT_FALSE(sim.events.empty());
  EXPECT_EQ(sim.events.back().kind, ch10::protocol::Event::kExited);
  int walks_done = 0, early_halves = 0, exits = 0, last_round_waits = 0;
  for (const ch10::protocol::Event& e : sim.events) {
    walks_done += e.kind == ch10::protocol::Event::kWalkDone;
    exits += e.kind == ch10::protocol::Event::kExited;
    last_round_waits += e.kind == ch10::protocol::Event::kEmptyWaitPassed && e.kb < 0;
    early_halves += e.kind == ch10::protocol::Event::kCopyLanded && e.cta != e.target && e.tx < 0;
  }
  EXPECT_EQ(walks_done, 2 * (1 + sim.warps));  // both producers, every math warp
  EXPECT_EQ(exits, 2);
  EXPECT_EQ(last_round_waits, 2 * sim.stages);  // each producer, once per stage
  EXPECT_GT(early_halves, 0);
  const std::string path = testing::TempDir() + "/protocol_test.svg";
  ch10::draw_protocol(path);
  const std::string text = gemm::testing::read_text(path);
  EXPECT_NE(text.find("</svg>"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 7), "</svg>\n");
  EXPECT_NE(text.find("cross-CTA barrier protocol: who arrives where, and when a stage is free"),
            std::string::npos);
  EXPECT_NE(text.find("drawn from ch10::protocol's simulation"), std::string::npos);
}

}  // namespace
