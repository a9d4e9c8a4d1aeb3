// Chapter 09's binary: the chapter runner, plus --draw DIR for the picture of the tile order.
#include <cstdio>
#include <string>

#include "chapters/09_persistent_scheduler/draw.hpp"
#include "chapters/runner.hpp"

int main(int argc, char** argv) {
  return gemm::run_chapter(9, argc, argv, [](const std::string& dir) {
    ch09::draw_schedule(dir + "/schedule.svg");
    std::printf("wrote %s/schedule.svg\n", dir.c_str());
  });
}
