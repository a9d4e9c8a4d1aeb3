// Chapter 13's picture: one run of FFMAs under each pattern, from the cubin and the chapter's own
// functions (decode, apply). A cell per FFMA: blue with yield, yellow without; "r" where a reuse
// flag is set. Host-only (the binary's --draw, tests/host_chapter13.cpp).
#pragma once

#include <string>

#include "chapters/13_ffma_interleave/control_bits.hpp"
#include "chapters/13_ffma_interleave/cubin.hpp"
#include "chapters/13_ffma_interleave/rewrite.hpp"
#include "common/svg.hpp"

namespace ch13 {

inline void draw_run(const Cubin& c, const Section& s, const Run& run, const std::string& title,
                     const std::string& path) {
  constexpr double kCell = 14, kLeft = 90, kTop = 40, kRow = 22;
  gemm::Svg svg;
  svg.text(10, 20, 13, title);
  int row = 0;
  for (const Pattern p : kPatterns) {
    const double y = kTop + row * kRow;
    svg.text(10, y + kCell - 3, 11, name(p));
    for (uint64_t j = 0; j < run.length; ++j) {
      const Control k = apply(p, decode(c.instruction(s, run.first + j)), j);
      svg.cell(kLeft + double(j) * kCell, y, kCell, kCell, k.yield ? 1 : 5, k.reuse ? "r" : "");
    }
    ++row;
  }
  svg.text(10, kTop + row * kRow + 12, 11,
           "blue: yield set; yellow: not; r: a reuse flag set (the FFMAs in program order)");
  svg.save(path, kLeft + double(run.length) * kCell + 10, kTop + row * kRow + 24, 9);
}

}  // namespace ch13
