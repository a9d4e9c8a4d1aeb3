// Building TMA descriptors (CUtensorMap) on the host with cuTensorMapEncodeTiled
// (https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TENSOR__MEMORY.html).
//
// The function lives in the driver library; it is reached through the runtime's driver entry
// point, so nothing links against libcuda and the binaries still start on a machine without one.
#pragma once

#include <cuda.h>

#include <array>
#include <cstdint>
#include <string>

namespace gemm {

// A tiled view of global memory: rank dimensions, innermost first.
template <int Rank>
struct TensorMapSpec {
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  int element_bytes = 1;
  std::array<uint64_t, Rank> dims{};         // elements per dimension
  std::array<uint64_t, Rank - 1> strides{};  // bytes between consecutive indices of dims 1..Rank-1
  std::array<uint32_t, Rank> box{};          // elements per dimension copied by one TMA load
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
};

// Empty when cuTensorMapEncodeTiled's documented constraints hold for spec (and base is 16-byte
// aligned); otherwise a sentence naming the first one broken. Pure arithmetic: tested on the host.
template <int Rank>
std::string tensor_map_error(const TensorMapSpec<Rank>& spec, const void* base);

// Throws gemm::UnsupportedError for a spec that breaks a constraint, gemm::Error when the driver
// refuses it.
template <int Rank>
CUtensorMap make_tensor_map(const TensorMapSpec<Rank>& spec, const void* base);

}  // namespace gemm
