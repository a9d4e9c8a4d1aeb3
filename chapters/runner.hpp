// What every chapter binary does: parse the shared command line, run the chapter's kernel on
// fresh random inputs, check it against the reference and the previous chapter, and time it
// beside the cuBLASLt peers.
#pragma once

#include <string>

namespace gemm {

// Returns the process exit code: 0 all checks passed, 1 a check failed, 2 the chapter cannot run
// here (no Hopper GPU, bad argument, unsupported shape); the reason is printed in one line.
// A chapter that draws layout pictures (--draw DIR) passes the function that writes them into DIR.
using DrawFn = void (*)(const std::string& dir);
int run_chapter(int number, int argc, char** argv, DrawFn draw = nullptr);

}  // namespace gemm
