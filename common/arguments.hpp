// The check every chapter makes before it launches: the shape, the grid, the pointers and the
// device. A kernel given something it cannot take throws UnsupportedError with a sentence naming
// the argument and the constraint, and nothing is launched, so D is left untouched.
#pragma once

#include <cstdint>
#include <string>

#include "common/problem.hpp"

namespace gemm {

// What one chapter's loads and stores need of its arguments. Alignments are in bytes; a scale
// alignment of 0 means the chapter does not read that scale tensor (chapters 02-05 compute the
// unscaled product), so its pointer is not checked. block_m / block_n are the tile one CTA of a
// tile grid covers (0 for a grid that does not map tiles to blocks, e.g. a persistent one).
struct KernelNeeds {
  const char* who = "kernel";  // "chapter 05", for the messages
  int align_a = 16;            // 16: TMA, or one 16-byte vector load per thread
  int align_b = 16;
  int align_sa = 0;
  int align_sb = 0;
  int align_d = 16;
  int64_t block_m = 0;
  int64_t block_n = 0;
  int64_t max_k = 0;  // 0: any K the shape allows; chapters 02-05: kMaxKUnpromoted
};

// Bytes of each tensor that a kernel may touch, in the layouts of common/problem.hpp.
struct Extents {
  int64_t a, sa, b, sb, d;
};
Extents extents(const Shape& s);

// Empty when K is at most max_k (0: no limit); otherwise a sentence naming the limit and why.
std::string k_error(const Shape& s, int64_t max_k, const char* who);

// Empty when a grid of block_m x block_n tiles covers the shape within CUDA's grid limits (grid.y
// at most 65535 blocks); otherwise a sentence. tile_grid() throws it.
std::string grid_error(const Shape& s, int64_t block_m, int64_t block_n, const char* who);

// Empty when the pointers suit `needs`: none null, each aligned as needed, and D overlapping none
// of A, B, sA or sB (inputs may alias each other: they are only read). Pure host arithmetic.
std::string pointer_error(const GemmArgs& args, const KernelNeeds& needs);
// The same for tensors of other extents (bytes; chapter 15's grouped tensors).
std::string pointer_error(const GemmArgs& args, const KernelNeeds& needs, const Extents& e);

// Empty when the current CUDA device is an sm_90 GPU; otherwise a sentence. Asked of the driver
// once per device and remembered (thread-safe).
std::string device_error();

// The shape (shape_error, then k_error), the grid, the pointers, then the device: throws UnsupportedError with
// the first sentence that is not empty, prefixed with needs.who.
void check_arguments(const GemmArgs& args, const KernelNeeds& needs);

}  // namespace gemm
