// Non-cryptographic checksums (xxHash's XXH3) for detecting torn and damaged
// on-disk structures. Authentication against forgery uses a keyed MAC
// (libsodium), never this.
//
// Thread-safety: pure functions.
#ifndef VLD_CORE_UTIL_CHECKSUM_H_
#define VLD_CORE_UTIL_CHECKSUM_H_

#include <cstddef>
#include <cstdint>

namespace vld {

uint64_t checksum64(const void* data, size_t len, uint64_t seed = 0);

}  // namespace vld

#endif  // VLD_CORE_UTIL_CHECKSUM_H_
