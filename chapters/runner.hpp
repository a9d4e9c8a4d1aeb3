// What every chapter binary does: parse the shared command line, run the chapter's kernel on
// fresh random inputs, check it against the reference and the previous chapter, and time it
// beside the cuBLASLt peers.
#pragma once

#include <string>

#include "common/problem.hpp"

namespace gemm {

// Returns the process exit code: 0 all checks passed, 1 a check failed, 2 the chapter cannot run
// here (no Hopper GPU, bad argument, unsupported shape); the reason is printed in one line.
// A chapter that draws layout pictures (--draw DIR) passes the function that writes them into DIR.
// A chapter with a configuration heuristic passes the function that describes its choice for a
// shape (--print-config, and one line of every run).
using DrawFn = void (*)(const std::string& dir);
using DescribeFn = std::string (*)(const Shape& s);
int run_chapter(int number, int argc, char** argv, DrawFn draw = nullptr,
                DescribeFn describe = nullptr);

}  // namespace gemm
