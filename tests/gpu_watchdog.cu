// The pipeline watchdog of debug builds: a barrier that never completes must end the program with
// the barrier's name and phase, not hang the GPU. Run in a child process (a death test): the trap
// leaves the CUDA context unusable.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "common/ptx/mbarrier.cuh"
#include "tests/gpu.hpp"

namespace {

__global__ void wait_for_a_phase_that_never_completes() {
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) ptx::mbarrier_init(&bar, 1);  // expects one arrival; none ever comes
  __syncthreads();
  ptx::mbarrier_wait_or_trap(&bar, 0, "test_barrier");
}

// The child's whole life: launch, collect the trap, exit 3 if the launch failed.
[[noreturn]] void launch_stuck_kernel_and_exit() {
  dup2(2, 1);  // device printf goes to stdout; the death test reads stderr
  wait_for_a_phase_that_never_completes<<<1, ptx::kWarpSize>>>();
  const cudaError_t e = cudaDeviceSynchronize();
  std::fprintf(stderr, "cudaDeviceSynchronize: %s\n", cudaGetErrorName(e));
  std::fflush(stdout);
  std::exit(e == cudaSuccess ? 0 : 3);
}

TEST(Watchdog, StuckBarrierTrapsNamingTheBarrierAndPhase) {
  SKIP_WITHOUT_HOPPER();
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: CUDA does not survive fork
  EXPECT_EXIT(launch_stuck_kernel_and_exit(), ::testing::ExitedWithCode(3),
              "mbarrier_wait timed out: test_barrier \\(parity 0\\)");
}

}  // namespace
