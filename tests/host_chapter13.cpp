// Chapter 13's decoder of SASS control bits and its cubin reader, on instruction words whose fields
// we know and on a cubin the build compiles (chapters/13_ffma_interleave/example.cu).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "chapters/12_split_k/config.hpp"
#include "chapters/13_ffma_interleave/control_bits.hpp"
#include "chapters/13_ffma_interleave/cubin.hpp"
#include "chapters/13_ffma_interleave/draw.hpp"
#include "chapters/13_ffma_interleave/rewrite.hpp"
#include "tests/read_text.hpp"

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

// A code section of `words`, with 16 bytes of something else before and after it.
ch13::Cubin section_of(const std::vector<Instruction>& words) {
  ch13::Cubin c;
  c.bytes.assign(16 * words.size() + 32, 0xab);
  c.sections.push_back({".text.k", 16, 16 * words.size()});
  for (size_t i = 0; i < words.size(); ++i) c.set_instruction(c.sections[0], i, words[i]);
  return c;
}

// The yield letters of instructions [first, first + n) of the only section.
std::string yields(const ch13::Cubin& c, uint64_t first, uint64_t n) {
  std::string out;
  for (uint64_t i = first; i < first + n; ++i)
    out += decode(c.instruction(c.sections[0], i)).yield ? 'Y' : '-';
  return out;
}

// Two words of chapter 12's promotion (KnownWordsDecode): without and with yield (and reuse).
constexpr Instruction kFfma{0x000000cb18c97223ull, 0x000fc200000000c9ull};
constexpr Instruction kFfmaYield{0x000000cb19c67223ull, 0x080fe200000000c6ull};

// A run of 10 FFMAs as nvcc writes them (-Y-Y...), an EXIT, and a run of 3 (too short to touch).
std::vector<Instruction> sample() {
  std::vector<Instruction> w;
  for (int i = 0; i < 10; ++i) w.push_back(i % 2 ? kFfmaYield : kFfma);
  w.push_back(kExit);
  for (int i = 0; i < 3; ++i) w.push_back(kFfmaYield);
  return w;
}

TEST(Chapter13, FindsThePromotionsRuns) {
  const ch13::Cubin c = section_of(sample());
  const std::vector<ch13::Run> runs = ch13::ffma_runs(c, c.sections[0]);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].first, 0u);
  EXPECT_EQ(runs[0].length, 10u);
}

TEST(Chapter13, EachPatternSetsWhatItSays) {
  const ch13::Cubin before = section_of(sample());
  {
    ch13::Cubin c = before;
    EXPECT_EQ(ch13::rewrite(c, ch13::Pattern::Original), 0u);
    EXPECT_EQ(c.bytes, before.bytes);
  }
  {
    ch13::Cubin c = before;
    EXPECT_EQ(ch13::rewrite(c, ch13::Pattern::Alternate), 5u);  // reuse cleared on the five Y
    EXPECT_EQ(yields(c, 0, 10), "-Y-Y-Y-Y-Y");
    for (uint64_t i = 1; i < 10; i += 2)
      EXPECT_EQ(decode(c.instruction(c.sections[0], i)).reuse, 0);
    EXPECT_NO_THROW(ch13::verify_rewrite(before, c));
  }
  {
    ch13::Cubin c = before;
    EXPECT_EQ(ch13::rewrite(c, ch13::Pattern::NoYield), 5u);
    EXPECT_EQ(yields(c, 0, 10), "----------");
    EXPECT_EQ(decode(c.instruction(c.sections[0], 1)).reuse, 0b0010);  // reuse kept
    EXPECT_EQ(yields(c, 11, 3), "YYY");                                // the short run untouched
    EXPECT_NO_THROW(ch13::verify_rewrite(before, c));
  }
  {
    ch13::Cubin c = before;
    EXPECT_EQ(ch13::rewrite(c, ch13::Pattern::NoReuse), 5u);
    EXPECT_EQ(yields(c, 0, 10), "-Y-Y-Y-Y-Y");
    EXPECT_NO_THROW(ch13::verify_rewrite(before, c));
  }
  EXPECT_EQ(ch13::parse_pattern("no_yield"), ch13::Pattern::NoYield);
  EXPECT_THROW(ch13::parse_pattern("yield"), std::runtime_error);
}

TEST(Chapter13, RefusesAnyOtherChange) {
  const ch13::Cubin before = section_of(sample());
  const ch13::Section& s = before.sections[0];
  const auto refused = [&](const ch13::Cubin& after) {
    EXPECT_THROW(ch13::verify_rewrite(before, after), std::runtime_error);
  };
  ch13::Cubin c = before;
  Instruction in = c.instruction(s, 2);
  in.lo ^= 1;  // an operand bit of an FFMA
  c.set_instruction(s, 2, in);
  refused(c);
  c = before;
  Control k = decode(c.instruction(s, 2));
  k.stall = 3;  // a control bit other than yield and reuse
  c.set_instruction(s, 2, encode(c.instruction(s, 2), k));
  refused(c);
  c = before;
  k = decode(kExit);
  k.yield = false;  // the yield bit of an instruction that is not an FFMA
  c.set_instruction(s, 10, encode(kExit, k));
  refused(c);
  c = before;
  c.bytes[3] ^= 1;  // a byte outside the code
  refused(c);
  c = before;
  c.bytes.push_back(0);
  refused(c);
}

// The build's copies of chapter 12's cubins, one per share of its variants
// (chapters/CMakeLists.txt): each is the original rewritten by its pattern, and nothing else.
TEST(Chapter13, TheBuildsRewrittenCubins) {
  const std::string dir = CH13_CUBIN_DIR;
  uint64_t changed[std::size(ch13::kPatterns)] = {};
  for (int share = 0; share < CH13_CUBIN_SHARES; ++share) {
    const std::string stem = dir + "/12_split_k." + std::to_string(share);
    const ch13::Cubin original = ch13::parse_cubin(ch13::read_file(stem + ".cubin"));
    for (size_t i = 0; i < std::size(ch13::kPatterns); ++i) {
      const ch13::Pattern p = ch13::kPatterns[i];
      const ch13::Cubin built =
          ch13::parse_cubin(ch13::read_file(stem + "." + ch13::name(p) + ".cubin"));
      ch13::Cubin expected = original;
      changed[i] += ch13::rewrite(expected, p);
      EXPECT_EQ(built.bytes, expected.bytes) << ch13::name(p) << " share " << share;
      EXPECT_NO_THROW(ch13::verify_rewrite(original, built)) << ch13::name(p) << " share " << share;
    }
  }
  for (size_t i = 0; i < std::size(ch13::kPatterns); ++i) {
    if (ch13::kPatterns[i] == ch13::Pattern::Original)
      EXPECT_EQ(changed[i], 0u);
    else
      EXPECT_GT(changed[i], 1000u) << ch13::name(ch13::kPatterns[i]);
  }
}

// Chapter 13 rewrites exactly the code that chapter 12 runs: the cubins are the ones the library's
// compilation of chapter 12's shares embedded (nvcc --keep), every kernel of chapter 12 is in
// exactly one of them (two per variant: untraced and traced), and each share's cubin appears,
// byte for byte, in the object file linked into the program.
TEST(Chapter13, TheCubinsAreTheLinkedCode) {
  const std::string dir = CH13_CUBIN_DIR;
  std::map<std::string, int> kernels;
  for (int share = 0; share < CH13_CUBIN_SHARES; ++share) {
    const std::vector<uint8_t> cubin =
        ch13::read_file(dir + "/12_split_k." + std::to_string(share) + ".cubin");
    for (const ch13::Section& s : ch13::parse_cubin(cubin).kernels()) ++kernels[s.name];
    const std::vector<uint8_t> object =
        ch13::read_file(CH12_SHARE_OBJECT_DIR "/variants_" + std::to_string(share) + ".cu.o");
    EXPECT_NE(std::search(object.begin(), object.end(), cubin.begin(), cubin.end()), object.end())
        << "share " << share << ": its cubin is not the code in its object file";
  }
  EXPECT_EQ(kernels.size(), 2u * ch12::kNumVariants);
  for (const auto& [name, count] : kernels) EXPECT_EQ(count, 1) << name;
}

// The picture: a cell per FFMA of the run per pattern, "r" where a reuse flag is set.
TEST(Chapter13, DrawsARunUnderEachPattern) {
  const ch13::Cubin c = section_of(sample());
  const ch13::Run run = ch13::ffma_runs(c, c.sections[0])[0];
  const std::string path = ::testing::TempDir() + "ffma_runs.svg";
  ch13::draw_run(c, c.sections[0], run, "sample", path);
  const std::string svg = gemm::testing::read_text(path);
  const auto count = [&](const std::string& what) {
    int n = 0;
    for (size_t at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("<rect class="), 4 * 10);
  // Reuse on the five yielded FFMAs in original and no_yield; none in alternate and no_reuse.
  EXPECT_EQ(count(">r</text>"), 5 + 5);
  std::remove(path.c_str());
}

}  // namespace
