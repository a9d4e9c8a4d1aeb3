#include "common/inputs.hpp"

#include <algorithm>
#include <array>
#include <atomic>
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

// One reproducible stream of numbers: the n-th is a pure function of (seed, stream, n), so that any
// thread can draw any element. The key (the stream's first hash) is computed once per stream.
class RandomStream {
 public:
  RandomStream(uint64_t seed, uint64_t stream)
      : key_(splitmix64(seed ^ (stream * 0x632be59bd9b4e019ull))) {}
  // Uniform in (0, 1), never 0 (safe for log).
  double uniform(uint64_t n) const {
    return (double(splitmix64(key_ + n) >> 11) + 0.5) * 0x1.0p-53;
  }
  // Box-Muller on two independent uniforms.
  float normal(uint64_t n) const {
    const double u1 = uniform(2 * n), u2 = uniform(2 * n + 1);
    return float(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }
  // Magnitude of a block, 2^u with u uniform in [-4, 4): blocks differ by up to 256x, so a kernel
  // that applies the wrong scale to a block fails loudly.
  float magnitude(uint64_t block) const { return float(std::exp2(8.0 * uniform(block) - 4.0)); }

 private:
  uint64_t key_;
};

enum Stream : uint64_t { kValuesA = 1, kValuesB = 2, kBlocksA = 3, kBlocksB = 4 };

std::atomic<int> g_host_threads{0};  // 0: the machine's

}  // namespace

float normal_at(uint64_t seed, uint64_t stream, uint64_t n) {
  return RandomStream(seed, stream).normal(n);
}

int host_threads() {
  const int set = g_host_threads.load();
  return set > 0 ? set : std::max(1, int(std::thread::hardware_concurrency()));
}

void set_host_threads(int threads) {
  g_host_threads.store(std::max(0, threads));
}

void parallel_for(int64_t count, const std::function<void(int64_t, int64_t)>& body) {
  const int64_t threads = std::clamp<int64_t>(host_threads(), 1, std::max<int64_t>(count, 1));
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

// One scale block: x is rows x kScaleBlock with leading dimension x_ld, q likewise with q_ld.
static float quantize_block(const float* x, int64_t rows, int64_t x_ld, fp8* q, int64_t q_ld) {
  float amax = 0.0f;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < kScaleBlock; ++c) amax = std::max(amax, std::fabs(x[r * x_ld + c]));
  const float scale = std::max(amax, kMinAmax) / kFp8Max;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < kScaleBlock; ++c) q[r * q_ld + c] = fp8(x[r * x_ld + c] / scale);
  return scale;
}

void quantize_a(const float* x, int64_t m, int64_t k, fp8* a, float* sa, int64_t sa_ld) {
  const int64_t kb_count = k / kScaleBlock;
  parallel_for(m, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row)
      for (int64_t kb = 0; kb < kb_count; ++kb) {
        const int64_t off = row * k + kb * kScaleBlock;
        sa[kb * sa_ld + row] = quantize_block(x + off, 1, k, a + off, k);
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
        sb[nb * kb_count + kb] = quantize_block(x + off, rows, k, b + off, k);
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
  const RandomStream values_a(seed, kValuesA), values_b(seed, kValuesB);
  const int64_t kbs = s.k_blocks();

  if (scales == Scales::Unit) {
    // N(0, 1) values rounded straight to fp8; |x| < 448 with overwhelming probability.
    for (int64_t kb = 0; kb < kbs; ++kb) std::fill_n(p.sa.begin() + kb * s.sa_ld(), s.m, 1.0f);
    parallel_for(s.m * s.k, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) p.a[i] = fp8(values_a.normal(i));
    });
    parallel_for(s.n * s.k, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) p.b[i] = fp8(values_b.normal(i));
    });
    return p;
  }

  // Scales::Random: normal values times a magnitude per scale block, then the quantiser, one scale
  // block at a time (the same bytes as quantize_a and quantize_b on the whole tensor).
  const RandomStream blocks_a(seed, kBlocksA), blocks_b(seed, kBlocksB);
  parallel_for(s.m * kbs, [&](int64_t begin, int64_t end) {
    std::vector<float> x(kScaleBlock);
    for (int64_t block = begin; block < end; ++block) {
      const int64_t r = block / kbs, kb = block % kbs, off = r * s.k + kb * kScaleBlock;
      const float magnitude = blocks_a.magnitude(uint64_t(block));
      for (int64_t c = 0; c < kScaleBlock; ++c) x[c] = values_a.normal(off + c) * magnitude;
      p.sa[kb * s.sa_ld() + r] = quantize_block(x.data(), 1, 0, p.a.data() + off, 0);
    }
  });
  parallel_for(s.n_blocks() * kbs, [&](int64_t begin, int64_t end) {
    std::vector<float> x(kScaleBlock * kScaleBlock);
    for (int64_t block = begin; block < end; ++block) {
      const int64_t nb = block / kbs, kb = block % kbs;
      const int64_t rows = std::min<int64_t>(kScaleBlock, s.n - nb * kScaleBlock);
      const float magnitude = blocks_b.magnitude(uint64_t(block));
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t off = (nb * kScaleBlock + r) * s.k + kb * kScaleBlock;
        for (int64_t c = 0; c < kScaleBlock; ++c)
          x[r * kScaleBlock + c] = values_b.normal(off + c) * magnitude;
      }
      p.sb[block] = quantize_block(x.data(), rows, kScaleBlock,
                                   p.b.data() + nb * kScaleBlock * s.k + kb * kScaleBlock, s.k);
    }
  });
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
