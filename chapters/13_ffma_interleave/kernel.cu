// Chapter 13: chapter 12's kernels, launched from a copy of their machine code whose FFMAs carry
// other yield and reuse bits (rewrite.hpp). The build keeps the cubins that the compilation of
// chapter 12's kernel.cu embeds in the program, one per share of its variants, and rewrites each
// once per pattern with sass_rewrite (chapters/CMakeLists.txt); this file loads those cubins with
// the driver API and has common/launch.hpp launch their kernels in place of the ones linked into
// the program. Nothing else differs from chapter 12: the configuration, the tensor
// maps, the grid and the arguments are chapter 12's own, so D must be chapter 12's, bit for bit.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "chapters/13_ffma_interleave/cubin.hpp"
#include "chapters/13_ffma_interleave/draw.hpp"
#include "chapters/13_ffma_interleave/rewrite.hpp"
#include "common/check.hpp"
#include "common/launch.hpp"
#include "common/problem.hpp"

namespace ch12 {
void gemm(const gemm::GemmArgs& args, cudaStream_t stream);  // chapters/12_split_k/kernel.cu
std::string describe_config(const gemm::Shape& s);
}  // namespace ch12

namespace ch13 {

namespace {

// Where the build writes the rewritten cubins, one per share of chapter 12's variants
// (CH13_CUBIN_DIR, CH13_CUBIN_SHARES: chapters/CMakeLists.txt).
constexpr int kShares = CH13_CUBIN_SHARES;
std::string cubin_file(int share, Pattern p) {
  return std::string(CH13_CUBIN_DIR) + "/12_split_k." + std::to_string(share) + "." + name(p) +
         ".cubin";
}

struct Loaded {
  CUmodule modules[kShares] = {};
  std::map<std::string, int> share_of;          // a kernel's mangled name -> the cubin holding it
  std::map<const void*, CUfunction> functions;  // chapter 12's kernel -> its rewritten copy
};

// The rewritten copy of `kernel` (one of chapter 12's): the function of the same mangled name in
// the pattern's cubins, loaded once per device into the runtime's context. Which cubin holds it
// comes from reading their sections (cubin.hpp), so the driver is asked only where it is.
CUfunction lookup(Pattern p, const void* kernel) {
  using ModuleLoadData = CUresult (*)(CUmodule*, const void*);
  using ModuleGetFunction = CUresult (*)(CUfunction*, CUmodule, const char*);
  using FuncGetName = CUresult (*)(const char**, CUfunction);
  static const auto load_data =
      reinterpret_cast<ModuleLoadData>(gemm::detail::driver_entry_point("cuModuleLoadData"));
  static const auto get_function =
      reinterpret_cast<ModuleGetFunction>(gemm::detail::driver_entry_point("cuModuleGetFunction"));
  static const auto get_name =
      reinterpret_cast<FuncGetName>(gemm::detail::driver_entry_point("cuFuncGetName", 12030));
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  // The runtime's handle of the linked kernel, and its mangled name (this also makes the runtime
  // create the device's context, which the module is loaded into).
  cudaFunction_t linked = nullptr;
  CUDA_CHECK(cudaGetFuncBySymbol(&linked, kernel));
  static std::mutex mutex;
  static std::map<std::pair<int, Pattern>, Loaded> loaded;
  const std::lock_guard<std::mutex> lock(mutex);
  Loaded& l = loaded[{device, p}];
  if (auto it = l.functions.find(kernel); it != l.functions.end()) return it->second;
  for (int share = 0; share < kShares; ++share) {
    if (l.modules[share] != nullptr) continue;
    std::vector<uint8_t> bytes;
    try {
      bytes = read_file(cubin_file(share, p));
    } catch (const std::runtime_error& e) {
      throw gemm::Error(std::string("chapter 13: the rewritten kernels are missing (") + e.what() +
                        "): build the chapter13_cubins target, which writes them");
    }
    for (const Section& s : parse_cubin(bytes).kernels())
      l.share_of[s.name.substr(std::string(".text.").size())] = share;
    CU_CHECK(load_data(&l.modules[share], bytes.data()));
  }
  const char* mangled = nullptr;
  CU_CHECK(get_name(&mangled, reinterpret_cast<CUfunction>(linked)));
  const auto share = l.share_of.find(mangled);
  if (share == l.share_of.end())
    throw gemm::Error(std::string("chapter 13: no rewritten copy of ") + mangled + " in " +
                      CH13_CUBIN_DIR + "/12_split_k.*." + name(p) + ".cubin");
  CUfunction f = nullptr;
  CU_CHECK(get_function(&f, l.modules[share->second], mangled));
  l.functions[kernel] = f;
  return f;
}

}  // namespace

// Chapter 12's GEMM with its kernels replaced by their copies under pattern p.
void gemm_with(const gemm::GemmArgs& args, Pattern p, cudaStream_t stream) {
  const gemm::ScopedSubstitution substitution(
      [p](const void* kernel) { return lookup(p, kernel); });
  ch12::gemm(args, stream);
}

// The chapter: the unrewritten copy, loaded through the same path as the others, unless
// CH13_PATTERN (the environment) names a rewrite: original, alternate, no_yield or no_reuse.
void gemm(const gemm::GemmArgs& args, cudaStream_t stream) {
  const char* text = std::getenv("CH13_PATTERN");
  Pattern p = Pattern::Original;
  if (text != nullptr && *text != '\0') {
    try {
      p = parse_pattern(text);
    } catch (const std::runtime_error& e) {
      throw gemm::UnsupportedError(std::string("chapter 13: CH13_PATTERN: ") + e.what());
    }
  }
  gemm_with(args, p, stream);
}

// The benchmark's ablation entries (registry.cu): one per rewrite.
void gemm_alternate(const gemm::GemmArgs& args, cudaStream_t stream) {
  gemm_with(args, Pattern::Alternate, stream);
}
void gemm_no_yield(const gemm::GemmArgs& args, cudaStream_t stream) {
  gemm_with(args, Pattern::NoYield, stream);
}
void gemm_no_reuse(const gemm::GemmArgs& args, cudaStream_t stream) {
  gemm_with(args, Pattern::NoReuse, stream);
}

// For the binary's --draw: the first run of FFMAs of the 256 x 128 kernel (the headline shape's)
// under each pattern, read from the build's unrewritten cubins.
void draw_runs(const std::string& path) {
  for (int share = 0; share < kShares; ++share) {
    const Cubin c = parse_cubin(read_file(cubin_file(share, Pattern::Original)));
    for (const Section& s : c.kernels()) {
      if (s.name.find("gemm_kernelILi256ELi128ELN4ch109MulticastE0ELi1ELb0") == std::string::npos)
        continue;
      const std::vector<Run> runs = ffma_runs(c, s);
      if (runs.empty()) break;
      draw_run(c, s, runs[0],
               "chapter 12's 256 x 128 kernel, its first run of FFMAs, under each pattern", path);
      return;
    }
  }
  throw gemm::Error("chapter 13: no run of FFMAs in the 256 x 128 kernel of " +
                    std::string(CH13_CUBIN_DIR) + "/12_split_k.*.original.cubin");
}

// For the binary's --print-config: chapter 12's configuration, and where the code comes from.
std::string describe_config(const gemm::Shape& s) {
  return ch12::describe_config(s) + "; machine code from " + CH13_CUBIN_DIR +
         "/12_split_k.*.original.cubin";
}

}  // namespace ch13
