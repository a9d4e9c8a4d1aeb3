// The pre-launch check of common/arguments.hpp, without a GPU: every refusal (null, misaligned or
// overlapping pointers, a grid too tall, an illegal shape) names the argument and the constraint,
// nothing legal is refused (adjacent tensors, inputs aliasing each other, tensors a kernel does not
// read), and the checks come in their documented order: shape, grid, pointers, device. A kernel
// that is handed something it cannot take must say so in words before anything is launched; these
// are the words. The pointers are made-up addresses, never dereferenced.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "common/arguments.hpp"
#include "common/check.hpp"
#include "common/problem.hpp"
#include "common/reference.hpp"
#include "tests/tensors.hpp"

namespace gemm {
namespace {

// A ragged shape: M not a multiple of 4 (sA is padded), N not a multiple of 128, 4 K blocks.
constexpr Shape kShape{100, 264, 512};

// Where each tensor lives: far apart, every one 4 KiB aligned.
constexpr uintptr_t kAddrA = 0x1000'0000, kAddrB = 0x2000'0000, kAddrSa = 0x3000'0000,
                    kAddrSb = 0x4000'0000, kAddrD = 0x5000'0000;

template <class T>
T* at(uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

GemmArgs good_args(const Shape& s = kShape) {
  GemmArgs args;
  args.shape = s;
  args.a = at<const __nv_fp8_e4m3>(kAddrA);
  args.b = at<const __nv_fp8_e4m3>(kAddrB);
  args.sa = at<const float>(kAddrSa);
  args.sb = at<const float>(kAddrSb);
  args.d = at<__nv_bfloat16>(kAddrD);
  return args;
}

// What the kernels ask, as the chapters do: one that reads the scales (chapter 00's needs) and one
// that does not (chapters 02-05: the unscaled product).
constexpr KernelNeeds kReadsScales{.who = "test kernel",
                                   .align_a = 16,
                                   .align_b = 16,
                                   .align_sa = 4,
                                   .align_sb = 4,
                                   .align_d = 2,
                                   .block_m = 8,
                                   .block_n = 32};
constexpr KernelNeeds kSkipsScales{.who = "test kernel",
                                   .align_a = 16,
                                   .align_b = 16,
                                   .align_sa = 0,
                                   .align_sb = 0,
                                   .align_d = 4,
                                   .block_m = 128,
                                   .block_n = 128};

using namespace tensors;

int& alignment(KernelNeeds& needs, Which w) {
  switch (w) {
    case Which::A:
      return needs.align_a;
    case Which::B:
      return needs.align_b;
    case Which::Sa:
      return needs.align_sa;
    case Which::Sb:
      return needs.align_sb;
    case Which::D:
      break;
  }
  return needs.align_d;
}

// Every word must appear in the message; the failure shows the whole message.
void expect_words(const std::string& what, std::initializer_list<std::string> words,
                  const std::string& context) {
  EXPECT_FALSE(what.empty()) << context << ": accepted";
  for (const std::string& w : words)
    EXPECT_NE(what.find(w), std::string::npos)
        << context << ": the message lacks \"" << w << "\": " << what;
}

// ---- extents -------------------------------------------------------------------------------

TEST(Extents, BytesOfEachTensorInItsLayout) {
  const Extents e = extents(kShape);
  EXPECT_EQ(e.a, 100 * 512);      // fp8, M x K
  EXPECT_EQ(e.b, 264 * 512);      // fp8, N x K
  EXPECT_EQ(e.sa, 100 * 4 * 4);   // fp32, sa_ld (100) x 4 K blocks
  EXPECT_EQ(e.sb, 3 * 4 * 4);     // fp32, 3 N blocks (264 = 2 x 128 + 8) x 4 K blocks
  EXPECT_EQ(e.d, 100 * 264 * 2);  // bf16, M x N
  const Extents odd = extents({5, 136, 384});
  EXPECT_EQ(odd.sa, 8 * 3 * 4);  // M = 5 padded to 8 rows
  EXPECT_EQ(odd.sb, 2 * 3 * 4);
}

// ---- pointers ------------------------------------------------------------------------------

TEST(PointerError, LegalArgumentsAreAccepted) {
  EXPECT_EQ(pointer_error(good_args(), kReadsScales), "");
  EXPECT_EQ(pointer_error(good_args(), kSkipsScales), "");
  EXPECT_EQ(pointer_error(good_args({1, 8, 128}), kReadsScales), "");
}

TEST(PointerError, EachNullPointerIsNamed) {
  for (const KernelNeeds& needs : {kReadsScales, kSkipsScales})
    for (Which w : kAll) {
      GemmArgs args = good_args();
      set_address(args, w, 0);
      KernelNeeds n = needs;
      const std::string why = pointer_error(args, needs);
      const std::string context = std::string("null ") + name(w);
      if (alignment(n, w) == 0) {
        EXPECT_EQ(why, "") << context << " refused although the kernel does not read it";
      } else {
        EXPECT_EQ(why, std::string("test kernel: the pointer to ") + name(w) + " is null")
            << context;
      }
    }
}

TEST(PointerError, EachMisalignedPointerIsNamedWithItsAlignmentAndOffset) {
  for (Which w : kAll)
    for (int align : {1, 2, 4, 8, 16, 32})
      for (uintptr_t offset : {1, 2, 4, 8, 16, 24, 48}) {
        KernelNeeds needs = kReadsScales;
        alignment(needs, w) = align;
        GemmArgs args = good_args();
        set_address(args, w, address(args, w) + offset);
        const std::string why = pointer_error(args, needs);
        const std::string context = std::string(name(w)) + " " + std::to_string(offset) +
                                    " bytes past a boundary, needing " + std::to_string(align);
        if (offset % uintptr_t(align) == 0) {
          EXPECT_EQ(why, "") << context;
        } else {
          expect_words(
              why,
              {std::string("test kernel: the pointer to ") + name(w) + " must be " +
                   std::to_string(align) + "-byte aligned",
               "it is " + std::to_string(offset % uintptr_t(align)) + " bytes past a boundary"},
              context);
        }
      }
}

TEST(PointerError, OneTwoAndEightBytesOffAgainstTheChaptersNeeds) {
  // The brief of every chapter so far: A and B 16 bytes (TMA or one 16-byte load); D 2 or 4.
  for (const KernelNeeds& needs : {kReadsScales, kSkipsScales})
    for (Which w : kAll)
      for (uintptr_t offset : {1, 2, 8}) {
        KernelNeeds n = needs;
        const int align = alignment(n, w);
        if (align == 0) continue;
        GemmArgs args = good_args();
        set_address(args, w, address(args, w) + offset);
        const std::string why = pointer_error(args, needs);
        const std::string context = std::string(name(w)) + " + " + std::to_string(offset);
        if (offset % uintptr_t(align) == 0) {
          EXPECT_EQ(why, "") << context;
        } else {
          expect_words(why, {std::string("pointer to ") + name(w), "aligned"}, context);
        }
      }
}

// D placed relative to one input T: the cases that overlap, with D aligned to 1 byte so that a
// single shared byte can be tested.
struct Placement {
  const char* what;
  int64_t d_offset;  // D's start minus T's start
};

std::vector<Placement> overlapping(int64_t t_bytes, int64_t d_bytes) {
  std::vector<Placement> v = {
      {"D starts where T starts", 0},
      {"D's first byte is T's last byte", t_bytes - 1},
      {"D's last byte is T's first byte", -(d_bytes - 1)},
      {"D starts inside T", t_bytes / 2},
  };
  if (d_bytes >= t_bytes)
    v.push_back({"D contains T", -(d_bytes - t_bytes) / 2});
  else
    v.push_back({"T contains D", (t_bytes - d_bytes) / 2});
  return v;
}

TEST(PointerError, DOverlappingEachInputIsRefused) {
  for (Which t : kInputs)
    for (const Shape& s : {kShape, Shape{1, 8, 128}, Shape{300, 1032, 1536}})
      for (const Placement& p : overlapping(bytes(s, t), bytes(s, Which::D))) {
        KernelNeeds needs = kReadsScales;
        needs.align_d = 1;
        GemmArgs args = good_args(s);
        set_address(args, Which::D, uintptr_t(int64_t(address(args, t)) + p.d_offset));
        const std::string context = std::string(p.what) + ", T = " + name(t) + ", " + s.str();
        EXPECT_EQ(pointer_error(args, needs), std::string("test kernel: D overlaps ") + name(t) +
                                                  ": the kernel would overwrite its own input")
            << context;
      }
}

TEST(PointerError, DOverlappingAnInputByItsAlignmentIsRefused) {
  // With D 4-byte aligned, the smallest overlaps are 4 bytes at either end of the input.
  for (Which t : kInputs) {
    KernelNeeds needs = kReadsScales;
    needs.align_d = 4;
    const int64_t tb = bytes(kShape, t), db = bytes(kShape, Which::D);
    for (int64_t offset : {tb - 4, -(db - 4)}) {
      GemmArgs args = good_args();
      set_address(args, Which::D, uintptr_t(int64_t(address(args, t)) + offset));
      expect_words(pointer_error(args, needs), {std::string("D overlaps ") + name(t)},
                   std::string(name(t)) + " offset " + std::to_string(offset));
    }
  }
}

TEST(PointerError, DAdjacentToAnInputIsAccepted) {
  for (Which t : kInputs)
    for (const Shape& s : {kShape, Shape{1, 8, 128}, Shape{300, 1032, 1536}}) {
      KernelNeeds needs = kReadsScales;
      needs.align_d = 1;
      for (int64_t offset : {bytes(s, t), -bytes(s, Which::D)}) {  // right after, right before
        GemmArgs args = good_args(s);
        set_address(args, Which::D, uintptr_t(int64_t(address(args, t)) + offset));
        EXPECT_EQ(pointer_error(args, needs), "")
            << "D " << offset << " bytes from " << name(t) << ", " << s.str();
      }
    }
}

TEST(PointerError, AnInputNotReadMayBeNullOrUnderD) {
  for (Which t : kInputs) {
    KernelNeeds needs = kReadsScales;
    alignment(needs, t) = 0;  // this kernel does not read t
    GemmArgs null_args = good_args();
    set_address(null_args, t, 0);
    EXPECT_EQ(pointer_error(null_args, needs), "") << name(t) << " null";
    GemmArgs misaligned = good_args();
    set_address(misaligned, t, address(misaligned, t) + 1);
    EXPECT_EQ(pointer_error(misaligned, needs), "") << name(t) << " misaligned";
    GemmArgs under_d = good_args();
    set_address(under_d, t, address(under_d, Which::D));
    EXPECT_EQ(pointer_error(under_d, needs), "") << name(t) << " at D";
  }
  // The chapters that compute the unscaled product: both scales null, or both scales inside D.
  GemmArgs args = good_args();
  args.sa = nullptr;
  args.sb = nullptr;
  EXPECT_EQ(pointer_error(args, kSkipsScales), "");
  args.sa = reinterpret_cast<const float*>(args.d);
  args.sb = reinterpret_cast<const float*>(args.d) + 8;
  EXPECT_EQ(pointer_error(args, kSkipsScales), "");
}

TEST(PointerError, InputsMayAliasEachOther) {
  // Inputs are only read: the same bytes may serve as A and B, or as both scales.
  GemmArgs args = good_args();
  args.b = args.a;
  args.sb = args.sa;
  EXPECT_EQ(pointer_error(args, kReadsScales), "");
  args.sa = reinterpret_cast<const float*>(args.a);
  EXPECT_EQ(pointer_error(args, kReadsScales), "");
}

TEST(PointerError, NullComesBeforeMisalignedAndOverlapLast) {
  // Tensors in the order A, B, scale A, scale B, D for null and alignment; overlaps after all.
  GemmArgs args = good_args();
  args.a = nullptr;
  args.b = at<const __nv_fp8_e4m3>(kAddrB + 1);
  args.d = at<__nv_bfloat16>(kAddrSa);
  expect_words(pointer_error(args, kReadsScales), {"the pointer to A is null"}, "A null first");
  args.a = at<const __nv_fp8_e4m3>(kAddrA);
  expect_words(pointer_error(args, kReadsScales), {"the pointer to B must be 16-byte aligned"},
               "then B misaligned");
  args.b = at<const __nv_fp8_e4m3>(kAddrB);
  expect_words(pointer_error(args, kReadsScales), {"D overlaps scale A"}, "then the overlap");
}

// ---- the grid ------------------------------------------------------------------------------

TEST(GridError, ExactBoundaryAcceptedOneRowMoreRefused) {
  for (int64_t block_m : {8, 64, 128, 256})
    for (int64_t block_n : {32, 128, 256}) {
      const int64_t limit = 65535 * block_m;
      const std::string context =
          "block " + std::to_string(block_m) + " x " + std::to_string(block_n);
      EXPECT_EQ(grid_error({limit, 8, 128}, block_m, block_n, "chapter 99"), "") << context;
      EXPECT_EQ(grid_error({limit - block_m + 1, 8, 128}, block_m, block_n, "chapter 99"), "")
          << context;
      const Shape over{limit + 1, 8, 128};
      EXPECT_EQ(grid_error(over, block_m, block_n, "chapter 99"),
                "chapter 99: M must be at most " + std::to_string(limit) + " (one grid row per " +
                    std::to_string(block_m) + " rows of D; got " + over.str() + ")")
          << context;
    }
}

TEST(GridError, NoLimitWithoutATileGrid) {
  // block_m = 0: a grid that does not map tiles to blocks (a persistent kernel).
  EXPECT_EQ(grid_error({16'777'215, 8, 128}, 0, 0, "chapter 99"), "");
  EXPECT_EQ(grid_error({16'777'215, 8, 128}, 0, 128, "chapter 99"), "");
}

// ---- K -------------------------------------------------------------------------------------

TEST(KError, TheLimitAcceptedOneBlockMoreRefused) {
  EXPECT_EQ(k_error({64, 128, kMaxKUnpromoted}, kMaxKUnpromoted, "chapter 99"), "");
  const Shape over{64, 128, kMaxKUnpromoted + 128};
  expect_words(k_error(over, kMaxKUnpromoted, "chapter 99"),
               {"chapter 99: K must be at most " + std::to_string(kMaxKUnpromoted),
                "tensor core's accumulator", "chapter 06", over.str()},
               "one K block over");
  // 0: no limit, up to the largest K the shape allows (N = 8: 2^28 - 128).
  EXPECT_EQ(k_error({1, 8, (int64_t(1) << 28) - 128}, 0, "chapter 99"), "");
}

// ---- check_arguments: the order --------------------------------------------------------------

// What check_arguments throws, or "" when it throws nothing.
std::string refusal(const GemmArgs& args, const KernelNeeds& needs) {
  try {
    check_arguments(args, needs);
  } catch (const UnsupportedError& e) {
    return e.what();
  }
  return "";
}

TEST(CheckArguments, ABadShapeComesBeforeANullPointer) {
  GemmArgs args;  // every pointer null
  for (auto [shape, words] : {std::pair<Shape, const char*>{{64, 100, 128}, "N must be"},
                              {{64, 128, 100}, "K must be a positive multiple of 128"},
                              {{0, 128, 128}, "M must be at least 1"}}) {
    args.shape = shape;
    for (const KernelNeeds& needs : {kReadsScales, kSkipsScales}) {
      const std::string why = refusal(args, needs);
      expect_words(why, {"test kernel: ", words}, shape.str());
      EXPECT_EQ(why.find("null"), std::string::npos) << why;
    }
  }
}

TEST(CheckArguments, ABadShapeComesBeforeATooTallGrid) {
  GemmArgs args = good_args({65535 * 128 + 1, 128, 100});  // a grid too tall and K illegal
  expect_words(refusal(args, kSkipsScales), {"K must be a positive multiple of 128"}, "K first");
}

TEST(CheckArguments, KAfterTheShapeBeforeTheGridAndThePointers) {
  // (No shape with K over the limit is tall enough for a grid refusal: M x K stays below 2^31.)
  KernelNeeds needs = kSkipsScales;
  needs.max_k = kMaxKUnpromoted;
  GemmArgs args;  // every pointer null, K over the limit
  args.shape = {64, 8, kMaxKUnpromoted + 128};
  expect_words(refusal(args, needs), {"test kernel: K must be at most"}, "K before null A");
  args.shape.n = 100;  // and N illegal: the shape comes first
  expect_words(refusal(args, needs), {"test kernel: N must be"}, "the shape before K");
}

TEST(CheckArguments, ATooTallGridComesBeforeANullPointer) {
  for (const KernelNeeds& needs : {kReadsScales, kSkipsScales}) {
    GemmArgs args;  // every pointer null
    args.shape = {65535 * needs.block_m + 1, 8, 128};
    expect_words(refusal(args, needs),
                 {"test kernel: M must be at most " + std::to_string(65535 * needs.block_m)},
                 args.shape.str());
    args.shape.m = 65535 * needs.block_m;  // the exact limit passes the grid, then meets null A
    EXPECT_EQ(refusal(args, needs), "test kernel: the pointer to A is null") << args.shape.str();
  }
}

TEST(CheckArguments, PointersComeBeforeTheDevice) {
  // Checked here whatever the machine: a pointer refusal never depends on the device.
  GemmArgs args = good_args();
  args.d = reinterpret_cast<__nv_bfloat16*>(const_cast<__nv_fp8_e4m3*>(args.a));
  EXPECT_EQ(refusal(args, kReadsScales),
            "test kernel: D overlaps A: the kernel would overwrite its own input");
}

TEST(CheckArguments, LegalArgumentsMeetOnlyTheDeviceCheck) {
  // Without an sm_90 GPU (CI) the device check refuses with its own sentence; on a Hopper GPU
  // nothing is refused.
  const std::string device = device_error();
  for (const KernelNeeds& needs : {kReadsScales, kSkipsScales})
    EXPECT_EQ(refusal(good_args(), needs), device.empty() ? "" : "test kernel: " + device);
  EXPECT_EQ(device_error(), device) << "asked twice, answered differently";
}

}  // namespace
}  // namespace gemm
