// CheckpointSectors: for mode=lld's incremental checkpoints (format_versions
// 3 and 4; checkpoint.h), which table sectors each checkpoint slot holds
// stale, what each slot's journal holds, and the hash of every table sector
// as the tables encode now.
//
// A change to a block map entry or a usage row makes its table sector stale
// in both slots (touch_map, touch_usage). A checkpoint into a slot writes
// that slot's stale sectors, encoded anew (their hashes set with
// set_hash), then the record, whose digest covers every sector's hash; once
// that is durable, the slot has no stale sector (written). Version 4
// writes them either appended to the slot's journal (appended) or, with
// the sectors its journal holds, in place, emptying the journal (folded).
//
// Invariants: a sector that is not stale in a slot holds there exactly the
// bytes the tables encode to now (the base sector, or the journal's last
// copy if journaled), and hash(i) is the hash of those bytes; so hash(i) is
// current for every sector the slot being written does not hold stale, and
// set_hash makes it current for those it does. A slot's base sector that
// is neither stale nor journaled holds the current bytes, so a fold that
// writes the stale and journaled sectors leaves the base whole.
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

  // After loaded: slot's record names `used` journal sectors, holding the
  // table sectors `journaled` (ascending). REQUIRES: slot is 0 or 1.
  void set_journal(int slot, uint32_t used, std::span<const uint32_t> journaled);

  void touch_map(uint64_t block);
  void touch_usage(uint64_t segment);

  // Slot's stale sectors, ascending.
  std::vector<uint32_t> stale(int slot) const;
  uint64_t hash(uint32_t sector) const { return hashes_[sector]; }
  void set_hash(uint32_t sector, uint64_t h) { hashes_[sector] = h; }
  const std::vector<uint64_t>& hashes() const { return hashes_; }
  // Slot's stale sectors are durable as the tables stand.
  void written(int slot);
  // Version 4. Journal sectors slot's record names.
  uint32_t journal_used(int slot) const { return journal_used_[slot]; }
  // What a fold into slot writes in place: its stale and journaled
  // sectors, ascending.
  std::vector<uint32_t> fold_sectors(int slot) const;
  // Slot's durable record names `used` journal sectors, the last of them
  // holding `sectors`: call before written(slot). Or: its journal is empty,
  // its base whole.
  void appended(int slot, std::span<const uint32_t> sectors, uint32_t used);
  void folded(int slot);
  uint32_t sectors() const { return static_cast<uint32_t>(hashes_.size()); }

 private:
  void touch(uint64_t sector);
  static std::vector<uint32_t> listed(const std::vector<uint64_t>& bits, size_t count);

  const uint64_t logical_blocks_;
  std::vector<uint64_t> hashes_;
  std::vector<uint64_t> stale_[2];      // bit sets, a bit per sector
  std::vector<uint64_t> journaled_[2];  // the same, for sectors the slot's journal holds
  uint32_t journal_used_[2] = {0, 0};
};

}  // namespace vld

#endif  // VLD_CORE_LLD_CHECKPOINT_SECTORS_H_
