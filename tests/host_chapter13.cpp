// Chapter 13's decoder of SASS control bits and its cubin reader, on instruction words whose fields
// we know and on a cubin the build compiles (chapters/13_ffma_interleave/example.cu).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "chapters/13_ffma_interleave/control_bits.hpp"
#include "chapters/13_ffma_interleave/cubin.hpp"

namespace {

using ch13::Control;
using ch13::decode;
using ch13::encode;
using ch13::Instruction;

// The padding nvcc puts after every kernel: NOP, no scoreboard, no stall.
constexpr Instruction kNop{0x0000000000007918ull, 0x000fc00000000000ull};
// EXIT, as nvcc 13.0 emits it: stall 5 and yield (CuAssembler: [B------:R-:W-:Y:S05]).
constexpr Instruction kExit{0x000000000000794dull, 0x000fea0003800000ull};

TEST(Chapter13, KnownWordsDecode) {
  EXPECT_EQ(ch13::format(decode(kNop)), "[B------:R-:W-:-:S00]");
  EXPECT_EQ(ch13::format(decode(kExit)), "[B------:R-:W-:Y:S05]");
  EXPECT_EQ(ch13::opcode(kNop), 0x918);
  EXPECT_EQ(ch13::opcode(kExit), 0x94d);
  EXPECT_FALSE(ch13::is_ffma(kNop));
  // The first two FFMAs of the promotion in chapter 12's 256 x 128 kernel (nvcc 13.0; cuobjdump
  // -sass calls both FFMA): three register sources; the second with yield and reuse flag 1 set.
  const Instruction ffma{0x000000cb18c97223ull, 0x000fc200000000c9ull};
  const Instruction ffma_yield{0x000000cb19c67223ull, 0x080fe200000000c6ull};
  EXPECT_TRUE(ch13::is_ffma(ffma));
  EXPECT_TRUE(ch13::is_ffma(ffma_yield));
  EXPECT_EQ(ch13::opcode(ffma), 0x223);
  EXPECT_EQ(ch13::format(decode(ffma)), "[B------:R-:W-:-:S01]");
  EXPECT_EQ(ch13::format(decode(ffma_yield)), "[B------:R-:W-:Y:S01]");
  EXPECT_EQ(decode(ffma).reuse, 0);
  EXPECT_EQ(decode(ffma_yield).reuse, 0b0010);
  // The example kernel's second load (LDG, opcode 0x981), which sets scoreboard 2; and a word
  // constructed to wait on scoreboards 0 and 2.
  const Control load = decode({0x0000000402037981ull, 0x000ea2000c1e1900ull});
  EXPECT_EQ(load.write_barrier, 2);
  EXPECT_EQ(load.read_barrier, 7);
  EXPECT_EQ(load.stall, 1);
  EXPECT_EQ(decode({0, 0x005fca0000000000ull}).wait_mask, 0b000101);
}

TEST(Chapter13, EncodeInvertsDecodeAndKeepsEveryOtherBit) {
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 2000; ++trial) {
    const Instruction in{rng(), rng()};
    const Control c = decode(in);
    EXPECT_EQ(encode(in, c).hi, in.hi);
    EXPECT_EQ(encode(in, c).lo, in.lo);
    Control d;
    d.stall = int(rng() % 16);
    d.yield = rng() % 2 != 0;
    d.write_barrier = int(rng() % 8);
    d.read_barrier = int(rng() % 8);
    d.wait_mask = int(rng() % 64);
    d.reuse = int(rng() % 16);
    const Instruction out = encode(in, d);
    EXPECT_TRUE(decode(out) == d);
    EXPECT_EQ(out.lo, in.lo);
    EXPECT_EQ(out.hi & ~ch13::kControlMask, in.hi & ~ch13::kControlMask);
  }
}

TEST(Chapter13, YieldAndReuseAreTheBitsDeepGemmFlips) {
  // DeepGEMM's interleave_ffma.py (a6d97a1) XORs 0x0800200000000000 into the high word: yield and
  // one reuse flag, nothing else.
  Control c;
  c.yield = true;
  c.reuse = 0b0010;
  EXPECT_EQ(encode({0, 0}, c).hi & ~(uint64_t(7) << ch13::kWriteShift) &
                ~(uint64_t(7) << ch13::kReadShift),
            0x0800200000000000ull);
  EXPECT_EQ(ch13::kYieldMask, 0x0000200000000000ull);
  EXPECT_EQ(ch13::kReuseMask & 0x0800000000000000ull, 0x0800000000000000ull);
}

TEST(Chapter13, ReadsTheExampleCubin) {
  const ch13::Cubin c = ch13::parse_cubin(ch13::read_file(CH13_EXAMPLE_CUBIN));
  const std::vector<ch13::Section> kernels = c.kernels();
  ASSERT_EQ(kernels.size(), 1u);
  const ch13::Section& s = kernels[0];
  EXPECT_EQ(s.name, ".text.axpy");
  const uint64_t n = s.size / 16;
  ASSERT_GT(n, 8u);
  int ffma = -1, exits = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const Instruction in = c.instruction(s, i);
    if (ch13::is_ffma(in)) {
      EXPECT_EQ(ffma, -1) << "one FFMA";
      ffma = int(i);
    }
    if (in.lo == kExit.lo && in.hi == kExit.hi) ++exits;
    // Every scoreboard waited on was set by an earlier instruction: the decoder reads the wait
    // mask and the write and read scoreboards from the same bits the compiler wrote them to.
    const Control k = decode(in);
    for (int b = 0; b < 6; ++b) {
      if (((k.wait_mask >> b) & 1) == 0) continue;
      bool set_before = false;
      for (uint64_t j = 0; j < i; ++j) {
        const Control e = decode(c.instruction(s, j));
        set_before = set_before || e.write_barrier == b || e.read_barrier == b;
      }
      EXPECT_TRUE(set_before) << "instruction " << i << " waits on scoreboard " << b;
    }
  }
  ASSERT_GE(ffma, 0);
  EXPECT_GE(exits, 1);
  // The FFMA's sources come from the two loads of x[i] and y[i]: it waits on a scoreboard.
  EXPECT_NE(decode(c.instruction(s, uint64_t(ffma))).wait_mask, 0);
  // The section ends in NOP padding.
  const Instruction last = c.instruction(s, n - 1);
  EXPECT_EQ(last.lo, kNop.lo);
  EXPECT_EQ(last.hi, kNop.hi);
}

TEST(Chapter13, RefusesWhatIsNotACubin) {
  EXPECT_THROW(ch13::parse_cubin({}), std::runtime_error);
  EXPECT_THROW(ch13::parse_cubin(std::vector<uint8_t>(100, 0)), std::runtime_error);
  std::vector<uint8_t> bytes = ch13::read_file(CH13_EXAMPLE_CUBIN);
  bytes.resize(bytes.size() / 2);  // the section table is at the end: now out of range
  EXPECT_THROW(ch13::parse_cubin(bytes), std::runtime_error);
  EXPECT_THROW(ch13::read_file("/nonexistent/file.cubin"), std::runtime_error);
}

}  // namespace
