// Chapter 10's binary: the chapter runner, plus --print-config (the configuration the heuristic
// chooses for the shape; no GPU needed), also printed at the top of every run.
#include <string>

#include "chapters/runner.hpp"
#include "common/problem.hpp"

namespace ch10 {
std::string describe_config(const gemm::Shape& s);  // kernel.cu
}

int main(int argc, char** argv) {
  return gemm::run_chapter(10, argc, argv, nullptr, ch10::describe_config);
}
