// Grouped problems for chapter 15's binary, tests and benchmark: random inputs in the layouts of
// grouped.hpp, their dense per-group views, and a device copy.
#pragma once

#include <cstdint>
#include <vector>

#include "chapters/15_grouped_gemm/grouped.hpp"
#include "common/device.hpp"
#include "common/inputs.hpp"

namespace ch15 {

struct GroupedHostProblem {
  Layout layout = Layout::Contiguous;
  int groups = 0;
  gemm::Shape shape;               // m: contiguous M, or masked max_m (grouped.hpp)
  std::vector<int64_t> rows;       // each group's valid rows
  std::vector<int64_t> first_row;  // where they start in A and D
  std::vector<int> m_indices;      // contiguous: M entries, the group of each row or -1
  std::vector<int> masked_m;       // masked: G entries (= rows)
  std::vector<gemm::fp8> a;        // contiguous M x K; masked G x max_m x K
  std::vector<float> sa;           // contiguous [K/128][sa_ld(M)]; masked [G][K/128][sa_ld(max_m)]
  std::vector<gemm::fp8> b;        // G x N x K
  std::vector<float> sb;           // [G][ceil(N/128)][K/128]

  int64_t d_rows() const { return layout == Layout::Contiguous ? shape.m : groups * shape.m; }
  int64_t valid_rows() const;
  // 2 x valid rows x N x K, and the bytes a grouped GEMM must move: the valid rows of A and D, all
  // of B (TFLOPS and GB/s count valid rows only).
  double flops() const;
  double min_bytes() const;
  // Group g as a dense problem (rows[g] >= 1): its rows of A with their scales, its B.
  gemm::HostProblem group_problem(int g) const;
};

// Rows per group drawn uniformly in [0.7, 1.3] x expected (config.hpp's draw_count), reproducibly.
std::vector<int64_t> draw_rows(int groups, int64_t expected, uint64_t seed);

// A grouped problem with the given rows per group. Contiguous: each group padded to kAlignment rows
// (m_indices -1 on padding rows). Masked: max_m = max_m_or_0, or the largest group rounded up to
// kMaskedRows. Every group's valid rows and its B are quantised from normal values as the dense
// problems are (gemm::make_problem); padding rows and the rows past masked_m hold other finite
// fp8 values, so that a kernel computing them would be seen.
GroupedHostProblem make_grouped_problem(Layout layout, const std::vector<int64_t>& rows, int64_t n,
                                        int64_t k, uint64_t seed, int64_t max_m_or_0 = 0);

// On the device, with D, the indices or counts and a status word.
class GroupedDeviceProblem {
 public:
  explicit GroupedDeviceProblem(const GroupedHostProblem& p);
  GroupedArgs args() const;
  void poison(cudaStream_t stream = nullptr) const;  // D := kPoisonBits
  std::vector<uint16_t> download_d() const;          // synchronises
  // Each group with rows as a dense problem (pointers into A, B, sB and D, and a copy of its A
  // scales in the dense layout): the dense kernels run group by group.
  struct DenseGroup {
    int group;
    gemm::GemmArgs args;
  };
  const std::vector<DenseGroup>& dense_groups() const { return dense_; }
  // The counts (masked) or indices (contiguous) replaced on the device, e.g. between graph replays.
  int* masked_m() const { return masked_m_.get(); }
  int* m_indices() const { return m_indices_.get(); }
  uint32_t* status() const { return status_.get(); }

 private:
  GroupedHostProblem shape_only_;  // layout, groups, shape, rows (no tensors)
  gemm::DeviceBuffer<gemm::fp8> a_, b_;
  gemm::DeviceBuffer<float> sa_, sb_;
  gemm::DeviceBuffer<gemm::bf16> d_;
  gemm::DeviceBuffer<int> m_indices_, masked_m_;
  gemm::DeviceBuffer<uint32_t> status_;
  std::vector<gemm::DeviceBuffer<float>> dense_sa_;
  std::vector<DenseGroup> dense_;
};

}  // namespace ch15
