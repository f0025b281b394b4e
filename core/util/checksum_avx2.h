// checksum64's XXH3 compiled for AVX2 (x86 with GCC or Clang only).
//
// Thread-safety: a pure function.
#ifndef VLD_CORE_UTIL_CHECKSUM_AVX2_H_
#define VLD_CORE_UTIL_CHECKSUM_AVX2_H_

#include <cstddef>
#include <cstdint>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define VLD_CHECKSUM_AVX2 1
#else
#define VLD_CHECKSUM_AVX2 0
#endif

namespace vld {

#if VLD_CHECKSUM_AVX2
// XXH3_64bits_withSeed(data, len, seed). REQUIRES: the CPU has AVX2.
uint64_t checksum64_avx2(const void* data, size_t len, uint64_t seed);
#endif

}  // namespace vld

#endif  // VLD_CORE_UTIL_CHECKSUM_AVX2_H_
