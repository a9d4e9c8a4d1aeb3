// The five tensors of a GEMM call by the names the argument check gives them, and how to read,
// move and size each one in a GemmArgs: shared by the host and GPU argument tests.
#pragma once

#include <cstdint>
#include <string>

#include "common/arguments.hpp"
#include "common/problem.hpp"

namespace gemm::tensors {

enum class Which { A, B, Sa, Sb, D };
inline constexpr Which kAll[] = {Which::A, Which::B, Which::Sa, Which::Sb, Which::D};
inline constexpr Which kInputs[] = {Which::A, Which::B, Which::Sa, Which::Sb};

inline std::string name(Which w) {
  switch (w) {
    case Which::A:
      return "A";
    case Which::B:
      return "B";
    case Which::Sa:
      return "scale A";
    case Which::Sb:
      return "scale B";
    case Which::D:
      return "D";
  }
  return "?";
}

inline bool is_scale(Which w) {
  return w == Which::Sa || w == Which::Sb;
}

inline uintptr_t address(const GemmArgs& args, Which w) {
  switch (w) {
    case Which::A:
      return reinterpret_cast<uintptr_t>(args.a);
    case Which::B:
      return reinterpret_cast<uintptr_t>(args.b);
    case Which::Sa:
      return reinterpret_cast<uintptr_t>(args.sa);
    case Which::Sb:
      return reinterpret_cast<uintptr_t>(args.sb);
    case Which::D:
      return reinterpret_cast<uintptr_t>(args.d);
  }
  return 0;
}

inline void set_address(GemmArgs& args, Which w, uintptr_t p) {
  switch (w) {
    case Which::A:
      args.a = reinterpret_cast<const __nv_fp8_e4m3*>(p);
      break;
    case Which::B:
      args.b = reinterpret_cast<const __nv_fp8_e4m3*>(p);
      break;
    case Which::Sa:
      args.sa = reinterpret_cast<const float*>(p);
      break;
    case Which::Sb:
      args.sb = reinterpret_cast<const float*>(p);
      break;
    case Which::D:
      args.d = reinterpret_cast<__nv_bfloat16*>(p);
      break;
  }
}

inline int64_t bytes(const Shape& s, Which w) {
  const Extents e = extents(s);
  switch (w) {
    case Which::A:
      return e.a;
    case Which::B:
      return e.b;
    case Which::Sa:
      return e.sa;
    case Which::Sb:
      return e.sb;
    case Which::D:
      return e.d;
  }
  return 0;
}

}  // namespace gemm::tensors
