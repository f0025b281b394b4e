// Pacer: the one bridge between simulated time and wall time.
//
// latency=sleep: simulated time zero is the wall instant the server got
// ready, and the two clocks then run at the same rate: a request arriving at
// wall time w arrives at simulated time (w - epoch), so the platter keeps
// turning while the drive is idle, and its reply is held until the wall time
// of its simulated completion.
// latency=none: requests carry no arrival time (the drive starts each as soon
// as the previous one ended) and replies leave at once.
//
// Thread-safety: immutable after construction; call from any thread.
#ifndef VLD_PLUGIN_PACER_H_
#define VLD_PLUGIN_PACER_H_

#include <sys/prctl.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "core/disk_controller.h"
#include "geometry/sim_time.h"
#include "plugin/options.h"

namespace vld {

class Pacer {
 public:
  using WallClock = std::chrono::steady_clock;
  using WallTime = WallClock::time_point;

  explicit Pacer(LatencyMode mode) : mode_(mode), wall_epoch_(WallClock::now()) {}

  LatencyMode mode() const { return mode_; }

  SimTime to_sim(WallTime w) const {
    return kSimEpoch + std::chrono::duration_cast<SimDuration>(w - wall_epoch_);
  }
  WallTime to_wall(SimTime t) const {
    return wall_epoch_ + std::chrono::duration_cast<WallClock::duration>(t - kSimEpoch);
  }

  // When a request arriving now reaches the drive.
  std::optional<SimTime> arrival() const {
    if (mode_ == LatencyMode::kNone) return std::nullopt;
    return to_sim(WallClock::now());
  }

  // Holds the reply until the simulated completion time has come. The
  // thread's timer slack is cut to 1 ns first: Linux's default 50 us slack
  // would add itself to every paced reply (docs/pacing.md).
  void wait_until(SimTime end) const {
    if (mode_ != LatencyMode::kSleep) return;
    static thread_local const bool slack_set = ::prctl(PR_SET_TIMERSLACK, 1UL) == 0;
    (void)slack_set;
    std::this_thread::sleep_until(to_wall(end));
  }

 private:
  LatencyMode mode_;
  WallTime wall_epoch_;
};

// The controller's clock for command queueing (sched=sptf), latency=sleep:
// now is the wall clock in simulated time, and a queued request sleeps
// until the wall instant the drive becomes free.
class PacerClock final : public DiskController::Clock {
 public:
  explicit PacerClock(const Pacer& pacer) : pacer_(pacer) {}
  SimTime now() const override { return pacer_.to_sim(Pacer::WallClock::now()); }
  void wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                  SimTime t) const override {
    static thread_local const bool slack_set = ::prctl(PR_SET_TIMERSLACK, 1UL) == 0;
    (void)slack_set;
    cv.wait_until(lock, pacer_.to_wall(t));
  }

 private:
  const Pacer& pacer_;  // outlives the controller's use of the clock
};

}  // namespace vld

#endif  // VLD_PLUGIN_PACER_H_
