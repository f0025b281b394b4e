// AruSession: one connection's atomic recovery units (paper 000, section 4;
// paper 004's WriteAtomic; docs/aru.md), over the shared DiskController.
//
// A session always has one ARU open. Its writes, zeroes and trims go into
// the ARU's shadow state (AruShadow), in host memory. On a disk that places
// an ARU's blocks as they are written (Disk::places_shadow: mode=vld), each
// change is also a drive command that writes the changed blocks by eager
// writing, mapped by nothing until the commit; elsewhere the changes take
// no simulated time and reach neither the drive nor the media until the
// commit (a partial block first reads the committed block, through the
// drive, in every mode). commit() is EndARU +
// Flush: Disk::commit_group writes every block of the ARU as one atomic,
// durable unit in the disk mode's own way (vld: one map-sector group over
// the blocks placed already; lld:
// one record or segment-summary commit; inplace: a redo journal), and a new
// ARU begins. abort() (the connection closing without a flush) drops the
// shadow: nothing of it was written, so nothing needs freeing and no crash
// can bring any of it back.
//
// Between sessions there is no isolation (paper 000): each reads committed
// data under its own shadow, and two ARUs that change the same block
// commit in the order of their commits, the last one winning, per block.
//
// A commit that fails (the disk's error: EIO, ENOSPC) applies nothing and
// leaves the ARU open and intact: the client may flush again, or
// disconnect to abort.
//
// Thread-safety: thread-safe (nbdkit may serve one connection's requests in
// parallel). Lock order: the session's mutex, then the controller's.
#ifndef VLD_CORE_ARU_ARU_SESSION_H_
#define VLD_CORE_ARU_ARU_SESSION_H_

#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "core/aru/aru_shadow.h"
#include "core/disk_controller.h"

namespace vld {

// aru_max= default: 32 MiB, the largest request every mode serves as one
// unit (the plugin's block size maximum).
inline constexpr uint64_t kDefaultAruMaxBytes = 32 * 1024 * 1024;

class AruSession {
 public:
  // An ARU holds at most max_bytes (aru_max=), or what the disk can commit
  // at once if that is less (DiskController::max_group_blocks).
  AruSession(DiskController& disk, uint64_t max_bytes);
  // Aborts the open ARU.
  ~AruSession();

  RequestTiming read(uint64_t offset, std::span<std::byte> out, std::optional<SimTime> arrival);
  // FUA is not taken: making one write of an ARU durable before the others
  // would break its atomicity, so the whole ARU waits for the commit.
  RequestTiming write(uint64_t offset, std::span<const std::byte> data,
                      std::optional<SimTime> arrival);
  RequestTiming zero(uint64_t offset, uint64_t len, std::optional<SimTime> arrival);
  RequestTiming trim(uint64_t offset, uint64_t len, std::optional<SimTime> arrival);
  // EndARU + Flush, then a new ARU. An empty ARU commits as a flush alone.
  RequestTiming commit(std::optional<SimTime> arrival);
  // Drops the open ARU (counted if it changed anything); a new one begins.
  void abort();

  uint64_t shadow_bytes() const;

 private:
  // Reads committed block b for a partial-block change. REQUIRES: mu_ held.
  AruShadow::ReadBase read_base(std::optional<SimTime> arrival);

  // The shadow's Placer on a placing disk: one drive command per change.
  class DiskPlacer final : public AruShadow::Placer {
   public:
    explicit DiskPlacer(DiskController& disk) : disk_(disk) {}
    // A change arriving at `arrival` begins.
    void begin(std::optional<SimTime> arrival) {
      arrival_ = arrival;
      placed_.reset();
    }
    std::vector<uint64_t> place(std::span<const GroupBlock> blocks) override;
    void drop(uint64_t token) override;
    // The change of `bytes` is done: counted, and timed by its placement
    // (if it placed anything).
    RequestTiming finish(uint64_t bytes);

   private:
    DiskController& disk_;
    std::optional<SimTime> arrival_;
    std::optional<RequestTiming> placed_;
  };

  DiskController& disk_;
  mutable std::mutex mu_;  // guards placer_ and shadow_
  DiskPlacer placer_;
  AruShadow shadow_;
};

}  // namespace vld

#endif  // VLD_CORE_ARU_ARU_SESSION_H_
