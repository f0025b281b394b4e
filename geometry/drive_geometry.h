// DriveGeometry: the mechanical description of a modelled disk drive, and
// the physical sector numbering that the backing image is laid out in.
//
// A drive records in zones (zoned bit recording): the cylinders of a zone
// all have its number of sectors per track and its skews, and outer zones
// (lower cylinders) hold more sectors per track than inner ones. Track
// numbers run cylinder by cylinder, track = cylinder * tracks_per_cylinder +
// head, and physical sector numbers (PSN) run track by track:
//
//   psn = zone.first_psn + ((cylinder - zone.first_cylinder) * tracks_per_cylinder
//                           + head) * zone.sectors_per_track + sector
//
// and a PSN's bytes live at image offset platter_offset + psn * 512, so the
// backing image is a picture of the platters. Sector `sector` of a track
// passes under the head at angular slot (sector + skew(cylinder, head)) mod
// the track's sectors, where the skew (in sectors) lets a sequential transfer
// continue on the next track after a head switch or a one-cylinder seek
// without losing a revolution, as real drives are formatted. A zone's first
// track starts at slot 0 (DiskSim's "offset of first block" 0).
//
// A single-zone drive, like the paper's simulator (paper 001, section 2.2:
// "the model simulates a single density zone while the actual disk has
// multiple zones"), leaves `zones` empty: sectors_per_track and the two
// skews are its one zone. A zoned drive lists its zones and has those three
// fields 0, so that code which ignores zones fails loudly (check() holds
// either form). Every question about tracks and sectors goes through the
// zone accessors below, which answer for both forms.
//
// Invariants of a zoned drive (check()): zones[0].first_cylinder == 0,
// first cylinders ascending and below `cylinders`, each zone's first_psn
// the sectors of the zones before it (number_zones() sets them).
//
// Thread-safety: immutable value.
#ifndef VLD_GEOMETRY_DRIVE_GEOMETRY_H_
#define VLD_GEOMETRY_DRIVE_GEOMETRY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "geometry/seek_curve.h"
#include "geometry/sim_time.h"

namespace vld {

inline constexpr uint32_t kSectorBytes = 512;
// The most zones a drive may have (the superblock's table holds them).
inline constexpr uint32_t kMaxZones = 200;

struct Chs {
  uint32_t cylinder = 0;
  uint32_t head = 0;
  uint32_t sector = 0;
  bool operator==(const Chs&) const = default;
};

// One recording zone: cylinders from first_cylinder up to the next zone's.
struct Zone {
  uint32_t first_cylinder = 0;
  uint32_t sectors_per_track = 0;
  uint32_t track_skew_sectors = 0;
  uint32_t cylinder_skew_sectors = 0;
  uint64_t first_psn = 0;  // derived: DriveGeometry::number_zones()
  bool operator==(const Zone&) const = default;
};

struct DriveGeometry {
  std::string name;                  // the preset it started from; overrides
                                     // live in the fields, not the name
  // A single-zone drive's one zone (n in paper 001); 0 on a zoned drive.
  uint32_t sectors_per_track = 0;
  uint32_t tracks_per_cylinder = 0;  // t in paper 001 (= data heads)
  uint32_t cylinders = 0;            // of the whole drive: the seek curve's domain
  uint32_t rpm = 0;
  SimDuration head_switch{};         // s in paper 001
  SimDuration controller_overhead{}; // o in paper 001 ("SCSI overhead"), per command
  // Added to a seek before writing: a write needs the head settled on the
  // track more exactly than a read (DiskSim's "additional write settling
  // delay"); 0 on the paper's drives.
  SimDuration write_settle{};
  SeekCurve seek;
  uint32_t track_skew_sectors = 0;     // single-zone drive; 0 on a zoned one
  uint32_t cylinder_skew_sectors = 0;  // single-zone drive; 0 on a zoned one
  std::vector<Zone> zones;             // a zoned drive's, outermost first

  // One revolution, 60/RPM s, rounded to the nanosecond.
  SimDuration revolution() const;

  // --- Zones: valid for both forms.
  bool zoned() const { return !zones.empty(); }
  uint32_t zone_count() const { return zoned() ? static_cast<uint32_t>(zones.size()) : 1; }
  Zone zone(uint32_t index) const;
  // REQUIRES: cylinder < cylinders.
  uint32_t zone_index_of_cylinder(uint32_t cylinder) const;
  Zone zone_of_track(uint32_t track) const;
  uint32_t track_sectors(uint32_t track) const { return zone_of_track(track).sectors_per_track; }
  uint64_t track_first_psn(uint32_t track) const;
  uint32_t track_of_psn(uint64_t psn) const;
  // Sectors of cylinders [0, cylinder): the PSN of the cylinder's first
  // sector, and with cylinder == cylinders, the drive's whole capacity
  // (beyond it, as if the innermost zone went on: what a size too large
  // for the drive would need).
  uint64_t cylinder_first_psn(uint32_t cylinder) const;
  uint64_t sectors_in_cylinders(uint32_t count) const { return cylinder_first_psn(count); }
  uint64_t bytes_in_cylinders(uint32_t count) const {
    return sectors_in_cylinders(count) * kSectorBytes;
  }
  uint64_t cylinder_sectors(uint32_t cylinder) const {
    return uint64_t{zone(zone_index_of_cylinder(cylinder)).sectors_per_track} *
           tracks_per_cylinder;
  }
  uint32_t max_sectors_per_track() const;
  uint32_t min_sectors_per_track() const;
  // Time for one sector of `track` to pass under the head (fractional ns).
  double sector_time_ns(uint32_t track) const;
  // REQUIRES: psn < sectors_in_cylinders(cylinders).
  Chs chs_of(uint64_t psn) const;
  uint64_t psn_of(Chs chs) const;
  // Angular slot at which the sector passes under the head, see above.
  uint32_t angular_slot(Chs chs) const;

  // --- Single-zone drives only (REQUIRES: !zoned()).
  double sector_time_ns() const;
  uint64_t sectors_per_cylinder() const {
    return uint64_t{sectors_per_track} * tracks_per_cylinder;
  }
  uint64_t track_bytes() const { return uint64_t{sectors_per_track} * kSectorBytes; }
  uint64_t cylinder_bytes() const { return sectors_per_cylinder() * kSectorBytes; }


  // Sets the skews (every zone's) to the smallest whole number of sectors
  // that covers a head switch (track skew) and a move to the next
  // cylinder's first track, max(seek(1), head switch) (cylinder skew).
  void derive_skews();
  // Sets each zone's first_psn from the zones before it.
  void number_zones();

  // Why this geometry is unusable, or "" if it is fine.
  std::string check() const;

  bool operator==(const DriveGeometry&) const = default;
};

}  // namespace vld

#endif  // VLD_GEOMETRY_DRIVE_GEOMETRY_H_
