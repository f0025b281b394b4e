// OverlayStore: reads from an image, keeps writes in memory, so that a disk
// opened on it never changes the image.
//
// Opening a vld image writes: a log record, and after a crash a checkpoint
// of the map. A read-only server (nbdkit -r) and vld-inspect open the disk
// on an overlay instead: recovery runs whole, in memory, and the file stays
// bit for bit as it was (crash contract clause 8). Writes are kept per
// 512-byte sector; sync() does nothing (nothing here is durable, and nothing
// needs to be).
//
// Thread-safety: none (the disk controller serialises).
#ifndef VLD_CORE_STORE_OVERLAY_STORE_H_
#define VLD_CORE_STORE_OVERLAY_STORE_H_

#include <array>
#include <memory>
#include <unordered_map>

#include "core/store/backing_store.h"
#include "core/image_format.h"

namespace vld {

class OverlayStore final : public BackingStore {
 public:
  // Over a store the caller keeps.
  explicit OverlayStore(BackingStore& base) : base_(base) {}
  // Over a store it owns (and closes, dropping its lock, when destroyed).
  explicit OverlayStore(std::unique_ptr<BackingStore> base) : owned_(std::move(base)), base_(*owned_) {}

  uint64_t size_bytes() const override { return base_.size_bytes(); }
  void read(uint64_t offset, std::span<std::byte> out) override;
  void write(uint64_t offset, std::span<const std::byte> data) override;
  void discard(uint64_t offset, uint64_t len) override;
  void sync() override {}
  // Conservative enough: inplace asks it only at open, before any write.
  void for_each_data_range(uint64_t offset, uint64_t len,
                           const std::function<void(uint64_t, uint64_t)>& fn) override {
    base_.for_each_data_range(offset, len, fn);
  }
  // Sectors written so far (held in memory).
  size_t sectors_held() const { return sectors_.size(); }

 private:
  std::unique_ptr<BackingStore> owned_;  // null when the caller keeps base_
  BackingStore& base_;
  std::unordered_map<uint64_t, std::array<std::byte, kSectorBytes>> sectors_;
};

}  // namespace vld

#endif  // VLD_CORE_STORE_OVERLAY_STORE_H_
