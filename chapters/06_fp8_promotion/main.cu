// Chapter 06's binary: the chapter runner, plus --draw DIR for the sub-tile picture.
#include <cstdio>
#include <string>

#include "chapters/06_fp8_promotion/draw.hpp"
#include "chapters/runner.hpp"

int main(int argc, char** argv) {
  return gemm::run_chapter(6, argc, argv, [](const std::string& dir) {
    ch06::draw_subtiles(dir + "/subtiles.svg");
    std::printf("wrote %s/subtiles.svg\n", dir.c_str());
  });
}
