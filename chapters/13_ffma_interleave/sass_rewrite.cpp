// sass_rewrite: chapter 13's rewrite as a build step. Reads a cubin, sets the yield and reuse bits
// of the FFMAs in the promotion's runs by a pattern (rewrite.hpp), checks that nothing else
// changed, and writes the copy. No GPU needed.
//
//   sass_rewrite IN.cubin OUT.cubin PATTERN      PATTERN: original, alternate, no_yield, no_reuse
#include <cstdio>
#include <exception>
#include <fstream>
#include <string>

#include "chapters/13_ffma_interleave/cubin.hpp"
#include "chapters/13_ffma_interleave/rewrite.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr,
                 "usage: sass_rewrite IN.cubin OUT.cubin PATTERN\n"
                 "  PATTERN: original, alternate, no_yield or no_reuse (chapter 13's README)\n");
    return 2;
  }
  try {
    const ch13::Pattern pattern = ch13::parse_pattern(argv[3]);
    const ch13::Cubin before = ch13::parse_cubin(ch13::read_file(argv[1]));
    ch13::Cubin after = before;
    const uint64_t changed = ch13::rewrite(after, pattern);
    ch13::verify_rewrite(before, after);
    std::ofstream out(argv[2], std::ios::binary);
    out.write(reinterpret_cast<const char*>(after.bytes.data()),
              std::streamsize(after.bytes.size()));
    if (!out) throw std::runtime_error(std::string("cannot write ") + argv[2]);
    std::printf("sass_rewrite: %s, %llu FFMA instructions changed\n", ch13::name(pattern),
                static_cast<unsigned long long>(changed));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sass_rewrite: %s\n", e.what());
    return 2;
  }
}
