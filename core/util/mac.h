// The keyed MAC that authenticates on-disk metadata: keyed BLAKE2b-128
// (libsodium crypto_generichash) of bytes [0, covered_bytes), stored in the
// 16 bytes right after them. The key is the image's secret (the superblock,
// docs/format.md), which no client can read, so guest data cannot forge a
// structure that carries a MAC.
//
// Thread-safety: pure functions.
#ifndef VLD_CORE_UTIL_MAC_H_
#define VLD_CORE_UTIL_MAC_H_

#include <array>
#include <cstddef>

namespace vld {

inline constexpr size_t kMacBytes = 16;
using MacKey = std::array<unsigned char, 32>;
using Mac = std::array<unsigned char, kMacBytes>;

// The MAC of p[0, len).
Mac mac_of(const unsigned char* p, size_t len, const MacKey& key);
// Writes mac_of(p, covered_bytes) at p + covered_bytes.
// REQUIRES: p has covered_bytes + kMacBytes bytes.
void mac_seal(unsigned char* p, size_t covered_bytes, const MacKey& key);
// True if stored (kMacBytes) holds mac_of(p, len), compared in constant time.
bool mac_matches(const unsigned char* p, size_t len, const unsigned char* stored, const MacKey& key);
// mac_matches(p, covered_bytes, p + covered_bytes).
bool mac_valid(const unsigned char* p, size_t covered_bytes, const MacKey& key);

}  // namespace vld

#endif  // VLD_CORE_UTIL_MAC_H_
