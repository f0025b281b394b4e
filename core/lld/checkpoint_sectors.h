// CheckpointSectors: for mode=lld's incremental checkpoints (format_version
// 3; checkpoint.h), which table sectors each checkpoint slot holds stale,
// and the hash of every table sector as the tables encode now.
//
// A change to a block map entry or a usage row makes its table sector stale
// in both slots (touch_map, touch_usage). A checkpoint into a slot writes
// that slot's stale sectors, encoded anew (their hashes set with
// set_hash), then the record, whose digest covers every sector's hash; once
// that is durable, the slot has no stale sector (written).
//
// Invariants: a sector that is not stale in a slot holds there exactly the
// bytes the tables encode to now, and hash(i) is the hash of those bytes;
// so hash(i) is current for every sector the slot being written does not
// hold stale, and set_hash makes it current for those it does.
//
// Thread-safety: thread-compatible; the disk serialises access.
#ifndef VLD_CORE_LLD_CHECKPOINT_SECTORS_H_
#define VLD_CORE_LLD_CHECKPOINT_SECTORS_H_

#include <cstdint>
#include <span>
#include <vector>

namespace vld {

class CheckpointSectors {
 public:
  // Tables of `sectors` sectors holding `logical_blocks` map entries, then
  // the usage rows; every sector stale in both slots (nothing is known of
  // either).
  CheckpointSectors(uint32_t sectors, uint64_t logical_blocks);

  // After an open: slot `picked` holds the tables as they stand, sector i
  // hashing to hashes[i]; the other slot's table bytes are `other` (empty:
  // that slot is not valid), stale where they differ from `picked_bytes`.
  // REQUIRES: picked is 0 or 1; hashes and picked_bytes cover every sector;
  // other is empty or as long as picked_bytes.
  void loaded(int picked, std::vector<uint64_t> hashes, std::span<const unsigned char> picked_bytes,
              std::span<const unsigned char> other);

  void touch_map(uint64_t block);
  void touch_usage(uint64_t segment);

  // Slot's stale sectors, ascending.
  std::vector<uint32_t> stale(int slot) const;
  uint64_t hash(uint32_t sector) const { return hashes_[sector]; }
  void set_hash(uint32_t sector, uint64_t h) { hashes_[sector] = h; }
  const std::vector<uint64_t>& hashes() const { return hashes_; }
  // Slot's stale sectors are durable as the tables stand.
  void written(int slot);
  uint32_t sectors() const { return static_cast<uint32_t>(hashes_.size()); }

 private:
  void touch(uint64_t sector);

  const uint64_t logical_blocks_;
  std::vector<uint64_t> hashes_;
  std::vector<uint64_t> stale_[2];  // bit sets, a bit per sector
};

}  // namespace vld

#endif  // VLD_CORE_LLD_CHECKPOINT_SECTORS_H_
