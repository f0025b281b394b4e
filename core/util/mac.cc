#include "core/util/mac.h"

#include <sodium.h>

#include "core/util/host_phases.h"

namespace vld {

Mac mac_of(const unsigned char* p, size_t len, const MacKey& key) {
  HostPhaseTimer phase_timer(HostPhase::kChecksum);
  Mac mac;
  crypto_generichash(mac.data(), mac.size(), p, len, key.data(), key.size());
  return mac;
}

void mac_seal(unsigned char* p, size_t covered_bytes, const MacKey& key) {
  const Mac mac = mac_of(p, covered_bytes, key);
  for (size_t i = 0; i < kMacBytes; ++i) p[covered_bytes + i] = mac[i];
}

bool mac_matches(const unsigned char* p, size_t len, const unsigned char* stored, const MacKey& key) {
  const Mac mac = mac_of(p, len, key);
  return sodium_memcmp(mac.data(), stored, kMacBytes) == 0;
}

bool mac_valid(const unsigned char* p, size_t covered_bytes, const MacKey& key) {
  return mac_matches(p, covered_bytes, p + covered_bytes, key);
}

}  // namespace vld
