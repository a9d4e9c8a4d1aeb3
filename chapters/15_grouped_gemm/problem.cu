#include "chapters/15_grouped_gemm/problem.hpp"

#include <algorithm>
#include <cstring>
#include <random>

#include "common/check.hpp"
#include "common/reference.hpp"

namespace ch15 {

namespace {

// A finite fp8 e4m3 value near 1 from a hash of (seed, i): padding rows that a kernel should never
// compute, filled cheaply (a NaN here would also be caught, but would say less).
gemm::fp8 filler(uint64_t seed, uint64_t i) {
  uint64_t h = (seed + 0x9E3779B97F4A7C15ull) ^ (i * 0xBF58476D1CE4E5B9ull);
  h ^= h >> 31;
  h *= 0x94D049BB133111EBull;
  h ^= h >> 29;
  const uint8_t bits = uint8_t((h & 0x80) | (((6 + (h >> 8) % 4) & 0xF) << 3) | ((h >> 16) & 7));
  gemm::fp8 v;
  std::memcpy(&v, &bits, 1);
  return v;
}

}  // namespace

int64_t GroupedHostProblem::valid_rows() const {
  int64_t total = 0;
  for (int64_t r : rows) total += r;
  return total;
}
double GroupedHostProblem::flops() const {
  return 2.0 * double(valid_rows()) * double(shape.n) * double(shape.k);
}
double GroupedHostProblem::min_bytes() const {
  const double v = double(valid_rows());
  return v * double(shape.k) + double(groups) * double(shape.n) * double(shape.k) +
         2.0 * v * double(shape.n);
}

gemm::HostProblem GroupedHostProblem::group_problem(int g) const {
  if (rows[g] < 1) throw gemm::Error("chapter 15: group " + std::to_string(g) + " has no rows");
  gemm::HostProblem p;
  p.shape = {rows[g], shape.n, shape.k};
  const int64_t kb = shape.k_blocks(), nb = shape.n_blocks();
  p.a.assign(a.begin() + first_row[g] * shape.k, a.begin() + (first_row[g] + rows[g]) * shape.k);
  p.sa.assign(kb * p.shape.sa_ld(), 0.0f);
  // The grouped scales: contiguous [kb][sa_ld(M)] over all rows; masked [g][kb][sa_ld(max_m)].
  const int64_t ld = shape.sa_ld();
  const int64_t base = layout == Layout::Contiguous ? 0 : int64_t(g) * kb * ld;
  const int64_t row = layout == Layout::Contiguous ? first_row[g] : 0;
  for (int64_t k = 0; k < kb; ++k)
    for (int64_t r = 0; r < rows[g]; ++r)
      p.sa[k * p.shape.sa_ld() + r] = sa[base + k * ld + row + r];
  p.b.assign(b.begin() + int64_t(g) * shape.n * shape.k,
             b.begin() + int64_t(g + 1) * shape.n * shape.k);
  p.sb.assign(sb.begin() + int64_t(g) * nb * kb, sb.begin() + int64_t(g + 1) * nb * kb);
  return p;
}

std::vector<int64_t> draw_rows(int groups, int64_t expected, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> rows(size_t(std::max(groups, 0)));
  for (int64_t& r : rows) r = draw_count(rng, expected);
  return rows;
}

GroupedHostProblem make_grouped_problem(Layout layout, const std::vector<int64_t>& rows, int64_t n,
                                        int64_t k, uint64_t seed, int64_t max_m_or_0) {
  GroupedHostProblem p;
  p.layout = layout;
  p.groups = int(rows.size());
  p.rows = rows;
  if (p.groups < 1) throw gemm::UnsupportedError("chapter 15: a grouped problem needs a group");
  int64_t biggest = 0;
  for (int64_t r : rows) {
    if (r < 0) throw gemm::UnsupportedError("chapter 15: a group cannot have negative rows");
    biggest = std::max(biggest, r);
  }
  p.first_row.resize(rows.size());
  if (layout == Layout::Contiguous) {
    int64_t m = 0;
    for (int g = 0; g < p.groups; ++g) {
      p.first_row[g] = m;
      m += (rows[g] + kAlignment - 1) / kAlignment * kAlignment;
    }
    if (m == 0) m = kAlignment;  // every group empty: one block of padding
    p.shape = {m, n, k};
    p.m_indices.assign(size_t(m), -1);
    for (int g = 0; g < p.groups; ++g)
      std::fill_n(p.m_indices.begin() + p.first_row[g], rows[g], g);
  } else {
    const int64_t max_m = max_m_or_0 > 0
                              ? max_m_or_0
                              : std::max<int64_t>(kMaskedRows, (biggest + kMaskedRows - 1) /
                                                                   kMaskedRows * kMaskedRows);
    if (biggest > max_m)
      throw gemm::UnsupportedError("chapter 15: a group has more rows than max_m");
    p.shape = {max_m, n, k};
    for (int g = 0; g < p.groups; ++g) p.first_row[g] = int64_t(g) * max_m;
    p.masked_m.assign(rows.begin(), rows.end());
  }
  gemm::validate(p.shape);
  const int64_t kb = p.shape.k_blocks(), nb = p.shape.n_blocks(), ld = p.shape.sa_ld();
  const int64_t d_rows = p.d_rows();
  p.a.resize(size_t(d_rows * k));
  gemm::parallel_for(d_rows, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin * k; i < end * k; ++i) p.a[i] = filler(seed, uint64_t(i));
  });
  const int64_t sa_groups = layout == Layout::Contiguous ? 1 : p.groups;
  p.sa.assign(size_t(sa_groups * kb * ld), 1.0f);
  p.b.resize(size_t(int64_t(p.groups) * n * k));
  p.sb.resize(size_t(int64_t(p.groups) * nb * kb));
  for (int g = 0; g < p.groups; ++g) {
    const gemm::HostProblem q = gemm::make_problem(
        {std::max<int64_t>(rows[g], 1), n, k}, seed * 1000003 + uint64_t(g), gemm::Scales::Random);
    std::copy(q.b.begin(), q.b.end(), p.b.begin() + int64_t(g) * n * k);
    std::copy(q.sb.begin(), q.sb.end(), p.sb.begin() + int64_t(g) * nb * kb);
    if (rows[g] == 0) continue;
    std::copy(q.a.begin(), q.a.begin() + rows[g] * k, p.a.begin() + p.first_row[g] * k);
    const int64_t base = layout == Layout::Contiguous ? 0 : int64_t(g) * kb * ld;
    const int64_t row = layout == Layout::Contiguous ? p.first_row[g] : 0;
    for (int64_t x = 0; x < kb; ++x)
      for (int64_t r = 0; r < rows[g]; ++r) p.sa[base + x * ld + row + r] = q.scale_a(r, x);
  }
  return p;
}

GroupedDeviceProblem::GroupedDeviceProblem(const GroupedHostProblem& p)
    : a_(p.a), b_(p.b), sa_(p.sa), sb_(p.sb), d_(size_t(p.d_rows() * p.shape.n)), status_(1) {
  shape_only_.layout = p.layout;
  shape_only_.groups = p.groups;
  shape_only_.shape = p.shape;
  shape_only_.rows = p.rows;
  shape_only_.first_row = p.first_row;
  if (p.layout == Layout::Contiguous)
    m_indices_ = gemm::DeviceBuffer<int>(p.m_indices);
  else
    masked_m_ = gemm::DeviceBuffer<int>(p.masked_m);
  CUDA_CHECK(cudaMemset(status_.get(), 0, sizeof(uint32_t)));
  const int64_t n = p.shape.n, k = p.shape.k, kb = p.shape.k_blocks(), nb = p.shape.n_blocks();
  for (int g = 0; g < p.groups; ++g) {
    if (p.rows[g] < 1) continue;
    const gemm::Shape s{p.rows[g], n, k};
    std::vector<float> sa(size_t(kb * s.sa_ld()), 0.0f);
    const int64_t ld = p.shape.sa_ld();
    const int64_t base = p.layout == Layout::Contiguous ? 0 : int64_t(g) * kb * ld;
    const int64_t row = p.layout == Layout::Contiguous ? p.first_row[g] : 0;
    for (int64_t x = 0; x < kb; ++x)
      for (int64_t r = 0; r < p.rows[g]; ++r) sa[x * s.sa_ld() + r] = p.sa[base + x * ld + row + r];
    dense_sa_.emplace_back(sa);
    gemm::GemmArgs args;
    args.shape = s;
    args.a = a_.get() + p.first_row[g] * k;
    args.sa = dense_sa_.back().get();
    args.b = b_.get() + int64_t(g) * n * k;
    args.sb = sb_.get() + int64_t(g) * nb * kb;
    args.d = d_.get() + p.first_row[g] * n;
    dense_.push_back({g, args});
  }
}

GroupedArgs GroupedDeviceProblem::args() const {
  GroupedArgs args;
  args.layout = shape_only_.layout;
  args.groups = shape_only_.groups;
  args.shape = shape_only_.shape;
  args.a = a_.get();
  args.sa = sa_.get();
  args.b = b_.get();
  args.sb = sb_.get();
  args.d = d_.get();
  args.m_indices = m_indices_.get();
  args.masked_m = masked_m_.get();
  args.status = status_.get();
  return args;
}

void GroupedDeviceProblem::poison(cudaStream_t stream) const {
  gemm::poison_bf16(d_.get(), d_.size(), stream);
}

std::vector<uint16_t> GroupedDeviceProblem::download_d() const {
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint16_t> host(d_.size());
  CUDA_CHECK(cudaMemcpy(host.data(), d_.get(), d_.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

}  // namespace ch15
