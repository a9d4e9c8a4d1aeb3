// Chapter 08's plain arithmetic: the swizzled bf16 tile for the TMA store, and the stmatrix.x4
// addresses, run through a simulation of stmatrix against wgmma's accumulator fragment; then the
// shared-memory banks each store hits, for the swizzled, padded and plain row-major layouts.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "chapters/08_stmatrix_epilogue/draw.hpp"
#include "chapters/08_stmatrix_epilogue/epilogue_layout.hpp"
#include "common/ptx/descriptor.hpp"
#include "tests/read_text.hpp"

namespace {

constexpr int kBlockM = 128;  // two math warpgroups
constexpr int kBlockNs[] = {16, 32, 48, 64, 96, 112, 128, 144, 160, 192, 256};

TEST(Chapter08, EveryChunkHasItsOwnSlot) {
  for (int block_n : kBlockNs) {
    const uint32_t span = ch08::swizzle_span_for(block_n);
    std::set<uint32_t> slots;
    for (int row = 0; row < kBlockM; ++row)
      for (int col = 0; col < block_n; col += 8) {
        const uint32_t at = ch08::epilogue_offset(row, col, kBlockM, span);
        ASSERT_EQ(at % 16, 0u);
        ASSERT_LT(at + 16, uint32_t(kBlockM) * block_n * 2 + 1)
            << "block_n " << block_n << " span " << span;
        ASSERT_TRUE(slots.insert(at).second)
            << "block_n " << block_n << " span " << span << " row " << row << " col " << col;
        // The element offsets inside a chunk are consecutive: a chunk is one 16-byte row of a
        // stmatrix matrix.
        for (int e = 0; e < 8; ++e)
          ASSERT_EQ(ch08::epilogue_offset(row, col + e, kBlockM, span), at + 2 * e);
      }
  }
}

// Span 128 (BLOCK_N a multiple of 64): each panel is a chapter 04 tile.
TEST(Chapter08, PanelsAreChapter04Tiles) {
  for (int block_n : kBlockNs) {
    if (ch08::swizzle_span_for(block_n) != 128) continue;
    for (int row = 0; row < kBlockM; ++row)
      for (int col = 0; col < block_n; ++col) {
        const int p = col / 64;
        const uint32_t in_panel = ch04::swizzled_offset(row, (col % 64) * 2);
        ASSERT_EQ(ch08::epilogue_offset(row, col, kBlockM, 128), p * kBlockM * 128u + in_panel);
        // The rule TMA applies to the absolute address, on a 1024-byte aligned tile.
        const uint32_t base = 7 * 1024;
        ASSERT_EQ(ch04::swizzle_128b(base + p * kBlockM * 128u + row * 128u + (col % 64) * 2),
                  base + ch08::epilogue_offset(row, col, kBlockM, 128));
      }
  }
}

TEST(Chapter08, NarrowerSpans) {
  // The span rule never leaves a partial panel, and its swizzles are permutations of 16-byte
  // chunks within each span-wide row, repeating every 8 rows (PTX ISA, "Tensor Swizzling Modes").
  for (int block_n : kBlockNs) EXPECT_EQ(block_n * 2 % ch08::swizzle_span_for(block_n), 0u);
  EXPECT_EQ(ch08::swizzle_span_for(112), 32u);
  EXPECT_EQ(ch08::swizzle_span_for(144), 32u);
  EXPECT_EQ(ch08::swizzle_span_for(160), 64u);
  EXPECT_EQ(ch08::swizzle_span_for(128), 128u);
  for (uint32_t span : {32u, 64u, 128u})
    for (uint32_t row = 0; row < 64; ++row) {
      std::set<uint32_t> chunks;
      for (uint32_t byte = 0; byte < span; byte += 16) {
        const uint32_t at = ch08::swizzle(row * span + byte, span);
        EXPECT_EQ(at / span, row);  // stays in its row
        chunks.insert(at);
        EXPECT_EQ(at, ch08::swizzle((row + 8) * span + byte, span) - 8 * span);  // period 8 rows
      }
      EXPECT_EQ(chunks.size(), span / 16);
    }
  // 32B: rows 4-7 of each 8 have their two chunks exchanged (bit 4 ^= bit 7).
  EXPECT_EQ(ch08::swizzle(3 * 32 + 0, 32), 3u * 32);
  EXPECT_EQ(ch08::swizzle(4 * 32 + 0, 32), 4u * 32 + 16);
  EXPECT_EQ(ch08::swizzle(128, 128), ch04::swizzle_128b(128));
}

// The simulation. Every accumulator gets a tag (warpgroup, thread, register); each x4 store writes,
// for matrix i and row q, the 8 bf16 held by lanes 4q..4q+3 in their register i (two each, low half
// first) to the 16 bytes at the address lane 8i + q supplied.
struct Tag {
  int warpgroup, thread, reg;
};

// block_m: 128, two math warpgroups (chapters 08-10), or 64, one (chapter 10 at M <= 64), or 256
// (chapters 08-10: two warpgroups of two 64-row sub-tiles); "warpgroup" is the 64-row block.
void simulate_and_check(int block_n, uint32_t span, int block_m = kBlockM) {
  std::map<uint32_t, Tag> smem;  // byte offset of a bf16 -> which accumulator landed there
  for (int wg = 0; wg < block_m / 64; ++wg)
    for (int warp = 0; warp < 4; ++warp)
      for (int j = 0; j < block_n / 8; j += 2) {
        // The 32 addresses of one store cover the four matrices' rows, each row once.
        std::set<std::pair<int, int>> rows;
        for (int lane = 0; lane < 32; ++lane) {
          const int r = ch08::stmatrix_row(wg, warp, lane), c = ch08::stmatrix_col(j, lane);
          EXPECT_EQ(c % 8, 0);
          EXPECT_TRUE(rows.insert({r, c}).second);
          EXPECT_EQ(r, 64 * wg + 16 * warp + (lane / 8 % 2) * 8 + lane % 8);
          EXPECT_EQ(c, 8 * j + 8 * (lane / 16));
        }
        EXPECT_EQ(rows.size(), 32u);
        for (int i = 0; i < 4; ++i)
          for (int q = 0; q < 8; ++q) {
            const int address_lane = 8 * i + q;
            const uint32_t address =
                ch08::stmatrix_address_offset(wg, warp, address_lane, j, block_m, span);
            ASSERT_EQ(address % 16, 0u);  // stmatrix rows are 16-byte aligned
            for (int e = 0; e < 8; ++e) {
              const int lane = 4 * q + e / 2;
              const Tag tag{wg, 32 * warp + lane, ch08::stmatrix_accumulator(j, i, e % 2)};
              ASSERT_TRUE(smem.emplace(address + 2 * e, tag).second) << "written twice";
            }
          }
      }
  // Every element of the tile was written once, by the thread whose fragment holds it.
  ASSERT_EQ(smem.size(), size_t(block_m) * block_n);
  for (int row = 0; row < block_m; ++row)
    for (int col = 0; col < block_n; ++col) {
      const auto it = smem.find(ch08::epilogue_offset(row, col, block_m, span));
      ASSERT_NE(it, smem.end()) << "row " << row << " col " << col;
      const Tag& t = it->second;
      ASSERT_LT(t.reg, block_n / 2);  // m64nN: N / 2 accumulators per thread
      const ptx::RowCol at = ptx::accumulator_position(t.thread, t.reg);
      ASSERT_EQ(64 * t.warpgroup + at.row, row)
          << "block_n " << block_n << " span " << span << " col " << col;
      ASSERT_EQ(at.col, col) << "block_n " << block_n << " span " << span << " row " << row;
    }
}

TEST(Chapter08, StmatrixPutsEveryAccumulatorInItsPlace) {
  for (int block_n : kBlockNs) simulate_and_check(block_n, ch08::swizzle_span_for(block_n));
}

// Chapter 10's one-warpgroup tile (BLOCK_M = 64) with the same functions, at its widths.
TEST(Chapter08, StmatrixAtBlockM64) {
  for (int block_n : {16, 32, 64, 96, 112, 128, 144, 160})
    simulate_and_check(block_n, ch08::swizzle_span_for(block_n), 64);
}

// The 256-row tile (chapters 08-09 at 256 x 128, chapter 10 at 256 x 96 and 256 x 128): four
// 64-row blocks, block b being sub-tile b / 2 of math warpgroup b % 2; the kernel passes b where
// the functions take the warpgroup.
TEST(Chapter08, StmatrixAtBlockM256) {
  for (int block_n : {96, 128}) simulate_and_check(block_n, ch08::swizzle_span_for(block_n), 256);
}

TEST(Chapter08, RegisterPackingIsTheFragment) {
  // Register i of lane l holds row l / 4, columns 2 (l % 4), +1 of matrix i: the accumulators the
  // fragment puts there.
  for (int j = 0; j < 32; j += 2)
    for (int i = 0; i < 4; ++i)
      for (int lane = 0; lane < 32; ++lane)
        for (int half = 0; half < 2; ++half) {
          const ptx::RowCol at =
              ptx::accumulator_position(lane, ch08::stmatrix_accumulator(j, i, half));
          EXPECT_EQ(at.row, lane / 4 + 8 * (i % 2));
          EXPECT_EQ(at.col, 8 * (j + i / 2) + 2 * (lane % 4) + half);
        }
}

// Banks: 32 of 4 bytes; bank = (address / 4) % 32. stmatrix writes each 8 x 8 matrix, 8 rows of
// 16 bytes = 128 bytes, in one pass if the rows fall in distinct banks. Returns the worst number
// of rows of one matrix that share a bank (1: conflict-free), over every matrix of every store.
template <typename Offset>
int worst_conflict(int block_n, Offset offset_of) {
  int worst = 0;
  for (int wg = 0; wg < kBlockM / 64; ++wg)
    for (int warp = 0; warp < 4; ++warp)
      for (int j = 0; j < block_n / 8; j += 2)
        for (int i = 0; i < 4; ++i) {
          std::map<uint32_t, int> rows_per_bank;
          for (int q = 0; q < 8; ++q) {
            const int lane = 8 * i + q;
            const uint32_t a =
                offset_of(ch08::stmatrix_row(wg, warp, lane), ch08::stmatrix_col(j, lane));
            for (uint32_t b = 0; b < 16; b += 4) ++rows_per_bank[(a + b) / 4 % 32];
          }
          int here = 0;
          for (const auto& [bank, n] : rows_per_bank) here = std::max(here, n);
          if (here == 1) {
            EXPECT_EQ(rows_per_bank.size(), 32u);  // all 32 banks, once each
          }
          worst = std::max(worst, here);
        }
  return worst;
}

TEST(Chapter08, BankConflicts) {
  for (int block_n : kBlockNs) {
    // The swizzled tile: every matrix hits 32 distinct banks.
    EXPECT_EQ(worst_conflict(block_n,
                             [&](int r, int c) {
                               return ch08::epilogue_offset(r, c, kBlockM,
                                                            ch08::swizzle_span_for(block_n));
                             }),
              1)
        << "block_n " << block_n << " span " << ch08::swizzle_span_for(block_n);
    // Padding rows by 16 bytes: conflict-free too.
    EXPECT_EQ(
        worst_conflict(block_n, [&](int r, int c) { return ch08::padded_offset(r, c, block_n); }),
        1)
        << "block_n " << block_n;
  }
  // Plain row-major: a row pitch of 2 BLOCK_N bytes is BLOCK_N / 8 chunks, so the 8 rows of a
  // matrix fall into 8 / gcd(BLOCK_N / 8, 8) bank groups: gcd(BLOCK_N / 8, 8)-way conflicts.
  const std::map<int, int> expected{{16, 2},  {32, 4},  {48, 2},  {64, 8},  {96, 4}, {112, 2},
                                    {128, 8}, {144, 2}, {160, 4}, {192, 8}, {256, 8}};
  for (int block_n : kBlockNs)
    EXPECT_EQ(worst_conflict(block_n,
                             [&](int r, int c) { return ch08::unswizzled_offset(r, c, block_n); }),
              expected.at(block_n))
        << "block_n " << block_n;
}

// The TMA store's view of D: bf16, N innermost, one box = one panel of one warpgroup's 64 rows,
// swizzled with the span; a valid tensor map for every span, ragged N and M included.
TEST(Chapter08, StoreViewIsOnePanelOfOneWarpgroup) {
  const gemm::Shape s{257, 1168, 1024};
  for (const uint32_t span : {32u, 64u, 128u}) {
    const auto spec = ch08::d_store_view(s, span);
    EXPECT_EQ(spec.element_bytes, 2);
    EXPECT_EQ(spec.dims[0], 1168u);
    EXPECT_EQ(spec.dims[1], 257u);
    EXPECT_EQ(spec.strides[0], 1168u * 2);
    EXPECT_EQ(spec.box[0] * 2, span);
    EXPECT_EQ(spec.box[1], 64u);
    EXPECT_EQ(spec.swizzle, span == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                            : span == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                         : CU_TENSOR_MAP_SWIZZLE_32B);
    EXPECT_EQ(gemm::tensor_map_error(spec, reinterpret_cast<const void*>(0x10000)), "") << span;
  }
}

TEST(Chapter08, DrawsThePicture) {
  const std::string path = testing::TempDir() + "/stmatrix_test.svg";
  ch08::draw_stmatrix(path);
  const std::string text = gemm::testing::read_text(path);
  EXPECT_NE(text.find("</svg>"), std::string::npos);
  EXPECT_NE(text.find(">L31<"), std::string::npos);
}

}  // namespace
