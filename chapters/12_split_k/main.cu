// Chapter 12's binary: the chapter runner, plus --print-config (the configuration the heuristic
// chooses for the shape; no GPU needed), also printed at the top of every run, and --draw DIR for
// the picture of which CTA of a cluster runs which K blocks and adds which columns.
#include <cstdio>
#include <string>

#include "chapters/12_split_k/draw.hpp"
#include "chapters/runner.hpp"
#include "common/problem.hpp"

namespace ch12 {
std::string describe_config(const gemm::Shape& s);  // kernel.cu
}

int main(int argc, char** argv) {
  return gemm::run_chapter(
      12, argc, argv,
      [](const std::string& dir) {
        ch12::draw_split(dir + "/split.svg");
        std::printf("wrote %s/split.svg\n", dir.c_str());
      },
      ch12::describe_config);
}
