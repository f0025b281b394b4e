#include "core/disk_controller.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/image_format.h"
#include "core/util/checksum.h"
#include "core/util/error.h"
#include "core/util/host_phases.h"

namespace vld {

DiskController::DiskController(std::unique_ptr<Disk> disk, bool read_only)
    : sb_((assert(disk), disk->superblock())),
      checksums_before_lock_(disk->takes_write_checksums()),
      disk_(std::move(disk)),
      read_only_(read_only) {}

Disk& DiskController::disk_locked() const {
  if (!disk_) throw Error("the disk is shut down: it could be opened neither writable nor read-only",
                          ESHUTDOWN);
  return *disk_;
}

void DiskController::set_scheduler(SchedPolicy policy, SimDuration aging,
                                   std::shared_ptr<const Clock> clock) {
  std::lock_guard lock(mu_);
  assert(queue_.empty());
  policy_ = policy;
  aging_ = aging;
  clock_ = std::move(clock);
}

void DiskController::clock_advanced() {
  { std::lock_guard lock(mu_); }  // a waiter is either before its check or waiting
  turn_cv_.notify_all();
}

SimDuration DiskController::positioning_estimate(bool write, uint64_t offset, uint64_t len,
                                                 SimTime at) const {
  check_range(offset, len);
  std::lock_guard lock(mu_);
  return disk_locked().positioning_estimate(write, offset, len, at);
}

SchedPolicy DiskController::sched_policy() const {
  std::lock_guard lock(mu_);
  return clock_ ? policy_ : SchedPolicy::kFifo;
}

size_t DiskController::queued() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

uint64_t DiskController::choose_locked() {
  SimTime first = queue_.front().arrival;
  for (const Queued& q : queue_) first = std::min(first, q.arrival);
  const SimTime at = std::max(busy_until_, first);  // the drive is free and has a command
  std::vector<QueuedCommand> eligible;
  for (const Queued& q : queue_) {
    if (q.arrival > at) continue;  // not there yet when the drive chose
    const Target& t = q.target;
    eligible.push_back(QueuedCommand{
        q.id, q.arrival,
        t.len ? disk_->positioning_estimate(t.write, t.offset, t.len, at) : SimDuration{0}});
  }
  const size_t i = pick_next(eligible, at, policy_, aging_);
  const size_t fifo = pick_next(eligible, at, SchedPolicy::kFifo);
  SchedCounts& s = stats_.sched;
  ++s.picks;
  s.queue_depth_sum += queue_.size();
  if (i != fifo) ++s.reordered;
  if (at - eligible[i].arrival > aging_) ++s.aged;
  return eligible[i].id;
}

void DiskController::wait_turn(std::unique_lock<std::mutex>& lock, SimTime arrival,
                               const Target& target) {
  const uint64_t id = next_id_++;
  queue_.push_back(Queued{id, arrival, target});
  stats_.sched.max_queue_depth = std::max<uint64_t>(stats_.sched.max_queue_depth, queue_.size());
  auto leave = [&] {
    queue_.erase(std::find_if(queue_.begin(), queue_.end(),
                              [&](const Queued& q) { return q.id == id; }));
  };
  for (;;) {
    if (closed_) {
      if (chosen_ == id) chosen_.reset();
      leave();
      throw Error("the disk is shut down", ESHUTDOWN);
    }
    if (!chosen_ && clock_->now() >= busy_until_) {
      chosen_ = choose_locked();
      if (*chosen_ != id) turn_cv_.notify_all();  // the chosen one may be asleep
    }
    if (chosen_ == id) break;
    if (chosen_)
      turn_cv_.wait(lock);  // until the chosen one has been served
    else
      clock_->wait_until(turn_cv_, lock, busy_until_);  // until the drive is free
  }
  chosen_.reset();
  leave();
}

bool DiskController::read_only() const {
  std::lock_guard lock(mu_);
  return read_only_;
}

void DiskController::make_writable(const DiskFactory& open_writable,
                                   const DiskFactory& reopen_read_only) {
  std::lock_guard lock(mu_);
  if (!read_only_ || closed_) return;
  // Between the two opens the image is unlocked: someone may put another
  // one in its place. superblock() promises the one served, so a disk of
  // another image is never installed.
  disk_.reset();  // closes the read-only file and its shared lock
  try {
    disk_ = open_writable();
    if (!same_image(disk_->superblock(), sb_)) {
      disk_.reset();
      throw Error(std::string(kImageReplaced), EIO);
    }
  } catch (...) {
    try {
      disk_ = reopen_read_only();
      if (!same_image(disk_->superblock(), sb_)) disk_.reset();
    } catch (...) {
      disk_.reset();
    }
    if (!disk_) {
      closed_ = true;  // no disk of this image to serve: every request fails from now on
      turn_cv_.notify_all();
    }
    throw;  // the writable open's error, which is what the client asked for
  }
  read_only_ = false;
  assert(disk_->takes_write_checksums() == checksums_before_lock_);  // same image, same mode
  disk_->set_group_commit(group_commit_);
}

void DiskController::check_after_request() const {
#ifdef VLD_CHECK_EACH_REQUEST
  if (std::string why = disk_->check_consistency(); !why.empty()) {
    std::fprintf(stderr, "vld: the disk's state is inconsistent after a request: %s\n",
                 why.c_str());
    std::abort();  // a bug: stop before anything is written on top of it
  }
#endif
}

void DiskController::check_range(uint64_t offset, uint64_t len) const {
  const uint64_t size = sb_.export_bytes;
  if (offset > size || len > size - offset)
    throw Error("request [" + std::to_string(offset) + ", +" + std::to_string(len) +
                    ") is beyond the end of the disk (" + std::to_string(size) + " bytes)",
                EINVAL);
}

template <typename Op>
RequestTiming DiskController::serve(Kind kind, bool fua, uint64_t bytes,
                                    std::optional<SimTime> arrival, Op op, Target target) {
  waiting_.fetch_add(1, std::memory_order_relaxed);
  std::unique_lock lock(mu_);
  waiting_.fetch_sub(1, std::memory_order_relaxed);
  if (closed_) throw Error("the disk is shut down", ESHUTDOWN);
  assert(disk_);  // only a closed controller has none
  const bool queued = arrival && clock_ && policy_ != SchedPolicy::kFifo;
  if (queued) wait_turn(lock, *arrival, target);
  // Whatever happens next, the queue looks again once the drive has moved on.
  struct NotifyOnExit {
    std::condition_variable* cv;
    ~NotifyOnExit() {
      if (cv) cv->notify_all();
    }
  } notify{queued ? &turn_cv_ : nullptr};
  if (arrival && went_idle_) gaps_.observe(*arrival - last_request_end_);
  else if (arrival) gaps_.saw_arrival();
  went_idle_ = false;
  SimTime start = arrival ? std::max(*arrival, busy_until_) : busy_until_;
  HostRequestTimer host_timer(kind == Kind::kWrite || kind == Kind::kFlush, kind == Kind::kWrite);
  roll_interval_locked(start);
  Completion c;
  try {
    c = op(start);
  } catch (...) {
    ++stats_.requests.errors;
    if (interval_) ++interval_->requests.errors;
    throw;
  }
  check_after_request();
  assert(c.end >= start);  // the drive never finishes before it starts
  RequestTiming t{start, c.end, c.service, arrival ? start - *arrival : SimDuration{0}};
  if (busy_with_idle_step_ && arrival && t.queued > SimDuration{0})
    stats_.preempt_wait.add(t.queued.count());
  busy_with_idle_step_ = false;
  busy_until_ = c.end;
  last_request_end_ = c.end;

  HostPhaseTimer stats_timer(HostPhase::kStats);  // to the end, but for the sync's own phase
  DiskStats& s = stats_;
  s.now = c.end;
  s.queue_wait.add(t.queued.count());
  account(s, kind, bytes, fua, c, start);
  if (interval_) account(*interval_, kind, bytes, fua, c, start);
  if (kind == Kind::kWrite) s.write_breakdown_sum += c.service;
  if (kind == Kind::kCommit) {
    ++s.aru.commits;
    s.aru.blocks_committed += bytes / sb_.block_bytes;
    s.aru.commit_latency.add((c.end - start).count());
  }
  if (kind == Kind::kPlace) s.aru.blocks_placed += bytes / sb_.block_bytes;
  if (c.sync_ticket) finish_group_commit(lock, c.sync_ticket);
  return t;
}

void DiskController::finish_group_commit(std::unique_lock<std::mutex>& lock, uint64_t ticket) {
  // The drive has moved on (busy_until_ is this request's end); only the
  // backing file's sync is left, and requests served meanwhile share it.
  Disk* disk = disk_.get();
  ++syncing_requests_;
  turn_cv_.notify_all();  // queued commands: the drive is free
  lock.unlock();
  uint32_t syncs = 0;
  std::optional<Error> failed;
  try {
    HostPhaseTimer io_timer(HostPhase::kStoreIo);
    syncs = disk->sync_through(ticket);
  } catch (const Error& e) {
    failed = e;
  }
  lock.lock();
  if (--syncing_requests_ == 0) turn_cv_.notify_all();
  stats_.backing_syncs += syncs;
  if (interval_) interval_->backing_syncs += syncs;
  if (!failed) return;
  // The request was counted as served; it failed after all.
  ++stats_.requests.errors;
  if (interval_) ++interval_->requests.errors;
  disk->group_sync_failed();  // the disk stops (clause 7)
  throw *failed;
}

void DiskController::set_group_commit(bool on) {
  std::lock_guard lock(mu_);
  group_commit_ = on;
  if (disk_) disk_->set_group_commit(on);
}

void DiskController::account(Activity& a, std::optional<Kind> kind, uint64_t bytes, bool fua,
                             const Completion& c, SimTime start) const {
  a.physical_writes += c.physical_blocks_written;
  a.backing_syncs += c.syncs;
  if (!kind) {  // an idle step
    ++a.idle_steps;
    a.idle_busy += c.end - start;
    return;
  }
  a.busy += c.end - start;
  a.physical_reads += c.physical_blocks_read;
  const int64_t service_ns = (c.end - start).count();
  const auto size = static_cast<size_t>(size_class(bytes));
  switch (*kind) {
    case Kind::kRead:
      ++a.requests.read;
      a.bytes_read += bytes;
      a.read_latency.add(service_ns);
      a.read_by_size[size].add(service_ns);
      break;
    case Kind::kWrite:
      ++a.requests.write;
      if (fua) ++a.requests.write_fua;
      a.bytes_written += bytes;
      a.write_latency.add(service_ns);
      a.write_by_size[size].add(service_ns);
      break;
    case Kind::kFlush:
      ++a.requests.flush;
      a.flush_latency.add(service_ns);
      break;
    case Kind::kTrim: ++a.requests.trim; break;
    case Kind::kZero: ++a.requests.zero; break;
    case Kind::kCommit: case Kind::kPlace: break;  // DiskStats::aru
  }
}

void DiskController::start_intervals(SimTime start) {
  std::lock_guard lock(mu_);
  interval_ = std::make_unique<Activity>();
  interval_start_ = start;
}

IntervalStats DiskController::end_interval_locked(SimTime end) {
  assert(interval_);
  IntervalStats done;
  done.number = ++intervals_taken_;
  done.start = interval_start_;
  done.end = std::max(end, interval_start_);
  done.activity = *interval_;
  *interval_ = Activity{};
  done.totals = stats_;
  done.mode = mode_report_locked();
  done.utilization = utilization_locked();
  interval_start_ = done.end;
  return done;
}

IntervalStats DiskController::take_interval(std::optional<SimTime> end) {
  std::lock_guard lock(mu_);
  const SimTime at = end ? *end : busy_until_;
  if (!interval_) {
    interval_ = std::make_unique<Activity>();
    interval_start_ = at;
  }
  return end_interval_locked(at);
}

void DiskController::set_interval_observer(SimTime start, SimDuration every,
                                           IntervalObserver observer) {
  assert(every > SimDuration{0});
  std::lock_guard lock(mu_);
  interval_ = std::make_unique<Activity>();
  interval_start_ = start;
  interval_every_ = every;
  interval_observer_ = std::move(observer);
}

void DiskController::roll_interval_locked(SimTime start) {
  if (!interval_observer_ || start < interval_start_ + interval_every_) return;
  const IntervalStats done = end_interval_locked(interval_start_ + interval_every_);
  interval_observer_(done);
  // The next interval is the one that holds `start`.
  const int64_t skipped = (start - done.end) / interval_every_;
  interval_start_ = done.end + skipped * interval_every_;
}

RequestTiming DiskController::read(uint64_t offset, std::span<std::byte> out,
                                   std::optional<SimTime> arrival) {
  check_range(offset, out.size());
  return serve(
      Kind::kRead, false, out.size(), arrival,
      [&](SimTime s) { return disk_->read(offset, out, s); }, Target{false, offset, out.size()});
}

RequestTiming DiskController::write(uint64_t offset, std::span<const std::byte> data, bool fua,
                                    std::optional<SimTime> arrival) {
  check_range(offset, data.size());
  // Hashed before the lock: the drive serves other requests meanwhile.
  // One buffer per thread (a thread serves one request at a time): a
  // write allocates nothing for its sums.
  thread_local std::vector<uint32_t> sums;
  const BlockChecksums given =
      checksums_before_lock_ ? whole_block_checksums(offset, data, &sums) : BlockChecksums{};
  return serve(
      Kind::kWrite, fua, data.size(), arrival,
      [&](SimTime s) { return disk_->write_with_checksums(offset, data, fua, s, given); },
      Target{true, offset, data.size()});
}

BlockChecksums DiskController::whole_block_checksums(uint64_t offset,
                                                     std::span<const std::byte> data,
                                                     std::vector<uint32_t>* sums) const {
  const uint64_t bs = sb_.block_bytes;
  uint64_t first = 0, end = 0;
  whole_blocks(offset, data.size(), bs, &first, &end);
  sums->resize(end - first);
  for (uint64_t b = first; b < end; ++b)
    (*sums)[b - first] = data_checksum(data.data() + (b * bs - offset), bs, b);
  return BlockChecksums{first, *sums};
}

RequestTiming DiskController::flush(std::optional<SimTime> arrival) {
  return serve(Kind::kFlush, false, 0, arrival, [&](SimTime s) { return disk_->flush(s); });
}

RequestTiming DiskController::trim(uint64_t offset, uint64_t len, bool fua,
                                   std::optional<SimTime> arrival) {
  check_range(offset, len);
  return serve(Kind::kTrim, fua, 0, arrival,
               [&](SimTime s) { return disk_->trim(offset, len, fua, s); });
}

RequestTiming DiskController::zero(uint64_t offset, uint64_t len, ZeroFlags flags,
                                   std::optional<SimTime> arrival) {
  check_range(offset, len);
  return serve(Kind::kZero, flags.fua, 0, arrival,
               [&](SimTime s) { return disk_->zero(offset, len, flags, s); });
}

RequestTiming DiskController::commit_group(std::span<const GroupBlock> blocks,
                                           std::optional<SimTime> arrival) {
  const uint64_t bs = sb_.block_bytes;
  for (size_t i = 0; i < blocks.size(); ++i) {
    check_range(blocks[i].block * bs, bs);
    assert(i == 0 || blocks[i - 1].block < blocks[i].block);  // sorted, distinct
  }
  if (blocks.empty()) return flush(arrival);  // an empty ARU: EndARU is the flush alone
  return serve(Kind::kCommit, false, blocks.size() * bs, arrival,
               [&](SimTime s) { return disk_->commit_group(blocks, s); });
}

RequestTiming DiskController::shadow(uint64_t bytes, std::optional<SimTime> arrival) {
  std::lock_guard lock(mu_);
  if (closed_) throw Error("the disk is shut down", ESHUTDOWN);
  ++stats_.aru.shadow_requests;
  stats_.aru.shadow_bytes += bytes;
  const SimTime at = arrival ? *arrival : busy_until_;
  return RequestTiming{at, at, {}, SimDuration{0}};
}

void DiskController::count_aru_abort(uint64_t shadow_blocks) {
  std::lock_guard lock(mu_);
  ++stats_.aru.aborts;
  stats_.aru.blocks_aborted += shadow_blocks;
}

bool DiskController::places_shadow() const {
  std::lock_guard lock(mu_);
  return disk_locked().places_shadow();
}

RequestTiming DiskController::place_shadow(std::span<const GroupBlock> blocks,
                                           std::optional<SimTime> arrival,
                                           std::vector<uint64_t>* tokens) {
  return serve(Kind::kPlace, false, blocks.size() * sb_.block_bytes, arrival,
               [&](SimTime s) { return disk_->place_shadow(blocks, s, tokens); });
}

void DiskController::drop_shadow(uint64_t token) {
  std::lock_guard lock(mu_);
  if (closed_) return;  // the disk is gone, and the sectors with it
  disk_->drop_shadow(token);
}

uint64_t DiskController::max_atomic_write_bytes() const {
  std::lock_guard lock(mu_);
  return disk_locked().max_atomic_write_bytes();
}

uint64_t DiskController::max_group_blocks() const {
  std::lock_guard lock(mu_);
  return disk_locked().max_group_blocks();
}

std::string DiskController::max_group_why() const {
  std::lock_guard lock(mu_);
  return disk_locked().max_group_why();
}

bool DiskController::step_locked(SimTime start, SimTime latest_end) {
  roll_interval_locked(start);
  std::optional<Completion> c;
  try {
    c = disk_->idle_step(start, std::min(gaps_.expected_end(last_request_end_, start), latest_end));
  } catch (...) {
    ++stats_.requests.errors;
    throw;
  }
  if (!c) return false;
  check_after_request();  // a compaction move is a request of the drive's own
  assert(c->end >= start);
  account(stats_, std::nullopt, 0, false, *c, start);
  if (interval_) account(*interval_, std::nullopt, 0, false, *c, start);
  busy_until_ = c->end;
  busy_with_idle_step_ = true;
  return true;
}

uint64_t DiskController::idle_until(SimTime until) {
  std::lock_guard lock(mu_);
  uint64_t steps = 0;
  went_idle_ = true;
  while (!closed_ && !read_only_ && busy_until_ < until && step_locked(busy_until_)) ++steps;
  return steps;
}

uint64_t DiskController::idle_between(SimTime from, SimTime until) {
  std::lock_guard lock(mu_);
  if (closed_ || read_only_ || waiting_.load(std::memory_order_relaxed) > 0 || !queue_.empty() ||
      std::max(busy_until_, from) >= until)
    return 0;
  went_idle_ = true;
  busy_until_ = std::max(busy_until_, from);
  uint64_t steps = 0;
  while (busy_until_ < until && step_locked(busy_until_, until)) ++steps;
  return steps;
}

std::optional<SimTime> DiskController::idle_step(SimTime now) {
  std::lock_guard lock(mu_);
  if (closed_ || read_only_ || waiting_.load(std::memory_order_relaxed) > 0 || !queue_.empty())
    return std::nullopt;
  went_idle_ = true;
  if (!step_locked(std::max(now, busy_until_))) return std::nullopt;
  return busy_until_;
}

SimTime DiskController::last_request_end() const {
  std::lock_guard lock(mu_);
  return last_request_end_;
}

SimTime DiskController::busy_until() const {
  std::lock_guard lock(mu_);
  return busy_until_;
}

void DiskController::extents(uint64_t offset, uint64_t len, const ExtentFn& fn) {
  check_range(offset, len);
  std::lock_guard lock(mu_);
  if (closed_) throw Error("the disk is shut down", ESHUTDOWN);
  ++stats_.requests.extents;
  if (interval_) ++interval_->requests.extents;
  disk_->extents(offset, len, fn);
}

DiskStats DiskController::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

double DiskController::utilization() const {
  std::lock_guard lock(mu_);
  return utilization_locked();
}

double DiskController::utilization_locked() const {
  const Disk& d = disk_locked();
  return static_cast<double>(d.live_blocks()) / static_cast<double>(d.physical_blocks());
}

void DiskController::close() {
  std::unique_lock lock(mu_);
  if (closed_) return;
  closed_ = true;
  turn_cv_.notify_all();  // queued requests fail now
  turn_cv_.wait(lock, [&] { return syncing_requests_ == 0; });
  if (!read_only_) disk_->close();  // a read-only disk writes nothing, not even at close
}

}  // namespace vld
