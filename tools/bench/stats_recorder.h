// vld-bench --stats PATH [--stats-interval SECONDS]: the plugin's statistics
// (docs/stats.md) for each disk a run measures, in the same schema, made by
// the same code (stats/stats_json.h).
//
// The first disk a run measures writes PATH, the k-th PATH with ".k" before
// its extension (stats.json, stats.2.json, ...): table2 measures vld, then
// inplace; fig11 and fig10 one disk per point. Each object has the stats
// file's keys and "bench": {"command", "label" (what the disk is), "disk"
// (k)}. With --stats-interval S > 0, each disk's time series goes to its
// file's companion (stats.json.jsonl, stats.2.json.jsonl, ...): one line
// per S seconds of *simulated* time in which a request or idle step
// started (DiskController::set_interval_observer; an interval with none
// writes no line), "wall_start" and "wall_end" null, and a last line for
// the partial interval when the disk is finished. Everything the disk
// did counts, warm-up and idle time included, so the series shows them.
//
// The recovery's host time (recovery.wall_ms) is null: everything else is
// simulated, so a run's file is a function of its arguments, byte for byte.
//
// Thread-safety: single-threaded, like vld-bench.
#ifndef VLD_TOOLS_BENCH_STATS_RECORDER_H_
#define VLD_TOOLS_BENCH_STATS_RECORDER_H_

#include <cstdint>
#include <string>

#include "core/disk_controller.h"

namespace vld {

class StatsRecorder {
 public:
  // path "": record nothing (watch and finish do nothing).
  void configure(std::string command, std::string path, double interval_s);
  // Starts recording `ctl`, described by `label` (e.g. "mode=vld").
  // REQUIRES: the previous disk finished.
  void watch(DiskController& ctl, std::string label);
  // Appends the last, partial interval and writes the stats object of the
  // disk being recorded. REQUIRES: ctl is the one watched.
  void finish(DiskController& ctl);

  // Where the k-th disk's stats go (k >= 1).
  static std::string path_of(const std::string& path, uint64_t k);

 private:
  std::string command_;
  std::string path_;
  double interval_s_ = 0;
  uint64_t disks_ = 0;   // watched so far
  std::string label_;    // of the disk being recorded
  std::string current_;  // its file
};

// The one recorder of the run (vld-bench's --stats).
StatsRecorder& stats_recorder();

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_STATS_RECORDER_H_
