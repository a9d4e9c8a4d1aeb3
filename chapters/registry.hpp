// The one list of chapters. The tests, the progression benchmark and every chapter binary iterate
// it; adding a chapter means adding its directory and one entry in registry.cu.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "common/device.hpp"
#include "common/problem.hpp"
#include "common/reference.hpp"

namespace gemm {

// Launches the chapter's kernel on args (device pointers) on stream; throws UnsupportedError for
// a shape it cannot take and gemm::Error for a failed CUDA call. Does not synchronise.
using LaunchFn = void (*)(const GemmArgs& args, cudaStream_t stream);

// The chapter's kernel with one of its changes taken back or varied, for the benchmark's ablation
// table: where a chapter changes two things, each is measured on its own. Throws UnsupportedError
// where the variation does not apply to the shape (the table shows "-").
struct Ablation {
  const char* name = "";  // e.g. "multicast=off"
  LaunchFn launch = nullptr;
};

struct Chapter {
  int number = -1;
  const char* dir = "";         // directory under chapters/
  const char* idea = "";        // the one new idea, a line
  LaunchFn launch = nullptr;    // nullptr when the chapter is not a GEMM (chapter 01)
  bool applies_scales = false;  // false: the unscaled product, run on unit-scale inputs
  // Same arithmetic as the previous GEMM chapter (same instructions in the same order per output
  // element), so its D must be bit-for-bit identical: checked by the tests.
  bool bitwise_equal_to_previous = false;
  // The error bound its arithmetic allows against the double-precision reference.
  Tolerance (*tolerance)(const Shape& s) = nullptr;
  double max_rel_diff = 0.0;
  bool records_trace = false;  // fills GemmArgs::trace when given one (common/trace.hpp)
  // A side chapter (chapter 14): outside the main line's diff chain. No chapter's predecessor is a
  // side chapter, and a side chapter's predecessor is chapter 00, the reference whose arithmetic
  // (fp32 sums of exact products) it shares; it is never bit for bit anything.
  bool side = false;
  std::vector<Ablation> ablations = {};  // timed beside the chapter by the progression benchmark
};

const std::vector<Chapter>& chapters();
// The numbers of the chapters that are GEMMs (launch != nullptr), in order.
std::vector<int> gemm_chapter_numbers();
// The inputs a chapter is checked on: quantised with random scales if it applies them, else
// unit-scale (chapters 02-05 compute the unscaled product).
inline Scales scales_for(const Chapter& c) {
  return c.applies_scales ? Scales::Random : Scales::Unit;
}
// Poisons D, runs the chapter on dev's inputs and returns D (bf16 bits; synchronises).
std::vector<uint16_t> run_and_download(const Chapter& c, const DeviceProblem& dev);
// nullptr when there is no such chapter.
const Chapter* find_chapter(int number);
// The nearest earlier chapter that is a GEMM and not a side chapter, or nullptr; for a side
// chapter, chapter 00 (the reference it is checked against).
const Chapter* previous_gemm(const Chapter& c);

}  // namespace gemm
