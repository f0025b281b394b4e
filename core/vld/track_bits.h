// Bitmaps of one revolution of a track, read round it as the head meets
// them: from any bit to the last, then on from bit 0.
//
// FreeSpaceMap keeps each track's used sectors and its run starts this way
// (bit s: sector s); CylinderStarts keeps a cylinder's run starts by
// angular slot (bit a: slot a), also one revolution. Every function takes
// the revolution's length in bits (spt) and never reads a word past the one
// holding bit spt - 1.
//
// Inline: the allocator's searches ask this of every track they look at.
#ifndef VLD_CORE_VLD_TRACK_BITS_H_
#define VLD_CORE_VLD_TRACK_BITS_H_

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>

namespace vld {

namespace track_bits {

// Where a search round the bitmap first met a set bit: its position, and
// how many positions it passed before it.
struct Hit {
  uint32_t at;
  uint32_t skipped;
};

// The first set bit at [begin, end) of words (of their complements if
// invert), or nullopt. REQUIRES: begin < end.
inline std::optional<uint32_t> first_set(const uint64_t* words, bool invert, uint32_t begin,
                                         uint32_t end) {
  const uint64_t flip = invert ? ~uint64_t{0} : 0;
  const uint32_t last = (end - 1) / 64;
  uint32_t w = begin / 64;
  uint64_t bits = (words[w] ^ flip) & (~uint64_t{0} << (begin % 64));
  while (bits == 0) {
    if (w == last) return std::nullopt;
    bits = words[++w] ^ flip;
  }
  const uint32_t s = w * 64 + static_cast<uint32_t>(std::countr_zero(bits));
  if (s >= end) return std::nullopt;  // only in the last word
  return s;
}

// The first set bit (of the complements if invert) met within `span` bits
// going round from `from`. REQUIRES: from < spt, 1 <= span <= spt.
inline std::optional<Hit> first_in_window(const uint64_t* words, bool invert, uint32_t spt,
                                          uint32_t from, uint32_t span) {
  const uint32_t to_end = std::min(span, spt - from);
  if (auto s = first_set(words, invert, from, from + to_end)) return Hit{*s, *s - from};
  if (span > to_end)
    if (auto s = first_set(words, invert, 0, span - to_end)) return Hit{*s, *s + spt - from};
  return std::nullopt;
}

// Bits [from, from + n) round the bitmap, as the low n bits of the result.
// REQUIRES: from < spt, 0 < n <= min(64, spt).
inline uint64_t cyclic_bits(const uint64_t* w, uint32_t spt, uint32_t from, uint32_t n) {
  auto linear = [w](uint32_t at, uint32_t k) {  // k <= 64 bits from `at`, no wrap
    uint64_t v = w[at / 64] >> (at % 64);
    if (at % 64 != 0 && at % 64 + k > 64) v |= w[at / 64 + 1] << (64 - at % 64);
    return k == 64 ? v : v & ((uint64_t{1} << k) - 1);
  };
  const uint32_t to_end = std::min(n, spt - from);
  uint64_t v = linear(from, to_end);
  if (n > to_end) v |= linear(0, n - to_end) << to_end;
  return v;
}

// Bits [from, from + n) round the bitmap set to the low n bits of v.
// REQUIRES: from < spt, 0 < n <= min(64, spt).
inline void set_cyclic_bits(uint64_t* w, uint32_t spt, uint32_t from, uint32_t n, uint64_t v) {
  auto linear = [w](uint32_t at, uint32_t k, uint64_t bits) {  // k <= 64, no wrap
    const uint64_t ones = k == 64 ? ~uint64_t{0} : (uint64_t{1} << k) - 1;
    const uint32_t b = at % 64;
    w[at / 64] = (w[at / 64] & ~(ones << b)) | (bits & ones) << b;
    if (b != 0 && b + k > 64)
      w[at / 64 + 1] = (w[at / 64 + 1] & ~(ones >> (64 - b))) | (bits & ones) >> (64 - b);
  };
  const uint32_t to_end = std::min(n, spt - from);
  linear(from, to_end, v);
  if (n > to_end) linear(0, n - to_end, v >> to_end);
}

}  // namespace track_bits

}  // namespace vld

#endif  // VLD_CORE_VLD_TRACK_BITS_H_
