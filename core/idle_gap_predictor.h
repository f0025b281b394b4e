// IdleGapPredictor: when the drive's current idle period will end, from
// what a real drive can know: how long the idle periods it has seen lasted
// (from the end of one request to the arrival of the next, for periods in
// which it went idle), and how long the current one has lasted so far.
//
// Idle-time work must never make the next request slower than no idle work
// at all (paper 001, section 5.5, Figure 11; docs/compaction.md section
// 2a): a background step that is still running when a request arrives
// delays it (a preempt wait), so a step should start only when the period
// is expected to outlast it.
// The prediction is deliberately conservative:
//   - the shortest of the last kHistory periods, not their mean: one short
//     period makes the drive cautious for kHistory periods, a long one
//     changes nothing (a workload with regular gaps, such as Figure 11's,
//     gets its gap exactly);
//   - once the period has outlasted that (every recent period was shorter),
//     it is expected to last as long again as it has so far: idle periods
//     are heavy-tailed, so the longer one has lasted, the longer it is
//     likely to last (Golding et al., "Idleness is not sloth", USENIX
//     Winter 1995: see docs/references.md). With no history this is the
//     only rule: at the period's start nothing fits, and steps begin once
//     the drive has been idle for as long as they take.
// Without arrival times (latency=none and callers that grant idle time
// with DiskController::idle_until) a request starts when the drive is free,
// so no step can delay it: the end is unknown (kUnknownIdleEnd) and every
// step fits until the first request with an arrival time is seen.
//
// Invariants: history_ holds at most kHistory periods, each >= 0.
// Thread-safety: not thread-safe; DiskController owns one under its mutex.
#ifndef VLD_CORE_IDLE_GAP_PREDICTOR_H_
#define VLD_CORE_IDLE_GAP_PREDICTOR_H_

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <deque>

#include "geometry/sim_time.h"

namespace vld {

// An idle period whose end nobody can predict (no arrival times): any step fits.
inline constexpr SimTime kUnknownIdleEnd = SimTime::max();

class IdleGapPredictor {
 public:
  static constexpr size_t kHistory = 8;

  // A request arrived `gap` after the end of the previous one, and the
  // drive had gone idle in between. Negative gaps (the request was queued)
  // count as zero.
  void observe(SimDuration gap) {
    history_.push_back(std::max(gap, SimDuration{0}));
    if (history_.size() > kHistory) history_.pop_front();
    arrivals_seen_ = true;
  }
  // A request with an arrival time was seen (the plugin's latency=sleep, or
  // a benchmark's simulated arrivals): from now on, predict.
  void saw_arrival() { arrivals_seen_ = true; }

  // The expected end of the idle period that began at `began`, at `now`.
  // REQUIRES: now >= began.
  SimTime expected_end(SimTime began, SimTime now) const {
    assert(now >= began);
    if (!arrivals_seen_) return kUnknownIdleEnd;
    const SimDuration lasted = now - began;
    const SimDuration shortest =
        history_.empty() ? SimDuration{0} : *std::min_element(history_.begin(), history_.end());
    if (lasted < shortest) return began + shortest;
    return now + lasted;  // outlasted every recent period: as long again
  }

  size_t history_size() const { return history_.size(); }

 private:
  std::deque<SimDuration> history_;  // the last kHistory periods, oldest first
  bool arrivals_seen_ = false;
};

}  // namespace vld

#endif  // VLD_CORE_IDLE_GAP_PREDICTOR_H_
