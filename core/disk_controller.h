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
// The controller also checks ranges (so a Disk never sees one out of
// bounds) and keeps DiskStats.
//
// Thread-safety: thread-safe; one mutex serialises everything, like the one
// actuator it models.
#ifndef VLD_CORE_DISK_CONTROLLER_H_
#define VLD_CORE_DISK_CONTROLLER_H_

#include <memory>
#include <mutex>
#include <optional>

#include "core/disk.h"
#include "core/disk_stats.h"

namespace vld {

struct RequestTiming {
  SimTime start;
  SimTime end;
  ServiceBreakdown service;
  SimDuration queued{};
};

class DiskController {
 public:
  explicit DiskController(std::unique_ptr<Disk> disk);

  RequestTiming read(uint64_t offset, std::span<std::byte> out, std::optional<SimTime> arrival);
  RequestTiming write(uint64_t offset, std::span<const std::byte> data, bool fua,
                      std::optional<SimTime> arrival);
  RequestTiming flush(std::optional<SimTime> arrival);
  RequestTiming trim(uint64_t offset, uint64_t len, bool fua, std::optional<SimTime> arrival);
  RequestTiming zero(uint64_t offset, uint64_t len, ZeroFlags flags,
                     std::optional<SimTime> arrival);
  // Extents are answered from memory: no media access, no simulated time.
  void extents(uint64_t offset, uint64_t len, const ExtentFn& fn);

  DiskStats stats() const;
  nlohmann::json extra_stats() const;  // the disk mode's own (Disk::extra_stats)
  double utilization() const;  // live / physical blocks
  const Superblock& superblock() const { return disk_->superblock(); }
  const DriveGeometry& geometry() const { return disk_->drive().geometry(); }

  // Clean shutdown; further requests fail.
  void close();

 private:
  enum class Kind { kRead, kWrite, kFlush, kTrim, kZero };
  template <typename Op>
  RequestTiming serve(Kind kind, bool fua, uint64_t bytes, std::optional<SimTime> arrival, Op op);
  void check_range(uint64_t offset, uint64_t len) const;

  mutable std::mutex mu_;
  std::unique_ptr<Disk> disk_;
  DiskStats stats_;
  SimTime busy_until_{};
  bool closed_ = false;
};

}  // namespace vld

#endif  // VLD_CORE_DISK_CONTROLLER_H_
