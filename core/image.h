// Opening image files of any mode: the superblock is read and validated,
// nothing else; what a mode makes of the rest is its own (make_disk,
// core/modes/mode_image.h). Every failure throws Error with a message that
// names the parameter or the damage, and leaves an existing image
// byte-for-byte untouched: opening never writes.
//
// Thread-safety: functions without shared state.
#ifndef VLD_CORE_IMAGE_H_
#define VLD_CORE_IMAGE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/image_format.h"
#include "core/store/backing_store.h"
#include "geometry/drive_geometry.h"
#include "geometry/span.h"

namespace vld {

// What a new image is asked to be (the plugin's and the tools' size=,
// block=, spare= or span=, geometry, and mode=lld's segment= and nvram=): the input
// of plan_image (core/modes/mode_image.h) and of each mode's sizing rules.
struct FormatOptions {
  DiskMode mode = DiskMode::kInplace;
  uint64_t export_bytes = 0;
  uint32_t block_bytes = 4096;
  uint32_t spare_percent = 25;
  DriveGeometry geometry;  // the whole drive, with skews derived
  // span=: the platters are these cylinders of `geometry` (span_of), all of
  // them, and spare_percent is not used; without, the outermost cylinders
  // that hold the export, its metadata and spare_percent.
  std::optional<CylinderSpan> span;
  // mode=lld only (segment=, nvram=); other modes leave the superblock's 0.
  uint64_t segment_bytes = kDefaultSegmentBytes;
  uint64_t nvram_bytes = kDefaultNvramBytes;
};

// Opens an existing image and validates its superblock and size.
std::unique_ptr<FileBackingStore> open_image(const std::string& path, Superblock* sb);
// The same under an ImageLock the caller holds: O_RDONLY, or O_RDWR once
// the lock is exclusive.
std::unique_ptr<FileBackingStore> open_image_locked_by(const std::string& path, bool readonly,
                                                       const ImageLock& lock, Superblock* sb);
// The same for any store (tests, tools).
Superblock read_superblock(BackingStore& store, const std::string& name);

}  // namespace vld

#endif  // VLD_CORE_IMAGE_H_
