// DiskStats: what the drive did, in simulated time, for the stats file.
//
// Latencies are simulated service times per request (end - start, excluding
// time spent queued behind other requests, which is reported separately as
// queue wait). The breakdown is the mean per write request of the
// components of paper 001's Figure 9. Read and write latencies are also
// kept per request size class (SizeClass). What requests and idle steps do
// is an Activity, counted for the whole run (DiskStats) and, when a time
// series is kept, for the current interval (IntervalStats); docs/stats.md
// has the keys each becomes.
//
// Thread-safety: not thread-safe; DiskController owns it under its mutex and
// hands out copies.
#ifndef VLD_CORE_DISK_STATS_H_
#define VLD_CORE_DISK_STATS_H_

#include <array>
#include <cstdint>
#include <memory>

#include "core/util/histogram.h"
#include "geometry/drive_model.h"
#include "geometry/sim_time.h"

namespace vld {

// Every mode's report (core/modes/mode_report.h, above the modes).
struct ModeReport;

struct RequestCounts {
  uint64_t read = 0;
  uint64_t write = 0;
  uint64_t write_fua = 0;  // included in write
  uint64_t flush = 0;
  uint64_t trim = 0;
  uint64_t zero = 0;
  uint64_t extents = 0;
  uint64_t errors = 0;
};

// Atomic recovery units (docs/aru.md): what ARU connections did.
struct AruCounts {
  uint64_t commits = 0;           // non-empty commits (an empty one is a flush)
  uint64_t blocks_committed = 0;
  uint64_t aborts = 0;            // ARUs dropped without a commit (disconnects)
  uint64_t blocks_aborted = 0;
  uint64_t shadow_requests = 0;   // writes, zeroes and trims kept in shadow state
  uint64_t shadow_bytes = 0;
  uint64_t blocks_placed = 0;     // shadow blocks written before their commit (vld)
  LatencyHistogram commit_latency;
};

// Command queueing (sched=sptf, DiskController): the choices made when the
// drive became free with commands queued.
struct SchedCounts {
  uint64_t picks = 0;            // commands chosen from the queue
  uint64_t reordered = 0;        // ... that were not the earliest arrival queued
  uint64_t aged = 0;             // ... because they had waited past the aging bound
  uint64_t queue_depth_sum = 0;  // commands queued at each pick, summed
  uint64_t max_queue_depth = 0;  // the most commands queued at once
};

// Request size classes of the per-size latency histograms: 4 KiB and less,
// up to 64 KiB, larger.
enum class SizeClass { k4K, k64K, kLarger };
inline constexpr int kSizeClasses = 3;
inline constexpr SizeClass size_class(uint64_t bytes) {
  return bytes <= 4096 ? SizeClass::k4K : bytes <= 65536 ? SizeClass::k64K : SizeClass::kLarger;
}
inline constexpr const char* size_class_name(SizeClass c) {
  return c == SizeClass::k4K ? "4k" : c == SizeClass::k64K ? "64k" : "larger";
}

// What requests and idle steps did over a span of time: the whole run
// (DiskStats) or one interval of the time series (IntervalStats).
struct Activity {
  RequestCounts requests;
  LatencyHistogram read_latency;
  LatencyHistogram write_latency;
  LatencyHistogram flush_latency;
  std::array<LatencyHistogram, kSizeClasses> read_by_size;   // by SizeClass
  std::array<LatencyHistogram, kSizeClasses> write_by_size;
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  uint64_t physical_writes = 0;  // physical blocks written to the platters
  uint64_t physical_reads = 0;
  uint64_t backing_syncs = 0;    // fdatasync calls: FUA writes, flushes, ...
  SimDuration busy{};            // total simulated service time (requests)
  // Idle-time work (the vld compactor, the lld cleaner): steps run and
  // their simulated time.
  uint64_t idle_steps = 0;
  SimDuration idle_busy{};
};

struct DiskStats : Activity {
  LatencyHistogram queue_wait;
  ServiceBreakdown write_breakdown_sum;  // over write requests
  SimTime now{};  // when the drive last finished a request
  // How long requests that arrived during an idle step waited for it to end.
  LatencyHistogram preempt_wait;
  AruCounts aru;
  SchedCounts sched;
};

// One interval of the time series (stats_interval=, docs/stats.md): what
// the requests and idle steps that started from `start` to `end`
// (simulated) did, and the totals at `end`.
struct IntervalStats {
  uint64_t number = 0;  // 1, 2, ... in the order taken
  SimTime start{};
  SimTime end{};
  Activity activity;
  DiskStats totals;
  // The disk mode's report at `end` (Disk::mode_report); never null in an
  // interval DiskController returns.
  std::shared_ptr<const ModeReport> mode;
  double utilization = 0;  // live / physical blocks at `end`
};

}  // namespace vld

#endif  // VLD_CORE_DISK_STATS_H_
