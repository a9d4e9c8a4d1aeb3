#include "common/cli.hpp"

#include <cerrno>
#include <cstdlib>

#include "common/check.hpp"

namespace gemm {

std::string cli_usage(const std::string& program, const std::string& about) {
  return about + "\n\nusage: " + program +
         " [--m M] [--n N] [--k K] [--iters I] [--seed S] [--no-check] [--no-timing]\n"
         "       [--trace FILE] [--draw DIR]\n"
         "  --m, --n, --k  problem shape: D(MxN, bf16) = A(MxK, fp8) * B(NxK, fp8)^T\n"
         "                 M >= 1, N a multiple of 8, K a multiple of 128\n"
         "  --iters        timed runs, L2 flushed before each; the median is reported (30)\n"
         "  --seed         seed of the random inputs (2026)\n"
         "  --no-check     time only, skip the checks against the reference\n"
         "  --no-timing    check only, skip the timing (for compute-sanitizer)\n"
         "  --trace FILE   run once more recording %globaltimer stamps and draw the timeline of\n"
         "                 the first CTAs as an SVG (chapters 05 and later)\n"
         "  --draw DIR     write the chapter's layout pictures into DIR (no GPU needed); with\n"
         "                 --no-check --no-timing, only that\n";
}

namespace {
int64_t parse_int(const std::string& flag, const char* text, int64_t lo) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo)
    throw UnsupportedError(flag + " needs an integer >= " + std::to_string(lo) + ", got '" + text +
                           "'");
  return v;
}
}  // namespace

CliOptions parse_cli(int argc, const char* const* argv, const Shape& default_shape) {
  CliOptions o;
  o.shape = default_shape;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) throw UnsupportedError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h")
      o.help = true;
    else if (arg == "--no-check")
      o.check = false;
    else if (arg == "--no-timing")
      o.timing = false;
    else if (arg == "--draw")
      o.draw = value();
    else if (arg == "--trace")
      o.trace = value();
    else if (arg == "--m")
      o.shape.m = parse_int(arg, value(), 1);
    else if (arg == "--n")
      o.shape.n = parse_int(arg, value(), 1);
    else if (arg == "--k")
      o.shape.k = parse_int(arg, value(), 1);
    else if (arg == "--iters")
      o.iters = int(parse_int(arg, value(), 1));
    else if (arg == "--seed")
      o.seed = uint64_t(parse_int(arg, value(), 0));
    else
      throw UnsupportedError("unknown argument '" + arg + "' (try --help)");
  }
  if (!o.help) validate(o.shape);
  return o;
}

}  // namespace gemm
