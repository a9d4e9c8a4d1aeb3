// GEMM_HOST_DEVICE marks the plain arithmetic that both the host (tests, pictures, launch code)
// and the kernels call: the layouts, the descriptor bits, the pipeline bookkeeping. Under nvcc it
// is __host__ __device__; under a host compiler it is nothing.
#pragma once

#ifdef __CUDACC__
#define GEMM_HOST_DEVICE __host__ __device__
#else
#define GEMM_HOST_DEVICE
#endif
