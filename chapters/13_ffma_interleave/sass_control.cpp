// sass_control: chapter 13's reader. Prints the control bits of the SASS in a cubin (control_bits.hpp),
// and the runs of FFMA instructions with their yield and reuse bits. No GPU needed.
//
//   sass_control FILE.cubin...                       the kernels: instructions, FFMAs, FFMA runs
//   sass_control FILE.cubin... --kernel TEXT         every instruction of the first kernel whose
//                                                    mangled name contains TEXT
//   sass_control FILE.cubin... --kernel TEXT --runs  only its runs of 8 or more consecutive FFMAs
// Several files: chapter 12's cubins, one per share of its variants (chapters/CMakeLists.txt), as
// one list of kernels.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "chapters/13_ffma_interleave/cubin.hpp"
#include "chapters/13_ffma_interleave/rewrite.hpp"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: sass_control FILE.cubin... [--kernel TEXT [--runs]]\n"
               "  without --kernel: each kernel's instructions, FFMAs, and FFMA runs of 8 or more\n"
               "  --kernel TEXT: every instruction of the first kernel whose name contains TEXT\n"
               "  --runs: only that kernel's FFMA runs, one letter per FFMA: Y yield set, - not;\n"
               "          and the number of reuse flags set in each\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> paths;
  std::string kernel;
  bool runs_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--kernel" && i + 1 < argc)
      kernel = argv[++i];
    else if (a == "--runs")
      runs_only = true;
    else if (a.rfind("--", 0) == 0)
      return usage();
    else
      paths.push_back(a);
  }
  if (paths.empty()) return usage();
  try {
    for (const std::string& path : paths) {
      const ch13::Cubin c = ch13::parse_cubin(ch13::read_file(path));
      if (kernel.empty()) {
        if (paths.size() > 1) std::printf("%s:\n", path.c_str());
        for (const ch13::Section& s : c.kernels()) {
          uint64_t ffma = 0, yield = 0, reuse = 0;
          for (uint64_t i = 0; i < s.size / 16; ++i) {
            const ch13::Instruction in = c.instruction(s, i);
            if (!ch13::is_ffma(in)) continue;
            ++ffma;
            const ch13::Control k = ch13::decode(in);
            yield += k.yield ? 1 : 0;
            reuse += k.reuse != 0 ? 1 : 0;
          }
          std::printf(
              "%s: %llu instructions, %llu FFMA (%llu with yield, %llu with reuse), %zu runs\n",
              s.name.c_str() + 6, static_cast<unsigned long long>(s.size / 16),
              static_cast<unsigned long long>(ffma), static_cast<unsigned long long>(yield),
              static_cast<unsigned long long>(reuse), ch13::ffma_runs(c, s).size());
        }
        continue;
      }
      for (const ch13::Section& s : c.kernels()) {
        if (s.name.find(kernel) == std::string::npos) continue;
        std::printf("%s\n", s.name.c_str() + 6);
        if (runs_only) {
          for (const ch13::Run& r : ch13::ffma_runs(c, s)) {
            std::string pattern;
            int reuse = 0;
            for (uint64_t i = r.first; i < r.first + r.length; ++i) {
              const ch13::Control k = ch13::decode(c.instruction(s, i));
              pattern += k.yield ? 'Y' : '-';
              reuse += k.reuse != 0 ? 1 : 0;
            }
            std::printf("  /*%05llx*/ %3llu FFMA, %3d with reuse: %s\n",
                        static_cast<unsigned long long>(16 * r.first),
                        static_cast<unsigned long long>(r.length), reuse, pattern.c_str());
          }
          return 0;
        }
        for (uint64_t i = 0; i < s.size / 16; ++i) {
          const ch13::Instruction in = c.instruction(s, i);
          std::printf("  /*%05llx*/ %016llx %016llx  op %03x%s  %s reuse %x\n",
                      static_cast<unsigned long long>(16 * i),
                      static_cast<unsigned long long>(in.lo),
                      static_cast<unsigned long long>(in.hi), ch13::opcode(in),
                      ch13::is_ffma(in) ? " FFMA" : "     ", ch13::format(ch13::decode(in)).c_str(),
                      ch13::decode(in).reuse);
        }
        return 0;
      }
    }
    if (kernel.empty()) return 0;
    std::fprintf(stderr, "sass_control: no kernel in %s%s has \"%s\" in its name\n",
                 paths[0].c_str(), paths.size() > 1 ? " and the other files" : "", kernel.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sass_control: %s\n", e.what());
    return 2;
  }
}
