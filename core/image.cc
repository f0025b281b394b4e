#include "core/image.h"

#include <sodium.h>
#include <unistd.h>

#include <string>

#include "core/inplace_disk.h"
#include "core/util/error.h"
#include "core/util/units.h"

namespace vld {


Superblock plan_image(const FormatOptions& o) {
  const DriveGeometry& g = o.geometry;
  if (std::string why = g.check(); !why.empty()) throw Error("geometry: " + why, EINVAL);
  if (o.block_bytes < kSectorBytes || o.block_bytes > 65536 ||
      (o.block_bytes & (o.block_bytes - 1)) != 0)
    throw Error("block=" + std::to_string(o.block_bytes) +
                    " must be a power of two from 512 to 65536",
                EINVAL);
  if (o.export_bytes == 0 || o.export_bytes % o.block_bytes != 0)
    throw Error("size=" + std::to_string(o.export_bytes) + " must be a positive multiple of the " +
                    std::to_string(o.block_bytes) + "-byte block (e.g. size=1G)",
                EINVAL);
  if (o.spare_percent > 1000)
    throw Error("spare=" + std::to_string(o.spare_percent) + " must be from 0 to 1000 (percent)",
                EINVAL);
  uint32_t cyl = cylinders_needed(g, o.export_bytes, o.block_bytes, o.spare_percent);
  if (cyl > g.cylinders)
    throw Error("size=" + human_bytes(o.export_bytes) + " with spare=" +
                    std::to_string(o.spare_percent) + "% needs " + std::to_string(cyl) +
                    " cylinders but the " + g.name + " has " + std::to_string(g.cylinders) +
                    "; lower size= or spare=, or raise cylinders=",
                EINVAL);
  Superblock sb;
  sb.mode = o.mode;
  sb.export_bytes = o.export_bytes;
  sb.block_bytes = o.block_bytes;
  sb.spare_percent = o.spare_percent;
  sb.simulated_cylinders = cyl;
  sb.geometry = g;
  if (sodium_init() < 0) throw Error("libsodium failed to initialise", EIO);
  randombytes_buf(sb.secret.data(), sb.secret.size());
  return sb;
}

void format_store(BackingStore& store, const Superblock& sb) {
  auto bytes = encode_superblock(sb);
  store.write(0, std::as_bytes(std::span(bytes)));
  if (sb.mode == DiskMode::kVld) VldDisk::format(store, sb);
  store.sync();
}

std::unique_ptr<FileBackingStore> create_image(const std::string& path, const Superblock& sb) {
  auto store = FileBackingStore::create(path, sb.image_bytes());
  try {
    format_store(*store, sb);
  } catch (...) {
    store.reset();
    ::unlink(path.c_str());
    throw;
  }
  return store;
}

Superblock read_superblock(BackingStore& store, const std::string& name) {
  if (store.size_bytes() < kSuperblockBytes)
    throw Error("file=" + name +
                    " is not a vld image (too small to hold a superblock); give a new path "
                    "to create one",
                EINVAL);
  std::array<unsigned char, kSuperblockBytes> bytes;
  store.read(0, std::as_writable_bytes(std::span(bytes)));
  Superblock sb;
  std::string why;
  switch (decode_superblock(bytes.data(), &sb, &why)) {
    case DecodeResult::kOk: break;
    case DecodeResult::kNotVld:
      throw Error("file=" + name +
                      " is not a vld image (no VLDIMAGE magic); refusing to touch it, give "
                      "a new path to create one",
                  EINVAL);
    case DecodeResult::kDamagedStart:
      throw Error("file=" + name +
                      " has a damaged superblock (no VLDIMAGE magic, but a vld superblock's "
                      "checksum at byte 4088); the image cannot be used as it is",
                  EIO);
    case DecodeResult::kBadChecksum:
      throw Error("file=" + name +
                      " has a damaged superblock (checksum mismatch); the image cannot be "
                      "used as it is",
                  EIO);
    case DecodeResult::kUnsupportedVersion:
      throw Error("file=" + name +
                      " was made by a different vld format version; use the vld that made it",
                  EINVAL);
    case DecodeResult::kInvalid:
      throw Error("file=" + name + " has an invalid superblock (" + why + ")", EIO);
  }
  if (store.size_bytes() < sb.image_bytes())
    throw Error("file=" + name + " is truncated: " + std::to_string(store.size_bytes()) +
                    " bytes, the superblock needs " + std::to_string(sb.image_bytes()),
                EIO);
  return sb;
}

std::unique_ptr<FileBackingStore> open_image(const std::string& path, Superblock* sb) {
  auto store = FileBackingStore::open(path, /*readonly=*/false);
  *sb = read_superblock(*store, path);
  return store;
}

std::unique_ptr<Disk> make_disk(std::unique_ptr<BackingStore> store, const Superblock& sb,
                                const DiskOptions& options) {
  std::unique_ptr<Disk> disk;
  switch (sb.mode) {
    case DiskMode::kInplace: disk = std::make_unique<InplaceDisk>(std::move(store), sb); break;
    case DiskMode::kVld:
      disk = std::make_unique<VldDisk>(std::move(store), sb, options.vld, options.track_buffer);
      break;
  }
  if (!disk) throw Error("unknown disk mode", EINVAL);
  disk->set_track_buffer(options.track_buffer);
  return disk;
}

}  // namespace vld
