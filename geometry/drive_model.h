// DriveModel: where the head is, and what an access costs.
//
// The model answers one question: starting at simulated time `start` with the
// head on some track, how long does the drive take to process one command
// that transfers the given runs of physical sectors, in order, and what was
// that time spent on? The answer is broken down as in paper 001, Figure 9:
//
//   overhead    controller time per command (Table 1, "SCSI overhead")
//   seek        moving the actuator to another cylinder (SeekCurve), and
//               before a write, the write settle
//   head_switch selecting another head on the same cylinder
//   rotation    waiting for the first sector of a run to come under the head
//   transfer    sectors passing under the head while they are read or written
//
// The platter turns at a constant rate from simulated time zero, so the
// rotational position is a pure function of time; the only state is the
// track the head is on (HeadPosition). A seek includes selecting the head on
// the destination cylinder.
//
// Reads go through a one-track read-ahead buffer (TrackBuffer, paper 001
// section 4.2): from the moment the head reaches a track to read, every
// sector passing under it is buffered, during the rotational wait, the
// transfer and while the drive sits idle afterwards, until the head leaves.
// A read whose sectors are all buffered costs no media time; otherwise it
// ends when the last of its sectors not yet buffered has passed, in whatever
// order they come (a zero-latency read). Writes neither use nor discard the
// buffer, but stop the read-ahead.
//
// On a zoned drive the revolution is the same on every track and the number
// of slots is the track's zone's sectors per track: every rotational
// question names that number (`spt`).
//
// All rotational arithmetic is in integers: the phase of the platter at time
// t is (t mod revolution) * spt "slot units", slot j starts at
// j * revolution units, and waits round up to the next nanosecond. A run that
// starts at most kOnTimeSlackNs after its slot began counts as on time: each
// wait and transfer rounds up by under a nanosecond, and a few of them in a
// row (a block that wraps past the end of a track, then a map sector) must
// never cost a revolution.
//
// Thread-safety: not thread-safe; the owner serialises (one actuator).
#ifndef VLD_GEOMETRY_DRIVE_MODEL_H_
#define VLD_GEOMETRY_DRIVE_MODEL_H_

#include <cstdint>
#include <optional>
#include <span>

#include "geometry/drive_geometry.h"
#include "geometry/sim_time.h"
#include "geometry/track_buffer.h"

namespace vld {

inline constexpr int64_t kOnTimeSlackNs = 16;

struct ServiceBreakdown {
  SimDuration overhead{};
  SimDuration seek{};
  SimDuration head_switch{};
  SimDuration rotation{};
  SimDuration transfer{};

  SimDuration total() const { return overhead + seek + head_switch + rotation + transfer; }
  SimDuration locate() const { return seek + head_switch + rotation; }
  ServiceBreakdown& operator+=(const ServiceBreakdown& o);
};

struct HeadPosition {
  uint32_t cylinder = 0;
  uint32_t head = 0;
  bool operator==(const HeadPosition&) const = default;
};

// A run of physically consecutive sectors. It may cross track boundaries.
struct SectorRun {
  uint64_t first_psn = 0;
  uint32_t count = 0;
};

struct Access {
  SimTime end;
  ServiceBreakdown breakdown;
};

// What a command does with its sectors: a write after a seek also waits for
// the write settle (DriveGeometry::write_settle).
enum class Transfer { kRead, kWrite };

class DriveModel {
 public:
  // simulated_cylinders: how many cylinders, from cylinder 0, the backing
  // image holds (the rest of the drive exists only in the seek curve).
  DriveModel(const DriveGeometry& geometry, uint32_t simulated_cylinders);

  const DriveGeometry& geometry() const { return geometry_; }
  uint32_t simulated_cylinders() const { return simulated_cylinders_; }
  uint64_t simulated_sectors() const {
    return geometry_.sectors_in_cylinders(simulated_cylinders_);
  }

  HeadPosition head() const { return head_; }
  // Puts the head somewhere (opening a disk): the buffer starts empty.
  void set_head(HeadPosition h);

  // track_buffer= : with the buffer off, read() is access().
  void set_track_buffer(bool on);
  bool track_buffer() const { return buffer_on_; }
  const TrackBuffer& buffer() const { return buffer_; }

  // Rotational position at t in sectors of a track of `spt`, in [0, spt).
  double angle_sectors(SimTime t, uint32_t spt) const;
  // From `at`, how long until angular slot `slot` of a track of `spt`
  // sectors starts under the head.
  SimDuration rotational_wait(SimTime at, uint32_t slot, uint32_t spt) const;
  // The first angular slot of a track of `spt` whose start is at or after
  // `at` (within the on-time slack): where a transfer at `at` can start.
  uint32_t next_slot(SimTime at, uint32_t spt) const;
  // The platter's phase at `at` in slot units ((at mod revolution) * spt,
  // in [0, revolution * spt)): what rotational_wait and next_slot work out
  // first, for a caller asking both, or many waits, of one instant.
  int64_t phase_units(SimTime at, uint32_t spt) const;
  // rotational_wait and next_slot at the instant of `phase`
  // (phase_units(at, spt)).
  SimDuration rotational_wait_at_phase(int64_t phase, uint32_t slot, uint32_t spt) const;
  uint32_t next_slot_at_phase(int64_t phase, uint32_t spt) const;
  // Time for `sectors` consecutive sectors of a track of `spt` to pass
  // under the head.
  SimDuration transfer_time(uint32_t sectors, uint32_t spt) const;
  // Moving the head between tracks: a seek, a head switch, or nothing; a
  // seek that also changes heads takes max(seek, head switch).
  ServiceBreakdown reposition(HeadPosition from, HeadPosition to) const;
  // The extra wait before writing after moving from `from` to `to`: the
  // write settle if the arm moved, else nothing.
  SimDuration write_settle(HeadPosition from, HeadPosition to) const {
    return from.cylinder != to.cylinder ? geometry_.write_settle : SimDuration{0};
  }

  // Cost of one command transferring `runs` in order, from the current head
  // position, without moving the head. Pays the controller overhead once.
  Access estimate(std::span<const SectorRun> runs, SimTime start, Transfer transfer,
                  bool charge_overhead = true) const;
  // The same, and leaves the head where the last sector ended. Work inside
  // a command already paid for (a read-modify-write's write, a log record
  // the drive writes on its own) passes charge_overhead = false.
  Access access(std::span<const SectorRun> runs, SimTime start, bool charge_overhead = true);
  // The same for a read: through the track buffer (see above), and leaves the
  // head where the read ended.
  Access read(std::span<const SectorRun> runs, SimTime start, bool charge_overhead = true);
  // A command that touches no media (flush on a drive without write cache,
  // trim): controller overhead only.
  Access command_only(SimTime start) const;

 private:
  Access run(std::span<const SectorRun> runs, SimTime start, HeadPosition* head,
             Transfer transfer, bool charge_overhead) const;

  // Calls fn(chs, n) for each piece of the runs that lies on one track, in
  // order: n sectors from chs, up to the end of that track.
  template <typename Fn>
  void for_each_track_piece(std::span<const SectorRun> runs, Fn fn) const;
  uint32_t track_of(HeadPosition h) const { return h.cylinder * geometry_.tracks_per_cylinder + h.head; }
  // Sectors on the track of chs: its zone's.
  uint32_t spt_of(const Chs& chs) const {
    return geometry_.zone(geometry_.zone_index_of_cylinder(chs.cylinder)).sectors_per_track;
  }
  // The sector of `track` that passes under the head at angular slot `slot`.
  uint32_t sector_at_slot(uint32_t track, uint32_t slot) const;
  // Buffers the sectors that have passed wholly under the head, on the
  // buffer's track, between the start of the read-ahead and `until`.
  void read_ahead(SimTime until);

  DriveGeometry geometry_;
  uint32_t simulated_cylinders_;
  int64_t revolution_ns_;
  HeadPosition head_;
  bool buffer_on_ = true;
  TrackBuffer buffer_;
  std::optional<SimTime> read_ahead_since_;  // head on the buffer's track, reading
};

}  // namespace vld

#endif  // VLD_GEOMETRY_DRIVE_MODEL_H_
