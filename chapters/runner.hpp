// What every chapter binary does: parse the shared command line, run the chapter's kernel on
// fresh random inputs, check it against the reference and the previous chapter, and time it
// beside the cuBLASLt peers.
#pragma once

namespace gemm {

// Returns the process exit code: 0 all checks passed, 1 a check failed, 2 the chapter cannot run
// here (no Hopper GPU, bad argument, unsupported shape); the reason is printed in one line.
int run_chapter(int number, int argc, char** argv);

}  // namespace gemm
