// DriveGeometry: the mechanical description of a modelled disk drive, and
// the physical sector numbering that the backing image is laid out in.
//
// Physical sector numbers (PSN) run track by track, cylinder by cylinder:
//
//   psn = (cylinder * tracks_per_cylinder + head) * sectors_per_track + sector
//
// and a PSN's bytes live at image offset platter_offset + psn * 512, so the
// backing image is a picture of the platters. Sector `sector` of a track
// passes under the head at angular slot (sector + skew(cylinder, head)) mod
// sectors_per_track, where the skew (in sectors) lets a sequential transfer
// continue on the next track after a head switch or a one-cylinder seek
// without losing a revolution, as real drives are formatted.
//
// The model has one zone (constant sectors per track), like the paper's
// simulator (paper 001, section 2.2: "the model simulates a single density
// zone while the actual disk has multiple zones").
//
// Thread-safety: immutable value.
#ifndef VLD_GEOMETRY_DRIVE_GEOMETRY_H_
#define VLD_GEOMETRY_DRIVE_GEOMETRY_H_

#include <cstdint>
#include <string>

#include "geometry/seek_curve.h"
#include "geometry/sim_time.h"

namespace vld {

inline constexpr uint32_t kSectorBytes = 512;

struct Chs {
  uint32_t cylinder = 0;
  uint32_t head = 0;
  uint32_t sector = 0;
  bool operator==(const Chs&) const = default;
};

struct DriveGeometry {
  std::string name;                  // the preset it started from; overrides
                                     // live in the fields, not the name
  uint32_t sectors_per_track = 0;    // n in paper 001
  uint32_t tracks_per_cylinder = 0;  // t in paper 001 (= data heads)
  uint32_t cylinders = 0;            // of the whole drive: the seek curve's domain
  uint32_t rpm = 0;
  SimDuration head_switch{};         // s in paper 001
  SimDuration controller_overhead{}; // o in paper 001 ("SCSI overhead"), per command
  SeekCurve seek;
  uint32_t track_skew_sectors = 0;
  uint32_t cylinder_skew_sectors = 0;

  // One revolution, 60/RPM s, rounded to the nanosecond.
  SimDuration revolution() const;
  // Time for one sector to pass under the head, exact (fractional ns).
  double sector_time_ns() const;
  uint64_t sectors_per_cylinder() const {
    return uint64_t{sectors_per_track} * tracks_per_cylinder;
  }
  uint64_t track_bytes() const { return uint64_t{sectors_per_track} * kSectorBytes; }
  uint64_t cylinder_bytes() const { return sectors_per_cylinder() * kSectorBytes; }

  Chs chs_of(uint64_t psn) const;
  uint64_t psn_of(Chs chs) const;
  // Angular slot at which the sector passes under the head, see above.
  uint32_t angular_slot(Chs chs) const;

  // Sets the skews to the smallest whole number of sectors that covers a head
  // switch (track skew) and a move to the next cylinder's first track,
  // max(seek(1), head switch) (cylinder skew).
  void derive_skews();

  // Why this geometry is unusable, or "" if it is fine.
  std::string check() const;

  bool operator==(const DriveGeometry&) const = default;
};

}  // namespace vld

#endif  // VLD_GEOMETRY_DRIVE_GEOMETRY_H_
