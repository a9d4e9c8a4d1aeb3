// Chapter 10's binary: the chapter runner, plus --print-config (the tile and the multicast chosen
// for the shape; no GPU needed), also printed at the top of every run, and --draw DIR for the
// pictures of the clusters' walk and of the barrier protocol.
#include <cstdio>
#include <string>

#include "chapters/10_tma_multicast/draw.hpp"
#include "chapters/runner.hpp"
#include "common/problem.hpp"

namespace ch10 {
std::string describe_config(const gemm::Shape& s);  // kernel.cu
}

int main(int argc, char** argv) {
  return gemm::run_chapter(
      10, argc, argv,
      [](const std::string& dir) {
        ch10::draw_clusters(dir + "/clusters.svg");
        std::printf("wrote %s/clusters.svg\n", dir.c_str());
        ch10::draw_protocol(dir + "/protocol.svg");
        std::printf("wrote %s/protocol.svg\n", dir.c_str());
      },
      ch10::describe_config);
}
