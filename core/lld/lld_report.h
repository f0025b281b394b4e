// LldReport: what an LldDisk says about itself for the statistics file
// (docs/stats.md, the "lld" section) and vld-inspect: plain values, copied
// out under the controller lock (Disk::mode_report). Counters are kept as
// LldDisk counts them; derived figures are member functions.
//
// Thread-safety: values; copy them freely.
#ifndef VLD_CORE_LLD_LLD_REPORT_H_
#define VLD_CORE_LLD_LLD_REPORT_H_

#include <cstdint>
#include <string>

#include "geometry/sim_time.h"

namespace vld {

// LldDisk's running counters.
struct LldStats {
  uint64_t segment_writes = 0;          // summaries written (full and partial writes)
  uint64_t partial_writes = 0;          // of those, writes that left the segment open
  uint64_t segments_closed = 0;
  uint64_t client_blocks_written = 0;   // client data blocks written into segments
  uint64_t summary_sectors_written = 0;
  uint64_t segments_cleaned = 0;        // victims whose live blocks the cleaner moved
  uint64_t segments_freed = 0;          // segments made free by checkpoints
  uint64_t cleaner_blocks_moved = 0;
  uint64_t cleaner_sectors_read = 0;
  uint64_t idle_cleans = 0;             // victims cleaned in idle time
  uint64_t checkpoints = 0;
  uint64_t checkpoint_sectors_written = 0;
  uint64_t checkpoint_folds = 0;        // checkpoints that wrote table sectors in place
  uint64_t nvram_records_written = 0;
  uint64_t nvram_drains = 0;            // the buffer written wholly into segments
  uint64_t nvram_bypasses = 0;          // requests larger than the NVRAM, written to segments
  uint64_t nvram_stalls = 0;            // writes that waited for a drain
  uint64_t refused_requests = 0;        // ENOSPC: the clean segments could not take them whole
  uint64_t checksum_failures = 0;       // reads of a block that failed its data checksum (EIO)
  SimDuration nvram_time{};             // NVRAM copies, charged per block (nvram_us=)
  SimDuration segment_write_time{};     // client data into segments (drains included)
  SimDuration cleaning_time{};          // cleaner reads and moves, checkpoints that free
  SimDuration checkpoint_time{};
  SimDuration nvram_stall_time{};       // time writes waited for NVRAM space
};

// What opening the image read and decided.
struct LldRecoveryReport {
  bool clean = false;                   // the checkpoint was a clean shutdown's
  // "checkpoint+roll-forward", "+nvram" with an NVRAM region (its records replayed too).
  std::string method;
  uint64_t checkpoint_generation = 0;
  uint64_t writes_rolled_forward = 0;   // segment writes applied after the checkpoint
  uint64_t writes_discarded = 0;        // valid writes of an unfinished request
  uint64_t nvram_records_replayed = 0;  // NVRAM records newer than the segments
  uint64_t nvram_records_dropped = 0;   // of a newest request cut short (never acknowledged)
  std::string damage;                   // damage found and recovered from exactly ("": none)
  uint64_t sectors_read = 0;
  double simulated_ms = 0;
  double wall_ms = 0;                   // all of the above, on this host
  std::string stopped_because;          // why roll-forward stopped
};

struct LldReport {
  LldStats stats;
  LldRecoveryReport recovery;
  uint32_t segment_count = 0;
  uint32_t segment_sectors = 0;
  uint32_t blocks_per_segment = 0;
  uint32_t free_segments = 0;
  uint64_t live_blocks = 0;
  uint64_t nvram_capacity_records = 0;  // 0: nvram=0
  uint64_t nvram_used_records = 0;      // records appended since the last drain
  uint64_t nvram_buffered_blocks = 0;   // distinct blocks in the buffer
  uint32_t partial_percent = 0;
  std::string cleaner_policy;
  double nvram_us = 0;                  // per block

  // Physical blocks written (client and cleaner) per client block.
  double write_amplification() const {
    return stats.client_blocks_written
               ? static_cast<double>(stats.client_blocks_written + stats.cleaner_blocks_moved) /
                     stats.client_blocks_written
               : 0.0;
  }
};

}  // namespace vld

#endif  // VLD_CORE_LLD_LLD_REPORT_H_
