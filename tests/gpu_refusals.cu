// Every registered GEMM chapter, through its own launch function, refuses the arguments its kernel
// cannot take (an illegal shape, a grid too tall, null, misaligned or overlapping pointers) with a
// sentence naming the argument and the constraint, in the documented order (shape, grid,
// pointers, device), and accepts what it can take (tensors exactly at the alignment it declares,
// adjacent tensors, inputs aliasing each other, scales it does not read left null or under D).
//
// ChapterArguments needs no GPU and runs everywhere. Its pointers point into an "arena": on a
// Hopper GPU a real allocation, so that a chapter that wrongly accepts something runs on memory it
// owns instead of faulting; elsewhere a made-up address that is never dereferenced (the device
// check, last, refuses before anything launches). The alignments and tile height a chapter asks
// for are read from its own refusals (the registry does not carry its KernelNeeds) and then held to
// every offset.
//
// ChapterArgumentsOnDevice (Hopper only) does it with real, misplaced buffers: a refusal must come
// before any launch (D and the inputs keep every byte, the CUDA context stays healthy and the next
// correct run passes), and tensors placed exactly at the declared alignments, or touching each
// other, give D bit for bit as the ordinary placement does without writing a byte outside D.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "chapters/registry.hpp"
#include "tests/gpu.hpp"
#include "tests/tensors.hpp"

namespace gemm {
namespace {

// Ragged in M (not a multiple of 4: sA is padded) and N (264 = 2 x 128 + 8), 4 K blocks.
constexpr Shape kShape{100, 264, 512};
// Room per tensor inside the arena: far more than any tensor of kShape, so that D may be placed up
// to a whole D before or after any input and stay inside.
constexpr uintptr_t kSlot = uintptr_t(1) << 20;

// ---- the five tensors ----------------------------------------------------------------------

using namespace tensors;

// ---- the arena and one attempt -------------------------------------------------------------

// Slots 1 to 5 hold A, B, sA, sB and D, each at the start of its slot; slot 0 and 6 are room.
class Arena {
 public:
  Arena() : launchable_(hopper_unavailable_reason().empty()) {
    if (launchable_) {
      mem_ = DeviceBuffer<uint8_t>(7 * kSlot);
      CUDA_CHECK(cudaMemset(mem_.get(), 0, mem_.bytes()));
      base_ = reinterpret_cast<uintptr_t>(mem_.get());
    } else {
      base_ = uintptr_t(0x1000'0000);  // never dereferenced: the device check refuses first
    }
  }
  bool launchable() const { return launchable_; }
  GemmArgs args(const Shape& s = kShape) const {
    GemmArgs args;
    args.shape = s;
    const Which order[] = {Which::A, Which::B, Which::Sa, Which::Sb, Which::D};
    for (int i = 0; i < 5; ++i) set_address(args, order[i], base_ + uintptr_t(i + 1) * kSlot);
    return args;
  }

 private:
  bool launchable_;
  DeviceBuffer<uint8_t> mem_;
  uintptr_t base_ = 0;
};

// The refusal's sentence, or "" when the chapter accepted the arguments: on a Hopper GPU it
// launched (and the kernel must finish cleanly); elsewhere it passed every argument check and was
// refused only for want of a device, with device_error()'s sentence.
std::string attempt(const Chapter& ch, const GemmArgs& args, bool launchable) {
  try {
    ch.launch(args, nullptr);
  } catch (const UnsupportedError& e) {
    const std::string what = e.what(), device = device_error();
    if (!launchable && !device.empty() && what.size() >= device.size() &&
        what.compare(what.size() - device.size(), device.size(), device) == 0)
      return "";
    return what;
  }
  EXPECT_TRUE(launchable) << ch.dir << " launched although " << hopper_unavailable_reason();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << ch.dir << " on " << args.shape.str();
  return "";
}

void expect_refused(const std::string& why, std::initializer_list<std::string> words,
                    const std::string& context) {
  EXPECT_FALSE(why.empty()) << context << ": accepted";
  for (const std::string& w : words)
    EXPECT_NE(why.find(w), std::string::npos)
        << context << ": the refusal lacks \"" << w << "\": " << why;
}

// What a chapter asks of its arguments, read from its refusals.
struct Needs {
  int align[5] = {};    // by Which; 0: not read
  int64_t block_m = 0;  // 0: no grid limit at any legal shape
  int operator[](Which w) const { return align[int(w)]; }
};

// The alignment asked of one pointer: the chapter is handed that pointer one byte off and must
// refuse it with "the pointer to X must be N-byte aligned" (0 for a scale pointer it does not read:
// it must accept one byte off).
int declared_alignment(const Chapter& ch, const Arena& arena, Which w) {
  GemmArgs args = arena.args();
  set_address(args, w, address(args, w) + 1);
  const std::string why = attempt(ch, args, arena.launchable());
  const std::string context = std::string(ch.dir) + ", " + name(w) + " one byte off";
  if (is_scale(w) && !ch.applies_scales) {
    EXPECT_EQ(why, "") << context << ": refused, although the chapter does not read its scales";
    return 0;
  }
  const std::string key = "the pointer to " + name(w) + " must be ";
  const size_t at = why.find(key);
  if (at == std::string::npos) {
    ADD_FAILURE() << context << ": expected a refusal naming the alignment, got \"" << why << "\"";
    return 0;
  }
  return std::atoi(why.c_str() + at + key.size());
}

// The tile height behind the grid limit: a legal shape whose M no tile grid of at most 256 rows
// per block can cover, with every pointer null, must be refused for the grid. 0 when the chapter
// refuses for the null pointer instead (its grid does not grow with M).
int64_t declared_block_m(const Chapter& ch) {
  GemmArgs args;
  args.shape = {(int64_t(1) << 24) - 1, 8, 128};  // M x K just below 2^31 elements
  EXPECT_EQ(shape_error(args.shape), "");
  const std::string why = attempt(ch, args, true);
  const std::string key = "one grid row per ";
  if (const size_t at = why.find(key); at != std::string::npos)
    return std::atoll(why.c_str() + at + key.size());
  EXPECT_NE(why.find("the pointer to A is null"), std::string::npos)
      << ch.dir << ": expected the grid or null A, got \"" << why << "\"";
  return 0;
}

Needs declared_needs(const Chapter& ch, const Arena& arena) {
  Needs n;
  for (Which w : kAll) n.align[int(w)] = declared_alignment(ch, arena, w);
  n.block_m = declared_block_m(ch);
  return n;
}

class ChapterArguments : public ::testing::TestWithParam<int> {
 protected:
  const Chapter& ch = *find_chapter(GetParam());
  Arena arena;
  std::string attempt(const GemmArgs& args) { return gemm::attempt(ch, args, arena.launchable()); }
  std::string context(const std::string& what) const { return std::string(ch.dir) + ": " + what; }
};

TEST_P(ChapterArguments, DeclaresSensibleAlignments) {
  const Needs n = declared_needs(ch, arena);
  const char* keys[] = {"align_a", "align_b", "align_sa", "align_sb", "align_d"};
  for (Which w : kAll) {
    const int a = n[w];
    RecordProperty(keys[int(w)], a);
    if (a == 0) continue;
    EXPECT_EQ(a & (a - 1), 0) << context(name(w) + " alignment not a power of two: ") << a;
  }
  // A and B: TMA, or one 16-byte load per thread. D: at least its bf16 element. Scales: their
  // float element when read, and read exactly when the registry says the chapter applies them.
  EXPECT_GE(n[Which::A], 16) << context("A");
  EXPECT_GE(n[Which::B], 16) << context("B");
  EXPECT_GE(n[Which::D], 2) << context("D");
  for (Which w : {Which::Sa, Which::Sb}) {
    if (ch.applies_scales) {
      EXPECT_GE(n[w], 4) << context(name(w));
    } else {
      EXPECT_EQ(n[w], 0) << context(name(w));
    }
  }
  RecordProperty("block_m", int(n.block_m));
}

TEST_P(ChapterArguments, RefusesEachNullPointer) {
  for (Which w : kAll) {
    GemmArgs args = arena.args();
    set_address(args, w, 0);
    const std::string why = attempt(args);
    if (is_scale(w) && !ch.applies_scales) {
      EXPECT_EQ(why, "") << context("null " + name(w) + " refused, though never read");
    } else {
      expect_refused(why, {"the pointer to " + name(w) + " is null"}, context("null " + name(w)));
    }
  }
  if (!ch.applies_scales) {
    GemmArgs args = arena.args();
    args.sa = nullptr;
    args.sb = nullptr;
    EXPECT_EQ(attempt(args), "") << context("both scales null");
  }
}

TEST_P(ChapterArguments, RefusesEachMisalignedPointer) {
  const Needs n = declared_needs(ch, arena);
  for (Which w : kAll)
    for (uintptr_t offset : {1, 2, 4, 8, 16, 32}) {
      GemmArgs args = arena.args();
      set_address(args, w, address(args, w) + offset);
      const std::string why = attempt(args);
      const std::string what = name(w) + " " + std::to_string(offset) + " bytes off";
      if (n[w] == 0 || offset % uintptr_t(n[w]) == 0) {
        EXPECT_EQ(why, "") << context(what + ": refused although aligned as declared");
      } else {
        expect_refused(
            why,
            {"the pointer to " + name(w) + " must be " + std::to_string(n[w]) + "-byte aligned",
             "it is " + std::to_string(offset % uintptr_t(n[w])) + " bytes past a boundary"},
            context(what));
      }
    }
}

TEST_P(ChapterArguments, RefusesDOverlappingAnInputItReads) {
  const Needs n = declared_needs(ch, arena);
  const int64_t ad = n[Which::D], db = bytes(kShape, Which::D);
  for (Which t : kInputs) {
    const int64_t tb = bytes(kShape, t);
    // D placed relative to t, every placement aligned as D needs.
    const std::pair<const char*, int64_t> overlapping[] = {
        {"D at the start of", 0},
        {"D's first bytes over the last bytes of", tb - ad},
        {"D's last bytes over the first bytes of", -(db - ad)},
        {"D spanning or inside", db >= tb ? -(db - tb) / 2 / 16 * 16 : (tb - db) / 2 / 16 * 16},
    };
    for (auto [what, offset] : overlapping) {
      if (offset % ad != 0) continue;  // cannot be placed: D would be misaligned
      GemmArgs args = arena.args();
      set_address(args, Which::D, uintptr_t(int64_t(address(args, t)) + offset));
      const std::string why = attempt(args);
      const std::string c = context(std::string(what) + " " + name(t));
      if (is_scale(t) && !ch.applies_scales) {
        EXPECT_EQ(why, "") << c << ": refused, though the chapter never reads it";
      } else {
        expect_refused(why,
                       {"D overlaps " + name(t) + ": the kernel would overwrite its own input"}, c);
      }
    }
    // Touching but not overlapping: right after t, and ending right where t starts.
    for (int64_t offset : {tb, -db}) {
      if (offset % ad != 0) continue;
      GemmArgs args = arena.args();
      set_address(args, Which::D, uintptr_t(int64_t(address(args, t)) + offset));
      EXPECT_EQ(attempt(args), "") << context("D touching " + name(t) + " at offset " +
                                              std::to_string(offset) + ": refused");
    }
  }
}

TEST_P(ChapterArguments, AcceptsInputsAliasingEachOther) {
  GemmArgs args = arena.args();
  args.b = args.a;  // B's extent is larger than A's: both stay inside A's slot
  EXPECT_EQ(attempt(args), "") << context("B = A");
  args = arena.args();
  args.sb = args.sa;
  EXPECT_EQ(attempt(args), "") << context("scale B = scale A");
}

TEST_P(ChapterArguments, ChecksTheShapeThenTheGridThenThePointers) {
  // Every pointer null: a bad shape must be reported, not the pointer.
  for (auto [shape, words] :
       {std::pair<Shape, const char*>{{64, 100, 128}, "N must be a positive multiple of 8"},
        {{64, 128, 100}, "K must be a positive multiple of 128"},
        {{0, 128, 128}, "M must be at least 1"},
        {{(int64_t(1) << 24) - 1, 8, 100}, "K must be a positive multiple of 128"}}) {
    GemmArgs args;
    args.shape = shape;
    const std::string why = attempt(args);
    expect_refused(why, {words}, context(shape.str()));
    EXPECT_EQ(why.find("null"), std::string::npos) << context(why);
  }
  const int64_t block_m = declared_block_m(ch);
  if (block_m == 0)
    GTEST_SKIP() << ch.dir << " has no grid limit on M at legal shapes (its grid does not grow "
                 << "with M): nothing to order";
  // The exact limit passes the grid check and meets the null pointer; one row more does not.
  GemmArgs args;
  args.shape = {65535 * block_m, 8, 128};
  expect_refused(attempt(args), {"the pointer to A is null"}, context(args.shape.str()));
  args.shape.m += 1;
  expect_refused(attempt(args),
                 {"M must be at most " + std::to_string(65535 * block_m),
                  "one grid row per " + std::to_string(block_m) + " rows"},
                 context(args.shape.str()));
}

INSTANTIATE_TEST_SUITE_P(All, ChapterArguments, ::testing::ValuesIn(gemm_chapter_numbers()),
                         [](const auto& info) {
                           return std::string(find_chapter(info.param)->dir);
                         });

// ---- on the GPU: real buffers --------------------------------------------------------------

// One device allocation of raw bytes and what it must hold: random bytes, then whatever was put.
class Bytes {
 public:
  Bytes(size_t count, uint64_t seed) : mem_(count), expected_(count) {
    std::mt19937_64 rng(seed);
    for (uint8_t& b : expected_) b = uint8_t(rng());
    mem_.upload(expected_);
  }
  uintptr_t at(size_t offset) const { return reinterpret_cast<uintptr_t>(mem_.get()) + offset; }
  template <class T>
  uintptr_t put(size_t offset, const std::vector<T>& host) {
    const size_t n = host.size() * sizeof(T);
    std::memcpy(expected_.data() + offset, host.data(), n);
    CUDA_CHECK(cudaMemcpy(mem_.get() + offset, host.data(), n, cudaMemcpyHostToDevice));
    return at(offset);
  }
  // D-shaped poison (kPoisonBits in every element) at offset.
  uintptr_t poison(size_t offset, int64_t elements) {
    return put(offset, std::vector<uint16_t>(size_t(elements), kPoisonBits));
  }
  std::vector<uint8_t> download() const { return mem_.download(); }
  // Bytes that differ from what was put, outside [skip_begin, skip_end).
  int64_t changed(size_t skip_begin = 0, size_t skip_end = 0) const {
    const std::vector<uint8_t> now = download();
    int64_t n = 0;
    for (size_t i = 0; i < now.size(); ++i)
      if ((i < skip_begin || i >= skip_end) && now[i] != expected_[i]) ++n;
    return n;
  }
  std::vector<uint16_t> read_d(size_t offset, int64_t elements) const {
    std::vector<uint16_t> d(static_cast<size_t>(elements));
    CUDA_CHECK(cudaMemcpy(d.data(), mem_.get() + offset, d.size() * 2, cudaMemcpyDeviceToHost));
    return d;
  }

 private:
  DeviceBuffer<uint8_t> mem_;
  std::vector<uint8_t> expected_;
};

int64_t count_poison(const std::vector<uint16_t>& d) {
  int64_t n = 0;
  for (uint16_t bits : d) n += bits == kPoisonBits;
  return n;
}

class ChapterArgumentsOnDevice : public ChapterArguments {};

TEST_P(ChapterArgumentsOnDevice, ARefusalLaunchesNothingAndLeavesTheContextHealthy) {
  SKIP_WITHOUT_HOPPER();
  const Shape s = kShape;
  const Extents e = extents(s);
  const uint64_t seed = testing::test_seed();
  const std::string where = std::string(ch.dir) + " " + s.str() + " seed " + std::to_string(seed);
  const HostProblem host = make_problem(s, seed, scales_for(ch));
  const DeviceProblem dev(host);
  const Needs n = declared_needs(ch, arena);
  Bytes buf(10 * kSlot, seed);

  struct Case {
    std::string what;
    GemmArgs args;
    std::string words;
  };
  std::vector<Case> cases;
  const GemmArgs good = dev.args();
  auto with = [&](Which w, uintptr_t p) {
    GemmArgs args = good;
    set_address(args, w, p);
    return args;
  };
  // An input half its alignment past a boundary of its own allocation (A 8 bytes past a 16-byte
  // boundary, for a chapter that loads A by TMA).
  for (Which w : kInputs) {
    if (n[w] < 2) continue;
    const size_t off = size_t(int(w) + 1) * kSlot + size_t(n[w] / 2);
    const uintptr_t p = w == Which::A   ? buf.put(off, host.a)
                        : w == Which::B ? buf.put(off, host.b)
                                        : buf.put(off, w == Which::Sa ? host.sa : host.sb);
    cases.push_back({name(w) + " " + std::to_string(n[w] / 2) + " bytes past a boundary",
                     with(w, p), "the pointer to " + name(w) + " must be"});
  }
  // D one byte off, in poisoned memory of its own.
  cases.push_back({"D one byte past a boundary",
                   with(Which::D, buf.poison(5 * kSlot, s.m * s.n) + 1),
                   "the pointer to D must be"});
  // D on top of each input it reads: at its start, and D's last bytes over its first.
  const uintptr_t a6 = buf.put(6 * kSlot, host.a), b7 = buf.put(7 * kSlot, host.b);
  const uintptr_t sa8 = buf.put(8 * kSlot, host.sa), sb9 = buf.put(9 * kSlot, host.sb);
  {
    GemmArgs args = with(Which::A, a6);
    args.d = reinterpret_cast<__nv_bfloat16*>(a6);
    cases.push_back({"D = A", args, "D overlaps A"});
    args.d = reinterpret_cast<__nv_bfloat16*>(a6 - uintptr_t(e.d) + 16);
    cases.push_back({"D's last 16 bytes over A's first", args, "D overlaps A"});
    args = with(Which::B, b7);
    args.d = reinterpret_cast<__nv_bfloat16*>(b7 + uintptr_t(e.b) - 16);
    cases.push_back({"D's first 16 bytes over B's last", args, "D overlaps B"});
    if (ch.applies_scales) {
      args = with(Which::Sa, sa8);
      args.d = reinterpret_cast<__nv_bfloat16*>(sa8);
      cases.push_back({"D = scale A", args, "D overlaps scale A"});
      args = with(Which::Sb, sb9);
      args.d = reinterpret_cast<__nv_bfloat16*>(sb9);
      cases.push_back({"D = scale B", args, "D overlaps scale B"});
    }
  }
  cases.push_back({"A null", with(Which::A, 0), "the pointer to A is null"});

  for (const Case& c : cases) {
    dev.poison();
    CUDA_CHECK(cudaDeviceSynchronize());
    try {
      ch.launch(c.args, nullptr);
      ADD_FAILURE() << where << ", " << c.what << ": accepted";
    } catch (const UnsupportedError& err) {
      EXPECT_NE(std::string(err.what()).find(c.words), std::string::npos)
          << where << ", " << c.what << ": " << err.what();
    }
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << where << ", " << c.what;
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << where << ", " << c.what;
    const std::vector<uint16_t> d = dev.download_d();
    EXPECT_EQ(count_poison(d), int64_t(d.size())) << where << ", " << c.what << ": D written";
    EXPECT_EQ(buf.changed(), 0) << where << ", " << c.what << ": bytes changed around the inputs";
  }

  // The context is healthy: the next correct run passes.
  testing::expect_matches_reference(
      check_against_reference(host, run_and_download(ch, dev), ch.tolerance(s), kCpuReferenceMacs),
      ch.max_rel_diff, where + ", after the refusals");
}

TEST_P(ChapterArgumentsOnDevice, RunsOnTensorsPlacedExactlyAsDeclaredWritingOnlyD) {
  SKIP_WITHOUT_HOPPER();
  const Shape s = kShape;
  const Extents e = extents(s);
  const uint64_t seed = testing::test_seed();
  const std::string where = std::string(ch.dir) + " " + s.str() + " seed " + std::to_string(seed);
  const HostProblem host = make_problem(s, seed, scales_for(ch));
  const DeviceProblem dev(host);
  const std::vector<uint16_t> want = run_and_download(ch, dev);
  testing::expect_matches_reference(
      check_against_reference(host, want, ch.tolerance(s), kCpuReferenceMacs), ch.max_rel_diff,
      where + ", ordinary placement");
  const Needs n = declared_needs(ch, arena);
  auto aligned_only_to = [](int align) { return size_t(align > 0 ? align : 4); };

  auto run_and_check = [&](const GemmArgs& args, const Bytes& buf, size_t d_off,
                           const std::string& what) {
    ch.launch(args, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<uint16_t> got = buf.read_d(d_off, s.m * s.n);
    EXPECT_EQ(count_poison(got), 0) << where << ", " << what << ": elements of D never written";
    EXPECT_EQ(count_bit_differences(got, want), 0)
        << where << ", " << what << ": D differs from the ordinary placement";
    EXPECT_EQ(buf.changed(d_off, d_off + size_t(e.d)), 0)
        << where << ", " << what << ": bytes outside D written";
  };

  {  // Each tensor at exactly its declared alignment (at an odd multiple of it), in one allocation.
    Bytes buf(6 * kSlot, seed);
    GemmArgs args;
    args.shape = s;
    const size_t oa = 1 * kSlot + aligned_only_to(n[Which::A]);
    const size_t ob = 2 * kSlot + aligned_only_to(n[Which::B]);
    const size_t osa = 3 * kSlot + aligned_only_to(n[Which::Sa]);
    const size_t osb = 4 * kSlot + aligned_only_to(n[Which::Sb]);
    const size_t od = 5 * kSlot + aligned_only_to(n[Which::D]);
    set_address(args, Which::A, buf.put(oa, host.a));
    set_address(args, Which::B, buf.put(ob, host.b));
    set_address(args, Which::Sa, buf.put(osa, host.sa));
    set_address(args, Which::Sb, buf.put(osb, host.sb));
    set_address(args, Which::D, buf.poison(od, s.m * s.n));
    run_and_check(args, buf, od, "every tensor at exactly its declared alignment");
  }
  {  // D between A and B, touching both: A ends where D starts, B starts where D ends.
    Bytes buf(2 * kSlot, seed + 1);
    GemmArgs args = dev.args();
    const size_t oa = kSlot / 2, od = oa + size_t(e.a), ob = od + size_t(e.d);
    ASSERT_EQ(od % 16, 0u);
    ASSERT_EQ(ob % 16, 0u);
    set_address(args, Which::A, buf.put(oa, host.a));
    set_address(args, Which::D, buf.poison(od, s.m * s.n));
    set_address(args, Which::B, buf.put(ob, host.b));
    run_and_check(args, buf, od, "D touching A before it and B after it");
  }
  if (!ch.applies_scales) {  // scales it never reads: null, or under D
    GemmArgs args = dev.args();
    args.sa = nullptr;
    args.sb = nullptr;
    dev.poison();
    ch.launch(args, nullptr);
    EXPECT_EQ(count_bit_differences(dev.download_d(), want), 0) << where << ", null scales";
    args.sa = reinterpret_cast<const float*>(args.d);
    args.sb = reinterpret_cast<const float*>(args.d);
    dev.poison();
    ch.launch(args, nullptr);
    EXPECT_EQ(count_bit_differences(dev.download_d(), want), 0) << where << ", scales under D";
  }
}

INSTANTIATE_TEST_SUITE_P(All, ChapterArgumentsOnDevice, ::testing::ValuesIn(gemm_chapter_numbers()),
                         [](const auto& info) {
                           return std::string(find_chapter(info.param)->dir);
                         });

}  // namespace
}  // namespace gemm
