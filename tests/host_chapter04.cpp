// Chapter 04's plain arithmetic: the 128-byte swizzle, against the PTX ISA's definition.
#include <gtest/gtest.h>

#include <set>

#include "chapters/04_swizzle_128b/swizzle.hpp"

namespace {

// The 128B swizzle pattern as the PTX ISA draws it (section "Shared Memory Matrix Layout",
// 128-Byte swizzling): row r of each 1024-byte atom stores 16-byte chunk c at position kIsa[r][c].
// clang-format off: one row of the table per line, as the ISA draws it
constexpr int kIsa[8][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}, {2, 3, 0, 1, 6, 7, 4, 5},
    {3, 2, 1, 0, 7, 6, 5, 4}, {4, 5, 6, 7, 0, 1, 2, 3}, {5, 4, 7, 6, 1, 0, 3, 2},
    {6, 7, 4, 5, 2, 3, 0, 1}, {7, 6, 5, 4, 3, 2, 1, 0},
};
// clang-format on

TEST(Chapter04, MatchesThePtxIsaTable) {
  for (uint32_t row = 0; row < 8; ++row)
    for (uint32_t chunk = 0; chunk < 8; ++chunk)
      EXPECT_EQ(ch04::swizzled_offset(row, chunk * 16), row * 128 + kIsa[row][chunk] * 16u)
          << "row " << row << " chunk " << chunk;
}

TEST(Chapter04, AddressRuleEqualsRowChunkRuleOnAlignedTiles) {
  for (uint32_t base : {0u, 1024u, 5u * 1024u, 200u * 1024u})
    for (uint32_t row = 0; row < 256; ++row)
      for (uint32_t byte = 0; byte < 128; ++byte)
        ASSERT_EQ(ch04::swizzle_128b(base + row * 128 + byte),
                  base + ch04::swizzled_offset(row, byte))
            << "base " << base << " row " << row << " byte " << byte;
}

TEST(Chapter04, MisalignedTileBreaksTheAgreement) {
  // A tile starting 512 bytes into an atom is unswizzled with the wrong row index: why the tiles
  // are aligned to 1024 bytes (or the descriptor's base offset field is used).
  int mismatches = 0;
  for (uint32_t row = 0; row < 8; ++row)
    for (uint32_t byte = 0; byte < 128; byte += 16)
      mismatches +=
          ch04::swizzle_128b(512 + row * 128 + byte) != 512 + ch04::swizzled_offset(row, byte);
  EXPECT_GT(mismatches, 0);
}

TEST(Chapter04, EachAtomIsAPermutationAndConflictFree) {
  std::set<uint32_t> seen;
  for (uint32_t row = 0; row < 8; ++row)
    for (uint32_t byte = 0; byte < 128; ++byte) seen.insert(ch04::swizzled_offset(row, byte));
  EXPECT_EQ(seen.size(), 1024u);
  EXPECT_EQ(*seen.rbegin(), 1023u);
  // The same logical 16-byte chunk of eight consecutive rows lands in eight different groups of 4
  // banks (bank = (address / 4) % 32): reading one column of chunks touches all 32 banks once.
  for (uint32_t chunk = 0; chunk < 8; ++chunk) {
    std::set<uint32_t> bank_groups;
    for (uint32_t row = 0; row < 8; ++row)
      bank_groups.insert((ch04::swizzled_offset(row, chunk * 16) / 16) % 8);
    EXPECT_EQ(bank_groups.size(), 8u) << "chunk " << chunk;
  }
}

TEST(Chapter04, AdvancingTheDescriptorAlongK) {
  // wgmma k32 step kk reads bytes [32 kk, 32 kk + 32) of every row. The descriptor's start address
  // moves by 32 kk bytes as if unswizzled; the hardware swizzles the final address, and lands on
  // the byte TMA stored there.
  const uint32_t base = 3 * 1024;
  for (uint32_t kk = 0; kk < 4; ++kk)
    for (uint32_t row = 0; row < 128; ++row)
      for (uint32_t j = 0; j < 32; ++j)
        ASSERT_EQ(ch04::swizzle_128b(base + kk * 32 + row * 128 + j),
                  base + ch04::swizzled_offset(row, kk * 32 + j));
  EXPECT_EQ(ch04::kStrideByteOffset, 1024u);
}

}  // namespace
