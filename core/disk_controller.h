// DiskController: the drive's front end. Requests from every connection come
// through here; the drive serves one at a time, in the order they take the
// lock, and a request that arrives while the drive is busy waits:
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
// The controller also checks ranges (so a Disk never sees one out of
// bounds) and keeps DiskStats.
//
// Thread-safety: thread-safe; one mutex serialises everything, like the one
// actuator it models.
#ifndef VLD_CORE_DISK_CONTROLLER_H_
#define VLD_CORE_DISK_CONTROLLER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "core/disk.h"
#include "core/disk_stats.h"
#include "core/idle_gap_predictor.h"

namespace vld {

struct RequestTiming {
  SimTime start;
  SimTime end;
  ServiceBreakdown service;
  SimDuration queued{};
};

class DiskController {
 public:
  // read_only: the disk is opened on an OverlayStore (nothing reaches the
  // image) and takes no idle steps, until make_writable().
  explicit DiskController(std::unique_ptr<Disk> disk, bool read_only = false);

  bool read_only() const;
  // The first writable connection: the read-only disk is closed (dropping
  // its shared lock) and open_writable() opens the image for writing, with
  // every request waiting meanwhile. If that throws, reopen_read_only()
  // puts a read-only disk back and the error is rethrown. No-op if the
  // disk is writable already.
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
  // One idle step at max(`now`, when the drive is free), if there is work
  // and no request is waiting for the lock (a drive does not start
  // background work with a command queued). The plugin's background thread
  // calls this between requests.
  std::optional<SimTime> idle_step(SimTime now);
  // When the drive is next free (the end of the last request or step).
  SimTime busy_until() const;
  // When the last request (not idle step) ended: the start of the quiet gap.
  SimTime last_request_end() const;

  // Extents are answered from memory: no media access, no simulated time.
  void extents(uint64_t offset, uint64_t len, const ExtentFn& fn);

  DiskStats stats() const;
  ModeReport mode_report() const;  // the disk mode's own (Disk::mode_report)
  double utilization() const;  // live / physical blocks
  const Superblock& superblock() const { return disk_->superblock(); }
  const DriveGeometry& geometry() const { return disk_->drive().geometry(); }

  // Clean shutdown; further requests fail.
  void close();

 private:
  enum class Kind { kRead, kWrite, kFlush, kTrim, kZero, kCommit, kPlace };
  template <typename Op>
  RequestTiming serve(Kind kind, bool fua, uint64_t bytes, std::optional<SimTime> arrival, Op op);
  void check_range(uint64_t offset, uint64_t len) const;
  // With VLD_CHECK_EACH_REQUEST: aborts, naming it, if the disk's state
  // disagrees with itself (Disk::check_consistency). REQUIRES: mu_ held.
  void check_after_request() const;

  mutable std::mutex mu_;  // guards everything below but waiting_
  std::unique_ptr<Disk> disk_;
  bool read_only_ = false;
  DiskStats stats_;
  // Runs one idle step at `start` under mu_; false if there was no work.
  bool step_locked(SimTime start);

  std::atomic<int> waiting_{0};  // requests between arrival and the lock
  SimTime busy_until_{};
  SimTime last_request_end_{};
  // The idle periods seen so far; a period counts if the drive went idle in
  // it (idle_until or idle_step was called since the last request).
  IdleGapPredictor gaps_;
  bool went_idle_ = false;
  bool busy_with_idle_step_ = false;  // busy_until_ is the end of an idle step
  bool closed_ = false;
};

}  // namespace vld

#endif  // VLD_CORE_DISK_CONTROLLER_H_
