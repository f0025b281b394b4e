// DiskController: the drive's front end. Requests from every connection come
// through here; the drive serves one at a time, in the order they take the
// lock (but see command queueing below), and a request that arrives while
// the drive is busy waits:
//
//   start = max(arrival, when the previous request ended)
//   end   = start + the Disk's service time
//
// arrival is simulated time. With latency=sleep the plugin maps wall time to
// simulated time, so the platter keeps turning while the drive is idle; with
// latency=none there is no arrival (nullopt) and each request starts when
// the previous one ended, so a run is a deterministic function of its
// requests.
//
// Idle time: between requests the drive may do background work
// (Disk::idle_step: the vld compactor), one short step at a time. A step
// starts only while the drive is idle and ends when it ends: a request that
// arrives during a step waits for that step (preemption at step
// boundaries), and the wait is reported as preempt_wait. With latency=sleep
// the plugin runs steps after a quiet gap of real time; with latency=none
// steps run only when the caller grants idle time (idle_until), so a run
// stays a deterministic function of its requests and grants. Either way the
// Disk is told when the idle period is expected to end (IdleGapPredictor,
// from the periods seen so far, never from the grant) and starts a step
// only if it is expected to end by then.
//
// Command queueing (sched=sptf; core/sched/command_queue.h): with a clock
// (set_scheduler) and arrival times, a request that arrives while the drive
// is busy joins a queue and waits, in the clock's time, until the drive is
// free; then the drive picks one of the commands queued at that instant
// (T = max(busy_until, the earliest arrival queued); those with arrival <=
// T), by SPTF from the head's position at T, and the others wait for the
// next free instant. Requests are not served in the order they take the
// lock: computing each service at once would drain the queue in arrival
// order into the simulated future. Only reads and writes have a positioning
// time (Disk::positioning_estimate); flushes, trims, zeroes and ARU
// commands estimate 0, which serves them ahead of commands that need the
// head to move (NBD only asks a flush to cover writes completed before it
// was sent, and those are in the backing store already). No idle step
// starts while a command is queued. Without arrival times (latency=none)
// or with sched=fifo nothing queues here: requests are served in lock
// order, as before, so latency=none stays deterministic.
//
// The controller also checks ranges (so a Disk never sees one out of
// bounds) and keeps DiskStats.
//
// Thread-safety: thread-safe; one mutex serialises everything, like the one
// actuator it models. Queued requests wait on a condition variable under
// that mutex; each change that can let one proceed (the drive freed, a
// command chosen, close) notifies all of them, and every wait re-checks its
// condition under the mutex, so no wakeup is lost. What a request needs
// that depends on the request alone, not on the drive's state, is done
// before it takes the mutex, so that the actuator never waits for it: the
// data checksums of a write's whole blocks (BlockChecksums), for a disk
// that takes them.
#ifndef VLD_CORE_DISK_CONTROLLER_H_
#define VLD_CORE_DISK_CONTROLLER_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/disk.h"
#include "core/disk_stats.h"
#include "core/sched/command_queue.h"
#include "core/idle_gap_predictor.h"

namespace vld {

struct RequestTiming {
  SimTime start;
  SimTime end;
  ServiceBreakdown service;
  SimDuration queued{};
};

// What a command queued in a DiskController would access, for its
// positioning estimate; a command without one (len 0) estimates 0.
struct QueuedTarget {
  bool write = false;
  uint64_t offset = 0;
  uint64_t len = 0;
};

class DiskController {
 public:
  // read_only: the disk is opened on an OverlayStore (nothing reaches the
  // image) and takes no idle steps, until make_writable().
  explicit DiskController(std::unique_ptr<Disk> disk, bool read_only = false);

  // The time command queueing waits in: now, and a wait until a simulated
  // instant. The plugin's maps wall time (plugin/pacer.h); tests use a
  // fake one whose waits last until notified (clock_advanced).
  class Clock {
   public:
    virtual ~Clock() = default;
    virtual SimTime now() const = 0;
    // Blocks on cv, releasing lock meanwhile, until now() >= t or cv is
    // notified; may also return early (the caller re-checks).
    virtual void wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                            SimTime t) const = 0;
  };
  // sched=: requests with an arrival time queue and are chosen by `policy`
  // (kFifo: nothing changes). REQUIRES: no request in progress.
  void set_scheduler(SchedPolicy policy, SimDuration aging, std::shared_ptr<const Clock> clock);
  // A clock whose waits do not time out has moved: queued requests look
  // again.
  void clock_advanced();
  // Requests queued now, waiting for the drive to be free or to be chosen.
  size_t queued() const;
  // The policy in force: kFifo unless set_scheduler gave another and a clock.
  SchedPolicy sched_policy() const;

  // Group commit (Disk::set_group_commit): a request whose last step is a
  // sync of the backing file waits for it after releasing the lock, so the
  // drive serves the next request meanwhile and requests in flight share
  // one sync; it is acknowledged (returns) only once its data is durable.
  // Told to every disk installed from now on. The plugin turns it on.
  void set_group_commit(bool on);

  bool read_only() const;
  // The first writable connection: the read-only disk is closed (dropping
  // its shared lock) and open_writable() opens the image for writing, with
  // every request waiting meanwhile. If that throws, or opens an image
  // whose superblock is not the one served (EIO), reopen_read_only() puts
  // a read-only disk back and the error is rethrown; if that throws too,
  // or finds another image as well, the controller is closed (every
  // request fails with ESHUTDOWN). No-op if the disk is writable already.
  using DiskFactory = std::function<std::unique_ptr<Disk>()>;
  void make_writable(const DiskFactory& open_writable, const DiskFactory& reopen_read_only);

  RequestTiming read(uint64_t offset, std::span<std::byte> out, std::optional<SimTime> arrival);
  RequestTiming write(uint64_t offset, std::span<const std::byte> data, bool fua,
                      std::optional<SimTime> arrival);
  RequestTiming flush(std::optional<SimTime> arrival);
  RequestTiming trim(uint64_t offset, uint64_t len, bool fua, std::optional<SimTime> arrival);
  RequestTiming zero(uint64_t offset, uint64_t len, ZeroFlags flags,
                     std::optional<SimTime> arrival);
  // Atomic recovery units (core/aru/aru_session.h). commit_group is
  // Disk::commit_group (EndARU + Flush); `shadow` counts a request that an
  // ARU keeps in its shadow state (a write, zero or trim that reaches
  // neither the drive nor the media until the commit, like a write into a
  // host's buffer cache): it takes no simulated time and does not occupy
  // the drive; it "completes" when it arrives (or, without arrival times,
  // when the drive is next free). abort counts an ARU dropped without a
  // commit (it wrote nothing).
  RequestTiming commit_group(std::span<const GroupBlock> blocks, std::optional<SimTime> arrival);
  RequestTiming shadow(uint64_t bytes, std::optional<SimTime> arrival);
  void count_aru_abort(uint64_t shadow_blocks);
  // Disk::places_shadow, place_shadow (a drive command: counted as the
  // ARU's, not as a client write) and drop_shadow.
  bool places_shadow() const;
  RequestTiming place_shadow(std::span<const GroupBlock> blocks, std::optional<SimTime> arrival,
                             std::vector<uint64_t>* tokens);
  void drop_shadow(uint64_t token);
  // Disk::max_atomic_write_bytes.
  uint64_t max_atomic_write_bytes() const;
  // Disk::max_group_blocks and max_group_why.
  uint64_t max_group_blocks() const;
  std::string max_group_why() const;

  // Idle time until `until` (simulated): runs idle steps that start before
  // it; the last may end after it. Returns the number of steps run; stops
  // early (returning fewer) when there is no work, or none the disk expects
  // to finish before the predicted end of the idle period (which does not
  // know `until`: a drive does not know when the next request comes). On a
  // closed disk: 0.
  uint64_t idle_until(SimTime until);
  // Idle time the drive had but could not use (the plugin serves an image
  // read-only until its first writable connection): runs, one after the
  // other, the idle steps that start at or after `from` and are expected
  // to end by `until`, stamped in that period, as the drive would have run
  // them. Returns the number of steps run; 0 if a request is waiting, the
  // drive was busy until `until`, or the disk is read-only or closed.
  uint64_t idle_between(SimTime from, SimTime until);
  // One idle step at max(`now`, when the drive is free), if there is work
  // and no request is waiting for the lock (a drive does not start
  // background work with a command queued). The plugin's background thread
  // calls this between requests.
  std::optional<SimTime> idle_step(SimTime now);
  // When the drive is next free (the end of the last request or step).
  SimTime busy_until() const;
  // When the last request (not idle step) ended: the start of the quiet gap.
  SimTime last_request_end() const;

  // Disk::positioning_estimate of a read (write: false) or write, for a
  // caller that queues commands itself (vld-bench qd).
  SimDuration positioning_estimate(bool write, uint64_t offset, uint64_t len, SimTime at) const;

  // Extents are answered from memory: no media access, no simulated time.
  void extents(uint64_t offset, uint64_t len, const ExtentFn& fn);

  DiskStats stats() const;
  // The time series (stats_interval=, docs/stats.md). After
  // start_intervals(t), every request and idle step is also counted in the
  // current interval, which begins at t; take_interval(end) ends it at `end`
  // (nullopt: busy_until()), returns it with the totals and the mode report
  // of that instant, and begins the next one there. A request counts in the
  // interval in which it started on the drive. Without start_intervals,
  // take_interval starts them and returns an empty interval.
  void start_intervals(SimTime start);
  IntervalStats take_interval(std::optional<SimTime> end);
  // Intervals of simulated time (vld-bench --stats-interval): intervals
  // [start + k every, start + (k+1) every); a request or idle step that
  // starts at or after the current one's end first ends it there and calls
  // `observer` with it, and the next interval is the one holding that start
  // (an interval in which nothing started is skipped). The observer runs
  // under the controller's lock: it must not call the controller.
  using IntervalObserver = std::function<void(const IntervalStats&)>;
  void set_interval_observer(SimTime start, SimDuration every, IntervalObserver observer);
  // The disk mode's own (Disk::mode_report). Defined with ModeReport
  // (core/modes/mode_report.cc), as it needs every mode's report.
  ModeReport mode_report() const;
  double utilization() const;  // live / physical blocks
  // The image's, as opened: make_writable only installs a disk with the
  // same superblock, so any thread may ask, at any time, without the lock.
  const Superblock& superblock() const { return sb_; }

  // Clean shutdown; further requests fail.
  void close();

 private:
  enum class Kind { kRead, kWrite, kFlush, kTrim, kZero, kCommit, kPlace };
  // (Outside the class: a default argument of a member function may not use
  // the default member initializers of a class nested in the one being defined.)
  using Target = QueuedTarget;
  struct Queued {
    uint64_t id;
    SimTime arrival;
    Target target;
  };
  template <typename Op>
  RequestTiming serve(Kind kind, bool fua, uint64_t bytes, std::optional<SimTime> arrival, Op op,
                      Target target = {});
  // Queues a request arriving at `arrival` and returns when the drive is
  // free and has chosen it (then it is out of the queue).
  // REQUIRES: lock holds mu_; scheduling_.
  void wait_turn(std::unique_lock<std::mutex>& lock, SimTime arrival, const Target& target);
  // Chooses among the commands queued at the drive's free instant.
  // REQUIRES: mu_ held; queue_ non-empty; no command chosen.
  uint64_t choose_locked();
  void check_range(uint64_t offset, uint64_t len) const;
  // The data checksums of the whole blocks of a write of `data` at
  // `offset`, into *sums (which the result views). Reads only sb_: called
  // without mu_.
  BlockChecksums whole_block_checksums(uint64_t offset, std::span<const std::byte> data,
                                       std::vector<uint32_t>* sums) const;
  // With VLD_CHECK_EACH_REQUEST: aborts, naming it, if the disk's state
  // disagrees with itself (Disk::check_consistency). REQUIRES: mu_ held.
  void check_after_request() const;
  // After a request's service (its accounting done): waits, without mu_,
  // for the sync its ticket needs (Disk::sync_through); throws its error.
  // REQUIRES: lock holds mu_ (and holds it again on return or throw).
  void finish_group_commit(std::unique_lock<std::mutex>& lock, uint64_t ticket);
  // Counts a served request (or, kind nullopt, an idle step) in `a`.
  void account(Activity& a, std::optional<Kind> kind, uint64_t bytes, bool fua,
               const Completion& c, SimTime start) const;
  // Ends the sim-time interval (set_interval_observer) if `start` is past
  // it. REQUIRES: mu_ held.
  void roll_interval_locked(SimTime start);
  // live / physical blocks. REQUIRES: mu_ held.
  double utilization_locked() const;
  // Ends the current interval at `end` and begins the next. REQUIRES: mu_
  // held; intervals started.
  IntervalStats end_interval_locked(SimTime end);

  // The disk in place.
  // REQUIRES: mu_ held. Throws ESHUTDOWN if there is no disk (both opens
  // of a make_writable failed).
  Disk& disk_locked() const;
  // Disk::mode_report, for an interval. REQUIRES: mu_ held. Defined with
  // ModeReport (core/modes/mode_report.cc).
  std::shared_ptr<const ModeReport> mode_report_locked() const;

  const Superblock sb_;  // immutable: read without mu_
  // Disk::takes_write_checksums, the same for every disk of the image:
  // write() then hashes the whole blocks before it takes mu_.
  const bool checksums_before_lock_;
  mutable std::mutex mu_;  // guards everything below but waiting_
  std::unique_ptr<Disk> disk_;  // null only after make_writable failed twice (closed_)
  bool read_only_ = false;
  DiskStats stats_;
  // The current interval of the time series: null until start_intervals or
  // set_interval_observer (most controllers never take one); it began at
  // interval_start_.
  std::unique_ptr<Activity> interval_;
  SimTime interval_start_{};
  uint64_t intervals_taken_ = 0;
  SimDuration interval_every_{};  // > 0: intervals of simulated time
  IntervalObserver interval_observer_;
  // Runs one idle step at `start` under mu_, told that the idle period
  // ends by `latest_end` at the latest; false if there was no work.
  bool step_locked(SimTime start, SimTime latest_end = kUnknownIdleEnd);

  std::atomic<int> waiting_{0};  // requests between arrival and the lock
  SimTime busy_until_{};
  SimTime last_request_end_{};
  // The idle periods seen so far; a period counts if the drive went idle in
  // it (idle_until or idle_step was called since the last request).
  IdleGapPredictor gaps_;
  bool went_idle_ = false;
  bool busy_with_idle_step_ = false;  // busy_until_ is the end of an idle step
  bool closed_ = false;
  bool group_commit_ = false;
  // Requests in finish_group_commit, outside mu_ but using disk_: close()
  // waits for none (turn_cv_ is notified when it drops to 0).
  uint32_t syncing_requests_ = 0;

  // Command queueing; set once before requests, then read under mu_.
  SchedPolicy policy_ = SchedPolicy::kFifo;
  SimDuration aging_ = kDefaultSchedAging;
  std::shared_ptr<const Clock> clock_;
  std::vector<Queued> queue_;       // in arrival at the lock order
  std::optional<uint64_t> chosen_;  // the queued command the drive serves next
  uint64_t next_id_ = 1;
  std::condition_variable turn_cv_;  // with mu_: the drive freed, a choice, close, a sync
};

}  // namespace vld

#endif  // VLD_CORE_DISK_CONTROLLER_H_
