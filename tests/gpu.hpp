// Shared by the GPU tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <ostream>
#include <string>

#include "common/device.hpp"
#include "common/problem.hpp"
#include "common/reference.hpp"

// Skips the test, saying why, unless device 0 is a Hopper GPU.
#define SKIP_WITHOUT_HOPPER()                                                        \
  do {                                                                               \
    if (const std::string why_ = ::gemm::hopper_unavailable_reason(); !why_.empty()) \
      GTEST_SKIP() << "needs an sm_90 GPU: " << why_;                                \
  } while (0)

namespace gemm {
// Readable test parameters in gtest's output.
inline void PrintTo(const Shape& s, std::ostream* os) {
  *os << s.str();
}
}  // namespace gemm

namespace gemm::testing {

// The seed named by `key` (a hash of it), moved by GEMM_TEST_SEED so that a rerun with another
// value draws fresh inputs everywhere. Printed on failure by the callers.
inline uint64_t seed_for(const std::string& key) {
  uint64_t seed = std::hash<std::string>{}(key);
  if (const char* env = std::getenv("GEMM_TEST_SEED")) seed ^= std::strtoull(env, nullptr, 10);
  return seed;
}

// An environment variable (a chapter's override) set for the lifetime of the object, and unset
// after it; a null value leaves it unset. The launches read the environment when they are called.
class EnvOverride {
 public:
  EnvOverride(const char* name, const char* value) : name_(name) {
    if (value != nullptr) setenv(name, value, 1);
  }
  EnvOverride(const char* name, const std::string& value) : EnvOverride(name, value.c_str()) {}
  ~EnvOverride() { unsetenv(name_); }
  EnvOverride(const EnvOverride&) = delete;
  EnvOverride& operator=(const EnvOverride&) = delete;

 private:
  const char* name_;  // a string literal
};

// A seed of its own for every test case (from its full name).
inline uint64_t test_seed() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return seed_for(std::string(info->test_suite_name()) + "." + info->name());
}

inline std::string shape_param_name(const Shape& s) {
  return "M" + std::to_string(s.m) + "_N" + std::to_string(s.n) + "_K" + std::to_string(s.k);
}

// The assertions every check against the reference makes.
inline void expect_matches_reference(const ReferenceCheck& r, double max_rel_diff,
                                     const std::string& context) {
  EXPECT_EQ(r.unwritten_total, 0) << context << ": elements of D never written";
  EXPECT_EQ(r.nan_total, 0) << context << ": NaN or Inf in D";
  EXPECT_EQ(r.on_bands.over_bound, 0) << context << ": " << r.on_bands.str();
  EXPECT_LE(r.on_bands.rel_diff, max_rel_diff) << context << ": " << r.on_bands.str();
}

}  // namespace gemm::testing
