// open_read_only: a vld image opened for inspection, read-only by
// construction, and its superblock.
//
// The file is opened O_RDONLY with a shared flock
// (FileBackingStore::open(path, readonly=true)), so an image a server is
// serving (it holds the exclusive lock) is refused, and nothing here can
// write to it.
//
// Errors: every way opening can fail is a vld::Error whose message is one
// line for the user, naming the path and saying what to do (vld-inspect
// exits 8 on it).
//
// Invariants of an OpenedImage: store is open and locked shared; sb decoded
// and checked; file_bytes >= sb.image_bytes().
//
// Thread-safety: none needed (vld-inspect is single-threaded).
#ifndef VLD_TOOLS_INSPECT_OPEN_IMAGE_H_
#define VLD_TOOLS_INSPECT_OPEN_IMAGE_H_

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>

#include "core/image_format.h"
#include "core/store/backing_store.h"

namespace vld::inspect {

struct OpenedImage {
  std::string path;
  std::unique_ptr<FileBackingStore> store;
  Superblock sb;
  uint64_t file_bytes = 0;
  struct stat st {};  // the file's, to tell it apart from the --layout path
};

OpenedImage open_read_only(const std::string& path);

}  // namespace vld::inspect

#endif  // VLD_TOOLS_INSPECT_OPEN_IMAGE_H_
