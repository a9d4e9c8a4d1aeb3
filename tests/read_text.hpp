// The whole of a text file, for the host tests that check a drawn picture.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace gemm::testing {

inline std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

}  // namespace gemm::testing
