#include "core/util/checksum.h"

#include <xxhash.h>

#include "core/util/checksum_avx2.h"
#include "core/util/host_phases.h"

namespace vld {

namespace {

#if VLD_CHECKSUM_AVX2
bool cpu_has_avx2() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
}
#endif

}  // namespace

uint64_t checksum64(const void* data, size_t len, uint64_t seed) {
  HostPhaseTimer phase_timer(HostPhase::kChecksum);
#if VLD_CHECKSUM_AVX2
  if (cpu_has_avx2()) return checksum64_avx2(data, len, seed);
#endif
  return XXH3_64bits_withSeed(data, len, seed);
}

uint32_t data_checksum(const void* data, size_t len, uint64_t logical_block) {
  return static_cast<uint32_t>(checksum64(data, len, logical_block));
}

}  // namespace vld
