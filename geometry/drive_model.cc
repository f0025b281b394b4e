#include "geometry/drive_model.h"

#include <algorithm>
#include <cstdlib>

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
      revolution_ns_(geometry.revolution().count()) {}

namespace {
int64_t floor_mod(int64_t a, int64_t m) {
  int64_t r = a % m;
  return r < 0 ? r + m : r;
}
}  // namespace

double DriveModel::angle_sectors(SimTime t) const {
  int64_t phase = floor_mod(t.time_since_epoch().count(), revolution_ns_);
  return static_cast<double>(phase) * geometry_.sectors_per_track /
         static_cast<double>(revolution_ns_);
}

SimDuration DriveModel::rotational_wait(SimTime at, uint32_t slot) const {
  const int64_t spt = geometry_.sectors_per_track;
  const int64_t units_per_rev = revolution_ns_ * spt;
  int64_t phase = floor_mod(at.time_since_epoch().count(), revolution_ns_) * spt;
  int64_t diff = int64_t{slot} * revolution_ns_ - phase;
  if (diff < 0 && diff >= -kOnTimeSlackNs * spt) return SimDuration{0};  // rounding
  diff = floor_mod(diff, units_per_rev);
  return SimDuration{(diff + spt - 1) / spt};  // round up to the nanosecond
}

uint32_t DriveModel::next_slot(SimTime at) const {
  const int64_t spt = geometry_.sectors_per_track;
  // Phase in slot units, less the slack, rounded up to a whole slot.
  int64_t phase = floor_mod(at.time_since_epoch().count(), revolution_ns_) * spt;
  int64_t units = phase - kOnTimeSlackNs * spt;
  int64_t slot = units <= 0 ? 0 : (units + revolution_ns_ - 1) / revolution_ns_;
  return static_cast<uint32_t>(slot % spt);
}

SimDuration DriveModel::transfer_time(uint32_t sectors) const {
  const int64_t spt = geometry_.sectors_per_track;
  return SimDuration{(int64_t{sectors} * revolution_ns_ + spt - 1) / spt};
}

ServiceBreakdown DriveModel::reposition(HeadPosition from, HeadPosition to) const {
  ServiceBreakdown b;
  if (from.cylinder != to.cylinder) {
    uint32_t d = from.cylinder > to.cylinder ? from.cylinder - to.cylinder
                                             : to.cylinder - from.cylinder;
    b.seek = geometry_.seek.time(d);
  } else if (from.head != to.head) {
    b.head_switch = geometry_.head_switch;
  }
  return b;
}

Access DriveModel::run(std::span<const SectorRun> runs, SimTime start, HeadPosition* head,
                       bool charge_overhead) const {
  Access a;
  if (charge_overhead) a.breakdown.overhead = geometry_.controller_overhead;
  SimTime t = start + a.breakdown.overhead;
  const uint32_t spt = geometry_.sectors_per_track;
  for (const SectorRun& r : runs) {
    uint64_t psn = r.first_psn;
    uint32_t left = r.count;
    while (left > 0) {
      Chs chs = geometry_.chs_of(psn);
      uint32_t n = std::min(left, spt - chs.sector);  // to the end of this track
      HeadPosition target{chs.cylinder, chs.head};
      ServiceBreakdown move = reposition(*head, target);
      t += move.seek + move.head_switch;
      SimDuration wait = rotational_wait(t, geometry_.angular_slot(chs));
      SimDuration xfer = transfer_time(n);
      t += wait + xfer;
      move.rotation = wait;
      move.transfer = xfer;
      a.breakdown += move;
      *head = target;
      psn += n;
      left -= n;
    }
  }
  a.end = t;
  return a;
}

Access DriveModel::estimate(std::span<const SectorRun> runs, SimTime start,
                            bool charge_overhead) const {
  HeadPosition h = head_;
  return run(runs, start, &h, charge_overhead);
}

Access DriveModel::access(std::span<const SectorRun> runs, SimTime start, bool charge_overhead) {
  return run(runs, start, &head_, charge_overhead);
}

Access DriveModel::command_only(SimTime start) const {
  Access a;
  a.breakdown.overhead = geometry_.controller_overhead;
  a.end = start + geometry_.controller_overhead;
  return a;
}

}  // namespace vld
