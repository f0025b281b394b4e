// Images of any mode: planning a new one's superblock, formatting it, and
// opening one as the Disk of its mode. This is where the modes meet: each
// mode's sizing rules (core/vld/vld_plan.h, core/lld/lld_plan.h), format
// and Disk are its own, and this file only dispatches on DiskMode. Every
// failure throws Error with a message that names the parameter or the
// damage, and leaves an existing image byte-for-byte untouched: create
// refuses to touch a path that exists.
//
// Thread-safety: functions without shared state.
#ifndef VLD_CORE_MODES_MODE_IMAGE_H_
#define VLD_CORE_MODES_MODE_IMAGE_H_

#include <memory>
#include <string>

#include "core/disk.h"
#include "core/image.h"
#include "core/image_format.h"
#include "core/lld/lld_options.h"
#include "core/store/backing_store.h"
#include "core/vld/vld_options.h"
#include "core/vld/vld_plan.h"

namespace vld {

// The superblock of a new image: sizes the platters and draws the secret.
// Throws Error (EINVAL, naming the parameter and what will do) for options
// that cannot make an image every block of whose export can be written
// (check_vld_fillable included), so no caller can format an unfillable plan.
// mode=lld's platters and layout follow core/lld/lld_plan.h, and its
// refusals of segment= and nvram= are the errors.
Superblock plan_image(const FormatOptions& options);
// The same without check_vld_fillable: for tests that need an image whose
// platters cannot hold every block, to see how the disk and the tools cope
// with it. Nothing else calls it.
Superblock plan_image_unchecked(const FormatOptions& options);

// Writes an empty disk onto a zeroed store: the superblock, and for vld the
// first log record, for lld its checkpoint and NVRAM header
// (LldDisk::format). create_image() does this to a new file.
void format_store(BackingStore& store, const Superblock& sb);

// Creates path (which must not exist) holding an empty disk. On failure the
// partial file is removed.
std::unique_ptr<FileBackingStore> create_image(const std::string& path, const Superblock& sb);

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

#endif  // VLD_CORE_MODES_MODE_IMAGE_H_
