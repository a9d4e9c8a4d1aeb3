// Chapter 07's binary: the chapter runner, plus --draw DIR for the straddling picture.
#include <cstdio>
#include <string>

#include "chapters/07_two_scale_b/draw.hpp"
#include "chapters/runner.hpp"

int main(int argc, char** argv) {
  return gemm::run_chapter(7, argc, argv, [](const std::string& dir) {
    ch07::draw_scale_blocks(dir + "/scale_blocks.svg");
    std::printf("wrote %s/scale_blocks.svg\n", dir.c_str());
  });
}
