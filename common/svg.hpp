// Just enough SVG for the layout pictures the chapters draw from their own layout functions:
// labelled rectangles coloured by a class p0..p7, and text.
#pragma once

#include <cstdio>
#include <fstream>
#include <string>

#include "common/check.hpp"

namespace gemm {

// Just enough SVG: rectangles with a centred label, coloured by a class p0..p7.
struct Svg {
  std::string body;
  void cell(double x, double y, double w, double h, int colour, const std::string& label) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "<rect class='p%d' x='%g' y='%g' width='%g' height='%g'/>"
                  "<text class='c' x='%g' y='%g'>%s</text>\n",
                  colour % 8, x, y, w, h, x + w / 2, y + h / 2, label.c_str());
    body += buf;
  }
  void text(double x, double y, double font, const std::string& s, const char* anchor = "start") {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "<text x='%g' y='%g' font-size='%g' text-anchor='%s'>%s</text>\n", x, y, font,
                  anchor, s.c_str());
    body += buf;
  }
  void save(const std::string& path, double w, double h, double cell_font) const {
    std::ofstream f(path);
    f << "<svg xmlns='http://www.w3.org/2000/svg' width='" << w << "' height='" << h
      << "' font-family='monospace'>\n<style>rect{stroke:#555;stroke-width:0.5} "
      << ".c{font-size:" << cell_font << "px;text-anchor:middle;dominant-baseline:central}";
    const char* palette[8] = {"#fbb4ae", "#b3cde3", "#ccebc5", "#decbe4",
                              "#fed9a6", "#ffffcc", "#e5d8bd", "#fddaec"};
    for (int i = 0; i < 8; ++i) f << " .p" << i << "{fill:" << palette[i] << "}";
    f << "</style>\n<rect width='100%' height='100%' fill='white' stroke='none'/>\n"
      << body << "</svg>\n";
    if (!f) throw Error("cannot write " + path);
  }
};

}  // namespace gemm
