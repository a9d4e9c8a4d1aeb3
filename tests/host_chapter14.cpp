// Chapter 14's arithmetic, no GPU: the fragment maps of mma.sync m16n8k32 (e4m3) and m16n8k16
// (f16), what ldmatrix hands each lane, and the kernel's shared-memory tiles. The last tests run
// ldmatrix in software on a stage filled the way the kernel fills it, and check that every lane
// receives exactly the elements mma.sync expects of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "chapters/13_ffma_interleave/cubin.hpp"
#include "chapters/14_warp_mma_sync/block_scale_model.hpp"
#include "chapters/14_warp_mma_sync/fragments.hpp"
#include "chapters/14_warp_mma_sync/scale_accuracy.hpp"
#include "common/inputs.hpp"

namespace {

using ch14::kLanes;
using ch14::RowCol;

// Every (lane, element) lands on a distinct cell of the rows x cols tile, and together they cover
// it: the map is a bijection.
void expect_bijection(const std::function<RowCol(int, int)>& map, int per_lane, int rows, int cols,
                      const char* what) {
  std::set<std::pair<int, int>> seen;
  for (int lane = 0; lane < kLanes; ++lane)
    for (int i = 0; i < per_lane; ++i) {
      const RowCol p = map(lane, i);
      ASSERT_TRUE(p.row >= 0 && p.row < rows && p.col >= 0 && p.col < cols)
          << what << " lane " << lane << " element " << i;
      EXPECT_TRUE(seen.insert({p.row, p.col}).second)
          << what << ": (" << p.row << ", " << p.col << ") twice";
    }
  EXPECT_EQ(seen.size(), size_t(rows * cols)) << what;
}

TEST(Chapter14Fragments, EachMapCoversItsTileOnce) {
  expect_bijection(ch14::a_e4m3, 16, 16, 32, "A e4m3");
  expect_bijection(ch14::b_e4m3, 8, 32, 8, "B e4m3");
  expect_bijection(ch14::a_f16, 8, 16, 16, "A f16");
  expect_bijection(ch14::b_f16, 4, 16, 8, "B f16");
  expect_bijection(ch14::c_f32, 4, 16, 8, "C f32");
  // ldmatrix: one 8 x 8 matrix of b16 (two per lane), or of 8 x 16 bytes (four per lane).
  expect_bijection(ch14::ldmatrix_b16, 2, 8, 8, "ldmatrix");
  expect_bijection(ch14::ldmatrix_b16_trans, 2, 8, 8, "ldmatrix .trans");
  expect_bijection(ch14::ldmatrix_bytes, 4, 8, 16, "ldmatrix as bytes");
}

// Spot checks against the PTX ISA figures ("Matrix Fragments for mma.m16n8k32", "... m16n8k16 with
// floating point type"): lane 5 is groupID 1, threadID_in_group 1.
TEST(Chapter14Fragments, MatchThePtxIsaFigures) {
  // A e4m3, a8..a11 (register 2): row groupID, col threadID_in_group * 4 + (i & 3) + 16.
  EXPECT_EQ(ch14::a_e4m3(5, 9).row, 1);
  EXPECT_EQ(ch14::a_e4m3(5, 9).col, 21);
  // a4..a7 (register 1): row groupID + 8.
  EXPECT_EQ(ch14::a_e4m3(5, 4).row, 9);
  EXPECT_EQ(ch14::a_e4m3(5, 4).col, 4);
  // B e4m3, b4..b7: row (k) threadID_in_group * 4 + (i & 3) + 16, col (n) groupID.
  EXPECT_EQ(ch14::b_e4m3(31, 7).row, 31);
  EXPECT_EQ(ch14::b_e4m3(31, 7).col, 7);
  // A f16, a6 a7 (register 3): row groupID + 8, col threadID_in_group * 2 + (i & 1) + 8.
  EXPECT_EQ(ch14::a_f16(5, 7).row, 9);
  EXPECT_EQ(ch14::a_f16(5, 7).col, 11);
  // C: c2 c3 row groupID + 8, col threadID_in_group * 2 + (i & 1).
  EXPECT_EQ(ch14::c_f32(5, 3).row, 9);
  EXPECT_EQ(ch14::c_f32(5, 3).col, 3);
}

// The 8-bit fragments hold four consecutive k per register, and so does an ldmatrix register read
// as bytes: the same lane, the same row, the same four bytes. That is why ldmatrix (a b16
// instruction) serves fp8 operands without .trans or shuffles.
TEST(Chapter14Fragments, LdmatrixBytesAreTheE4m3Registers) {
  for (int lane = 0; lane < kLanes; ++lane)
    for (int b = 0; b < 4; ++b) {
      // A register 0: rows 0-7, k 0-15 of the fragment: ldmatrix's matrix 0.
      EXPECT_EQ(ch14::a_e4m3(lane, b).row, ch14::ldmatrix_bytes(lane, b).row);
      EXPECT_EQ(ch14::a_e4m3(lane, b).col, ch14::ldmatrix_bytes(lane, b).col);
      // B register 0 (k, n) against ldmatrix of B stored n-major rows of k bytes.
      EXPECT_EQ(ch14::b_e4m3(lane, b).col, ch14::ldmatrix_bytes(lane, b).row);
      EXPECT_EQ(ch14::b_e4m3(lane, b).row, ch14::ldmatrix_bytes(lane, b).col);
    }
}

TEST(Chapter14Tiles, SwizzlesAreBijections) {
  std::set<uint32_t> fp8, f16;
  for (int row = 0; row < ch14::BLOCK_M; ++row)
    for (int k = 0; k < ch14::BLOCK_K; ++k) {
      EXPECT_TRUE(fp8.insert(ch14::fp8_offset(row, k)).second) << row << ", " << k;
      EXPECT_TRUE(f16.insert(ch14::f16_offset(row, k) / 2).second) << row << ", " << k;
      EXPECT_EQ(ch14::f16_offset(row, k) % 2, 0u);
    }
  EXPECT_EQ(*fp8.rbegin(), ch14::kTileBytes - 1);
  EXPECT_EQ(*f16.rbegin(), ch14::kF16TileBytes / 2 - 1);
}

// The 8 rows of one ldmatrix matrix: their 16-byte chunks fall in 8 different 16-byte groups of
// banks (address % 128 / 16), so each matrix is one shared-memory wavefront.
template <class Offset>
void expect_conflict_free(Offset offset, int chunks_per_row, int elements_per_chunk,
                          const char* what) {
  for (int row0 = 0; row0 < ch14::BLOCK_M; row0 += 8)
    for (int chunk = 0; chunk < chunks_per_row; ++chunk) {
      std::set<uint32_t> groups;
      for (int r = 0; r < 8; ++r)
        groups.insert(offset(row0 + r, chunk * elements_per_chunk) % 128 / 16);
      EXPECT_EQ(groups.size(), 8u) << what << " rows " << row0 << "+, chunk " << chunk;
    }
}

TEST(Chapter14Tiles, LdmatrixReadsAreConflictFree) {
  expect_conflict_free(ch14::fp8_offset, ch14::BLOCK_K / 16, 16, "fp8 stage");
  expect_conflict_free(ch14::f16_offset, ch14::BLOCK_K / 8, 8, "f16 tile");
  // Unswizzled 64-byte rows would not be: rows r and r + 2 share their banks.
  std::set<uint32_t> plain;
  for (int r = 0; r < 8; ++r) plain.insert(uint32_t(r * ch14::BLOCK_K) % 128 / 16);
  EXPECT_EQ(plain.size(), 2u);
}

// Every 16-byte chunk of a stage is copied by exactly one (thread, copy), and each copy
// instruction of a warp (32 chunks) writes 512 contiguous bytes of the stage: 8 whole rows, as the
// kernel's comment says, so the cp.async writes are conflict-free.
TEST(Chapter14Tiles, EveryStageChunkIsCopiedOnceAndWarpsWriteWholeRows) {
  std::set<uint32_t> written;
  for (int i = 0; i < 2 * ch14::kChunksPerTile / ch14::kNumThreads; ++i)
    for (int warp = 0; warp < ch14::kNumThreads / kLanes; ++warp) {
      std::set<uint32_t> bytes;
      for (int lane = 0; lane < kLanes; ++lane) {
        const ch14::StageChunk s = ch14::stage_chunk(warp * kLanes + lane + i * ch14::kNumThreads);
        ASSERT_TRUE(s.tile >= 0 && s.tile < 2 && s.row >= 0 && s.row < ch14::BLOCK_M);
        const uint32_t at = uint32_t(s.tile) * ch14::kTileBytes + ch14::fp8_offset(s.row, s.kbyte);
        EXPECT_EQ(at % 16, 0u);
        EXPECT_TRUE(written.insert(at).second) << "chunk at " << at << " twice";
        for (uint32_t b = 0; b < 16; ++b) bytes.insert(at + b);
      }
      EXPECT_EQ(bytes.size(), 512u);
      EXPECT_EQ(*bytes.rbegin() - *bytes.begin(), 511u) << "warp " << warp << " copy " << i;
    }
  EXPECT_EQ(written.size(), size_t(ch14::kStageBytes / 16));
}

// Software ldmatrix.x4: lane l's register j holds 2 elements (or 4 bytes) starting at
// 4 (l % 4) bytes into the row that lane 8 j + l / 4 pointed at.
struct Stage {
  std::vector<RowCol> at;  // the (row, k) each element of the tile came from, by address unit
  explicit Stage(size_t units) : at(units, RowCol{-1, -1}) {}
};

// The kernel's e4m3 path: a stage filled through fp8_offset, fragments loaded with the lane
// addresses of a_e4m3_ldmatrix_row and b_e4m3_ldmatrix_row, checked against a_e4m3 and b_e4m3 for
// every warp, m16 tile, n8 tile and K step.
TEST(Chapter14Kernel, LdmatrixDeliversTheE4m3Fragments) {
  Stage tile(ch14::kTileBytes);
  for (int row = 0; row < ch14::BLOCK_M; ++row)
    for (int k = 0; k < ch14::BLOCK_K; ++k) tile.at[ch14::fp8_offset(row, k)] = {row, k};
  for (int warp_row = 0; warp_row < ch14::BLOCK_M; warp_row += ch14::WARP_M)
    for (int kk = 0; kk < ch14::BLOCK_K / 32; ++kk) {
      for (int mt = 0; mt < ch14::WARP_M / 16; ++mt)
        for (int lane = 0; lane < kLanes; ++lane)
          for (int j = 0; j < 4; ++j)
            for (int b = 0; b < 4; ++b) {
              const RowCol src = ch14::a_e4m3_ldmatrix_row(8 * j + lane / 4);
              const uint32_t addr =
                  ch14::fp8_offset(warp_row + mt * 16 + src.row, kk * 32 + src.col) +
                  4 * (lane % 4) + b;
              const RowCol got = tile.at[addr], want = ch14::a_e4m3(lane, 4 * j + b);
              EXPECT_EQ(got.row, warp_row + mt * 16 + want.row) << lane << " a" << j << "." << b;
              EXPECT_EQ(got.col, kk * 32 + want.col) << lane << " a" << j << "." << b;
            }
      // B: the x4 covers two n8 tiles; registers 0, 1 the first tile's b0, b1, 2, 3 the second's.
      for (int np = 0; np < ch14::WARP_N / 16; ++np)
        for (int lane = 0; lane < kLanes; ++lane)
          for (int j = 0; j < 4; ++j)
            for (int b = 0; b < 4; ++b) {
              const RowCol src = ch14::b_e4m3_ldmatrix_row(8 * j + lane / 4);
              const uint32_t addr =
                  ch14::fp8_offset(warp_row + np * 16 + src.row, kk * 32 + src.col) +
                  4 * (lane % 4) + b;
              const RowCol got = tile.at[addr];
              const RowCol want = ch14::b_e4m3(lane, 4 * (j % 2) + b);  // (k, n)
              EXPECT_EQ(got.row, warp_row + np * 16 + 8 * (j / 2) + want.col) << lane << " b" << j;
              EXPECT_EQ(got.col, kk * 32 + want.row) << lane << " b" << j;
            }
    }
}

// The f16 variant: the converted tiles through f16_offset, k16 steps, a_f16 and b_f16.
TEST(Chapter14Kernel, LdmatrixDeliversTheF16Fragments) {
  Stage tile(ch14::kF16TileBytes / 2);
  for (int row = 0; row < ch14::BLOCK_M; ++row)
    for (int k = 0; k < ch14::BLOCK_K; ++k) tile.at[ch14::f16_offset(row, k) / 2] = {row, k};
  for (int kk = 0; kk < ch14::BLOCK_K / 16; ++kk)
    for (int t16 = 0; t16 < ch14::BLOCK_M / 16; ++t16)
      for (int lane = 0; lane < kLanes; ++lane)
        for (int j = 0; j < 4; ++j)
          for (int e = 0; e < 2; ++e) {
            const RowCol sa = ch14::a_f16_ldmatrix_row(8 * j + lane / 4);
            const RowCol ga = tile.at[ch14::f16_offset(t16 * 16 + sa.row, kk * 16 + sa.col) / 2 +
                                      2 * (lane % 4) + e];
            const RowCol wa = ch14::a_f16(lane, 2 * j + e);
            EXPECT_EQ(ga.row, t16 * 16 + wa.row);
            EXPECT_EQ(ga.col, kk * 16 + wa.col);
            const RowCol sb = ch14::b_f16_ldmatrix_row(8 * j + lane / 4);
            const RowCol gb = tile.at[ch14::f16_offset(t16 * 16 + sb.row, kk * 16 + sb.col) / 2 +
                                      2 * (lane % 4) + e];
            const RowCol wb = ch14::b_f16(lane, 2 * (j % 2) + e);  // (k, n)
            EXPECT_EQ(gb.row, t16 * 16 + 8 * (j / 2) + wb.col);
            EXPECT_EQ(gb.col, kk * 16 + wb.row);
          }
}

// ---- block-scaled MMA: the CPU model (block_scale_model.hpp) -------------------------------

TEST(Chapter14BlockScale, Ue8m0IsAPowerOfTwo) {
  EXPECT_EQ(ch14::mx::ue8m0(127), 1.0);
  EXPECT_EQ(ch14::mx::ue8m0(128), 2.0);
  EXPECT_EQ(ch14::mx::ue8m0(120), 1.0 / 128);
  EXPECT_EQ(ch14::mx::ue8m0(0), std::ldexp(1.0, -127));
  EXPECT_EQ(ch14::mx::ue8m0(254), std::ldexp(1.0, 127));
  EXPECT_TRUE(std::isnan(ch14::mx::ue8m0(255)));
}

TEST(Chapter14BlockScale, E4m3Values) {
  EXPECT_EQ(ch14::mx::e4m3(0x7E), 448.0);
  EXPECT_EQ(ch14::mx::e4m3(0xFE), -448.0);
  EXPECT_EQ(ch14::mx::e4m3(0x38), 1.0);
  EXPECT_EQ(ch14::mx::e4m3(0x08), std::ldexp(1.0, -6));  // the smallest normal
  EXPECT_EQ(ch14::mx::e4m3(0x01), std::ldexp(1.0, -9));  // the smallest subnormal
  EXPECT_TRUE(std::isnan(ch14::mx::e4m3(0x7F)));
  for (int b = 0; b < 256; ++b) {  // every finite value encodes back to itself
    if (!std::isnan(ch14::mx::e4m3(uint8_t(b))) && b != 0x80) {
      EXPECT_EQ(ch14::mx::to_e4m3(ch14::mx::e4m3(uint8_t(b))), b) << b;
    }
  }
}

// MX quantisation of one block: the largest element lands in [256, 512) before saturation, so
// every normal element keeps e4m3's 3 mantissa bits: relative error at most 2^-4.
TEST(Chapter14BlockScale, QuantisedBlocksKeepThreeBits) {
  std::mt19937_64 rng(14);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (double spread : {1e-3, 1.0, 1e3}) {
    double x[ch14::mx::kBlock];
    uint8_t q[ch14::mx::kBlock];
    for (double& v : x) v = normal(rng) * spread;
    const uint8_t s = ch14::mx::quantize_block(x, q);
    const double scale = ch14::mx::ue8m0(s);
    double amax = 0;
    for (double v : x) amax = std::fmax(amax, std::fabs(v));
    EXPECT_GE(amax / scale, 256.0);
    EXPECT_LT(amax / scale, 512.0);
    for (int i = 0; i < ch14::mx::kBlock; ++i) {
      const double back = ch14::mx::e4m3(q[i]) * scale;
      if (std::fabs(x[i]) / scale >= std::ldexp(1.0, -6) && std::fabs(x[i]) / scale <= 448) {
        EXPECT_LE(std::fabs(back - x[i]), std::ldexp(std::fabs(x[i]), -4)) << x[i];
      } else if (std::fabs(x[i]) / scale > 448) {
        EXPECT_EQ(std::fabs(back), 448 * scale);  // saturated
      }
    }
  }
  double zeros[ch14::mx::kBlock] = {};
  uint8_t q[ch14::mx::kBlock];
  EXPECT_EQ(ch14::mx::quantize_block(zeros, q), 0);
}

// The scale of (row, k): K / 32 per row, row-major.
TEST(Chapter14BlockScale, ScaleLayout) {
  EXPECT_EQ(ch14::mx::scale_index(0, 31, 128), 0);
  EXPECT_EQ(ch14::mx::scale_index(0, 32, 128), 1);
  EXPECT_EQ(ch14::mx::scale_index(1, 0, 128), 4);
  EXPECT_EQ(ch14::mx::scale_index(3, 127, 128), 15);
}

// Scaling every product (the instruction) and promoting each 32-wide block's sum (chapter 06's
// structure, at 32 instead of 128) are the same number: with power-of-two scales, both are exact
// sums of the same exact terms (in double, over a range of values kept small enough), so they
// agree bit for bit. And the model of one m16n8k32
// instruction is that, rounded once to fp32.
TEST(Chapter14BlockScale, ScalingProductsIsPromotingBlocks) {
  std::mt19937_64 rng(1432);
  std::uniform_int_distribution<int> byte(0, 255), exponent(124, 130);
  // Elements with exponent fields 4..11 (2^-3 to 2^4 and a bit) and scales within 2^+-3: every
  // product and sum spans at most about 40 bits, so double holds each exactly.
  std::uniform_int_distribution<int> field(4, 11), mantissa(0, 7), sign(0, 1);
  auto finite = [&] { return uint8_t(sign(rng) << 7 | field(rng) << 3 | mantissa(rng)); };
  constexpr int K = 256;
  std::vector<uint8_t> a(K), b(K), sa(K / 32), sb(K / 32);
  for (int trial = 0; trial < 100; ++trial) {
    for (auto& x : a) x = finite();
    for (auto& x : b) x = finite();
    for (auto& x : sa) x = uint8_t(exponent(rng));
    for (auto& x : sb) x = uint8_t(exponent(rng));
    EXPECT_EQ(ch14::mx::scaled_dot(a.data(), b.data(), sa.data(), sb.data(), K),
              ch14::mx::block_dot(a.data(), b.data(), sa.data(), sb.data(), K));
  }
  uint8_t ma[16][32], mb[8][32], msa[16], msb[8];
  float c[16][8];
  for (auto& row : ma)
    for (auto& x : row) x = finite();
  for (auto& row : mb)
    for (auto& x : row) x = finite();
  for (auto& x : msa) x = uint8_t(exponent(rng));
  for (auto& x : msb) x = uint8_t(exponent(rng));
  for (auto& row : c)
    for (auto& x : row) x = float(byte(rng));
  const std::vector<float> d = ch14::mx::mma_model(ma, mb, msa, msb, c);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      double want = c[m][n];
      for (int k = 0; k < 32; ++k)
        want += ch14::mx::e4m3(ma[m][k]) * ch14::mx::e4m3(mb[n][k]) * ch14::mx::ue8m0(msa[m]) *
                ch14::mx::ue8m0(msb[n]);
      EXPECT_EQ(d[m * 8 + n], float(want));
    }
}

// ---- block-scaled MMA: the compiled instructions ----------------------------------------------
// The build compiles chapters/14_warp_mma_sync/block_scaled_sm120a.cu and block_scaled_sm100a.cu
// to cubins (chapters/CMakeLists.txt, target ch14_cubins), for GPUs this book does not run on. The
// tests read each cubin's code with chapter 13's reader and look for the instruction by its opcode
// (the low 12 bits of an instruction; values read from cuobjdump -sass, nvcc 13.0, 2026-11-26):
//   sm_120a  QMMA.SF.16832.F32.E4M3.E4M3.E8  0x47a  (the unscaled QMMA.16832 is 0x27a)
//   sm_100a  UTCQMMA with scale operands     0xdea  (without block_scale: 0x5ea)
// ctest runs test_host in <build>/tests, so the cubins are in ../cubin; CH14_CUBIN_DIR overrides.
std::string ch14_cubin(const std::string& name) {
  const char* dir = std::getenv("CH14_CUBIN_DIR");
  return (dir ? std::string(dir) : std::string("../cubin")) + "/" + name;
}

std::vector<uint32_t> opcodes(const std::string& path) {
  const ch13::Cubin c = ch13::parse_cubin(ch13::read_file(path));
  std::vector<uint32_t> out;
  for (const ch13::Section& s : c.kernels())
    for (uint64_t i = 0; i < s.size / 16; ++i)
      out.push_back(uint32_t(c.instruction(s, i).lo & 0xFFF));
  return out;
}

TEST(Chapter14BlockScale, Sm120aCubinHoldsOneQmmaSf) {
  const std::string path = ch14_cubin("ch14_block_scaled_sm120a.cubin");
  ASSERT_TRUE(std::ifstream(path).good()) << path << " missing: build the target ch14_cubins";
  const std::vector<uint32_t> ops = opcodes(path);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), 0x47au), 1) << "QMMA.SF";
  EXPECT_EQ(std::count(ops.begin(), ops.end(), 0x27au), 0) << "unscaled QMMA";
}

TEST(Chapter14BlockScale, Sm100aCubinHoldsOneBlockScaledUtcqmma) {
  const std::string path = ch14_cubin("ch14_block_scaled_sm100a.cubin");
  ASSERT_TRUE(std::ifstream(path).good()) << path << " missing: build the target ch14_cubins";
  const std::vector<uint32_t> ops = opcodes(path);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), 0xdeau), 1) << "UTCQMMA, block-scaled";
  EXPECT_EQ(std::count(ops.begin(), ops.end(), 0x5eau), 0) << "UTCQMMA without scales";
}

// The f16 variant's conversion writes k .. k + 7 of a row as one 16-byte chunk: f16_offset keeps
// 8 consecutive k of a row contiguous, as fp8_offset keeps 16.
TEST(Chapter14Tiles, ChunksStayContiguous) {
  for (int row = 0; row < ch14::BLOCK_M; ++row)
    for (int k = 0; k < ch14::BLOCK_K; ++k) {
      EXPECT_EQ(ch14::fp8_offset(row, k), ch14::fp8_offset(row, k / 16 * 16) + k % 16);
      EXPECT_EQ(ch14::f16_offset(row, k), ch14::f16_offset(row, k / 8 * 8) + 2 * (k % 8));
    }
}

// ---- The accuracy study's quantisers (scale_accuracy.hpp, promotion_price --accuracy) ----

// The fast e4m3 rounding (the CUDA conversion) is the model's search, on every value, every
// midpoint between neighbours (the ties), just either side of each, and past 448.
TEST(Chapter14ScaleAccuracy, FastE4m3IsTheModels) {
  std::vector<double> values;
  for (int b = 0; b <= 0x7E; ++b) {
    const double v = ch14::mx::e4m3(uint8_t(b));
    const double next = b < 0x7E ? ch14::mx::e4m3(uint8_t(b + 1)) : 512.0;
    const double mid = (v + next) / 2;
    for (double x : {v, mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e9), next * 0.999})
      values.push_back(x);
  }
  for (double x : {464.0, 480.0, 500.0, 1e6, 0x1.0p-10, 0x1.0p-11, 0x1.8p-10}) values.push_back(x);
  for (double x : values)
    for (double sign : {1.0, -1.0}) {
      SCOPED_TRACE(sign * x);
      EXPECT_EQ(ch14::accuracy::to_e4m3(sign * x), ch14::mx::to_e4m3(sign * x));
    }
}

// OCP's scale (Floor) gives block_scale_model.hpp's bytes; random blocks of varied magnitude,
// a zero block, and blocks whose amax is a power of two or saturates.
TEST(Chapter14ScaleAccuracy, FloorIsTheModelsQuantiser) {
  std::mt19937 rng(38);
  std::normal_distribution<double> normal;
  std::vector<std::vector<double>> blocks;
  for (int i = 0; i < 200; ++i) {
    std::vector<double> x(32);
    const double magnitude = std::ldexp(1.0, int(rng() % 40) - 20);
    for (double& v : x) v = normal(rng) * magnitude;
    blocks.push_back(x);
  }
  blocks.push_back(std::vector<double>(32, 0.0));
  for (double amax : {1.0, 256.0, 448.0, 500.0, 511.0, 0x1.0p-30}) {
    std::vector<double> x(32, amax / 3);
    x[7] = -amax;
    blocks.push_back(x);
  }
  for (const auto& x : blocks) {
    uint8_t fast[32], model[32];
    const uint8_t s_fast =
        ch14::accuracy::quantize_mx_block(x.data(), fast, ch14::accuracy::Ue8m0Rounding::Floor);
    const uint8_t s_model = ch14::mx::quantize_block(x.data(), model);
    EXPECT_EQ(s_fast, s_model);
    for (int i = 0; i < 32; ++i) EXPECT_EQ(fast[i], model[i]) << "element " << i;
  }
}

// Small cases of both roundings, by hand: (amax, Floor's exponent, Ceil's exponent).
TEST(Chapter14ScaleAccuracy, Ue8m0ExponentsByHand) {
  struct Case {
    double amax;
    int floor_e, ceil_e;
  };
  // 448: floor(log2 448) - 8 = 0, 448 <= 448 * 2^0; 500: floor gives 0 (500 saturates to 448),
  // ceil 1 (250); 1: both -8 (256 and 1 / 2^-8 = 256 <= 448); 0.99: floor -9 (253), ceil -8.
  for (const Case& c : {Case{448, 0, 0}, Case{500, 0, 1}, Case{449, 0, 1}, Case{256, 0, 0},
                        Case{1, -8, -8}, Case{0.99, -9, -8}, Case{0.5, -9, -9}}) {
    SCOPED_TRACE(c.amax);
    std::vector<double> x(32, 0.0);
    x[3] = c.amax;
    uint8_t q[32];
    EXPECT_EQ(ch14::accuracy::quantize_mx_block(x.data(), q, ch14::accuracy::Ue8m0Rounding::Floor),
              c.floor_e + 127);
    EXPECT_EQ(ch14::accuracy::quantize_mx_block(x.data(), q, ch14::accuracy::Ue8m0Rounding::Ceil),
              c.ceil_e + 127);
  }
  // 500 under Floor saturates to 448 (0x7E); under Ceil it is 250 -> 256 (nearest: 240 or 256).
  std::vector<double> x(32, 0.0);
  x[0] = 500;
  uint8_t q[32];
  ch14::accuracy::quantize_mx_block(x.data(), q, ch14::accuracy::Ue8m0Rounding::Floor);
  EXPECT_EQ(q[0], 0x7E);
  ch14::accuracy::quantize_mx_block(x.data(), q, ch14::accuracy::Ue8m0Rounding::Ceil);
  EXPECT_EQ(ch14::mx::e4m3(q[0]), 256.0);
}

// Ceil never saturates, and its scale is the smallest power of two that does not.
TEST(Chapter14ScaleAccuracy, CeilNeverSaturates) {
  std::mt19937 rng(2026);
  std::normal_distribution<double> normal;
  for (int i = 0; i < 500; ++i) {
    double x[32], amax = 0;
    for (double& v : x) amax = std::max(amax, std::fabs(v = normal(rng) * (1 + rng() % 1000)));
    uint8_t q[32];
    const double scale = ch14::mx::ue8m0(
        ch14::accuracy::quantize_mx_block(x, q, ch14::accuracy::Ue8m0Rounding::Ceil));
    EXPECT_LE(amax / scale, 448.0);
    EXPECT_GT(amax / scale, 224.0);
  }
}

// The study's inputs are make_problem's: quantised by common's quantiser they give its bytes and
// scales (B's last block of rows short, as N = 136 makes it).
TEST(Chapter14ScaleAccuracy, InputsAreMakeProblems) {
  const gemm::Shape s{3, 136, 384};
  const gemm::HostProblem p = gemm::make_problem(s, 7, gemm::Scales::Random);
  std::vector<float> xa(size_t(s.m * s.k)), xb(size_t(s.n * s.k));
  ch14::accuracy::unquantised_a(7, s.m, s.k, 0, s.k, xa.data());
  ch14::accuracy::unquantised_b(7, s.n, s.k, 0, s.k, xb.data());
  std::vector<gemm::fp8> a(xa.size()), b(xb.size());
  std::vector<float> sa(p.sa.size(), 0.0f), sb(p.sb.size());
  gemm::quantize_a(xa.data(), s.m, s.k, a.data(), sa.data(), s.sa_ld());
  gemm::quantize_b(xb.data(), s.n, s.k, b.data(), sb.data());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i].__x, p.a[i].__x) << "A " << i;
  for (size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b[i].__x, p.b[i].__x) << "B " << i;
  EXPECT_EQ(sa, p.sa);
  EXPECT_EQ(sb, p.sb);
  // Columns 128 to 255 alone are the same numbers (the study walks K one block at a time).
  std::vector<float> part(size_t(s.m * 128));
  ch14::accuracy::unquantised_a(7, s.m, s.k, 128, 128, part.data());
  for (int64_t r = 0; r < s.m; ++r)
    for (int64_t c = 0; c < 128; ++c) EXPECT_EQ(part[r * 128 + c], xa[r * s.k + 128 + c]);
}

// Scheme (a)'s dequantised values are make_problem's fp8 times its scales, exactly.
TEST(Chapter14ScaleAccuracy, DeepGemmDequantisedIsMakeProblems) {
  const gemm::Shape s{2, 128, 128};
  const gemm::HostProblem p = gemm::make_problem(s, 11, gemm::Scales::Random);
  std::vector<float> xa(size_t(s.m * s.k)), xb(size_t(s.n * s.k));
  ch14::accuracy::unquantised_a(11, s.m, s.k, 0, s.k, xa.data());
  ch14::accuracy::unquantised_b(11, s.n, s.k, 0, s.k, xb.data());
  std::vector<double> qa(xa.size()), qb(xb.size());
  ch14::accuracy::deepgemm_dequantised_a(xa.data(), s.m, s.k, qa.data());
  ch14::accuracy::deepgemm_dequantised_b(xb.data(), s.n, s.k, qb.data());
  for (int64_t r = 0; r < s.m; ++r)
    for (int64_t k = 0; k < s.k; ++k)
      EXPECT_EQ(qa[r * s.k + k],
                double(gemm::fp8_to_float(p.a[r * s.k + k])) * double(p.scale_a(r, k / 128)));
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t k = 0; k < s.k; ++k)
      EXPECT_EQ(qb[n * s.k + k],
                double(gemm::fp8_to_float(p.b[n * s.k + k])) * double(p.scale_b(n, k / 128)));
}

// The study on a small problem: every scheme errs, by a few percent (e4m3's 3 bits), and an exact
// D has no error.
TEST(Chapter14ScaleAccuracy, StudyOnASmallProblem) {
  const ch14::accuracy::Row row = ch14::accuracy::study(8, 128, 256, 2026);
  for (const auto& e : row.error) {
    EXPECT_GT(e.norm_rel, 0.005);
    EXPECT_LT(e.norm_rel, 0.1);
    EXPECT_NEAR(e.calc_diff, e.norm_rel * e.norm_rel / 2, 0.5 * e.norm_rel * e.norm_rel);
  }
  const std::vector<double> d = {1.0, -2.0, 3.0};
  const ch14::accuracy::Error none = ch14::accuracy::error_of(d, d);
  EXPECT_EQ(none.norm_rel, 0.0);
  EXPECT_EQ(none.max_over_rms, 0.0);
}

}  // namespace
