// Chapter 13's binary: the chapter runner, --print-config (chapter 12's configuration, and the
// cubin the kernels are loaded from) and --draw DIR (one run of FFMAs under each pattern).
#include <cstdio>
#include <string>

#include "chapters/runner.hpp"
#include "common/problem.hpp"

namespace ch13 {
std::string describe_config(const gemm::Shape& s);  // kernel.cu
void draw_runs(const std::string& path);            // kernel.cu
}  // namespace ch13

int main(int argc, char** argv) {
  return gemm::run_chapter(
      13, argc, argv,
      [](const std::string& dir) {
        ch13::draw_runs(dir + "/ffma_runs.svg");
        std::printf("wrote %s/ffma_runs.svg\n", dir.c_str());
      },
      ch13::describe_config);
}
