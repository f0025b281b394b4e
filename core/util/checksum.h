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

// The data checksum a mode keeps beside each block (mode=vld's map entries,
// mode=lld's block map, summaries and NVRAM records): low 32 bits of XXH3-64
// of the block, seeded with its logical block number, so a block's bytes
// never verify as another block's.
uint32_t data_checksum(const void* data, size_t len, uint64_t logical_block);

}  // namespace vld

#endif  // VLD_CORE_UTIL_CHECKSUM_H_
