// checksum64's XXH3 compiled for AVX2: on x86, where core/CMakeLists.txt
// defines VLD_CHECKSUM_AVX2 and compiles checksum_avx2.cc with -mavx2.
//
// Thread-safety: a pure function.
#ifndef VLD_CORE_UTIL_CHECKSUM_AVX2_H_
#define VLD_CORE_UTIL_CHECKSUM_AVX2_H_

#include <cstddef>
#include <cstdint>

#ifndef VLD_CHECKSUM_AVX2
#define VLD_CHECKSUM_AVX2 0
#endif

namespace vld {

#if VLD_CHECKSUM_AVX2
// XXH3_64bits_withSeed(data, len, seed). REQUIRES: the CPU has AVX2.
uint64_t checksum64_avx2(const void* data, size_t len, uint64_t seed);
#endif

}  // namespace vld

#endif  // VLD_CORE_UTIL_CHECKSUM_AVX2_H_
