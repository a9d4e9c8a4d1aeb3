// Chapter 14's binary: the shared chapter command line (common/cli.hpp): checks the warp-level
// GEMM against the CPU reference and chapter 00, then times it beside cuBLASLt. --draw DIR writes
// the fragment maps and the stage's swizzle, from the functions the kernel uses (fragments.hpp).
#include <string>

#include "chapters/14_warp_mma_sync/fragments.hpp"
#include "chapters/runner.hpp"
#include "common/svg.hpp"

namespace {

using ch14::RowCol;

// One operand as a rows x cols grid, each cell naming the lane that holds it; colour = the
// register it sits in (elements_per_register elements per register), or, with
// elements_per_register 0, lane % 4.
template <class Map>
void draw_map(gemm::Svg& s, double x0, double y0, int rows, int cols, int per_lane,
              int elements_per_register, const std::string& title, const std::string& row_name,
              const std::string& col_name, Map map) {
  const double w = 30, h = 15;
  s.text(x0, y0 - 24, 12, title);
  s.text(x0 + cols * w / 2, y0 - 4, 9, col_name + " ->", "middle");
  s.text(x0 - 4, y0 - 4, 9, row_name, "end");
  for (int r = 0; r < rows; ++r) s.text(x0 - 4, y0 + r * h + h - 4, 8, std::to_string(r), "end");
  for (int lane = 0; lane < ch14::kLanes; ++lane)
    for (int i = 0; i < per_lane; ++i) {
      const RowCol p = map(lane, i);
      const int colour = elements_per_register ? i / elements_per_register : lane % 4;
      s.cell(x0 + p.col * w, y0 + p.row * h, w, h, colour, "T" + std::to_string(lane));
    }
}

void draw_e4m3(const std::string& path) {
  gemm::Svg s;
  s.text(20, 18, 13, "mma.sync m16n8k32 .e4m3: the lane holding each element; colour = register");
  s.text(20, 34, 10,
         "A: a0 red, a1 blue, a2 green, a3 purple (4 fp8 each); B: b0 red, b1 blue; "
         "ch14::a_e4m3, b_e4m3");
  draw_map(s, 40, 80, 16, 32, 16, 4, "A (16 x 32), row-major: row m, k across", "m", "k",
           ch14::a_e4m3);
  // B drawn as it is stored, N x K (a row per n), so that it reads like A.
  draw_map(s, 40, 80 + 16 * 15 + 60, 8, 32, 8, 4,
           "B (32 x 8, .col) drawn as stored: row n, k across", "n", "k", [](int lane, int i) {
             const RowCol p = ch14::b_e4m3(lane, i);
             return RowCol{p.col, p.row};
           });
  s.save(path, 40 + 32 * 30 + 20, 80 + 24 * 15 + 80, 8);
}

void draw_f16(const std::string& path) {
  gemm::Svg s;
  s.text(20, 18, 13, "mma.sync m16n8k16 .f16 and the fp32 accumulator: lane per element");
  s.text(20, 34, 10, "colour = register (2 halves each; C: c0..c3, one float each)");
  draw_map(s, 40, 80, 16, 16, 8, 2, "A (16 x 16)", "m", "k", ch14::a_f16);
  draw_map(s, 40 + 16 * 30 + 60, 80, 8, 16, 4, 2, "B drawn as stored: row n, k across", "n", "k",
           [](int lane, int i) {
             const RowCol p = ch14::b_f16(lane, i);
             return RowCol{p.col, p.row};
           });
  draw_map(s, 40 + 16 * 30 + 60, 80 + 8 * 15 + 60, 16, 8, 4, 1, "C, D (16 x 8 fp32), both shapes",
           "m", "n", ch14::c_f32);
  s.save(path, 40 + 32 * 30 + 100, 80 + 16 * 15 + 100 + 8 * 15, 8);
}

// What ldmatrix.x4 hands each lane, read as fp8: one 8 x 16-byte matrix (all four are alike), and
// which lanes point at which row of the A fragment's 16 x 32 bytes.
void draw_ldmatrix(const std::string& path) {
  gemm::Svg s;
  s.text(20, 18, 13, "ldmatrix .x4 .b16 read as fp8: lane l gets 4 bytes of row l / 4");
  s.text(20, 34, 10,
         "one 8 x 16-byte matrix; colour = lane % 4 (which 4 bytes); "
         "ch14::ldmatrix_bytes");
  draw_map(s, 40, 80, 8, 16, 4, 0, "matrix j lands in register j", "row", "byte",
           ch14::ldmatrix_bytes);
  s.text(20, 80 + 8 * 15 + 40, 13, "whose address each row of A's 16 x 32 bytes comes from");
  s.text(20, 80 + 8 * 15 + 56, 10,
         "colour = matrix (lane / 8) = the register it fills: a_e4m3_ldmatrix_row");
  const double y0 = 80 + 8 * 15 + 100, w = 60, h = 15;
  for (int lane = 0; lane < ch14::kLanes; ++lane) {
    const RowCol p = ch14::a_e4m3_ldmatrix_row(lane);
    s.cell(40 + (p.col / 16) * w, y0 + p.row * h, w, h, lane / 8,
           "T" + std::to_string(lane) + " k" + std::to_string(p.col));
  }
  s.save(path, 40 + 16 * 30 + 40, y0 + 16 * 15 + 20, 8);
}

// A stage's first 16 rows: which 16-byte chunk of shared memory each (row, k chunk) lands in.
void draw_swizzle(const std::string& path) {
  gemm::Svg s;
  s.text(20, 18, 13, "the fp8 stage: 64-byte rows, chunk XOR (row / 2) % 4 (ch14::fp8_offset)");
  s.text(20, 34, 10, "cell: the 16-byte chunk k lands in; colour = its 16-byte group of banks");
  const double x0 = 60, y0 = 70, w = 60, h = 15;
  for (int c = 0; c < 4; ++c)
    s.text(x0 + c * w + w / 2, y0 - 4, 9,
           "k " + std::to_string(16 * c) + "-" + std::to_string(16 * c + 15), "middle");
  for (int r = 0; r < 16; ++r) {
    s.text(x0 - 4, y0 + r * h + h - 4, 8, "row " + std::to_string(r), "end");
    for (int c = 0; c < 4; ++c) {
      const uint32_t off = ch14::fp8_offset(r, 16 * c);
      s.cell(x0 + c * w, y0 + r * h, w, h, (off % 128) / 16, "byte " + std::to_string(off));
    }
  }
  s.save(path, x0 + 4 * w + 20, y0 + 16 * h + 20, 8);
}

void draw(const std::string& dir) {
  draw_e4m3(dir + "/fragments_e4m3.svg");
  draw_f16(dir + "/fragments_f16.svg");
  draw_ldmatrix(dir + "/ldmatrix.svg");
  draw_swizzle(dir + "/smem_stage.svg");
}

}  // namespace

int main(int argc, char** argv) {
  return gemm::run_chapter(14, argc, argv, draw);
}
