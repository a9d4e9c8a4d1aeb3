#include "common/check.hpp"

#include <cstring>

namespace gemm::detail {

void throw_call_error(const char* call, const char* file, int line, const std::string& why) {
  // Strip the directories above the repository so messages stay short and stable.
  const char* short_file = file;
  for (const char* root : {"/common/", "/chapters/", "/tests/"}) {
    if (const char* p = std::strstr(file, root)) {
      short_file = p + 1;
      break;
    }
  }
  throw Error(std::string(call) + " failed at " + short_file + ":" + std::to_string(line) + ": " +
              why);
}

std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorString(e)) + " (" + cudaGetErrorName(e) + ")";
}

std::string driver_error_text(CUresult r) {
  // Reached through the runtime's entry point: nothing links against the driver library.
  using GetString = CUresult (*)(CUresult, const char**);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  const char *name = nullptr, *text = nullptr;
  if (cudaGetDriverEntryPointByVersion("cuGetErrorName", &fn, 12000, cudaEnableDefault, &q) ==
          cudaSuccess &&
      fn)
    reinterpret_cast<GetString>(fn)(r, &name);
  if (cudaGetDriverEntryPointByVersion("cuGetErrorString", &fn, 12000, cudaEnableDefault, &q) ==
          cudaSuccess &&
      fn)
    reinterpret_cast<GetString>(fn)(r, &text);
  cudaGetLastError();
  return std::string(text ? text : "driver error") + " (" +
         (name ? name : "CUresult " + std::to_string(int(r))) + ")";
}

void* driver_entry_point(const char* name, int version) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess || !p)
    throw Error(std::string(name) + " is not available from this driver");
  return p;
}

std::string cublas_error_text(cublasStatus_t s) {
  return std::string(cublasLtGetStatusString(s)) + " (" + cublasLtGetStatusName(s) + ")";
}

}  // namespace gemm::detail
