// Little-endian fixed-width encoding for on-disk structures (LevelDB style):
// on-disk formats are written field by field, never by copying a struct.
//
// Thread-safety: pure functions.
#ifndef VLD_CORE_UTIL_CODING_H_
#define VLD_CORE_UTIL_CODING_H_

#include <bit>
#include <cstdint>
#include <cstring>

namespace vld {

// On a little-endian host the bytes are the value's own: one store or
// load (as LevelDB's coding does). Written byte by byte, GCC -O2 emits a
// store per byte, and every map sector written encodes some seventy fields.
inline void encode_fixed32(unsigned char* dst, uint32_t v) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(dst, &v, sizeof v);
    return;
  }
  for (int i = 0; i < 4; ++i) dst[i] = static_cast<unsigned char>(v >> (8 * i));
}
inline void encode_fixed64(unsigned char* dst, uint64_t v) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(dst, &v, sizeof v);
    return;
  }
  for (int i = 0; i < 8; ++i) dst[i] = static_cast<unsigned char>(v >> (8 * i));
}
inline uint32_t decode_fixed32(const unsigned char* src) {
  uint32_t v = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&v, src, sizeof v);
    return v;
  }
  for (int i = 0; i < 4; ++i) v |= uint32_t{src[i]} << (8 * i);
  return v;
}
inline uint64_t decode_fixed64(const unsigned char* src) {
  uint64_t v = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&v, src, sizeof v);
    return v;
  }
  for (int i = 0; i < 8; ++i) v |= uint64_t{src[i]} << (8 * i);
  return v;
}
inline void encode_double(unsigned char* dst, double d) {
  encode_fixed64(dst, std::bit_cast<uint64_t>(d));
}
inline double decode_double(const unsigned char* src) {
  return std::bit_cast<double>(decode_fixed64(src));
}

}  // namespace vld

#endif  // VLD_CORE_UTIL_CODING_H_
