// Sizes for people: 1536 -> "1.5 KiB". Shared by error messages and tools.
//
// Thread-safety: pure functions.
#ifndef VLD_CORE_UTIL_UNITS_H_
#define VLD_CORE_UTIL_UNITS_H_

#include <cstdint>
#include <cstdio>
#include <string>

namespace vld {

inline std::string human_bytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g %s", v, units[u]);
  return buf;
}

}  // namespace vld

#endif  // VLD_CORE_UTIL_UNITS_H_
