// Helpers the mode=lld format tests share: a deterministic MAC key per
// seed (so two seeds are two images' secrets) and hex for golden bytes.
#ifndef VLD_TESTS_UNIT_LLD_TEST_UTIL_H_
#define VLD_TESTS_UNIT_LLD_TEST_UTIL_H_

#include <cstdint>
#include <cstdio>
#include <string>

#include "core/util/mac.h"

namespace vld::test {

inline MacKey key_of(uint8_t seed) {
  MacKey k;
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<unsigned char>(seed * 31 + i * 7 + 1);
  return k;
}

inline std::string hex(const unsigned char* p, size_t n) {
  std::string s;
  char buf[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", p[i]);
    s += buf;
  }
  return s;
}

}  // namespace vld::test

#endif  // VLD_TESTS_UNIT_LLD_TEST_UTIL_H_
