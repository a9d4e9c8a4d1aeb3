// Chapter 15's interface: a grouped GEMM, G problems D_g = A_g * B_g^T with one N and one K, in
// one launch of chapter 12's kernel, whose scheduler has learnt groups (scheduler.hpp).
//
// The tensors (fp8 e4m3 A and B, fp32 scales as common/problem.hpp lays them out, bf16 D):
//
//   layout      A               scale A                    D               rows of group g
//   contiguous  [M][K]          [K/128][sa_ld(M)]          [M][N]          m_indices[row] == g
//   masked      [G][max_m][K]   [G][K/128][sa_ld(max_m)]   [G][max_m][N]   the first masked_m[g]
//   both:       B [G][N][K], scale B [G][ceil(N/128)][K/128]
//
// shape.m is M (contiguous: every group's rows, each group padded to kAlignment = 128 rows, so M is
// a multiple of 128) or max_m (masked: a multiple of kMaskedRows = 64). sa_ld(x): x rounded up
// to 4.
//
// What D holds afterwards:
// - contiguous: every row of a group, its product; every padding row (m_indices -1), zeros.
// - masked: group g's rows [0, masked_m[g]), its product; rows from masked_m[g] up to the next
//   multiple of the store box's rows, zeros (Config::box_rows: 32 with 64-row tiles, else 64;
//   CH15_BOX_ROWS); the rows after those, untouched (an empty group is not touched at all).
//
// m_indices and masked_m live on the GPU, where the kernel reads them (so a CUDA graph can replay
// the launch with other counts). The host cannot check their values without a synchronisation; the
// kernel defines what it does with a bad one (scheduler.hpp): a tile whose first row's index is out
// of range (each 128-row half's, for a 256-row tile), or a group whose count is, is skipped:
// nothing stored there, and a bit ORed into *status (kBadGroupIndex, kBadMaskedM). A row whose
// index is neither its tile's group nor -1 is stored as zeros and raises kBadRowIndex.
// check_status reads and clears the word and throws a sentence naming what was wrong.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "chapters/15_grouped_gemm/config.hpp"
#include "chapters/15_grouped_gemm/scheduler.hpp"
#include "common/problem.hpp"

namespace ch15 {

struct GroupedArgs {
  Layout layout = Layout::Contiguous;
  int groups = 0;
  gemm::Shape shape;  // m: contiguous M (all rows) or masked max_m; n, k: every group's
  const __nv_fp8_e4m3* a = nullptr;
  const float* sa = nullptr;
  const __nv_fp8_e4m3* b = nullptr;
  const float* sb = nullptr;
  __nv_bfloat16* d = nullptr;
  const int* m_indices = nullptr;  // contiguous: M int32 on the device, the group of each row or -1
  const int* masked_m = nullptr;   // masked: G int32 on the device, each group's rows
  int64_t expected_m = 0;          // masked: the rows a group is expected to have (picks the tile);
                                   // 0 means max_m
  uint32_t* status = nullptr;      // optional: one word on the device the kernel ORs bits into
};

// Empty when the arguments suit the kernel; otherwise a sentence naming the broken constraint. Pure
// host arithmetic (tested without a GPU): the layout, the group count, the shape (N a multiple of
// 8, K of 128; contiguous M of 128, masked max_m of 64; expected_m in [0, max_m]; every row of A,
// B and D within TMA's 32-bit coordinates), the pointers (none null, aligned, D overlapping no
// input, nor m_indices, masked_m or status; m_indices or masked_m as the layout needs).
std::string argument_error(const GroupedArgs& args);
// Empty when m_indices or masked_m (whichever the layout reads) and status are memory the GPU
// reads: device or managed, not the host's (a count left on the CPU). Asks the driver.
std::string location_error(const GroupedArgs& args);

// Checks (argument_error, the device, location_error), configures (config.hpp, with the
// CH15_BLOCK_M, CH15_BLOCK_N and CH09_GROUP overrides) and launches. Throws
// gemm::UnsupportedError before launching anything when a check fails. Does not synchronise.
void gemm(const GroupedArgs& args, cudaStream_t stream);

// The sentence for a status word's bits ("" for 0).
std::string status_message(uint32_t bits);
// Synchronises the stream, reads *status, sets it back to 0, and throws gemm::Error with
// status_message when a bit was set.
void check_status(uint32_t* status, cudaStream_t stream);

// The configuration the launch takes for args, the environment's overrides included (only the
// layout, groups, shape and expected_m are read), and in one line (the binary's --print-config).
Config configuration(const GroupedArgs& args);
std::string describe_config(const GroupedArgs& args);

}  // namespace ch15
