// RedoJournal: mode=inplace's write-ahead area for atomic recovery units
// (docs/aru.md; docs/format.md, "mode=inplace: the ARU redo journal").
//
// A conventional disk has no indirection map, so the only way it can make
// several scattered blocks change at once is to write them twice: first
// into a journal area as one record whose checksum covers all of it, then,
// once that record is durable, at home. This is the textbook redo log, and
// its cost (a sequential journal write, a sync, the scattered home writes,
// a second sync) is the baseline the indirection modes are measured
// against. The area is the platters past the export: the metadata
// allowance and spare that every image has (image_format.h), which
// mode=inplace uses for nothing else, so an image never committing an ARU
// stays byte for byte as it was (format_version 1, that area all zeros).
//
// One record at a time, at the start of the area:
//   [descriptor: header, the group's block numbers and zero flags]
//   [the data of its non-zero blocks, in block order]
// The header names a state: kCommitted (home writes may be incomplete:
// replay it) or kVoid (applied: never replay). A committed record counts
// only if its MAC (keyed BLAKE2b, core/util/mac.h, under the image's
// secret) over the whole record matches, so a record cut by a crash, or
// mixed with the sectors of an older one, is never taken; guest data
// cannot forge one either (the secret is outside the export).
//
// Invariants InplaceDisk keeps with it (inplace_disk.cc, commit_group):
//   (1) the commit point is the sync after the record was written: before
//       it no home block has changed, after it the record is durable;
//   (2) home blocks are written only while the record describing them is
//       durable (or during replay of that record), so a crash there is
//       repaired by replaying it, as often as it takes (replay is
//       idempotent: it writes the same bytes). The same holds while a
//       failed home write is rolled back (InplaceDisk::roll_back): the old
//       contents go back and are synced before the record is voided;
//   (3) once the home writes are synced, the record is voided (its header
//       rewritten kVoid) right before the next sync of any other request
//       (flush, FUA, close), or its header replaced by the next commit's
//       record, whichever comes first; so no write after the commit
//       becomes durable before the record stops being valid, and a stale
//       record is never replayed over a newer durable write. Until then,
//       replaying it can only overwrite writes no flush covered yet, which
//       a crash may lose anyway (crash contract clause 2). (Voiding lazily
//       spares back-to-back commits a seek back to the journal each.)
//
// Thread-safety: pure functions of the superblock and the bytes passed in;
// the owning InplaceDisk serialises all use (see Disk).
#ifndef VLD_CORE_INPLACE_REDO_JOURNAL_H_
#define VLD_CORE_INPLACE_REDO_JOURNAL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/disk.h"
#include "core/image_format.h"
#include "core/store/backing_store.h"

namespace vld {

class RedoJournal {
 public:
  enum class State : uint32_t { kCommitted = 1, kVoid = 2 };
  static constexpr size_t kHeaderBytes = 48;  // fields, then the MAC (format.md)
  static constexpr size_t kEntryBytes = 8;

  // A committed record read back: the group it commits.
  struct Record {
    uint64_t seq = 0;
    std::vector<uint64_t> blocks;  // sorted, distinct, inside the export
    std::vector<bool> zero;        // per block: no data, the block reads zeros
    std::vector<std::byte> data;   // the non-zero blocks' bytes, in order
  };

  explicit RedoJournal(const Superblock& sb);

  // Where the area starts, in platter bytes (a block boundary at or past
  // the export), and how many bytes it holds.
  uint64_t offset() const { return offset_; }
  uint64_t capacity() const { return capacity_; }
  // The bytes of a record of `blocks` blocks, `data_blocks` of them with
  // data: the descriptor's whole sectors, then the data.
  uint64_t record_bytes(uint64_t blocks, uint64_t data_blocks) const;
  uint64_t descriptor_bytes(uint64_t blocks) const;

  // The record committing `group` (sorted, distinct) as number `seq`.
  std::vector<std::byte> encode(std::span<const GroupBlock> group, uint64_t seq) const;
  // The sector that voids record `seq` (written over the header).
  std::array<std::byte, kSectorBytes> void_sector(uint64_t seq) const;

  // Reads the area from `store` (the image): the committed, intact record
  // to replay, if there is one. *last_seq: the seq of whatever header is
  // there (valid or not), 0 if the area holds none (never used).
  // *bytes_read (if given): the bytes of the area read, from its start.
  std::optional<Record> read(BackingStore& store, uint64_t* last_seq,
                             uint64_t* bytes_read = nullptr) const;

 private:
  // The record's decoded header fields; false if they are not a committed
  // record that fits the area.
  struct Header {
    State state;
    uint32_t blocks;
    uint64_t seq;
    uint64_t data_blocks;
  };
  bool plausible(const Header& h) const;
  std::optional<Record> decode(std::vector<std::byte>& bytes, const Header& h) const;

  Superblock sb_;
  uint64_t offset_;
  uint64_t capacity_;
};

}  // namespace vld

#endif  // VLD_CORE_INPLACE_REDO_JOURNAL_H_
