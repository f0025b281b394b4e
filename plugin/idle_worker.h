// IdleWorker: runs the drive's idle-time work (mode=vld's compactor,
// mode=lld's cleaner and NVRAM drain) in the background while the drive is
// idle, with latency=sleep.
//
// Idle means no request has ended for compactor_quiet_ms of wall time (which,
// with latency=sleep, is simulated time too: Pacer). Then the worker runs one
// DiskController::idle_step at a time and sleeps until that step's simulated
// end, so the compactor (or cleaner) works at the drive's speed, never
// faster. A request that arrives meanwhile takes the controller lock after
// the step's CPU work and starts, in simulated time, when the step ends: it
// waits for at most that one step (reported as preempt_wait). No step starts while a request
// waits for the lock; one that arrived microseconds before a step took the
// lock waits for the step and those microseconds. When there is nothing to do, the
// worker looks again every quiet gap (at least 10 ms); VldDisk answers that
// in O(1) until a write changes something.
//
// An existing image is served read-only until its first writable
// connection (vld_open), and a read-only disk has no idle work; yet the
// drive was idle since the open (or since its last request), and a drive
// works in idle time (paper 001 section 4.2). make_writable runs the
// plugin's reopen for writing and then, before the connection can send
// its first request and with the worker held off, the idle steps that
// time had room for, stamped in it (DiskController::idle_between): from
// the last request's end (the open, if none) plus the quiet gap, each
// expected to end by now. A server started with -r never becomes writable
// and writes nothing.
//
// With latency=none there is no idle time to speak of (requests carry no
// arrival time), so no worker runs; programs grant idle time explicitly with
// DiskController::idle_until (tools/vld-bench, tests).
//
// A step that throws (a write of the backing file failed) is reported to
// the host (the plugin: nbdkit_error; this header knows nothing of nbdkit),
// and the worker tries again after a pause that doubles, from 1 s to 5 min,
// while steps keep failing: one transient EIO does not end compaction for
// the server's life, and a file that keeps failing costs a line a pause.
// The disk has already handed the error to the next request
// (FailStopStore::defer), so a client learns that the backing file failed;
// a disk that has stopped (a failed fdatasync) has no idle work.
//
// Thread-safety: owns one thread; construct and destroy from one thread.
// make_writable may be called from any thread; step_mu_ serialises it
// with the worker's steps. `report` is called from the worker's thread
// and from make_writable's caller, maybe at once: it must be thread-safe.
#ifndef VLD_PLUGIN_IDLE_WORKER_H_
#define VLD_PLUGIN_IDLE_WORKER_H_

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "core/disk_controller.h"
#include "plugin/pacer.h"

namespace vld {

class IdleWorker {
 public:
  // Called with "idle-time work failed: <why>; trying again in N s" when a
  // step throws, and "idle-time work going again" at the next that does not.
  using Report = void (*)(const std::string& line);

  IdleWorker(DiskController& controller, const Pacer& pacer, std::chrono::milliseconds quiet,
             Report report)
      : controller_(controller), pacer_(pacer), quiet_(quiet), report_(report) {
    thread_ = std::thread([this] { run(); });
  }
  ~IdleWorker() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  IdleWorker(const IdleWorker&) = delete;
  IdleWorker& operator=(const IdleWorker&) = delete;

  // Calls reopen() (the plugin's reopen of a read-only disk for writing),
  // then, if the disk is writable now, catches up on the idle time it had
  // while read-only (see above). Returns reopen()'s result; a failed idle
  // step is reported as the worker's are (the next request fails with it).
  template <typename Reopen>
  auto make_writable(Reopen reopen) -> decltype(reopen()) {
    std::lock_guard hold(step_mu_);
    auto result = reopen();
    if (!controller_.read_only()) catch_up();
    return result;
  }

 private:
  // Sleeps until wall time `until` or stop; false if stopping.
  bool sleep_until(Pacer::WallTime until) {
    std::unique_lock lock(mu_);
    return !cv_.wait_until(lock, until, [this] { return stop_; });
  }

  // Runs steps while the drive is idle, until the worker stops; a step
  // that throws is reported and tried again after a back-off.
  void run() {
    for (;;) {
      try {
        run_steps();
        return;  // stopping
      } catch (const std::exception& e) {
        // The drive keeps serving requests; the next one reports a failed
        // write, and a read reports damage itself.
        report_("idle-time work failed: " + std::string(e.what()) + "; trying again in " +
                std::to_string(pause_.count()) + " s");
        failing_ = true;
        if (!sleep_until(Pacer::WallClock::now() + pause_)) return;
        pause_ = std::min(pause_ * 2, kLongestPause);
      }
    }
  }

  // Steps while idle, sleeping between them, until stopping.
  void run_steps() {
    const auto poll = std::max(quiet_, std::chrono::milliseconds(10));
    for (;;) {
      const SimTime now = pacer_.to_sim(Pacer::WallClock::now());
      const SimTime quiet_from = controller_.last_request_end() + quiet_;
      if (now < quiet_from) {
        if (!sleep_until(pacer_.to_wall(quiet_from))) return;
        continue;
      }
      std::optional<SimTime> end;
      {
        std::lock_guard hold(step_mu_);
        end = controller_.idle_step(now);
      }
      if (failing_ && end) {  // a step did work again (a stopped disk has none)
        failing_ = false;
        pause_ = kFirstPause;
        report_("idle-time work going again");
      }
      if (!sleep_until(end ? pacer_.to_wall(*end) : Pacer::WallClock::now() + poll)) return;
    }
  }

  // REQUIRES: step_mu_ held.
  void catch_up() {
    const SimTime until = pacer_.to_sim(Pacer::WallClock::now());
    try {
      controller_.idle_between(controller_.last_request_end() + quiet_, until);
    } catch (const std::exception& e) {
      report_("idle-time work failed: " + std::string(e.what()));
    }
  }

  static constexpr std::chrono::seconds kFirstPause{1};
  static constexpr std::chrono::seconds kLongestPause{300};

  DiskController& controller_;
  const Pacer& pacer_;
  std::chrono::milliseconds quiet_;
  Report report_;
  std::mutex mu_;               // guards stop_ only
  std::mutex step_mu_;          // held by each of the worker's steps, and by make_writable
  std::condition_variable cv_;  // signalled when stop_ is set
  bool stop_ = false;
  // The worker thread's own: whether the last step threw, and the pause
  // before the next try if it throws again.
  bool failing_ = false;
  std::chrono::seconds pause_ = kFirstPause;
  std::thread thread_;
};

}  // namespace vld

#endif  // VLD_PLUGIN_IDLE_WORKER_H_
