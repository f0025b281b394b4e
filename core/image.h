// Creating and opening vld images. Every failure throws Error with a message
// that names the parameter or the damage, and leaves an existing image
// byte-for-byte untouched: open never writes, and create refuses to touch a
// path that exists.
//
// Thread-safety: functions without shared state.
#ifndef VLD_CORE_IMAGE_H_
#define VLD_CORE_IMAGE_H_

#include <memory>
#include <string>

#include "core/store/backing_store.h"
#include "core/disk.h"
#include "core/image_format.h"
#include "core/lld/lld_disk.h"
#include "core/vld/vld_disk.h"

namespace vld {

struct FormatOptions {
  DiskMode mode = DiskMode::kInplace;
  uint64_t export_bytes = 0;
  uint32_t block_bytes = 4096;
  uint32_t spare_percent = 25;
  DriveGeometry geometry;  // with skews derived
  // mode=lld only (segment=, nvram=); other modes leave the superblock's 0.
  uint64_t segment_bytes = kDefaultSegmentBytes;
  uint64_t nvram_bytes = kDefaultNvramBytes;
};

// The superblock of a new image: sizes the platters and draws the secret.
// Throws Error (EINVAL, naming the parameter and what will do) for options
// that cannot make an image every block of whose export can be written
// (check_vld_fillable included), so no caller can format an unfillable plan.
//
// mode=lld: the platters are the cylinders the other modes get for the same
// size, block and spare, plus the whole cylinders of mode=lld's system area
// (checkpoint slots and NVRAM region: lld_system_area_tracks), and never fewer than lld_cylinders_needed; the
// layout (plan_lld_layout) is checked, and its refusals of segment= and
// nvram= are the errors.
Superblock plan_image(const FormatOptions& options);
// The same without check_vld_fillable: for tests that need an image whose
// platters cannot hold every block (as images before that rule could be),
// to see how the disk and the tools cope with it. Nothing else calls it.
Superblock plan_image_unchecked(const FormatOptions& options);

// mode=vld: the most blocks the platters are sure to hold whatever order the
// writes come in: floor((sectors_per_track - 1) / block sectors) on every
// track but the system and reserve tracks (a block beside at least one map
// sector), less room for two versions of every map sector. Writes strand
// the few sectors the head passes during each command's overhead; repacking
// (VldDisk::repack) recovers them up to this.
uint64_t vld_block_capacity(const Superblock& sb);

// Throws (EINVAL, naming the smallest spare= that is enough) unless every
// block of a vld export can be written: vld_block_capacity() covers it.
void check_vld_fillable(const FormatOptions& options, const Superblock& sb);

// Writes an empty disk onto a zeroed store: the superblock, and for vld the
// first log record, for lld its checkpoint and NVRAM header
// (LldDisk::format). create_image() does this to a new file.
void format_store(BackingStore& store, const Superblock& sb);

// Creates path (which must not exist) holding an empty disk. On failure the
// partial file is removed.
std::unique_ptr<FileBackingStore> create_image(const std::string& path, const Superblock& sb);

// Opens an existing image and validates its superblock and size.
std::unique_ptr<FileBackingStore> open_image(const std::string& path, Superblock* sb);
// The same under an ImageLock the caller holds: O_RDONLY, or O_RDWR once
// the lock is exclusive.
std::unique_ptr<FileBackingStore> open_image_locked_by(const std::string& path, bool readonly,
                                                       const ImageLock& lock, Superblock* sb);
// The same for any store (tests, tools).
Superblock read_superblock(BackingStore& store, const std::string& name);

// Run-time choices for a served disk (not stored in the image).
struct DiskOptions {
  bool track_buffer = true;  // track_buffer=
  VldOptions vld;            // mode=vld only
  LldOptions lld;            // mode=lld only
};

// The Disk for the image's mode (opening a vld image recovers it).
std::unique_ptr<Disk> make_disk(std::unique_ptr<BackingStore> store, const Superblock& sb,
                                const DiskOptions& options = {});

}  // namespace vld

#endif  // VLD_CORE_IMAGE_H_
