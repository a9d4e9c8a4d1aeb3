// Chapter 05's host-checkable arithmetic: how many stages fit, and where in the ring a K block
// goes. Plain C++ (tests/host_chapter05.cpp).
#pragma once

#include <cstdint>

#include "common/host_device.hpp"

namespace ch05 {

// As many stages as fit in the shared-memory budget after the fixed part, at most max_stages.
constexpr int stages_for_budget(uint32_t budget_bytes, uint32_t bytes_per_stage,
                                uint32_t fixed_bytes, int max_stages) {
  if (budget_bytes <= fixed_bytes) return 0;
  const uint32_t n = (budget_bytes - fixed_bytes) / bytes_per_stage;
  return int(n) < max_stages ? int(n) : max_stages;
}

// Position in the ring of stages: which stage, and the parity of the barrier phase that the
// current round through the ring waits for. Producer and consumers each keep one and advance it
// once per K block, so they agree without talking.
//   full[stage]:  consumers wait for parity `phase` (TMA has filled the stage this round);
//   empty[stage]: the producer waits for parity `phase ^ 1` (consumers released the stage in the
//                 previous round; in round 0 that "previous phase" counts as complete, so the
//                 producer fills every stage once without waiting).
struct PipelineState {
  uint32_t stage = 0;
  uint32_t phase = 0;

  GEMM_HOST_DEVICE void advance(uint32_t num_stages) {
    if (++stage == num_stages) {
      stage = 0;
      phase ^= 1;
    }
  }
};

}  // namespace ch05
