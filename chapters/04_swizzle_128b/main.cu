// Chapter 04's binary: the chapter runner, plus --draw DIR for the swizzle picture.
#include <cstdio>
#include <string>

#include "chapters/04_swizzle_128b/swizzle.hpp"
#include "chapters/runner.hpp"
#include "common/svg.hpp"

namespace {

// Sixteen rows of a 128B-swizzled tile: each cell is a 16-byte chunk at its place in shared
// memory, labelled and coloured with the logical chunk (K bytes 16c..16c+15) that TMA put there.
void draw_swizzle(const std::string& path) {
  const double w = 56, h = 18, x0 = 60, y0 = 70;
  gemm::Svg s;
  s.text(20, 18, 13, "128-byte swizzle: where each 16-byte chunk of a tile row lands");
  s.text(20, 36, 10,
         "columns: 16-byte positions in shared memory (banks 4p..4p+3); rows: tile rows");
  s.text(20, 50, 10,
         "label/colour: logical chunk c = K bytes 16c..16c+15; from ch04::swizzled_offset()");
  for (int p = 0; p < 8; ++p)
    s.text(x0 + p * w + w / 2, y0 - 4, 9, "pos " + std::to_string(p), "middle");
  for (uint32_t row = 0; row < 16; ++row) {
    s.text(x0 - 6, y0 + row * h + h - 5, 9, "row " + std::to_string(row), "end");
    for (uint32_t c = 0; c < 8; ++c) {
      const uint32_t pos = (ch04::swizzled_offset(row, c * 16) % ch04::kSwizzleBytes) / 16;
      s.cell(x0 + pos * w, y0 + row * h, w, h, int(c), "k " + std::to_string(16 * c) + "+");
    }
  }
  s.save(path, x0 + 8 * w + 20, y0 + 16 * h + 12, 9);
}

}  // namespace

int main(int argc, char** argv) {
  return gemm::run_chapter(4, argc, argv, [](const std::string& dir) {
    draw_swizzle(dir + "/swizzle_128b.svg");
    std::printf("wrote %s/swizzle_128b.svg\n", dir.c_str());
  });
}
