// XXH3-64 compiled for AVX2, which the portable build does not assume:
// checksum64 calls it on CPUs that have AVX2, asked once. XXH3's value is
// defined whatever the instructions computing it (xxhash's own dispatch
// relies on that), so images and checksums are the same either way; a
// whole 4 KiB block takes about a third of the instructions (every write
// hashes its blocks). This file is compiled with -mavx2 and holds only
// xxhash (all static with XXH_INLINE_ALL) and the one function below: no
// inline function it emits can be shared with, and chosen for, the rest
// of the program.
#include "core/util/checksum_avx2.h"

#if VLD_CHECKSUM_AVX2
#define XXH_INLINE_ALL
#define XXH_VECTOR XXH_AVX2
#include <xxhash.h>

namespace vld {

uint64_t checksum64_avx2(const void* data, size_t len, uint64_t seed) {
  return XXH3_64bits_withSeed(data, len, seed);
}

}  // namespace vld
#endif
