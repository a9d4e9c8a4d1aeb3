// The one list of chapters. The tests, the progression benchmark and every chapter binary iterate
// it; adding a chapter means adding its directory and one entry in registry.cu.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "common/problem.hpp"
#include "common/reference.hpp"

namespace gemm {

// Launches the chapter's kernel on args (device pointers) on stream; throws UnsupportedError for
// a shape it cannot take and gemm::Error for a failed CUDA call. Does not synchronise.
using LaunchFn = void (*)(const GemmArgs& args, cudaStream_t stream);

struct Chapter {
  int number;
  const char* dir;      // directory under chapters/
  const char* idea;     // the one new idea, a line
  LaunchFn launch;      // nullptr when the chapter is not a GEMM (chapter 01)
  bool applies_scales;  // false: the unscaled product, run on unit-scale inputs
  // Same arithmetic as the previous GEMM chapter (same instructions in the same order per output
  // element), so its D must be bit-for-bit identical: checked by the tests.
  bool bitwise_equal_to_previous;
  // The error bound its arithmetic allows against the double-precision reference.
  Tolerance (*tolerance)(const Shape& s);
  double max_rel_diff;
};

const std::vector<Chapter>& chapters();
// nullptr when there is no such chapter.
const Chapter* find_chapter(int number);
// The nearest earlier chapter that is a GEMM, or nullptr.
const Chapter* previous_gemm(const Chapter& c);

}  // namespace gemm
