// Chapter 01's arithmetic, no GPU: the descriptor bits, the accumulator fragment map and the
// core-matrix layouts of A and B.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "chapters/01_wgmma_m64n8k16/layout.hpp"
#include "common/ptx/descriptor.hpp"

namespace {

using ch01::BLayout;
using ptx::encode;
using ptx::MatrixDescriptor;
using ptx::Swizzle;

// ---- the matrix descriptor -----------------------------------------------------------------
// Fields (PTX ISA "Matrix Descriptor Format"): start >> 4 in bits 0-13, LBO >> 4 in 16-29,
// SBO >> 4 in 32-45, base offset in 49-51, swizzle in 62-63.

TEST(Chapter01Descriptor, AllZeroIsZero) {
  EXPECT_EQ(encode({}), 0x0ull);
}

TEST(Chapter01Descriptor, ThisChaptersOperands) {
  // start 0x000 -> 0; LBO 128 -> 8 << 16 = 0x80000; SBO 256 -> 16 << 32 = 0x10'0000'0000.
  EXPECT_EQ(encode({0x000, 128, 256, 0, Swizzle::None}), 0x0000'0010'0008'0000ull);
  // start 0x400 (1024) -> 0x40 in bits 0-13, LBO and SBO as above.
  EXPECT_EQ(encode({0x400, 128, 256, 0, Swizzle::None}), 0x0000'0010'0008'0040ull);
  // B right after A (2048 bytes later): start 0xC00 -> 0xC0.
  EXPECT_EQ(encode({0xC00, ch01::kLeadingByteOffset, ch01::kStrideByteOffset, 0, Swizzle::None}),
            0x0000'0010'0008'00C0ull);
}

// ptx::advance (chapters 06-10 move each wgmma's descriptor from a base built once): adding units
// of 16 bytes to the low half is the descriptor of the moved start address, for every start the
// shared window has (below 2^18) and every swizzle, as long as the sum stays in the window.
TEST(Chapter01Descriptor, AdvanceMovesOnlyTheStartAddress) {
  for (Swizzle sw : {Swizzle::None, Swizzle::B32, Swizzle::B64, Swizzle::B128})
    for (uint32_t start = 0; start < (1u << 18); start += 1008)  // 63 x 16: hits every low digit
      for (uint32_t units : {0u, 1u, 2u, 6u, 64u, 1024u, 2048u, 3073u}) {
        if (start / 16 * 16 + 16 * units >= (1u << 18)) continue;
        const uint32_t at = start / 16 * 16;
        EXPECT_EQ(ptx::advance(encode({at, 16, 1024, 0, sw}), units),
                  encode({at + 16 * units, 16, 1024, 0, sw}))
            << at << " + " << units;
      }
}

TEST(Chapter01Descriptor, SwizzleModesAndBaseOffset) {
  // 128B swizzle (1 << 62 = 0x4000...), start 0x2000 -> 0x200, LBO 16 -> 1 << 16, SBO 1024 ->
  // 64 = 0x40 << 32.
  EXPECT_EQ(encode({0x2000, 16, 1024, 0, Swizzle::B128}), 0x4000'0040'0001'0200ull);
  // 64B swizzle (2 << 62 = 0x8000...), base offset 3 (3 << 49 = 0x0006'0000'0000'0000),
  // start 0x3F0 -> 0x3F, LBO 0, SBO 512 -> 32 = 0x20 << 32.
  EXPECT_EQ(encode({0x3F0, 0, 512, 3, Swizzle::B64}), 0x8006'0020'0000'003Full);
  // 32B swizzle (3 << 62 = 0xC000...), every 14-bit field at its largest: 0x3FFF0 >> 4 = 0x3FFF.
  EXPECT_EQ(encode({0x3FFF0, 0x3FFF0, 0x3FFF0, 0, Swizzle::B32}), 0xC000'3FFF'3FFF'3FFFull);
}

TEST(Chapter01Descriptor, AddressesKeepBits4To17Only) {
  // The low 4 bits are dropped (16-byte units); bits above 17 fall outside the 256 KiB window.
  EXPECT_EQ(encode({0x1F, 0, 0, 0, Swizzle::None}), 0x1ull);
  EXPECT_EQ(encode({0x4001F, 0, 0, 0, Swizzle::None}), 0x1ull);
  EXPECT_EQ(encode({0, 0x4008F, 0, 0, Swizzle::None}), 0x8ull << 16);
  // The base offset has 3 bits.
  EXPECT_EQ(encode({0, 0, 0, 0xF, Swizzle::None}), 0x7ull << 49);
}

// ---- the accumulator fragment map ----------------------------------------------------------

TEST(Chapter01Fragment, HandCheckedPositions) {
  // From the PTX ISA figure for m64nNk16 D: lane l of warp 0 holds row l/4 (d0, d1) and row
  // l/4 + 8 (d2, d3), columns 2 (l % 4) and 2 (l % 4) + 1; warp w adds 16 w rows.
  const ptx::RowCol expected[][4] = {
      {{0, 0}, {0, 1}, {8, 0}, {8, 1}},      // thread 0
      {{0, 2}, {0, 3}, {8, 2}, {8, 3}},      // thread 1
      {{1, 6}, {1, 7}, {9, 6}, {9, 7}},      // thread 7
      {{16, 0}, {16, 1}, {24, 0}, {24, 1}},  // thread 32
      {{55, 6}, {55, 7}, {63, 6}, {63, 7}},  // thread 127
  };
  const int threads[] = {0, 1, 7, 32, 127};
  for (int i = 0; i < 5; ++i)
    for (int r = 0; r < 4; ++r) {
      const ptx::RowCol p = ptx::accumulator_position(threads[i], r);
      EXPECT_EQ(p.row, expected[i][r].row) << "thread " << threads[i] << " d" << r;
      EXPECT_EQ(p.col, expected[i][r].col) << "thread " << threads[i] << " d" << r;
    }
  // For N > 8, register r + 4 is register r moved 8 columns right.
  EXPECT_EQ(ptx::accumulator_position(5, 4 * 7 + 3).col, 8 * 7 + 2 * 1 + 1);
  EXPECT_EQ(ptx::accumulator_position(5, 4 * 7 + 3).row, 1 + 8);
}

// Every (row, col) of the 64 x N tile is held by exactly one (thread, register).
TEST(Chapter01Fragment, BijectionOntoTheTileForEveryN) {
  for (int n : {8, 16, 32, 64, 128, 256}) {
    std::vector<int> hits(64 * n, 0);
    for (int t = 0; t < ptx::kWarpgroupSize; ++t)
      for (int r = 0; r < n / 2; ++r) {
        const ptx::RowCol p = ptx::accumulator_position(t, r);
        ASSERT_TRUE(p.row >= 0 && p.row < 64 && p.col >= 0 && p.col < n)
            << "N " << n << " thread " << t << " d" << r << " -> (" << p.row << ", " << p.col
            << ")";
        ++hits[p.row * n + p.col];
      }
    for (int i = 0; i < 64 * n; ++i)
      EXPECT_EQ(hits[i], 1) << "N " << n << ": (" << i / n << ", " << i % n << ")";
  }
}

// ---- the core-matrix layouts ---------------------------------------------------------------

// offset(i, j) over rows x cols visits every 2-byte slot of [0, rows * cols * 2) exactly once.
template <class Offset>
void expect_bijection(int rows, int cols, Offset offset, const char* what) {
  std::vector<int> hits(rows * cols, 0);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const uint32_t byte = offset(i, j);
      ASSERT_EQ(byte % 2, 0u) << what;
      ASSERT_LT(byte, uint32_t(rows * cols * 2)) << what << " (" << i << ", " << j << ")";
      ++hits[byte / 2];
    }
  for (int i = 0; i < rows * cols; ++i) EXPECT_EQ(hits[i], 1) << what << ": byte " << 2 * i;
}

TEST(Chapter01Layout, AIsABijectionOntoItsBytes) {
  EXPECT_EQ(ch01::kABytes, 2048u);
  expect_bijection(
      ch01::kM, ch01::kK, [](int m, int k) { return ch01::a_offset(m, k); }, "A");
}

TEST(Chapter01Layout, BIsABijectionOntoItsBytesEitherWay) {
  EXPECT_EQ(ch01::kBBytes, 256u);
  // (k, n) over K x N: rows = k. The offsets do not depend on N, so wider B tiles (the "try
  // this" of the README) stay bijections.
  for (int n : {8, 16, 32, 256}) {
    expect_bijection(
        ch01::kK, n, [](int k, int j) { return ch01::b_offset(k, j, BLayout::KMajor); },
        "B K-major");
    expect_bijection(
        ch01::kK, n, [](int k, int j) { return ch01::b_offset(k, j, BLayout::NMajor); },
        "B N-major");
  }
}

// The core matrix: 8 consecutive k (A, B K-major) or 8 consecutive n (B N-major) fill one
// 16-byte-aligned row of 16 bytes; 8 such rows fill one 128-byte-aligned block.
TEST(Chapter01Layout, EightContiguousElementsPerSixteenByteRow) {
  for (int m = 0; m < ch01::kM; ++m)
    for (int k0 = 0; k0 < ch01::kK; k0 += 8) {
      EXPECT_EQ(ch01::a_offset(m, k0) % 16, 0u);
      for (int j = 0; j < 8; ++j)
        EXPECT_EQ(ch01::a_offset(m, k0 + j), ch01::a_offset(m, k0) + 2 * j);
      EXPECT_EQ(ch01::a_offset(m, k0) / 128, ch01::a_offset(m / 8 * 8, k0) / 128)
          << "rows 8i..8i+7 share a core matrix";
    }
  for (int n = 0; n < ch01::kN; ++n)
    for (int k0 = 0; k0 < ch01::kK; k0 += 8) {
      const uint32_t first = ch01::b_offset(k0, n, BLayout::KMajor);
      EXPECT_EQ(first % 16, 0u);
      for (int j = 0; j < 8; ++j)
        EXPECT_EQ(ch01::b_offset(k0 + j, n, BLayout::KMajor), first + 2 * j);
    }
  for (int k = 0; k < ch01::kK; ++k) {
    const uint32_t first = ch01::b_offset(k, 0, BLayout::NMajor);
    EXPECT_EQ(first % 16, 0u);
    for (int j = 0; j < 8; ++j) EXPECT_EQ(ch01::b_offset(k, j, BLayout::NMajor), first + 2 * j);
  }
}

TEST(Chapter01Layout, LboAndSboAreTheCoreMatrixStrides) {
  // LBO: the same row, 8 further along K. SBO: 8 rows further along M (or N), same k.
  for (int m = 0; m < 56; ++m)
    for (int k = 0; k < 8; ++k) {
      EXPECT_EQ(ch01::a_offset(m, k + 8) - ch01::a_offset(m, k), ch01::kLeadingByteOffset);
      EXPECT_EQ(ch01::a_offset(m + 8, k) - ch01::a_offset(m, k), ch01::kStrideByteOffset);
    }
  for (int k = 0; k < 8; ++k)
    for (int n = 0; n < 8; ++n) {
      EXPECT_EQ(ch01::b_offset(k + 8, n, BLayout::KMajor) - ch01::b_offset(k, n, BLayout::KMajor),
                ch01::kLeadingByteOffset);
      EXPECT_EQ(ch01::b_offset(k + 8, n, BLayout::NMajor) - ch01::b_offset(k, n, BLayout::NMajor),
                ch01::kLeadingByteOffset);
      EXPECT_EQ(ch01::b_offset(k, n + 8, BLayout::KMajor) - ch01::b_offset(k, n, BLayout::KMajor),
                ch01::kStrideByteOffset);
      EXPECT_EQ(ch01::b_offset(k, n + 8, BLayout::NMajor) - ch01::b_offset(k, n, BLayout::NMajor),
                ch01::kStrideByteOffset);
    }
  // With N = 8, B N-major in core matrices is exactly B as a 16 x 8 row-major array.
  for (int k = 0; k < ch01::kK; ++k)
    for (int n = 0; n < ch01::kN; ++n)
      EXPECT_EQ(ch01::b_offset(k, n, BLayout::NMajor), uint32_t(2 * (k * ch01::kN + n)));
}

// The README's prediction for the "swap LBO and SBO in the A descriptor" experiment: the tensor
// core then reads element (m, k) from ptx::no_swizzle_k_major_offset(m, 2 k, 256, 128), which
// holds the element A[8 (i / 2 + h) + m % 8][8 (i % 2) + k % 8] written there, for i = m / 8 and
// h = k / 8.
TEST(Chapter01Layout, SwappedStridesReadThePredictedElements) {
  std::vector<int> stored_at(ch01::kABytes / 2, -1);  // 2-byte slot -> m * 16 + k written there
  for (int m = 0; m < ch01::kM; ++m)
    for (int k = 0; k < ch01::kK; ++k) stored_at[ch01::a_offset(m, k) / 2] = m * ch01::kK + k;
  std::set<int> read;
  for (int m = 0; m < ch01::kM; ++m)
    for (int k = 0; k < ch01::kK; ++k) {
      const uint32_t byte = ptx::no_swizzle_k_major_offset(
          m, k * ch01::kElementBytes, ch01::kStrideByteOffset, ch01::kLeadingByteOffset);
      ASSERT_LT(byte, ch01::kABytes);  // still inside A: 128 * (7 + 2) + 127 < 2048
      const int i = m / 8, h = k / 8;
      const int want_m = 8 * (i / 2 + h) + m % 8, want_k = 8 * (i % 2) + k % 8;
      EXPECT_EQ(stored_at[byte / 2], want_m * ch01::kK + want_k) << "(" << m << ", " << k << ")";
      read.insert(stored_at[byte / 2]);
    }
  // Only rows 0..39 are ever read: 640 of the 1024 elements, some of them twice.
  EXPECT_EQ(read.size(), 640u);
}

}  // namespace
