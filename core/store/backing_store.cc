#include "core/store/backing_store.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>

#include "core/util/error.h"

namespace vld {

namespace {

// Opens an existing image, refusing anything but a regular file. O_NONBLOCK
// so that a FIFO given as file= is refused, not waited on for a writer
// forever; cleared again (it means nothing to a regular file's I/O, but the
// descriptor should say what it is used for). Returns the descriptor and
// the file's size.
std::pair<int, uint64_t> open_regular(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_NONBLOCK | O_CLOEXEC);
  if (fd == -1) throw_errno("file=" + path + ": cannot open the image");
  struct stat st;
  const bool stat_ok = ::fstat(fd, &st) == 0;
  const int e = errno;
  if (!stat_ok || !S_ISREG(st.st_mode)) {
    ::close(fd);
    if (!stat_ok) {
      errno = e;
      throw_errno("file=" + path);
    }
    throw Error("file=" + path + " is not a regular file; give the path of an image of the vld plugin", EINVAL);
  }
  if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) == -1) {
    const int fe = errno;
    ::close(fd);
    errno = fe;
    throw_errno("file=" + path);
  }
  return {fd, static_cast<uint64_t>(st.st_size)};
}

}  // namespace

FileBackingStore::FileBackingStore(std::string path, int fd, uint64_t size)
    : path_(std::move(path)), fd_(fd), size_(size) {}

FileBackingStore::~FileBackingStore() {
  if (fd_ >= 0) ::close(fd_);  // also drops the flock
}

void FileBackingStore::lock_or_throw(bool shared) {
  if (::flock(fd_, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == -1) {
    if (errno == EWOULDBLOCK)
      throw Error("file=" + path_ +
                      " is in use by another vld server (it is locked); stop that "
                      "server or use another image",
                  EBUSY);
    throw_errno("file=" + path_ + ": cannot lock");
  }
}

std::unique_ptr<FileBackingStore> FileBackingStore::create(const std::string& path,
                                                           uint64_t size_bytes) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd == -1) {
    const int e = errno;
    struct stat st;
    // O_EXCL refuses a dangling symbolic link with EEXIST: say which.
    if (e == EEXIST && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
      throw Error("file=" + path + " is a symbolic link to a missing file; give the path of "
                  "the image itself",
                  EEXIST);
    throw Error("file=" + path + ": cannot create the image (" + std::strerror(e) +
                    "); give a path in an existing directory you can write to",
                e);
  }
  std::unique_ptr<FileBackingStore> s(new FileBackingStore(path, fd, size_bytes));
  s->lock_or_throw(/*shared=*/false);
  if (::ftruncate(fd, static_cast<off_t>(size_bytes)) == -1)
    throw_errno("file=" + path + ": cannot size the image");
  return s;
}

std::unique_ptr<FileBackingStore> FileBackingStore::open(const std::string& path,
                                                         bool readonly, bool lock) {
  const auto [fd, size] = open_regular(path, readonly ? O_RDONLY : O_RDWR);
  std::unique_ptr<FileBackingStore> s(new FileBackingStore(path, fd, size));
  if (lock) s->lock_or_throw(/*shared=*/readonly);
  return s;
}

std::unique_ptr<FileBackingStore> FileBackingStore::open_locked_by(const std::string& path,
                                                                   bool readonly,
                                                                   const ImageLock& lock) {
  assert(lock.exclusive() || readonly);
  (void)lock;
  return open(path, readonly, /*lock=*/false);
}

ImageLock::ImageLock(const std::string& path) : path_(path) {
  fd_ = open_regular(path, O_RDONLY).first;
  if (::flock(fd_, LOCK_SH | LOCK_NB) == -1) {
    const int e = errno;
    ::close(fd_);
    errno = e;
    if (e == EWOULDBLOCK)
      throw Error("file=" + path + " is in use by another vld server (it is locked); stop that "
                  "server or use another image", EBUSY);
    throw_errno("file=" + path + ": cannot lock");
  }
}

ImageLock::~ImageLock() {
  if (fd_ >= 0) ::close(fd_);
}

void ImageLock::make_exclusive() {
  if (exclusive_) return;
  if (::flock(fd_, LOCK_EX | LOCK_NB) == -1) {
    // flock(2): a conversion first drops the lock held, so a refused one
    // leaves none. Take the shared lock back: no writer can hold the image
    // now, as the other lock that refused us is still there.
    const int e = errno;
    if (::flock(fd_, LOCK_SH | LOCK_NB) == -1)
      throw_errno("file=" + path_ + ": cannot take its shared lock back");
    errno = e;
    if (errno == EWOULDBLOCK)
      throw Error("file=" + path_ + " is open elsewhere (vld-inspect, or another vld server that "
                  "no client writes through yet), so it cannot be written; stop that process, or "
                  "serve this image with -r",
                  EBUSY);
    throw_errno("file=" + path_ + ": cannot lock");
  }
  exclusive_ = true;
}

void FileBackingStore::read(uint64_t offset, std::span<std::byte> out) {
  size_t done = 0;
  while (done < out.size()) {
    ssize_t r = ::pread(fd_, out.data() + done, out.size() - done,
                        static_cast<off_t>(offset + done));
    if (r == -1) {
      if (errno == EINTR) continue;
      throw_errno("read from " + path_);
    }
    if (r == 0) throw Error("read from " + path_ + ": unexpected end of image", EIO);
    done += static_cast<size_t>(r);
  }
}

void FileBackingStore::write(uint64_t offset, std::span<const std::byte> data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t r = ::pwrite(fd_, data.data() + done, data.size() - done,
                         static_cast<off_t>(offset + done));
    if (r == -1) {
      if (errno == EINTR) continue;
      throw_errno("write to " + path_);
    }
    done += static_cast<size_t>(r);
  }
}

void FileBackingStore::write_gather(uint64_t offset,
                                    std::span<const std::span<const std::byte>> pieces,
                                    size_t* begun) {
  *begun = pieces.size();
  // Pieces adjacent in memory too (a client's blocks placed back to back)
  // are one iovec.
  iov_.clear();
  for (const std::span<const std::byte> p : pieces) {
    if (p.empty()) continue;
    if (!iov_.empty() && static_cast<const std::byte*>(iov_.back().iov_base) + iov_.back().iov_len ==
                             p.data()) {
      iov_.back().iov_len += p.size();
      continue;
    }
    iov_.push_back(iovec{const_cast<std::byte*>(p.data()), p.size()});
  }
  pwritev_all(offset);
}

void FileBackingStore::pwritev_all(uint64_t offset) {
  size_t first = 0;  // iov_[first..] is left to write, from offset on
  while (first < iov_.size()) {
    const int n = static_cast<int>(std::min<size_t>(iov_.size() - first, IOV_MAX));
    ssize_t r = ::pwritev(fd_, iov_.data() + first, n, static_cast<off_t>(offset));
    if (r == -1) {
      if (errno == EINTR) continue;
      throw_errno("write to " + path_);
    }
    if (r == 0) throw Error("write to " + path_ + ": the file system wrote nothing", EIO);
    offset += static_cast<uint64_t>(r);
    // Skip what was written: whole iovecs, then part of one.
    auto done = static_cast<size_t>(r);
    while (done > 0 && done >= iov_[first].iov_len) done -= iov_[first++].iov_len;
    if (done > 0) {
      iov_[first].iov_base = static_cast<std::byte*>(iov_[first].iov_base) + done;
      iov_[first].iov_len -= done;
    }
  }
}

void FileBackingStore::discard(uint64_t offset, uint64_t len) {
  if (len == 0) return;
  if (can_punch_ &&
      ::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                  static_cast<off_t>(len)) == 0)
    return;
  if (can_punch_ && errno != EOPNOTSUPP && errno != ENOSYS) throw_errno("discard in " + path_);
  can_punch_ = false;  // the file system has no holes: write zeros instead
  static const std::byte zeros[64 * 1024] = {};
  while (len > 0) {
    uint64_t n = std::min<uint64_t>(len, sizeof zeros);
    write(offset, std::span<const std::byte>(zeros, n));
    offset += n;
    len -= n;
  }
}

void FileBackingStore::sync() {
  if (::fdatasync(fd_) == -1) throw_errno("fdatasync " + path_);
  ++syncs_;
}

void FileBackingStore::for_each_data_range(
    uint64_t offset, uint64_t len, const std::function<void(uint64_t, uint64_t)>& fn) {
  const uint64_t end = offset + len;
  uint64_t pos = offset;
  while (pos < end) {
    off_t data = ::lseek(fd_, static_cast<off_t>(pos), SEEK_DATA);
    if (data == -1) {
      if (errno == ENXIO) return;  // no data after pos
      fn(pos, end - pos);          // SEEK_DATA unsupported: all data
      return;
    }
    if (static_cast<uint64_t>(data) >= end) return;
    off_t hole = ::lseek(fd_, data, SEEK_HOLE);
    uint64_t hole_at = hole == -1 ? end : std::min<uint64_t>(static_cast<uint64_t>(hole), end);
    fn(static_cast<uint64_t>(data), hole_at - static_cast<uint64_t>(data));
    pos = hole_at;
  }
}

void BackingStore::write_gather(uint64_t offset,
                                std::span<const std::span<const std::byte>> pieces,
                                size_t* begun) {
  *begun = 0;
  for (const std::span<const std::byte> p : pieces) {
    ++*begun;
    write(offset, p);
    offset += p.size();
  }
}

void FailStopStore::sync() {
  check_not_stopped();
  try {
    s_->sync();
  } catch (const Error& e) {
    throw note_failed_sync(e);
  }
}

Error FailStopStore::note_failed_sync(const Error& e) {
  ++file_failures_;
  stop(std::string("a sync of the image failed (") + e.what() +
       "), and writes it covered may have been dropped");
  return Error(stopped_message(), e.err());  // EIO or ENOSPC, as the file system said
}

std::unique_ptr<FailStopStore> FailStopStore::wrap(std::unique_ptr<BackingStore> s) {
  if (auto* f = dynamic_cast<FailStopStore*>(s.get())) {
    s.release();
    return std::unique_ptr<FailStopStore>(f);
  }
  return std::make_unique<FailStopStore>(std::move(s));
}

void FailStopStore::stop(const std::string& why) {
  assert(!why.empty());
  if (stopped_why_->empty()) *stopped_why_ = why;
}

std::string FailStopStore::stopped_message() const {
  assert(stopped());
  return "the disk takes no more writes or flushes: " + *stopped_why_ +
         "; restart nbdkit to recover the image from what is on stable storage";
}

void FailStopStore::defer(std::string_view what, const Error& e) {
  if (deferred_) return;  // the first failure says the most
  deferred_.emplace(std::string(what) + " failed (" + e.what() +
                        "); nothing acknowledged is lost, and this request changed nothing: "
                        "retry it",
                    e.err());
}

void FailStopStore::check_not_stopped() const {
  if (stopped()) throw Error(stopped_message(), EIO);
}

void FailStopStore::check() {
  check_not_stopped();
  if (!deferred_) return;
  const Error e = std::move(*deferred_);
  deferred_.reset();
  throw e;
}

void MemoryBackingStore::check_range(uint64_t offset, uint64_t len) const {
  if (offset > bytes_.size() || len > bytes_.size() - offset)
    throw Error("memory store: access beyond the end", EIO);
}

void MemoryBackingStore::read(uint64_t offset, std::span<std::byte> out) {
  check_range(offset, out.size());
  if (out.empty()) return;  // memcpy of nothing from a null pointer is undefined
  std::memcpy(out.data(), bytes_.data() + offset, out.size());
}

void MemoryBackingStore::write(uint64_t offset, std::span<const std::byte> data) {
  check_range(offset, data.size());
  if (data.empty()) return;  // memcpy of nothing from a null pointer is undefined
  std::memcpy(bytes_.data() + offset, data.data(), data.size());
}

void MemoryBackingStore::discard(uint64_t offset, uint64_t len) {
  check_range(offset, len);
  std::memset(bytes_.data() + offset, 0, len);
}

void MemoryBackingStore::for_each_data_range(
    uint64_t offset, uint64_t len, const std::function<void(uint64_t, uint64_t)>& fn) {
  check_range(offset, len);
  fn(offset, len);  // no holes in memory: conservative
}

}  // namespace vld
