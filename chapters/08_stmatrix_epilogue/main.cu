// Chapter 08's binary: the chapter runner, plus --draw DIR for the stmatrix picture.
#include <cstdio>
#include <string>

#include "chapters/08_stmatrix_epilogue/draw.hpp"
#include "chapters/runner.hpp"

int main(int argc, char** argv) {
  return gemm::run_chapter(8, argc, argv, [](const std::string& dir) {
    ch08::draw_stmatrix(dir + "/stmatrix.svg");
    std::printf("wrote %s/stmatrix.svg\n", dir.c_str());
  });
}
