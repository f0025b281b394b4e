// RecordingStore: a BackingStore that remembers what happened to it, so a
// crash harness can rebuild every image a crash could have left behind.
//
// The crash model (docs/crash-contract.md, "What is assumed"). The log is a sequence of events: writes,
// discards and syncs, in the order the code under test issued them. A crash
// point is a prefix of that log: crashing "after event p" means the first p
// events completed and nothing after them was issued. For a crash point p:
//
//   - every write and discard before the last sync at or before p (the
//     "synced prefix") survives;
//   - of the writes and discards after that sync and before p (the
//     "pending" events), any subset survives, each one whole at the
//     granularity: an event is split at multiples of the granularity
//     (4 KiB, or 512 bytes in "torn" mode) into units, and each unit
//     independently survives or does not. A 4 KiB-aligned 4 KiB write is one
//     unit at k4K; an 8 KiB write is two; a write at offset 1000 of 5000
//     bytes is [1000, 4096) and [4096, 6000);
//   - a discard counts as a write of zeros.
//
// Surviving units are applied in log order on top of the synced image, so
// where two surviving units overlap the later one wins. (The model does not
// let a later unit survive "under" an earlier one; it is the harness's
// approximation of a drive that writes each unit in place.)
//
// Invariants:
//   - contents() == base with every event in the log applied in order;
//   - materialize(p, all true, g) == contents() as it was after p events,
//     for either granularity;
//   - materialize(p, all false, g) == the image after synced_prefix(p)
//     events;
//   - events that failed their range check (they throw) are not recorded and
//     do not change the contents.
//
// Memory: the store keeps the initial image, the live image, and the bytes of
// every write in the log (discards and syncs keep only offsets). Each
// materialize() returns a fresh full image and replays the synced prefix
// from the initial image; nothing is cached.
//
// Thread-safety: none. Not even const methods may run concurrently with a
// mutating one.
#ifndef VLD_CORE_STORE_CRASH_STORE_H_
#define VLD_CORE_STORE_CRASH_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "core/store/backing_store.h"

namespace vld {

class RecordingStore final : public BackingStore {
 public:
  // The unit size of the crash model.
  enum class Granularity {
    k4K,   // 4096-byte units: a sector-atomic drive with 4 KiB sectors
    k512,  // 512-byte units: "torn" mode
  };
  static constexpr uint64_t unit_bytes(Granularity g) { return g == Granularity::k4K ? 4096 : 512; }

  // One entry of the log.
  struct Event {
    enum class Kind { kWrite, kDiscard, kSync };
    Kind kind;
    uint64_t offset = 0;           // kWrite, kDiscard
    uint64_t len = 0;              // kWrite, kDiscard (== data.size() for kWrite)
    std::vector<std::byte> data;   // kWrite only; empty otherwise
  };

  // A crash point: after_event is the number of events that completed
  // before the crash, i.e. the crash came right after the event at log
  // index after_event-1. 0 is before any event; events() is after the last
  // one. Valid crash points are 0..events(); every after_event parameter
  // below means this.
  struct CrashPoint {
    size_t after_event;
  };

  // One aligned piece of a pending write or discard: [offset, offset+len)
  // lies within one granule (offset / unit_bytes == (offset+len-1) /
  // unit_bytes) and is non-empty. event is the index in the log (0-based)
  // of the event it came from; bytes.size() == len, zeros for a discard.
  struct Unit {
    uint64_t offset;
    uint64_t len;
    size_t event;
    std::vector<std::byte> bytes;
  };

  // Starts with an empty log and contents == base; size_bytes() ==
  // base.size().
  explicit RecordingStore(std::vector<std::byte> base);
  // Copies all of from's contents (reads them with from.read()).
  explicit RecordingStore(BackingStore& from);

  RecordingStore(const RecordingStore&) = delete;
  RecordingStore& operator=(const RecordingStore&) = delete;

  // BackingStore. write() and discard() apply to the live contents and
  // append an event; sync() appends a kSync event and counts. Out-of-range
  // accesses throw Error (EIO), like MemoryBackingStore, and record nothing.
  // Zero-length writes and discards are recorded and yield no units.
  uint64_t size_bytes() const override { return live_.size(); }
  void read(uint64_t offset, std::span<std::byte> out) override;
  void write(uint64_t offset, std::span<const std::byte> data) override;
  void discard(uint64_t offset, uint64_t len) override;
  void sync() override;
  void for_each_data_range(uint64_t offset, uint64_t len,
                           const std::function<void(uint64_t, uint64_t)>& fn) override;

  // The log.
  size_t events() const { return log_.size(); }
  size_t syncs() const { return sync_at_.size(); }
  const Event& event(size_t i) const { return log_.at(i); }

  const std::vector<std::byte>& base() const { return base_; }
  // The live image: base with every event applied.
  const std::vector<std::byte>& contents() const { return live_; }

  // The number of events that are durable at crash point after_event: one
  // past the index of the last kSync among the first after_event events, or
  // 0 if there is none. Throws Error (EINVAL) if after_event > events().
  size_t synced_prefix(size_t after_event) const;

  // The units of the pending writes and discards at crash point after_event
  // (events synced_prefix(after_event) .. after_event-1), in log order and,
  // within an event, by offset. Throws Error (EINVAL) if after_event >
  // events().
  std::vector<Unit> pending_units(size_t after_event, Granularity g) const;
  // How many units pending_units(after_event, g) returns, without copying
  // any bytes.
  size_t pending_unit_count(size_t after_event, Granularity g) const;

  // The image a crash at after_event leaves when exactly the units k with
  // survives[k] survive: base, then the synced prefix, then the surviving
  // units of pending_units(after_event, g) in order. Throws Error (EINVAL)
  // if after_event > events() or survives.size() !=
  // pending_unit_count(after_event, g).
  std::vector<std::byte> materialize(size_t after_event, const std::vector<bool>& survives,
                                     Granularity g) const;

 private:
  void check_range(uint64_t offset, uint64_t len) const;
  void check_point(size_t after_event) const;
  // Calls fn(unit index, offset, len, event index, data or nullptr for
  // zeros) for each pending unit at after_event, in order.
  void for_each_pending_unit(
      size_t after_event, Granularity g,
      const std::function<void(size_t, uint64_t, uint64_t, size_t, const std::byte*)>& fn) const;

  std::vector<std::byte> base_;
  std::vector<std::byte> live_;
  std::vector<Event> log_;
  std::vector<size_t> sync_at_;  // log indices of the kSync events, ascending
};

// A MemoryBackingStore of image.size() bytes holding image, e.g. to open a
// materialized crash image with the code under test.
std::unique_ptr<MemoryBackingStore> as_store(const std::vector<std::byte>& image);

}  // namespace vld

#endif  // VLD_CORE_STORE_CRASH_STORE_H_
