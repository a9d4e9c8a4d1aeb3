#include "common/tensor_map.hpp"

#include <cuda_runtime.h>

#include "common/check.hpp"

namespace gemm {

namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiled encode_tiled() {
  static EncodeTiled fn =
      reinterpret_cast<EncodeTiled>(detail::driver_entry_point("cuTensorMapEncodeTiled"));
  return fn;
}

int swizzle_bytes(CUtensorMapSwizzle s) {
  switch (s) {
    case CU_TENSOR_MAP_SWIZZLE_32B:
      return 32;
    case CU_TENSOR_MAP_SWIZZLE_64B:
      return 64;
    case CU_TENSOR_MAP_SWIZZLE_128B:
      return 128;
    default:
      return 0;
  }
}

}  // namespace

template <int Rank>
std::string tensor_map_error(const TensorMapSpec<Rank>& spec, const void* base) {
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0)
    return "the global address must be 16-byte aligned";
  for (int i = 0; i < Rank; ++i) {
    if (spec.dims[i] == 0 || spec.dims[i] > (uint64_t(1) << 32))
      return "dimension " + std::to_string(i) + " must be in [1, 2^32]";
    if (spec.box[i] == 0 || spec.box[i] > 256)
      return "box dimension " + std::to_string(i) + " must be in [1, 256]";
  }
  for (int i = 0; i < Rank - 1; ++i)
    if (spec.strides[i] % 16 != 0 || spec.strides[i] >= (uint64_t(1) << 40))
      return "stride " + std::to_string(i + 1) + " must be a multiple of 16 bytes below 2^40";
  const uint64_t inner_bytes = uint64_t(spec.box[0]) * spec.element_bytes;
  if (inner_bytes % 16 != 0) return "the box's inner dimension must span a multiple of 16 bytes";
  if (const int sw = swizzle_bytes(spec.swizzle); sw && inner_bytes > uint64_t(sw))
    return "with a " + std::to_string(sw) +
           "-byte swizzle the box's inner dimension may span at most " + std::to_string(sw) +
           " bytes";
  return {};
}

template <int Rank>
CUtensorMap make_tensor_map(const TensorMapSpec<Rank>& spec, const void* base) {
  if (std::string why = tensor_map_error(spec, base); !why.empty())
    throw UnsupportedError("tensor map: " + why);
  CUtensorMap map{};
  std::array<cuuint32_t, Rank> element_strides;
  element_strides.fill(1);
  CU_CHECK(encode_tiled()(&map, spec.type, Rank, const_cast<void*>(base), spec.dims.data(),
                          spec.strides.data(), spec.box.data(), element_strides.data(),
                          CU_TENSOR_MAP_INTERLEAVE_NONE, spec.swizzle,
                          CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

template std::string tensor_map_error<2>(const TensorMapSpec<2>&, const void*);
template std::string tensor_map_error<3>(const TensorMapSpec<3>&, const void*);
template CUtensorMap make_tensor_map<2>(const TensorMapSpec<2>&, const void*);
template CUtensorMap make_tensor_map<3>(const TensorMapSpec<3>&, const void*);

}  // namespace gemm
