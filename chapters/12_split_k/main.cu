// Chapter 12's binary: the chapter runner, plus --print-config (the configuration the heuristic
// chooses for the shape; no GPU needed), also printed at the top of every run.
#include <string>

#include "chapters/runner.hpp"
#include "common/problem.hpp"

namespace ch12 {
std::string describe_config(const gemm::Shape& s);  // kernel.cu
}

int main(int argc, char** argv) {
  return gemm::run_chapter(12, argc, argv, nullptr, ch12::describe_config);
}
