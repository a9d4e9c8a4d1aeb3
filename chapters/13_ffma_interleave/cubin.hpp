// Chapter 13's reader of a cubin: the ELF file `nvcc -cubin` writes, one `.text.<kernel>` section of
// SASS per kernel. Only what the decoder needs: the sections by name, read from the file's bytes.
// Plain C++ (tests/host_chapter13.cpp). ELF64 little-endian, as nvcc writes for sm_90a.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "chapters/13_ffma_interleave/control_bits.hpp"

namespace ch13 {

struct Section {
  std::string name;
  uint64_t offset = 0, size = 0;  // within the file
};

struct Cubin {
  std::vector<uint8_t> bytes;
  std::vector<Section> sections;

  // The kernels' code sections, ".text.<mangled name>".
  std::vector<Section> kernels() const {
    std::vector<Section> out;
    for (const Section& s : sections)
      if (s.name.rfind(".text.", 0) == 0) out.push_back(s);
    return out;
  }

  // Instruction i of a code section.
  Instruction instruction(const Section& s, uint64_t i) const {
    Instruction in;
    std::memcpy(&in.lo, bytes.data() + s.offset + 16 * i, 8);
    std::memcpy(&in.hi, bytes.data() + s.offset + 16 * i + 8, 8);
    return in;
  }
  void set_instruction(const Section& s, uint64_t i, const Instruction& in) {
    std::memcpy(bytes.data() + s.offset + 16 * i, &in.lo, 8);
    std::memcpy(bytes.data() + s.offset + 16 * i + 8, &in.hi, 8);
  }
};

namespace detail {
template <typename T>
T read(const std::vector<uint8_t>& b, uint64_t at, const char* what) {
  if (at + sizeof(T) > b.size())
    throw std::runtime_error(std::string("cubin: truncated file (reading ") + what + ")");
  T v;
  std::memcpy(&v, b.data() + at, sizeof(T));
  return v;
}
}  // namespace detail

// Parses the section table of a cubin held in memory; throws std::runtime_error with a sentence
// on anything that is not a 64-bit little-endian ELF with a consistent section table.
inline Cubin parse_cubin(std::vector<uint8_t> bytes) {
  using detail::read;
  Cubin c;
  c.bytes = std::move(bytes);
  const std::vector<uint8_t>& b = c.bytes;
  if (b.size() < 64 || std::memcmp(b.data(),
                                   "\x7f"
                                   "ELF",
                                   4) != 0)
    throw std::runtime_error("cubin: not an ELF file");
  if (b[4] != 2 || b[5] != 1) throw std::runtime_error("cubin: not a 64-bit little-endian ELF");
  const uint64_t shoff = read<uint64_t>(b, 0x28, "e_shoff");
  const uint16_t shentsize = read<uint16_t>(b, 0x3a, "e_shentsize");
  const uint16_t shnum = read<uint16_t>(b, 0x3c, "e_shnum");
  const uint16_t shstrndx = read<uint16_t>(b, 0x3e, "e_shstrndx");
  if (shentsize != 64 || shstrndx >= shnum || shoff + uint64_t(shnum) * 64 > b.size())
    throw std::runtime_error("cubin: inconsistent section table");
  const auto header = [&](int i) { return shoff + uint64_t(i) * 64; };
  const uint64_t names = read<uint64_t>(b, header(shstrndx) + 0x18, "sh_offset");
  const uint64_t names_size = read<uint64_t>(b, header(shstrndx) + 0x20, "sh_size");
  if (names + names_size > b.size()) throw std::runtime_error("cubin: section names out of range");
  for (int i = 0; i < shnum; ++i) {
    const uint32_t name = read<uint32_t>(b, header(i), "sh_name");
    Section s;
    s.offset = read<uint64_t>(b, header(i) + 0x18, "sh_offset");
    s.size = read<uint64_t>(b, header(i) + 0x20, "sh_size");
    if (name >= names_size) throw std::runtime_error("cubin: section name out of range");
    const char* p = reinterpret_cast<const char*>(b.data() + names + name);
    s.name.assign(p, strnlen(p, names_size - name));
    const uint32_t type = read<uint32_t>(b, header(i) + 4, "sh_type");
    const bool has_bytes = type != 8;  // SHT_NOBITS occupies no file bytes
    if (has_bytes && s.offset + s.size > b.size())
      throw std::runtime_error("cubin: section " + s.name + " out of range");
    if (s.name.rfind(".text.", 0) == 0 && s.size % 16 != 0)
      throw std::runtime_error("cubin: code section " + s.name + " is not whole instructions");
    c.sections.push_back(s);
  }
  return c;
}

inline std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

}  // namespace ch13
