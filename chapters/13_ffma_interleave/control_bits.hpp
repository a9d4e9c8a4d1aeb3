// Chapter 13's decoder: the control bits of a Hopper (sm_90a) SASS instruction. Plain C++
// (tests/host_chapter13.cpp).
//
// Every instruction since Volta is 128 bits, stored as two little-endian 64-bit words: `lo` (bits
// 0-63) and `hi` (bits 64-127). The operation and its operands fill the low bits; the top 23 bits
// are the control information that the compiler, not the hardware, works out: how long the warp
// scheduler waits before the warp's next instruction, and which of six scoreboards ("dependency
// barriers") the instruction sets or waits on. NVIDIA does not document this encoding. The layout
// below is the one reverse-engineered for Volta by Jia et al., "Dissecting the NVIDIA Volta GPU
// Architecture via Microbenchmarking" (2018, section 2.2), used by the open-source CuAssembler
// (cloudcores/CuAssembler, CuAsm/CuControlCode.py) for Ampere and Hopper, and by DeepGEMM's
// interleave_ffma.py (commit a6d97a1), whose masks 0x0000200000000000 (yield) and
// 0x0800000000000000 (one reuse flag) on `hi` are bits 109 and 123 here. Chapter 13's README checks
// it against our own kernels' scoreboards.
//
//   bits 105-108  stall        cycles before the warp's next instruction may issue (0-15)
//   bit  109      yield        the bit DeepGEMM's pass sets on every other FFMA of the promotion
//   bits 110-112  write        the scoreboard this instruction releases when its result is
//                              written (variable-latency results: loads, S2R, ...); 7: none
//   bits 113-115  read         the scoreboard it releases once its source registers are read; 7: none
//   bits 116-121  wait         the scoreboards (one bit each, 0-5) it waits on before issuing
//   bits 122-125  reuse        operand reuse-cache flags, one per source operand slot
//
// CuAssembler prints them as [B------:R-:W-:Y:S05]: the wait mask (B, then a digit per scoreboard
// waited on), the read and write scoreboards, Y if the yield bit is set, and the stall count.
#pragma once

#include <cstdint>
#include <string>

namespace ch13 {

struct Instruction {
  uint64_t lo = 0, hi = 0;
};

struct Control {
  int stall = 0;          // 0-15
  bool yield = false;     // bit 109
  int write_barrier = 7;  // 0-5, 7 for none
  int read_barrier = 7;   // 0-5, 7 for none
  int wait_mask = 0;      // bit b: wait on scoreboard b (0-5)
  int reuse = 0;          // 4 flags
};

// Positions within `hi` (bit 64 + p of the instruction).
inline constexpr int kStallShift = 41, kYieldShift = 45, kWriteShift = 46, kReadShift = 49,
                     kWaitShift = 52, kReuseShift = 58;
inline constexpr int kNoBarrier = 7;
// Every control bit: 41 to 61 of `hi`. Bits 62 and 63 are not part of it.
inline constexpr uint64_t kControlMask = ((uint64_t(1) << 21) - 1) << kStallShift;
inline constexpr uint64_t kYieldMask = uint64_t(1) << kYieldShift;
inline constexpr uint64_t kReuseMask = uint64_t(0xf) << kReuseShift;

constexpr Control decode(const Instruction& in) {
  const uint64_t h = in.hi;
  Control c;
  c.stall = int((h >> kStallShift) & 0xf);
  c.yield = ((h >> kYieldShift) & 1) != 0;
  c.write_barrier = int((h >> kWriteShift) & 0x7);
  c.read_barrier = int((h >> kReadShift) & 0x7);
  c.wait_mask = int((h >> kWaitShift) & 0x3f);
  c.reuse = int((h >> kReuseShift) & 0xf);
  return c;
}

// `in` with its control bits replaced by `c`; every other bit unchanged.
constexpr Instruction encode(const Instruction& in, const Control& c) {
  uint64_t h = in.hi & ~kControlMask;
  h |= uint64_t(c.stall & 0xf) << kStallShift;
  h |= uint64_t(c.yield ? 1 : 0) << kYieldShift;
  h |= uint64_t(c.write_barrier & 0x7) << kWriteShift;
  h |= uint64_t(c.read_barrier & 0x7) << kReadShift;
  h |= uint64_t(c.wait_mask & 0x3f) << kWaitShift;
  h |= uint64_t(c.reuse & 0xf) << kReuseShift;
  return {in.lo, h};
}

constexpr bool operator==(const Control& x, const Control& y) {
  return x.stall == y.stall && x.yield == y.yield && x.write_barrier == y.write_barrier &&
         x.read_barrier == y.read_barrier && x.wait_mask == y.wait_mask && x.reuse == y.reuse;
}

// The low 12 bits select the operation and the kind of its operands; the low 9 the operation.
// FFMA is 0x023 in the low 9 bits: 0x223 with three register sources, 0x823 with an immediate,
// 0xa23 and 0xc23 with a constant-bank operand (checked against cuobjdump on every instruction of
// chapter 12's kernels: chapter 13's README).
constexpr int opcode(const Instruction& in) {
  return int(in.lo & 0xfff);
}
constexpr bool is_ffma(const Instruction& in) {
  return (in.lo & 0x1ff) == 0x023;
}

// CuAssembler's notation, e.g. [B0-2---:R-:W1:Y:S05].
inline std::string format(const Control& c) {
  std::string s = "[B";
  for (int b = 0; b < 6; ++b) s += (c.wait_mask >> b) & 1 ? char('0' + b) : '-';
  s += ":R";
  s += c.read_barrier == kNoBarrier ? '-' : char('0' + c.read_barrier);
  s += ":W";
  s += c.write_barrier == kNoBarrier ? '-' : char('0' + c.write_barrier);
  s += c.yield ? ":Y" : ":-";
  s += ":S";
  s += char('0' + c.stall / 10);
  s += char('0' + c.stall % 10);
  s += "]";
  return s;
}

}  // namespace ch13
