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
  // The driver library may be absent (no GPU): describe the code without calling into it.
  return "CUresult " + std::to_string(static_cast<int>(r));
}

std::string cublas_error_text(cublasStatus_t s) {
  return std::string(cublasLtGetStatusString(s)) + " (" + cublasLtGetStatusName(s) + ")";
}

}  // namespace gemm::detail
