#include "geometry/drive_model.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <optional>
#include <utility>

namespace vld {

ServiceBreakdown& ServiceBreakdown::operator+=(const ServiceBreakdown& o) {
  overhead += o.overhead;
  seek += o.seek;
  head_switch += o.head_switch;
  rotation += o.rotation;
  transfer += o.transfer;
  return *this;
}

DriveModel::DriveModel(const DriveGeometry& geometry, uint32_t simulated_cylinders)
    : geometry_(geometry),
      simulated_cylinders_(simulated_cylinders),
      revolution_ns_(geometry.revolution().count()),
      buffer_(geometry.max_sectors_per_track()) {}

void DriveModel::set_head(HeadPosition h) {
  assert(h.cylinder < geometry_.cylinders && h.head < geometry_.tracks_per_cylinder);
  head_ = h;
  buffer_.clear();
  read_ahead_since_.reset();
}

void DriveModel::set_track_buffer(bool on) {
  buffer_on_ = on;
  buffer_.clear();
  read_ahead_since_.reset();
}

namespace {
int64_t floor_mod(int64_t a, int64_t m) {
  int64_t r = a % m;
  return r < 0 ? r + m : r;
}
}  // namespace

double DriveModel::angle_sectors(SimTime t, uint32_t spt) const {
  int64_t phase = floor_mod(t.time_since_epoch().count(), revolution_ns_);
  return static_cast<double>(phase) * spt /
         static_cast<double>(revolution_ns_);
}

int64_t DriveModel::phase_units(SimTime at, uint32_t track_sectors) const {
  return floor_mod(at.time_since_epoch().count(), revolution_ns_) * int64_t{track_sectors};
}

SimDuration DriveModel::rotational_wait(SimTime at, uint32_t slot, uint32_t track_sectors) const {
  return rotational_wait_at_phase(phase_units(at, track_sectors), slot, track_sectors);
}

SimDuration DriveModel::rotational_wait_at_phase(int64_t phase, uint32_t slot,
                                                 uint32_t track_sectors) const {
  const int64_t spt = track_sectors;
  const int64_t units_per_rev = revolution_ns_ * spt;
  int64_t diff = int64_t{slot} * revolution_ns_ - phase;
  if (diff < 0 && diff >= -kOnTimeSlackNs * spt) return SimDuration{0};  // rounding
  // diff mod units_per_rev: phase lies in [0, units_per_rev), so diff is at
  // least -units_per_rev, and below units_per_rev for any slot of the
  // track (every caller's path: no division then).
  if (diff < 0) diff += units_per_rev;
  else if (diff >= units_per_rev) diff %= units_per_rev;
  return SimDuration{(diff + spt - 1) / spt};  // round up to the nanosecond
}

uint32_t DriveModel::next_slot(SimTime at, uint32_t track_sectors) const {
  return next_slot_at_phase(phase_units(at, track_sectors), track_sectors);
}

uint32_t DriveModel::next_slot_at_phase(int64_t phase, uint32_t track_sectors) const {
  const int64_t spt = track_sectors;
  // Phase in slot units, less the slack, rounded up to a whole slot: at
  // most spt (phase < spt revolutions), which is slot 0 again.
  int64_t units = phase - kOnTimeSlackNs * spt;
  int64_t slot = units <= 0 ? 0 : (units + revolution_ns_ - 1) / revolution_ns_;
  return static_cast<uint32_t>(slot >= spt ? slot - spt : slot);
}

SimDuration DriveModel::transfer_time(uint32_t sectors, uint32_t track_sectors) const {
  const int64_t spt = track_sectors;
  return SimDuration{(int64_t{sectors} * revolution_ns_ + spt - 1) / spt};
}

ServiceBreakdown DriveModel::reposition(HeadPosition from, HeadPosition to) const {
  ServiceBreakdown b;
  if (from.cylinder != to.cylinder) {
    uint32_t d = from.cylinder > to.cylinder ? from.cylinder - to.cylinder
                                             : to.cylinder - from.cylinder;
    b.seek = geometry_.seek.time(d);
  }
  // Selecting another head settles in parallel with the arm's move: the
  // head is ready after max(seek, head switch), never their sum. Where the
  // switch is the longer (a track-to-track seek shorter than a head switch,
  // as on modern drives), the excess is charged as head switch time.
  if (from.head != to.head && geometry_.head_switch > b.seek)
    b.head_switch = geometry_.head_switch - b.seek;
  return b;
}

template <typename Fn>
void DriveModel::for_each_track_piece(std::span<const SectorRun> runs, Fn fn) const {
  for (const SectorRun& r : runs) {
    assert(r.first_psn + r.count <= geometry_.sectors_in_cylinders(geometry_.cylinders));
    uint64_t psn = r.first_psn;
    uint32_t left = r.count;
    while (left > 0) {
      const Chs chs = geometry_.chs_of(psn);
      const uint32_t spt = spt_of(chs);
      const uint32_t n = std::min(left, spt - chs.sector);  // to the end of this track
      fn(chs, n);
      psn += n;
      left -= n;
    }
  }
}

Access DriveModel::run(std::span<const SectorRun> runs, SimTime start, HeadPosition* head,
                       Transfer transfer, bool charge_overhead) const {
  Access a;
  if (charge_overhead) a.breakdown.overhead = geometry_.controller_overhead;
  SimTime t = start + a.breakdown.overhead;
  auto pass = [&](const Chs& chs, uint32_t n) {
    HeadPosition target{chs.cylinder, chs.head};
    ServiceBreakdown move = reposition(*head, target);
    if (transfer == Transfer::kWrite) move.seek += write_settle(*head, target);
    t += move.seek + move.head_switch;
    const uint32_t spt = spt_of(chs);
    move.rotation = rotational_wait(t, geometry_.angular_slot(chs), spt);
    move.transfer = transfer_time(n, spt);
    t += move.rotation + move.transfer;
    a.breakdown += move;
    *head = target;
  };
  // Pieces that follow one another on a track are one pass. Timed one by
  // one, each transfer rounds up to the nanosecond, and past the 16 ns
  // slack the head "misses" the next sector and waits a revolution: 256
  // one-sector map sectors in a row (a delta checkpoint's group) took 7
  // extra revolutions.
  std::optional<std::pair<Chs, uint32_t>> pending;
  for_each_track_piece(runs, [&](const Chs& chs, uint32_t n) {
    if (pending && pending->first.cylinder == chs.cylinder && pending->first.head == chs.head &&
        pending->first.sector + pending->second == chs.sector) {
      pending->second += n;
      return;
    }
    if (pending) pass(pending->first, pending->second);
    pending = std::pair{chs, n};
  });
  if (pending) pass(pending->first, pending->second);
  a.end = t;
  assert(a.end - start == a.breakdown.total());  // the breakdown is the whole time
  return a;
}

Access DriveModel::estimate(std::span<const SectorRun> runs, SimTime start, Transfer transfer,
                            bool charge_overhead) const {
  HeadPosition h = head_;
  return run(runs, start, &h, transfer, charge_overhead);
}

Access DriveModel::access(std::span<const SectorRun> runs, SimTime start, bool charge_overhead) {
  read_ahead(start);
  read_ahead_since_.reset();  // the head writes (or moves away to)
  return run(runs, start, &head_, Transfer::kWrite, charge_overhead);
}

uint32_t DriveModel::sector_at_slot(uint32_t track, uint32_t slot) const {
  const uint32_t spt = geometry_.track_sectors(track);
  const uint32_t tpc = geometry_.tracks_per_cylinder;
  const uint32_t offset = geometry_.angular_slot(Chs{track / tpc, track % tpc, 0});
  return (slot % spt + spt - offset) % spt;
}

void DriveModel::read_ahead(SimTime until) {
  if (!read_ahead_since_ || !buffer_.track() || buffer_.full()) return;
  const SimTime since = *read_ahead_since_;
  const uint32_t track_sectors = geometry_.track_sectors(*buffer_.track());
  const int64_t spt = track_sectors;
  const uint32_t slot = next_slot(since, track_sectors);
  const SimTime first_start = since + rotational_wait(since, slot, track_sectors);
  if (until <= first_start) return;
  // Slot k (from `slot`) has wholly passed once first_start + (k + 1)
  // sector times <= until; the slack absorbs the nanosecond rounding.
  int64_t passed = ((until - first_start).count() + kOnTimeSlackNs) * spt / revolution_ns_;
  passed = std::min(passed, spt);
  // Slot slot + k holds the sector k after slot's (sector_at_slot), so the
  // track's skew is looked up once, not once a sector.
  const int64_t first = sector_at_slot(*buffer_.track(), slot);
  for (int64_t k = 0; k < passed; ++k) buffer_.add(static_cast<uint32_t>((first + k) % spt));
}

Access DriveModel::read(std::span<const SectorRun> runs, SimTime start, bool charge_overhead) {
  if (!buffer_on_) return run(runs, start, &head_, Transfer::kRead, charge_overhead);
  Access a;
  if (charge_overhead) a.breakdown.overhead = geometry_.controller_overhead;
  SimTime t = start + a.breakdown.overhead;
  for_each_track_piece(runs, [&](const Chs& chs, uint32_t n) {
    const uint32_t spt = spt_of(chs);
    const HeadPosition target{chs.cylinder, chs.head};
    const uint32_t track = track_of(target);
    read_ahead(t);
    if (buffer_.has_all(track, chs.sector, n)) return;  // from the buffer

    ServiceBreakdown move = reposition(head_, target);
    t += move.seek + move.head_switch;
    // Read-ahead already running on this track (the head stayed here) is
    // reading the sector under the head, if it began before that sector.
    const bool continuing = head_ == target && read_ahead_since_ && buffer_.track() == track;
    if (buffer_.track() != track) buffer_.start(track, spt);
    if (!continuing) read_ahead_since_ = t;
    head_ = target;
    read_ahead(t);
    // The wanted sectors not yet buffered, in the order the head meets
    // them from the next slot: the read ends when the last has passed. The
    // sector under the head, if running read-ahead is reading it, ends
    // when the next slot begins.
    const uint32_t from = next_slot(t, spt);
    const SimTime next = t + rotational_wait(t, from, spt);
    std::optional<uint32_t> under;
    if (continuing && next > t &&
        next - transfer_time(1, spt) + SimDuration{kOnTimeSlackNs} >= *read_ahead_since_)
      under = sector_at_slot(track, from + spt - 1);
    uint32_t first = spt, last = 0, wanted = 0;
    bool under_wanted = false;
    for (uint32_t s = chs.sector; s < chs.sector + n; ++s) {
      if (buffer_.has(s)) continue;
      ++wanted;
      if (s == under) {
        under_wanted = true;
        continue;
      }
      uint32_t k = (geometry_.angular_slot(Chs{chs.cylinder, chs.head, s}) + spt - from) % spt;
      first = std::min(first, k);
      last = std::max(last, k);
    }
    if (wanted == 0) {  // all buffered while the head arrived
      a.breakdown += move;
      return;
    }
    SimTime end = under_wanted ? next : t;
    if (first < spt)
      end = t + rotational_wait(t, (from + first) % spt, spt) + transfer_time(last - first + 1, spt);
    // Breakdown: the wanted sectors' own passing is transfer; the rest
    // (waiting for the first, passing others in between) is rotation.
    move.transfer = std::min(end - t, transfer_time(wanted, spt));
    move.rotation = (end - t) - move.transfer;
    t = end;
    a.breakdown += move;
    read_ahead(t);
  });
  a.end = t;
  assert(a.end - start == a.breakdown.total());  // the breakdown is the whole time
  return a;
}

Access DriveModel::command_only(SimTime start) const {
  Access a;
  a.breakdown.overhead = geometry_.controller_overhead;
  a.end = start + geometry_.controller_overhead;
  return a;
}

}  // namespace vld
