// What a VldDisk says about itself for the statistics file (docs/stats.md,
// the "vld" and "compactor" sections): plain values, copied out under the
// controller lock (Disk::mode_report). The counters are kept as VldDisk
// counts them; what is derived from them for display (means, ms, ratios)
// is computed here, once, by the member functions. Serialising is the
// callers' business (stats/mode_report_json.h).
//
// Thread-safety: values; copy them freely.
#ifndef VLD_CORE_VLD_VLD_REPORT_H_
#define VLD_CORE_VLD_VLD_REPORT_H_

#include <cstdint>
#include <optional>

#include "core/vld/compactor.h"
#include "core/vld/eager_allocator.h"
#include "geometry/sim_time.h"

namespace vld {

// VldDisk's running counters.
struct VldStats {
  uint64_t map_sectors_written = 0;
  uint64_t relays = 0;
  uint64_t records_written = 0;
  uint64_t dry_window_moves = 0;    // of those, moving a window whose empty tracks were used up
  uint64_t narrow_records = 0;      // of those, naming a scan set narrower than the window (scan_set.h)
  uint64_t scan_set_widenings = 0;  // of those, written first for a map sector beyond the scan set
  uint64_t checkpoints = 0;         // full: every live piece rewritten
  uint64_t delta_checkpoints = 0;   // the scattered pieces and a turn of the rest
  uint64_t idle_delta_checkpoints = 0;  // of those, written in idle time
  uint64_t checkpoint_map_sectors = 0;  // map sectors delta checkpoints wrote
  SimDuration checkpoint_time{};    // time delta checkpoints' groups took (not their records)
  uint64_t data_blocks_written = 0;
  uint64_t rmw_reads = 0;
  uint64_t checksum_failures = 0;
  SimDuration map_time{};          // time the map sectors added to writes
  SimDuration record_time{};       // time spent writing log records
  uint64_t map_updates = 0;        // requests that wrote map sectors
  uint64_t client_blocks_written = 0;  // data blocks written for clients (not moves)
  uint64_t repacks = 0;            // tracks repacked onto the reserve track (idle ones too)
  uint64_t idle_repacks = 0;       // of those, repacks done in idle time
  uint64_t repack_blocks_moved = 0;
  SimDuration repack_time{};
};

// The "vld" section: the counters and the state of map, log and allocator.
struct VldReport {
  VldStats stats;
  uint64_t live_map_sectors = 0;     // map sectors in the tree
  uint64_t retired_map_sectors = 0;  // replaced, freed at the next record
  uint64_t scattered_map_sectors = 0;  // written since the last checkpoint
  uint64_t pending_data_frees = 0;   // replaced data blocks, freed at the next record
  CylinderWindow window;             // where writes go until the next record
  double fill = 0;                   // the fill threshold (fill=)
  AllocatorStats allocator;
  uint32_t empty_tracks = 0;         // the reserve track among them
  std::optional<uint32_t> reserve_track;
  // Free space, and how much of it can take a data block without moving
  // anything: blocks that fit side by side into the free runs. The rest
  // lies in runs shorter than a block, usable only by map sectors
  // (docs/benchmarks.md, section 11: half of it at 80% in steady state).
  uint64_t free_sectors = 0;
  uint64_t block_holes = 0;
  uint32_t block_sectors = 0;

  // The share of free sectors that no data block can use.
  double fragmented_free_fraction() const {
    if (free_sectors == 0) return 0.0;
    const double usable = static_cast<double>(block_holes * block_sectors);
    return 1.0 - usable / static_cast<double>(free_sectors);
  }

  // Mean time the map sectors added to a request that wrote them.
  double map_update_us() const {
    return stats.map_updates ? to_us(stats.map_time) / stats.map_updates : 0.0;
  }
  double log_record_us() const { return to_us(stats.record_time); }
  double repack_ms() const { return to_ms(stats.repack_time); }
  // Rotational positions passed per piece placed.
  double mean_locate_sectors() const {
    return allocator.pieces ? static_cast<double>(allocator.skipped_sectors) / allocator.pieces
                            : 0.0;
  }
};

// The "compactor" section: the idle-time compactor's settings and work,
// and the write amplification it (and everything else) caused.
struct CompactorReport {
  bool enabled = false;
  CompactionPolicy policy = CompactionPolicy::kFewestLive;
  CompactorStats stats;
  std::optional<uint32_t> victim;  // the track being emptied
  uint32_t empty_tracks = 0;
  // The inputs of the write amplification (VldStats' counts).
  uint64_t data_blocks_written = 0;    // client writes and moves
  uint64_t map_sectors_written = 0;
  uint64_t client_blocks_written = 0;
  uint32_t block_sectors = 0;

  double busy_ms() const { return to_ms(stats.busy); }
  // Physical data blocks written (client writes and moves) per data block
  // written for clients; and the same counting map sectors.
  double write_amplification() const {
    const double client = static_cast<double>(client_blocks_written);
    return client > 0 ? data_blocks_written / client : 0.0;
  }
  double write_amplification_with_map() const {
    const double client = static_cast<double>(client_blocks_written);
    const double bsec = block_sectors;
    return client > 0 ? (data_blocks_written * bsec + map_sectors_written) / (client * bsec) : 0.0;
  }
};

}  // namespace vld

#endif  // VLD_CORE_VLD_VLD_REPORT_H_
