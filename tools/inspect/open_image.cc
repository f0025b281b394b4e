#include "tools/inspect/open_image.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <span>

#include "core/util/error.h"

namespace vld::inspect {

namespace {

// A bad input or a failed operation: one line for the user, naming the
// image and saying what to do.
[[noreturn]] void fail(const std::string& message, int err = EINVAL) { throw Error(message, err); }

}  // namespace

// Opens path read-only (shared lock) and reads its superblock; every way
// this can fail is a one-line Error saying what to do.
OpenedImage open_read_only(const std::string& path) {
  OpenedImage img;
  img.path = path;
  if (::stat(path.c_str(), &img.st) != 0) {
    const int err = errno;
    if (err == ENOENT) fail(path + ": no such file; give the path of an image of the vld plugin", err);
    fail(path + ": cannot stat it (" + std::strerror(err) + ")", err);
  }
  if (S_ISDIR(img.st.st_mode))
    fail(path + " is a directory; give the path of an image file of the vld plugin");
  if (!S_ISREG(img.st.st_mode))
    fail(path + " is not a regular file; give the path of an image file of the vld plugin");
  try {
    img.store = FileBackingStore::open(path, /*readonly=*/true);
  } catch (const Error& e) {
    if (e.err() == EBUSY) fail(path + " is in use by a running server (locked); stop it first", EBUSY);
    if (e.err() == EACCES) fail(path + ": permission denied; run as a user who can read it", EACCES);
    throw;
  }
  img.file_bytes = img.store->size_bytes();
  if (img.file_bytes < kSuperblockBytes)
    fail(path + " is not an image of the vld plugin (" + std::to_string(img.file_bytes) +
         " bytes, too small for a superblock); give the path of an image the vld plugin made");
  std::array<unsigned char, kSuperblockBytes> bytes;
  try {
    img.store->read(0, std::as_writable_bytes(std::span(bytes)));
  } catch (const Error& e) {
    fail(path + ": " + e.what(), e.err());
  }
  std::string why;
  switch (decode_superblock(bytes.data(), &img.sb, &why)) {
    case DecodeResult::kOk: break;
    case DecodeResult::kNotVld:
      fail(path + " is not an image of the vld plugin (no VLDIMAGE magic at offset 0); give the path of an "
                  "image the vld plugin made");
    case DecodeResult::kDamagedStart:
      fail(path + ": the superblock is damaged (no VLDIMAGE magic, but a vld superblock's "
                  "checksum at byte 4088); without it nothing on the image can be located");
    case DecodeResult::kBadChecksum:
      fail(path + ": the superblock is damaged (checksum mismatch); without it nothing on the "
                  "image can be located");
    case DecodeResult::kUnsupportedVersion:
      fail(path + " was made by a different vld format version; inspect it with that vld's "
                  "vld-inspect");
    case DecodeResult::kInvalid:
      fail(path + ": the superblock is invalid (" + why + "); the image cannot be read");
  }
  if (img.file_bytes < img.sb.image_bytes())
    fail(path + " is truncated: " + std::to_string(img.file_bytes) + " bytes, its superblock " +
         "needs " + std::to_string(img.sb.image_bytes()) + "; was it copied in part?");
  return img;
}

}  // namespace vld::inspect
