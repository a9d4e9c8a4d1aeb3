#include "common/cli.hpp"

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/check.hpp"

namespace gemm {

namespace {

// Every flag, once: the parser accepts exactly these and the usage lists exactly these.
struct Flag {
  const char* name;
  const char* value;  // the value's name in the usage, or nullptr for a switch
  bool gemm_only;     // refused by a program that is not a GEMM
  const char* help;
  const char* help_not_gemm = nullptr;  // the help in a program that is not a GEMM, if different
};

constexpr Flag kFlags[] = {
    {"--m", "M", true, "the problem D(MxN, bf16) = A(MxK, fp8) * B(NxK, fp8)^T: M >= 1,"},
    {"--n", "N", true, "N a multiple of 8,"},
    {"--k", "K", true, "K a multiple of 128"},
    {"--iters", "I", true, "timed runs, L2 flushed before each; the median is reported"},
    {"--seed", "S", false, "seed of the random inputs"},
    {"--no-check", nullptr, false, "time only, skip the checks against the reference",
     "run nothing on the GPU: print what needs no GPU (and draw, with --draw)"},
    {"--no-timing", nullptr, true, "check only, skip the timing (for compute-sanitizer)"},
    {"--trace", "FILE", true,
     "run once more recording %globaltimer stamps and draw the timeline of the first CTAs as an "
     "SVG (chapters 05 and later)"},
    {"--draw", "DIR", false,
     "write the chapter's layout pictures into DIR (no GPU needed); with --no-check "
     "--no-timing, only that",
     "write the chapter's pictures into DIR (no GPU needed)"},
    {"--print-config", nullptr, true,
     "print the kernel configuration the chapter chooses for the shape and exit (no GPU needed; "
     "chapters with a configuration heuristic: 10 to 12)"},
    {"--help", nullptr, false, "print this and exit"},
};

const Flag* find_flag(const std::string& name) {
  for (const Flag& f : kFlags)
    if (name == f.name || (name == "-h" && std::string(f.name) == "--help")) return &f;
  return nullptr;
}

// The default a flag's help ends with, where it has one.
std::string default_of(const std::string& name) {
  if (name == "--iters") return " (" + std::to_string(CliOptions{}.iters) + ")";
  if (name == "--seed") return " (" + std::to_string(kDefaultSeed) + ")";
  return "";
}

// The words broken into lines of at most `width` characters, every line but the first after
// `indent` spaces.
std::string wrap(const std::vector<std::string>& words, size_t indent, size_t width) {
  std::string out, line;
  for (const std::string& word : words) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words;
  for (size_t start = 0, end; start < text.size(); start = end + 1) {
    end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    words.push_back(text.substr(start, end - start));
  }
  return words;
}

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

std::string cli_usage(const std::string& program, const std::string& about,
                      const char* not_a_gemm) {
  std::vector<std::string> synopsis = {"usage:", program};
  std::string lines;
  for (const Flag& f : kFlags) {
    if (f.gemm_only && not_a_gemm) continue;
    const std::string flag = f.value ? std::string(f.name) + " " + f.value : f.name;
    synopsis.push_back("[" + flag + "]");
    const std::string help =
        (not_a_gemm && f.help_not_gemm ? f.help_not_gemm : f.help) + default_of(f.name);
    lines += "  " + flag + std::string(flag.size() < 14 ? 14 - flag.size() : 1, ' ') +
             wrap(words_of(help), 16, 100 - 16) + "\n";
  }
  if (not_a_gemm)
    lines += "  " + wrap(words_of(std::string("(not a GEMM: ") + not_a_gemm + ")"), 2, 98) + "\n";
  const std::string exit_status =
      "exit status: 0 all checks passed, 1 a check failed, 2 cannot run here (no Hopper GPU, a "
      "bad argument, an unsupported shape)";
  return about + "\n\n" + wrap(synopsis, 7, 100) + "\n" + lines +
         wrap(words_of(exit_status), 2, 100) + "\n";
}

CliOptions parse_cli(int argc, const char* const* argv, const Shape& default_shape,
                     const char* not_a_gemm) {
  CliOptions o;
  o.shape = default_shape;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const Flag* flag = find_flag(arg);
    if (!flag) throw UnsupportedError("unknown argument '" + arg + "' (try --help)");
    if (flag->gemm_only && not_a_gemm)
      throw UnsupportedError(arg + " does not apply: " + not_a_gemm);
    const char* value = nullptr;
    if (flag->value) {
      if (i + 1 >= argc) throw UnsupportedError(arg + " needs a value");
      value = argv[++i];
    }
    const std::string name = flag->name;
    if (name == "--help")
      o.help = true;
    else if (name == "--no-check")
      o.check = false;
    else if (name == "--no-timing")
      o.timing = false;
    else if (name == "--draw")
      o.draw = value;
    else if (name == "--print-config")
      o.print_config = true;
    else if (name == "--trace")
      o.trace = value;
    else if (name == "--m")
      o.shape.m = parse_int(arg, value, 1);
    else if (name == "--n")
      o.shape.n = parse_int(arg, value, 1);
    else if (name == "--k")
      o.shape.k = parse_int(arg, value, 1);
    else if (name == "--iters")
      o.iters = int(parse_int(arg, value, 1));
    else if (name == "--seed")
      o.seed = uint64_t(parse_int(arg, value, 0));
  }
  if (!o.help && !not_a_gemm) validate(o.shape);
  return o;
}

}  // namespace gemm
