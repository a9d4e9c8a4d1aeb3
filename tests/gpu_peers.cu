// The cuBLASLt peers against the CPU reference. Each solves its own version of the problem:
// BlockScaled the scaled product on quantised inputs, PerTensor the unscaled product on unit-scale
// inputs, Bf16 the scaled product from dequantised bf16 operands.
#include <gtest/gtest.h>

#include <memory>

#include "common/cublaslt.hpp"
#include "tests/gpu.hpp"

namespace gemm {
inline void PrintTo(Peer p, std::ostream* os) {
  *os << peer_name(p);
}
namespace {

const Shape kShapes[] = {
    {1, 2112, 7168}, {100, 264, 512}, {257, 136, 1024}, {128, 256, 384}, {64, 7168, 2048}};

class PeerVsReference : public ::testing::TestWithParam<std::tuple<Peer, Shape>> {};

TEST_P(PeerVsReference, MatchesCpuReference) {
  SKIP_WITHOUT_HOPPER();
  const auto [peer, s] = GetParam();
  const uint64_t seed = testing::test_seed();
  const HostProblem host =
      make_problem(s, seed, peer == Peer::PerTensor ? Scales::Unit : Scales::Random);
  const DeviceProblem dev(host);
  std::unique_ptr<CublasLtGemm> gemm;
  try {
    gemm = std::make_unique<CublasLtGemm>(peer, dev.args());
  } catch (const UnsupportedError& e) {
    // cuBLASLt's own limit (block scales need M % 4 == 0): nothing of ours to check.
    GTEST_SKIP() << e.what();
  }
  dev.poison();
  gemm->run(nullptr);
  // BlockScaled promotes each 128-wide K block into fp32 (the point of the block scales);
  // PerTensor may accumulate all of K in the tensor core: the looser bound.
  const Tolerance tol = peer == Peer::Bf16          ? bf16_inputs_tolerance(s.k)
                        : peer == Peer::BlockScaled ? tensor_core_fp8_tolerance(s.k, 128)
                                                    : tensor_core_fp8_tolerance(s.k, s.k);
  const ReferenceCheck r = check_against_reference(host, dev.download_d(), tol, kCpuReferenceMacs);
  testing::expect_matches_reference(
      r, kRelDiffTensorCore,
      std::string(peer_name(peer)) + " " + s.str() + " seed " + std::to_string(seed));
  RecordProperty("rel_diff", std::to_string(r.on_bands.rel_diff));
}

INSTANTIATE_TEST_SUITE_P(All, PeerVsReference,
                         ::testing::Combine(::testing::ValuesIn(kAllPeers),
                                            ::testing::ValuesIn(kShapes)),
                         [](const auto& info) {
                           std::string name = peer_name(std::get<0>(info.param));
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name + "_" + testing::shape_param_name(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace gemm
