#include "core/image.h"

#include <array>
#include <span>
#include <string>

#include "core/util/error.h"

namespace vld {

Superblock read_superblock(BackingStore& store, const std::string& name) {
  if (store.size_bytes() < kSuperblockBytes)
    throw Error("file=" + name +
                    " is not an image of the vld plugin (too small to hold a superblock); give a new path "
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
                      " is not an image of the vld plugin (no VLDIMAGE magic); refusing to touch it, give "
                      "a new path to create one",
                  EINVAL);
    case DecodeResult::kDamagedStart:
      throw Error("file=" + name +
                      " has a damaged superblock (no VLDIMAGE magic, but a vld superblock's "
                      "checksum at byte 4088); the image cannot be used as it is: restore it "
                      "from a copy",
                  EIO);
    case DecodeResult::kBadChecksum:
      throw Error("file=" + name +
                      " has a damaged superblock (checksum mismatch); the image cannot be "
                      "used as it is: restore it from a copy",
                  EIO);
    case DecodeResult::kUnsupportedVersion:
      throw Error("file=" + name +
                      " was made by a different vld format version; use the vld that made it",
                  EINVAL);
    case DecodeResult::kInvalid:
      throw Error("file=" + name + " has an invalid superblock (" + why +
                      "); restore the image from a copy",
                  EIO);
  }
  if (store.size_bytes() < sb.image_bytes())
    throw Error("file=" + name + " is truncated: " + std::to_string(store.size_bytes()) +
                    " bytes, the superblock needs " + std::to_string(sb.image_bytes()) +
                    "; copy the whole image again (or restore it from a copy)",
                EIO);
  return sb;
}

std::unique_ptr<FileBackingStore> open_image(const std::string& path, Superblock* sb) {
  auto store = FileBackingStore::open(path, /*readonly=*/false);
  *sb = read_superblock(*store, path);
  return store;
}

std::unique_ptr<FileBackingStore> open_image_locked_by(const std::string& path, bool readonly,
                                                       const ImageLock& lock, Superblock* sb) {
  auto store = FileBackingStore::open_locked_by(path, readonly, lock);
  *sb = read_superblock(*store, path);
  return store;
}

}  // namespace vld
