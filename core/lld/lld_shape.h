// LldShape: the sizes mode=lld's on-disk records are checked against, all
// fixed at format time (docs/format.md, "mode=lld"), and the image's format
// version, which chooses two of the records' layouts. Decoders refuse a
// record whose fields fall outside them; encoders assert they don't.
//
// Invariants: segment_sectors >= 1 + block_sectors (a segment holds at least
// one block and a one-sector summary); every count is > 0.
//
// Thread-safety: plain values and pure functions.
#ifndef VLD_CORE_LLD_LLD_SHAPE_H_
#define VLD_CORE_LLD_LLD_SHAPE_H_

#include <cstdint>

#include "core/image_format.h"

namespace vld {

inline constexpr uint32_t kLldSectorBytes = 512;

struct LldShape {
  uint32_t segment_sectors = 1024;  // 512 KiB segments (paper 001, section 4.4)
  uint32_t block_sectors = 8;       // 4 KiB blocks
  uint32_t segment_count = 0;
  uint32_t logical_blocks = 0;  // export_bytes / block_bytes
  uint64_t platter_sectors = 0;
  uint32_t format_version = kLldFormatVersion;

  // Versions 3 and 4: an NVRAM record's header has a sector of its own, so
  // that no sector holds parts of two records, and says how far the region
  // had been synced (nvram_log.h); version 2 packs records and says nothing
  // of it.
  bool nvram_header_sector() const { return format_version >= kLldDigestFormatVersion; }
  // Versions 3 and 4: a checkpoint slot's tables are authenticated by a
  // digest of per-sector hashes, so a checkpoint rewrites only the sectors
  // that changed (checkpoint.h); version 2 MACs them whole.
  bool incremental_checkpoints() const { return format_version >= kLldDigestFormatVersion; }
  // Version 4: each slot ends in a journal, where a checkpoint appends the
  // changed sectors in one run instead of writing them in place
  // (checkpoint.h); version 3 writes them in place.
  bool checkpoint_journal() const { return format_version >= kLldFormatVersion; }

  bool valid() const {
    return segment_sectors >= 1 + block_sectors && block_sectors > 0 && segment_count > 0 &&
           logical_blocks > 0 && platter_sectors > 0 &&
           is_lld_format_version(format_version);
  }
};

}  // namespace vld

#endif  // VLD_CORE_LLD_LLD_SHAPE_H_
