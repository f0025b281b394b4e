// Helpers the mode=lld tests share: a deterministic MAC key per seed (so
// two seeds are two images' secrets), hex for golden bytes, and the format
// options of an lld image on the st19101 preset.
#ifndef VLD_TESTS_UNIT_LLD_TEST_UTIL_H_
#define VLD_TESTS_UNIT_LLD_TEST_UTIL_H_

#include <cstdint>
#include <cstdio>
#include <string>

#include "core/modes/mode_image.h"
#include "core/util/mac.h"
#include "geometry/presets.h"

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

// mode=lld on the st19101 preset with 4 KiB blocks and these format-time
// parameters.
inline FormatOptions lld_format_options(uint64_t export_bytes, uint32_t spare_percent,
                                        uint64_t segment_bytes, uint64_t nvram_bytes) {
  FormatOptions o;
  o.mode = DiskMode::kLld;
  o.export_bytes = export_bytes;
  o.block_bytes = 4096;
  o.spare_percent = spare_percent;
  o.segment_bytes = segment_bytes;
  o.nvram_bytes = nvram_bytes;
  o.geometry = *find_preset("st19101");
  return o;
}

}  // namespace vld::test

#endif  // VLD_TESTS_UNIT_LLD_TEST_UTIL_H_
