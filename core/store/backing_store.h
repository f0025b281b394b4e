// BackingStore: the stable storage under the simulated drive.
//
// The drive's platters are bytes in a backing store. Every write the disk
// makes goes through write(), and sync() is the only ordering point: when it
// returns, every write and discard issued before it is durable (fdatasync for
// a file). Nothing is promised about writes after the last sync until the
// next one; that is the crash model (docs/crash-contract.md) the crash harness enumerates,
// which is why the interface is this narrow and virtual.
//
// Thread-safety: implementations are not thread-safe; the disk controller
// serialises all access.
#ifndef VLD_CORE_STORE_BACKING_STORE_H_
#define VLD_CORE_STORE_BACKING_STORE_H_

#include <sys/uio.h>

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/util/error.h"

namespace vld {

class BackingStore {
 public:
  virtual ~BackingStore() = default;

  virtual uint64_t size_bytes() const = 0;
  // Short reads past the end are an error; everything is in range by design.
  virtual void read(uint64_t offset, std::span<std::byte> out) = 0;
  virtual void write(uint64_t offset, std::span<const std::byte> data) = 0;
  // One write of `pieces` back to back from offset: the same bytes, and
  // the same guarantees, as write() of each in turn, in as few calls of the
  // file system as the store can (FileBackingStore: pwritev). *begun: how
  // many of the pieces (a prefix) a write was begun for, set also when it
  // throws: those may have landed in part or whole, as a failed write()'s
  // bytes may; the rest are untouched. The default is write() of each in
  // turn, so that a store that counts or records writes sees the pieces
  // themselves (and *begun is exact).
  virtual void write_gather(uint64_t offset, std::span<const std::span<const std::byte>> pieces,
                            size_t* begun);
  // Afterwards [offset, offset+len) reads as zeros and may use no space.
  virtual void discard(uint64_t offset, uint64_t len) = 0;
  virtual void sync() = 0;
  // Calls fn(offset, len) for each range in [offset, offset+len) that may
  // hold data (is not a hole). Conservative: may report zeros as data.
  virtual void for_each_data_range(uint64_t offset, uint64_t len,
                                   const std::function<void(uint64_t, uint64_t)>& fn) = 0;
};

// A regular file. Created with mode 0600 and exclusive flock()ed while open,
// so a second server on the same image fails instead of corrupting it. A
// read-only open (O_RDONLY) takes a shared lock instead: readers
// (tools/vld-inspect) coexist with each other but not with a server, in
// either order; the Error says EBUSY when the lock is held.
class ImageLock;

class FileBackingStore final : public BackingStore {
 public:
  // Creates a new file (fails if it exists) of size_bytes, sparse.
  static std::unique_ptr<FileBackingStore> create(const std::string& path, uint64_t size_bytes);
  // Opens an existing file; readonly: O_RDONLY and a shared lock.
  // lock=false: no lock of its own (open_locked_by).
  static std::unique_ptr<FileBackingStore> open(const std::string& path, bool readonly,
                                                bool lock = true);
  // Opens a file whose lock an ImageLock holds (exclusive if !readonly).
  static std::unique_ptr<FileBackingStore> open_locked_by(const std::string& path, bool readonly,
                                                          const ImageLock& lock);
  ~FileBackingStore() override;

  uint64_t size_bytes() const override { return size_; }
  void read(uint64_t offset, std::span<std::byte> out) override;
  void write(uint64_t offset, std::span<const std::byte> data) override;
  // pwritev, IOV_MAX pieces at a time; a short write is resumed where it
  // stopped, as write() resumes a short pwrite. *begun is all the pieces
  // from the first call on: a failed call may have written any of them.
  void write_gather(uint64_t offset, std::span<const std::span<const std::byte>> pieces,
                    size_t* begun) override;
  void discard(uint64_t offset, uint64_t len) override;
  void sync() override;
  void for_each_data_range(uint64_t offset, uint64_t len,
                           const std::function<void(uint64_t, uint64_t)>& fn) override;

  const std::string& path() const { return path_; }
  uint64_t syncs() const { return syncs_; }

 private:
  FileBackingStore(std::string path, int fd, uint64_t size);
  void lock_or_throw(bool shared);
  // Writes iov_ (its bytes from offset on), resuming short writes.
  void pwritev_all(uint64_t offset);

  std::string path_;
  int fd_;
  uint64_t size_;
  bool can_punch_ = true;
  std::atomic<uint64_t> syncs_ = 0;  // group commit syncs without the requests' lock
  std::vector<struct iovec> iov_;    // write_gather's, kept between calls
};

// In memory, for unit tests and tools. sync() only counts.
// A store that forwards to another it does not own: a Disk owns its store,
// while a test or tool keeps the bytes (to copy, inspect or reopen them).
class ProxyStore final : public BackingStore {
 public:
  explicit ProxyStore(BackingStore& s) : s_(s) {}
  uint64_t size_bytes() const override { return s_.size_bytes(); }
  void read(uint64_t offset, std::span<std::byte> out) override { s_.read(offset, out); }
  void write(uint64_t offset, std::span<const std::byte> data) override { s_.write(offset, data); }
  void write_gather(uint64_t offset, std::span<const std::span<const std::byte>> pieces,
                    size_t* begun) override {
    s_.write_gather(offset, pieces, begun);
  }
  void discard(uint64_t offset, uint64_t len) override { s_.discard(offset, len); }
  void sync() override { s_.sync(); }
  void for_each_data_range(uint64_t offset, uint64_t len,
                           const std::function<void(uint64_t, uint64_t)>& fn) override {
    s_.for_each_data_range(offset, len, fn);
  }

 private:
  BackingStore& s_;
};

// The lock of an image served read-only until its first writable
// connection: shared while the image is only read, converted in place to
// exclusive (flock converts the lock of one open file) when it is reopened
// for writing. Held apart from the stores, on an fd of its own: nbdkit
// forks (captive --run, --daemonize) with the fd open in both processes,
// so closing a store's fd in one would not drop its lock, but a conversion
// applies to the open file both share.
class ImageLock {
 public:
  // A shared lock; Error EBUSY if a writer holds the image.
  explicit ImageLock(const std::string& path);
  ~ImageLock();
  ImageLock(const ImageLock&) = delete;
  ImageLock& operator=(const ImageLock&) = delete;
  // Error EBUSY if another reader holds it shared.
  void make_exclusive();
  bool exclusive() const { return exclusive_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool exclusive_ = false;
};

// The disks' view of their store: it stops the disk after a failed sync.
//
// After fdatasync fails, the kernel may have dropped the dirty pages it
// could not write and marked them clean; a later fdatasync that succeeds
// says nothing about them. So once a sync has failed, no later flush may
// report success for the writes before it (crash contract, docs/crash-
// contract.md, "When the backing file fails"): every later write, discard
// and sync fails with EIO, naming the first failure, until the image is
// opened again, when recovery rebuilds it from what is on stable storage.
// Reads go on. A disk may also stop itself (stop()) when it cannot leave
// the image in a state recovery reads the way the disk's memory does, or
// hand the error of a write made after a completed request to the next
// request (defer()).
//
// The stop can outlive one disk: the plugin opens the image for writing
// again when a writable connection comes after one whose recovery failed,
// and hands each such open the same StopReason, so that a sync that failed
// during a recovery stops the image for the rest of the process too.
//
// Thread-safety: as the store it wraps (the disk controller serialises).
class FailStopStore final : public BackingStore {
 public:
  // Why the disk stopped ("" while it takes writes); shared by the stores
  // of successive opens of one image.
  using StopReason = std::shared_ptr<std::string>;
  explicit FailStopStore(std::unique_ptr<BackingStore> s,
                         StopReason why = std::make_shared<std::string>())
      : s_(std::move(s)), stopped_why_(std::move(why)) {
    assert(s_ && stopped_why_);
  }
  // s itself if it is a FailStopStore already (one the plugin made), else
  // s in a new one: what the disks keep.
  static std::unique_ptr<FailStopStore> wrap(std::unique_ptr<BackingStore> s);
  uint64_t size_bytes() const override { return s_->size_bytes(); }
  void read(uint64_t offset, std::span<std::byte> out) override { s_->read(offset, out); }
  void write(uint64_t offset, std::span<const std::byte> data) override {
    check_not_stopped();
    counting_failures([&] { s_->write(offset, data); });
  }
  void write_gather(uint64_t offset, std::span<const std::span<const std::byte>> pieces,
                    size_t* begun) override {
    *begun = 0;
    check_not_stopped();
    counting_failures([&] { s_->write_gather(offset, pieces, begun); });
  }
  void discard(uint64_t offset, uint64_t len) override {
    check_not_stopped();
    counting_failures([&] { s_->discard(offset, len); });
  }
  // Writes, discards and syncs the file refused so far. ENOSPC is also
  // what a disk throws when its platters have no room; work that gives
  // itself up for that tells a full file system apart by this count.
  uint64_t file_failures() const { return file_failures_; }
  void sync() override;
  void for_each_data_range(uint64_t offset, uint64_t len,
                           const std::function<void(uint64_t, uint64_t)>& fn) override {
    s_->for_each_data_range(offset, len, fn);
  }
  // Group commit's sync (group_commit.h): the file's alone, changing
  // nothing here, so that it may run without the requests' lock (s_ must
  // allow a sync concurrent with writes: FileBackingStore does). Its
  // failure is reported with note_failed_sync, under that lock.
  void sync_file() { s_->sync(); }
  // A sync of the file failed with e: counted, and the disk stops. Returns
  // the Error for the request it failed.
  Error note_failed_sync(const Error& e);
  // REQUIRES: why says what failed. Later writes, discards and syncs fail.
  void stop(const std::string& why);
  // Work the disk did on its own (`what`: vld's log record after a request
  // that had completed, idle-time compaction or cleaning) failed with e.
  // Nothing acknowledged depends on it, and the next request reports e,
  // before it changes anything, as the kernel reports a failed writeback
  // at the next fsync: once, to whoever comes next; the first if several.
  void defer(std::string_view what, const Error& e);
  // Runs one step of the work the disk does on its own in idle time
  // (`what`: "idle-time compaction"), which no client waits on: none once
  // the disk has stopped (a value-initialised result: no work), and an
  // Error it throws is deferred to the next request, then rethrown for the
  // idle worker to log (crash contract clause 6).
  template <typename Step>
  auto run_own_work(std::string_view what, Step&& step) -> decltype(step()) {
    if (stopped()) return {};
    try {
      return step();
    } catch (const Error& e) {
      defer(what, e);
      throw;
    }
  }
  // Throws the stopped disk's Error (EIO), or a deferred one (once): the
  // disks call it first in every request that changes contents or makes
  // them durable, so that one that would write nothing fails too.
  void check();
  // Throws the stopped disk's Error only: for the disk's own work, which
  // leaves a deferred error to the next request.
  void check_not_stopped() const;
  bool stopped() const { return !stopped_why_->empty(); }
  const std::string& stopped_why() const { return *stopped_why_; }
  BackingStore& inner() { return *s_; }

 private:
  std::string stopped_message() const;  // REQUIRES: stopped()
  template <typename Op>
  void counting_failures(Op&& op) {
    try {
      op();
    } catch (const Error&) {
      ++file_failures_;
      throw;
    }
  }

  std::unique_ptr<BackingStore> s_;
  StopReason stopped_why_;  // never null; "" while the disk takes writes
  std::optional<Error> deferred_;  // for the next request's check()
  uint64_t file_failures_ = 0;     // writes, discards and syncs of s_ that threw
};

class MemoryBackingStore final : public BackingStore {
 public:
  explicit MemoryBackingStore(uint64_t size_bytes) : bytes_(size_bytes) {}
  // A store holding a copy of an image (tools snapshot and reopen).
  explicit MemoryBackingStore(std::vector<std::byte> bytes) : bytes_(std::move(bytes)) {}
  const std::vector<std::byte>& bytes() const { return bytes_; }
  // Moves the image out, leaving the store empty (size 0): a tool that
  // prepared an image hands it on without holding it twice.
  // REQUIRES: nothing reads or writes the store again (its disk is closed).
  std::vector<std::byte> take_bytes() { return std::exchange(bytes_, {}); }
  uint64_t size_bytes() const override { return bytes_.size(); }
  void read(uint64_t offset, std::span<std::byte> out) override;
  void write(uint64_t offset, std::span<const std::byte> data) override;
  void discard(uint64_t offset, uint64_t len) override;
  void sync() override { ++syncs_; }
  void for_each_data_range(uint64_t offset, uint64_t len,
                           const std::function<void(uint64_t, uint64_t)>& fn) override;
  uint64_t syncs() const { return syncs_; }

 private:
  void check_range(uint64_t offset, uint64_t len) const;
  std::vector<std::byte> bytes_;
  uint64_t syncs_ = 0;
};

}  // namespace vld

#endif  // VLD_CORE_STORE_BACKING_STORE_H_
