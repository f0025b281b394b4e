// ScanSet: the cylinders of the log window that recovery reads after a crash.
//
// Paper 001's recovery reads the whole region the writes since the last
// record may have used (section 3.2). Eager writing stays near the head, so
// between two records the map sectors cluster on a few cylinders of the
// window (4 GiB st19101, 20,000 random synchronous writes: 3 to 6 of its
// 32 on average, docs/scale.md). A log record that names a narrow set
// therefore lets recovery read a few dozen tracks instead of the window's
// hundreds, under this invariant, which VldDisk keeps and recovery relies on:
//
//   Every map sector written after a narrow record (a seq from the record's
//   next_seq on) lies on a cylinder of the record's set, or next to the
//   cylinder of a map sector written after the same record before it, and
//   successfully (closure by neighbours: add_neighbourhood).
//
// Recovery reads the record's set, and the neighbours of every map sector
// newer than the record that it finds there, until nothing is added. A map
// sector that a completed flush covers is found: the map sector that put
// its cylinder in the set was written before it, so the same flush covers
// that one too, and by induction recovery finds it (docs/crash-contract.md).
// A placement that would break the invariant is preceded by a record that
// names a set around it, or the whole window when such records come more
// often than one per two others (VldDisk::Impl::place_in_scan_set).
//
// Cylinders are indexed relative to the window's first (the window wraps at
// the last cylinder), so neighbours never leave the window. A whole set
// reads the window as a record without a set does.
//
// Thread-safety: a value; not synchronized.
#ifndef VLD_CORE_VLD_SCAN_SET_H_
#define VLD_CORE_VLD_SCAN_SET_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "core/vld/eager_allocator.h"

namespace vld {

class ScanSet {
 public:
  // What a log record can name: its 416 spare bytes, one bit per cylinder
  // (docs/format.md). A wider window is always scanned whole.
  static constexpr uint32_t kMaxCylinders = 416 * 8;

  // The whole window.
  static ScanSet whole(const CylinderWindow& window, uint32_t disk_cylinders);
  // No cylinder yet. REQUIRES: narrow_allowed(window, disk_cylinders).
  static ScanSet none(const CylinderWindow& window, uint32_t disk_cylinders);
  static bool narrow_allowed(const CylinderWindow& window, uint32_t disk_cylinders);

  bool is_whole() const { return whole_; }
  const CylinderWindow& window() const { return window_; }
  // Where `cylinder` lies in the window (0 .. width - 1), or nullopt.
  std::optional<uint32_t> index_of(uint32_t cylinder) const;
  uint32_t cylinder_at(uint32_t index) const { return (window_.first + index) % disk_cylinders_; }
  uint32_t width() const { return width_; }

  bool contains(uint32_t cylinder) const;
  bool contains_index(uint32_t index) const { return whole_ || in_[index]; }
  // Adds `cylinder` if it lies in the window.
  void add(uint32_t cylinder);
  // Adds `cylinder` and the window's cylinders on either side of it.
  void add_neighbourhood(uint32_t cylinder);
  // The neighbourhood's indices, [first, last] (at most 3), for
  // recovery's closure and add_neighbourhood.
  struct IndexRange {
    uint32_t first, last;
  };
  IndexRange neighbourhood(uint32_t index) const;
  uint32_t count() const;

  // The record's bytes: a bit per index, kMaxCylinders / 8 bytes.
  // REQUIRES (encode): !is_whole().
  void encode_bits(unsigned char* bits) const;
  static ScanSet decode_bits(const unsigned char* bits, const CylinderWindow& window,
                             uint32_t disk_cylinders);

 private:
  ScanSet(const CylinderWindow& window, uint32_t disk_cylinders, bool whole);

  CylinderWindow window_;
  uint32_t disk_cylinders_ = 0;
  uint32_t width_ = 0;      // min(window.count, disk_cylinders)
  bool whole_ = true;
  std::vector<bool> in_;    // by index; empty when whole_
};

}  // namespace vld

#endif  // VLD_CORE_VLD_SCAN_SET_H_
