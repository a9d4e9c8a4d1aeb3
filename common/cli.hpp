// The command line every chapter binary shares:
//   --m M --n N --k K   the problem (validated; see common/problem.hpp)
//   --iters I           timed runs (median reported)
//   --seed S            input seed
//   --no-check          skip the correctness checks (timing only)
//   --no-timing         skip the timing (checks only; for compute-sanitizer)
//   --trace FILE        draw the kernel's timeline as an SVG (chapters that record one)
//   --draw DIR          write the chapter's layout pictures (chapters that draw some) into DIR
//   --help
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
  bool help = false;  // --help was given: the caller prints usage() and exits 0
  std::string trace;  // --trace FILE: where to draw the timeline; empty: no trace
  std::string draw;   // --draw DIR: where to write the layout pictures; empty: none
};

std::string cli_usage(const std::string& program, const std::string& about);
// Throws UnsupportedError naming the bad argument, or the broken shape constraint.
CliOptions parse_cli(int argc, const char* const* argv, const Shape& default_shape);

}  // namespace gemm
