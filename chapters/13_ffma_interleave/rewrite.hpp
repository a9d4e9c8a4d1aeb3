// Chapter 13's rewrite: the yield and reuse bits of the FFMAs in the promotion's runs, set by a
// pattern, in a copy of a cubin; and the check that refuses any other change. Plain C++
// (tests/host_chapter13.cpp); the build runs it through sass_rewrite (chapters/CMakeLists.txt).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "chapters/13_ffma_interleave/control_bits.hpp"
#include "chapters/13_ffma_interleave/cubin.hpp"

namespace ch13 {

// The promotion's FFMAs come in runs, one per sub-tile and K block (64 at 256 x 128): at least
// kMinRun consecutive FFMAs. Shorter ones (the example kernel's single FFMA, address arithmetic)
// are left alone.
inline constexpr uint64_t kMinRun = 8;

struct Run {
  uint64_t first = 0, length = 0;  // instruction indices in the section
};

inline std::vector<Run> ffma_runs(const Cubin& c, const Section& s, uint64_t min_length = kMinRun) {
  std::vector<Run> runs;
  Run r;
  const uint64_t n = s.size / 16;
  for (uint64_t i = 0; i <= n; ++i) {
    if (i < n && is_ffma(c.instruction(s, i))) {
      if (r.length == 0) r.first = i;
      ++r.length;
      continue;
    }
    if (r.length >= min_length) runs.push_back(r);
    r = Run{};
  }
  return runs;
}

// What to do to each FFMA of a run:
//   original   nothing (the variant that measures the loading path alone)
//   alternate  DeepGEMM's interleave, applied from scratch: yield on every other FFMA (the 2nd,
//              4th, ...) with its reuse flags cleared, no yield on the others
//   no_yield   yield cleared on every FFMA, reuse as the compiler set it
//   no_reuse   reuse cleared on every FFMA, yield as the compiler set it
enum class Pattern { Original, Alternate, NoYield, NoReuse };
inline constexpr Pattern kPatterns[] = {Pattern::Original, Pattern::Alternate, Pattern::NoYield,
                                        Pattern::NoReuse};

inline const char* name(Pattern p) {
  switch (p) {
    case Pattern::Alternate:
      return "alternate";
    case Pattern::NoYield:
      return "no_yield";
    case Pattern::NoReuse:
      return "no_reuse";
    default:
      return "original";
  }
}

inline Pattern parse_pattern(const std::string& text) {
  for (Pattern p : kPatterns)
    if (text == name(p)) return p;
  throw std::runtime_error("unknown pattern \"" + text +
                           "\" (the patterns: original, alternate, no_yield, no_reuse)");
}

// The control bits of FFMA number `j` of its run under pattern p.
inline Control apply(Pattern p, Control c, uint64_t j) {
  switch (p) {
    case Pattern::Alternate:
      c.yield = j % 2 == 1;
      if (c.yield) c.reuse = 0;
      break;
    case Pattern::NoYield:
      c.yield = false;
      break;
    case Pattern::NoReuse:
      c.reuse = 0;
      break;
    default:
      break;
  }
  return c;
}

// Applies p to every run of every kernel of c. Returns the number of instructions changed.
inline uint64_t rewrite(Cubin& c, Pattern p) {
  uint64_t changed = 0;
  for (const Section& s : c.kernels()) {
    for (const Run& r : ffma_runs(c, s)) {
      for (uint64_t j = 0; j < r.length; ++j) {
        const Instruction before = c.instruction(s, r.first + j);
        const Instruction after = encode(before, apply(p, decode(before), j));
        if (after.lo == before.lo && after.hi == before.hi) continue;
        c.set_instruction(s, r.first + j, after);
        ++changed;
      }
    }
  }
  return changed;
}

// Throws std::runtime_error with a sentence unless `after` is `before` with nothing changed but
// the yield and reuse bits of FFMA instructions: every other byte of the file, every other
// instruction and every other bit of an FFMA must be as the compiler wrote them.
inline void verify_rewrite(const Cubin& before, const Cubin& after) {
  if (before.bytes.size() != after.bytes.size())
    throw std::runtime_error("rewrite refused: the file changed size");
  std::vector<bool> in_code(before.bytes.size(), false);
  for (const Section& s : before.kernels()) {
    for (uint64_t i = 0; i < s.size / 16; ++i) {
      const Instruction x = before.instruction(s, i), y = after.instruction(s, i);
      for (uint64_t b = 0; b < 16; ++b) in_code[s.offset + 16 * i + b] = true;
      if (x.lo == y.lo && x.hi == y.hi) continue;
      const std::string where = s.name + " instruction " + std::to_string(i);
      if (!is_ffma(x)) throw std::runtime_error("rewrite refused: " + where + " is not an FFMA");
      if (x.lo != y.lo || ((x.hi ^ y.hi) & ~(kYieldMask | kReuseMask)) != 0)
        throw std::runtime_error("rewrite refused: " + where +
                                 " changed outside its yield and reuse bits");
    }
  }
  for (uint64_t b = 0; b < before.bytes.size(); ++b)
    if (!in_code[b] && before.bytes[b] != after.bytes[b])
      throw std::runtime_error("rewrite refused: byte " + std::to_string(b) +
                               " outside the kernels' code changed");
}

}  // namespace ch13
