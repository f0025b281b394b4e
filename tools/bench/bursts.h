// Bursts of random synchronous 4 KiB updates with idle intervals between
// them (paper 001, section 5.5): the loop fig11 (mode=vld, the compactor)
// and fig10 (mode=lld, the cleaner and NVRAM drain) both run, and the
// fields every burst point reports.
//
// Thread-safety: as DiskController.
#ifndef VLD_TOOLS_BENCH_BURSTS_H_
#define VLD_TOOLS_BENCH_BURSTS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/disk_controller.h"
#include "core/modes/mode_report.h"
#include "geometry/drive_model.h"
#include "geometry/sim_time.h"
#include "tools/bench/disk_spec.h"

namespace vld {

struct BurstSpec {
  uint64_t burst = 256;        // updates per burst
  std::vector<double> idle_ms; // idle interval after each burst, one point each
  uint64_t bursts = 40;        // measured bursts per point
  uint64_t warm_bursts = 5;    // bursts run first and not measured
  std::string policies = "fewest-live";
  bool compare_off = true;     // also run compactor=off
  bool idle_work = true;       // false: the pauses grant the disk no idle steps
};

// What the measured bursts of a point saw.
struct BurstTotals {
  SimDuration total{}, waited{}, worst_wait{}, idle_busy{};
  ServiceBreakdown service;
  uint64_t n = 0, preempted = 0;
  double host_us = 0;              // wall time this host spent in the measured updates
  std::vector<double> latency_us;  // per measured update: the write
  std::vector<double> sync_latency_us;  // the write and its flush
  SimDuration sync_total{};
  ModeReport before;               // at the start of the measured bursts
};

// Called around each measured idle interval with the reports before and after it.
using IdleHook = std::function<void(const ModeReport&, const ModeReport&)>;

// Warm-up bursts, then bs.bursts measured ones; after each burst an idle
// interval of idle_ms (simulated) granted to the disk's idle-time work (the
// vld compactor, the lld cleaner and NVRAM drain); the next burst arrives
// when it ends, and waits for a step in progress.
BurstTotals burst_loop(DiskController& ctl, uint64_t region, const DiskSpec& spec,
                       const BurstSpec& bs, double idle_ms, const IdleHook& hook);

// The fields every burst point reports, from its totals: the mean and the
// percentiles of the write and of the write with its flush.
nlohmann::json burst_json(const BurstTotals& t, const BurstSpec& bs, double idle_ms);

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_BURSTS_H_
