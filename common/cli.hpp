// The command line every chapter binary shares:
//   --m M --n N --k K   the problem (validated; see common/problem.hpp)
//   --iters I           timed runs (median reported)
//   --seed S            input seed
//   --no-check          skip the correctness checks (timing only)
//   --no-timing         skip the timing (checks only; for compute-sanitizer)
//   --trace FILE        draw the kernel's timeline as an SVG (chapters that record one)
//   --draw DIR          write the chapter's layout pictures (chapters that draw some) into DIR
//   --print-config      print the kernel configuration chosen for the shape (chapters 10, 11) and exit
//   --help
// Any of them combine. A program that is not a GEMM (chapter 01: one wgmma of fixed size) takes
// only --seed, --no-check, --draw and --help, and refuses the problem and timing flags with a
// sentence saying why they do not apply.
#pragma once

#include <cstdint>
#include <string>

#include "common/problem.hpp"

namespace gemm {

struct CliOptions {
  Shape shape = kDefaultShape;
  int iters = 30;
  uint64_t seed = kDefaultSeed;
  bool check = true;
  bool timing = true;
  bool help = false;          // --help was given: the caller prints usage() and exits 0
  std::string trace;          // --trace FILE: where to draw the timeline; empty: no trace
  std::string draw;           // --draw DIR: where to write the layout pictures; empty: none
  bool print_config = false;  // --print-config: print the chosen configuration and exit 0
};

// not_a_gemm: nullptr for a GEMM chapter. For a program that is not a GEMM, the reason the problem
// and timing flags (--m --n --k --iters --no-timing --trace) do not apply to it, e.g. "chapter 01
// runs one wgmma of fixed shape"; usage then lists only the flags that apply.
std::string cli_usage(const std::string& program, const std::string& about,
                      const char* not_a_gemm = nullptr);
// Throws UnsupportedError naming the bad argument, a flag that does not apply (with not_a_gemm),
// or the broken shape constraint.
CliOptions parse_cli(int argc, const char* const* argv, const Shape& default_shape,
                     const char* not_a_gemm = nullptr);

}  // namespace gemm
