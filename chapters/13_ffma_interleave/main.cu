// Chapter 13's binary: the chapter runner, and --print-config (chapter 12's configuration, and the
// cubin the kernels are loaded from).
#include <string>

#include "chapters/runner.hpp"
#include "common/problem.hpp"

namespace ch13 {
std::string describe_config(const gemm::Shape& s);  // kernel.cu
}

int main(int argc, char** argv) {
  return gemm::run_chapter(13, argc, argv, nullptr, ch13::describe_config);
}
