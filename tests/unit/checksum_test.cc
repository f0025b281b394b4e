// checksum64 is XXH3-64 whichever instructions compute it (checksum_avx2.cc
// on CPUs with AVX2): against the library's own, for every length class
// XXH3 treats apart (0, 1-3, 4-8, 9-16, 17-128, 129-240, longer, and a
// 4 KiB block), seeded and not.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/util/checksum.h"
#include "core/util/checksum_avx2.h"

namespace vld {
namespace {

TEST(Checksum, IsTheLibrarysXxh3AtEveryLength) {
  std::mt19937_64 rng(5);
  std::vector<unsigned char> bytes(4096 + 64);
  for (unsigned char& b : bytes) b = static_cast<unsigned char>(rng());
  for (size_t len : {0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 512, 1000, 4095, 4096}) {
    for (uint64_t seed : {uint64_t{0}, uint64_t{12345}, ~uint64_t{0}}) {
      for (size_t at : {size_t{0}, size_t{1}, size_t{7}}) {  // aligned or not
        const uint64_t want = XXH3_64bits_withSeed(bytes.data() + at, len, seed);
        EXPECT_EQ(checksum64(bytes.data() + at, len, seed), want) << len << " " << seed;
#if VLD_CHECKSUM_AVX2
        if (__builtin_cpu_supports("avx2"))
          EXPECT_EQ(checksum64_avx2(bytes.data() + at, len, seed), want) << len << " " << seed;
#endif
      }
    }
  }
  EXPECT_EQ(data_checksum(bytes.data(), 4096, 77),
            static_cast<uint32_t>(XXH3_64bits_withSeed(bytes.data(), 4096, 77)));
}

}  // namespace
}  // namespace vld
