// Error checking for the CUDA runtime, the CUDA driver API and cuBLASLt.
//
// Every failing call becomes a gemm::Error whose message names the call, the file, the line and
// the library's own text for the error, so a caller can print it and exit:
//
//   CUDA_CHECK(cudaMalloc(&p, bytes));
//   -> "cudaMalloc(&p, bytes) failed at common/device.cu:42: out of memory
//       (cudaErrorMemoryAllocation)"
#pragma once

#include <cublasLt.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace gemm {

// The one exception type of the project. what() is a complete, printable sentence.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A shape or argument that a kernel cannot take. Distinct from Error so that tests can tell
// "rejected on purpose" from "something broke".
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

namespace detail {
[[noreturn]] void throw_call_error(const char* call, const char* file, int line,
                                   const std::string& why);
std::string cuda_error_text(cudaError_t e);
std::string driver_error_text(CUresult r);
std::string cublas_error_text(cublasStatus_t s);
// A driver API function, reached through the runtime (nothing links against the driver library);
// throws Error naming the function where this driver does not have it at `version`.
void* driver_entry_point(const char* name, int version = 12000);
}  // namespace detail

}  // namespace gemm

#define CUDA_CHECK(call)                                                                  \
  do {                                                                                    \
    const cudaError_t gemm_check_err_ = (call);                                           \
    if (gemm_check_err_ != cudaSuccess)                                                   \
      ::gemm::detail::throw_call_error(#call, __FILE__, __LINE__,                         \
                                       ::gemm::detail::cuda_error_text(gemm_check_err_)); \
  } while (0)

// After a <<<...>>> launch: catches bad launch configurations (too much shared memory, ...).
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#define CU_CHECK(call)                                                                      \
  do {                                                                                      \
    const CUresult gemm_check_res_ = (call);                                                \
    if (gemm_check_res_ != CUDA_SUCCESS)                                                    \
      ::gemm::detail::throw_call_error(#call, __FILE__, __LINE__,                           \
                                       ::gemm::detail::driver_error_text(gemm_check_res_)); \
  } while (0)

#define CUBLAS_CHECK(call)                                                                 \
  do {                                                                                     \
    const cublasStatus_t gemm_check_st_ = (call);                                          \
    if (gemm_check_st_ != CUBLAS_STATUS_SUCCESS)                                           \
      ::gemm::detail::throw_call_error(#call, __FILE__, __LINE__,                          \
                                       ::gemm::detail::cublas_error_text(gemm_check_st_)); \
  } while (0)
