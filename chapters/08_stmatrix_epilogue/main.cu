#include "chapters/runner.hpp"

int main(int argc, char** argv) {
  return gemm::run_chapter(8, argc, argv);
}
