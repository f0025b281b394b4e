// FaultyStore: a BackingStore that fails on command, to test what the disks
// do when the backing file does (EIO, ENOSPC from write, fdatasync or hole
// punching).
//
// A fault names an operation kind and the n-th call of that kind from now
// (0: the next one); `sticky` makes every later call of that kind fail too.
// A failing write may first write a prefix of its bytes (`torn_bytes`), as
// a real pwrite cut short by EIO or ENOSPC can. A failing sync may "drop"
// the writes since the last successful sync (`drop_on_failed_sync`): their
// bytes are reverted to what the last successful sync left, which is what a
// power cut after a failed fdatasync can show, since the kernel marked
// those pages clean without writing them.
//
// Thread-safety: none (the disk controller serialises).
#ifndef VLD_CORE_STORE_FAULT_STORE_H_
#define VLD_CORE_STORE_FAULT_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/store/backing_store.h"

namespace vld {

class FaultyStore final : public BackingStore {
 public:
  enum class Op { kWrite, kSync, kDiscard };
  struct Fault {
    Op op = Op::kWrite;
    uint64_t nth = 0;         // calls of that kind to let through first
    int err = 5;              // EIO
    bool sticky = false;      // every later call of that kind fails too
    uint64_t torn_bytes = 0;  // a failing write writes this many bytes first
    bool drop_on_failed_sync = false;
    uint64_t only_len = 0;    // if set, only writes of this many bytes count
  };

  // Forwards to `inner`, which the caller keeps (to inspect or reopen it).
  // keep_synced_image false: no copy of the image at each sync (then
  // synced_image() is empty and no fault may drop_on_failed_sync).
  explicit FaultyStore(BackingStore& inner, bool keep_synced_image = true);

  // Arms one fault (replacing any armed one); counts from now.
  void arm(const Fault& f);
  void disarm() { fault_.reset(); }
  // How many calls the armed fault failed.
  uint64_t failures() const { return failures_; }
  // The image as the last successful sync left it (for drop_on_failed_sync
  // and to build the image a power cut leaves).
  const std::vector<std::byte>& synced_image() const { return synced_; }

  uint64_t size_bytes() const override { return inner_.size_bytes(); }
  void read(uint64_t offset, std::span<std::byte> out) override { inner_.read(offset, out); }
  void write(uint64_t offset, std::span<const std::byte> data) override;
  void discard(uint64_t offset, uint64_t len) override;
  void sync() override;
  void for_each_data_range(uint64_t offset, uint64_t len,
                           const std::function<void(uint64_t, uint64_t)>& fn) override {
    inner_.for_each_data_range(offset, len, fn);
  }

 private:
  // Whether this call of kind op (of len bytes) fails (and counts it).
  bool fails(Op op, uint64_t len = 0);
  void snapshot();

  BackingStore& inner_;
  const bool keep_synced_image_;
  std::optional<Fault> fault_;
  uint64_t calls_[3] = {0, 0, 0};  // per Op since arm()
  uint64_t failures_ = 0;
  std::vector<std::byte> synced_;
};

}  // namespace vld

#endif  // VLD_CORE_STORE_FAULT_STORE_H_
