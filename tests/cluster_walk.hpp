// The clusters' walk over the tiles, checked the same way for chapter 10's plans and chapter 11's
// configurations (tests/host_chapter10.cpp, tests/host_chapter11.cpp): cluster c takes pairs
// c, c + clusters, ...; its CTA of rank r takes cta_tile(pair, r). Every tile exactly once; both
// CTAs of a cluster take the same number of tiles (they meet at the same barriers); with
// multicast, the two tiles of a pair share the multicast operand's block.
#pragma once

#include <gtest/gtest.h>

#include <iterator>
#include <string>
#include <vector>

#include "chapters/10_tma_multicast/cluster.hpp"
#include "common/problem.hpp"

namespace gemm::testing {

// DeepGEMM's 18 shapes and ragged or tiny ones: one row of tiles, odd tile counts, N past 2^15.
inline std::vector<gemm::Shape> walk_shapes() {
  std::vector<gemm::Shape> shapes(std::begin(gemm::kDeepGemmShapes),
                                  std::end(gemm::kDeepGemmShapes));
  shapes.insert(shapes.end(), {{1, 8, 128},
                               {1, 136, 128},
                               {65, 264, 256},
                               {257, 2120, 512},
                               {4097, 7176, 256},
                               {4096, 7176, 256},
                               {8192, 1024, 128},
                               {640, 32768, 128}});
  return shapes;
}

inline void expect_every_tile_once(const ch10::Clusters& c, int num_sms, const std::string& what) {
  ASSERT_GE(c.grid, 1) << what;
  ASSERT_LE(c.grid, num_sms) << what;
  ASSERT_EQ(c.grid % c.cluster_size, 0) << what;
  ASSERT_EQ(c.clusters * c.cluster_size, c.grid) << what;
  const int pairs = c.pairs_m * c.pairs_n;
  std::vector<int> seen(size_t(c.tiles_m) * c.tiles_n, 0);
  for (int cluster = 0; cluster < c.clusters; ++cluster) {
    int count[2] = {0, 0};
    for (int pair = cluster; pair < pairs; pair += c.clusters) {
      ch09::TileCoord tile[2];
      for (int rank = 0; rank < c.cluster_size; ++rank) {
        tile[rank] = ch10::cta_tile(pair, rank, c.pairs_m, c.pairs_n, c.group, c.multicast);
        ASSERT_GE(tile[rank].m_block, 0) << what;
        ASSERT_LT(tile[rank].m_block, c.tiles_m) << what;
        ASSERT_GE(tile[rank].n_block, 0) << what;
        ASSERT_LT(tile[rank].n_block, c.tiles_n) << what;
        ++seen[size_t(tile[rank].m_block) * c.tiles_n + tile[rank].n_block];
        ++count[rank];
      }
      if (c.multicast == ch10::Multicast::B) {
        EXPECT_EQ(tile[0].n_block, tile[1].n_block) << what;
      }
      if (c.multicast == ch10::Multicast::A) {
        EXPECT_EQ(tile[0].m_block, tile[1].m_block) << what;
      }
    }
    if (c.cluster_size == 2) {
      EXPECT_EQ(count[0], count[1]) << what;
    }
  }
  for (size_t i = 0; i < seen.size(); ++i)
    ASSERT_EQ(seen[i], 1) << what << ": tile " << i / c.tiles_n << ", " << i % c.tiles_n;
}

}  // namespace gemm::testing
