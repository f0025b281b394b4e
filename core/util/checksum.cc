#include "core/util/checksum.h"

#include <xxhash.h>

#include "core/util/host_phases.h"

namespace vld {

uint64_t checksum64(const void* data, size_t len, uint64_t seed) {
  HostPhaseTimer phase_timer(HostPhase::kChecksum);
  return XXH3_64bits_withSeed(data, len, seed);
}

uint32_t data_checksum(const void* data, size_t len, uint64_t logical_block) {
  return static_cast<uint32_t>(checksum64(data, len, logical_block));
}

}  // namespace vld
