#include "common/inputs.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <thread>

namespace gemm {

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in (0, 1), never 0 (safe for log).
double uniform_at(uint64_t seed, uint64_t stream, uint64_t n) {
  const uint64_t h = splitmix64(splitmix64(seed ^ (stream * 0x632be59bd9b4e019ull)) + n);
  return (double(h >> 11) + 0.5) * 0x1.0p-53;
}

// Magnitude of a block, 2^u with u uniform in [-4, 4): blocks differ by up to 256x, so a kernel
// that applies the wrong scale to a block fails loudly.
float block_magnitude(uint64_t seed, uint64_t stream, uint64_t block) {
  return float(std::exp2(8.0 * uniform_at(seed, stream, block) - 4.0));
}

enum Stream : uint64_t { kValuesA = 1, kValuesB = 2, kBlocksA = 3, kBlocksB = 4 };

}  // namespace

float normal_at(uint64_t seed, uint64_t stream, uint64_t n) {
  // Box-Muller on two independent uniforms.
  const double u1 = uniform_at(seed, stream, 2 * n);
  const double u2 = uniform_at(seed, stream, 2 * n + 1);
  return float(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

void parallel_for(int64_t count, const std::function<void(int64_t, int64_t)>& body) {
  const int64_t threads =
      std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, std::max<int64_t>(count, 1));
  if (threads == 1) return body(0, count);
  std::vector<std::thread> pool;
  const int64_t chunk = (count + threads - 1) / threads;
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t begin = t * chunk, end = std::min(count, begin + chunk);
    if (begin < end) pool.emplace_back(body, begin, end);
  }
  for (auto& th : pool) th.join();
}

float fp8_to_float(fp8 v) {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int i = 0; i < 256; ++i) {
      __nv_fp8_e4m3 x;
      x.__x = static_cast<__nv_fp8_storage_t>(i);
      t[i] = float(x);
    }
    return t;
  }();
  return table[v.__x];
}

static float quantize_block(const float* x, int64_t rows, int64_t cols, int64_t ld, fp8* q) {
  float amax = 0.0f;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) amax = std::max(amax, std::fabs(x[r * ld + c]));
  const float scale = std::max(amax, kMinAmax) / kFp8Max;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) q[r * ld + c] = fp8(x[r * ld + c] / scale);
  return scale;
}

void quantize_a(const float* x, int64_t m, int64_t k, fp8* a, float* sa, int64_t sa_ld) {
  const int64_t kb_count = k / kScaleBlock;
  parallel_for(m, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row)
      for (int64_t kb = 0; kb < kb_count; ++kb) {
        const int64_t off = row * k + kb * kScaleBlock;
        sa[kb * sa_ld + row] = quantize_block(x + off, 1, kScaleBlock, k, a + off);
      }
  });
}

void quantize_b(const float* x, int64_t n, int64_t k, fp8* b, float* sb) {
  const int64_t kb_count = k / kScaleBlock, nb_count = (n + kScaleBlock - 1) / kScaleBlock;
  parallel_for(nb_count, [&](int64_t begin, int64_t end) {
    for (int64_t nb = begin; nb < end; ++nb) {
      const int64_t rows = std::min<int64_t>(kScaleBlock, n - nb * kScaleBlock);
      for (int64_t kb = 0; kb < kb_count; ++kb) {
        const int64_t off = nb * kScaleBlock * k + kb * kScaleBlock;
        sb[nb * kb_count + kb] = quantize_block(x + off, rows, kScaleBlock, k, b + off);
      }
    }
  });
}

HostProblem make_problem(const Shape& s, uint64_t seed, Scales scales) {
  validate(s);
  HostProblem p;
  p.shape = s;
  p.a.resize(s.m * s.k);
  p.b.resize(s.n * s.k);
  p.sa.assign(s.k_blocks() * s.sa_ld(), 0.0f);
  p.sb.assign(s.n_blocks() * s.k_blocks(), 1.0f);

  if (scales == Scales::Unit) {
    // N(0, 1) values rounded straight to fp8; |x| < 448 with overwhelming probability.
    for (int64_t kb = 0; kb < s.k_blocks(); ++kb)
      std::fill_n(p.sa.begin() + kb * s.sa_ld(), s.m, 1.0f);
    parallel_for(s.m, [&](int64_t b, int64_t e) {
      for (int64_t i = b * s.k; i < e * s.k; ++i) p.a[i] = fp8(normal_at(seed, kValuesA, i));
    });
    parallel_for(s.n, [&](int64_t b, int64_t e) {
      for (int64_t i = b * s.k; i < e * s.k; ++i) p.b[i] = fp8(normal_at(seed, kValuesB, i));
    });
    return p;
  }

  // Scales::Random: normal values times a magnitude per scale block, then the quantiser.
  std::vector<float> x(std::max(s.m, s.n) * s.k);
  parallel_for(s.m, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r)
      for (int64_t c = 0; c < s.k; ++c)
        x[r * s.k + c] = normal_at(seed, kValuesA, r * s.k + c) *
                         block_magnitude(seed, kBlocksA, r * s.k_blocks() + c / kScaleBlock);
  });
  quantize_a(x.data(), s.m, s.k, p.a.data(), p.sa.data(), s.sa_ld());
  parallel_for(s.n, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r)
      for (int64_t c = 0; c < s.k; ++c)
        x[r * s.k + c] =
            normal_at(seed, kValuesB, r * s.k + c) *
            block_magnitude(seed, kBlocksB, (r / kScaleBlock) * s.k_blocks() + c / kScaleBlock);
  });
  quantize_b(x.data(), s.n, s.k, p.b.data(), p.sb.data());
  return p;
}

HostProblem HostProblem::rows(int64_t begin, int64_t end) const {
  HostProblem p;
  p.shape = {end - begin, shape.n, shape.k};
  p.a.assign(a.begin() + begin * shape.k, a.begin() + end * shape.k);
  p.b = b;
  p.sb = sb;
  p.sa.assign(p.shape.k_blocks() * p.shape.sa_ld(), 0.0f);
  for (int64_t kb = 0; kb < shape.k_blocks(); ++kb)
    for (int64_t r = begin; r < end; ++r) p.sa[kb * p.shape.sa_ld() + (r - begin)] = scale_a(r, kb);
  return p;
}

}  // namespace gemm
