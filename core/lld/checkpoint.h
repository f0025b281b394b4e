// Checkpoint: mode=lld's checkpoint region, two alternating slots, each the
// whole persistent state of the logical disk as of one moment. The byte
// layout is in docs/format.md, "mode=lld / Checkpoint slot"; this header
// must agree.
//
// A slot is one record sector followed by the tables: the block map (per
// logical block: where its newest copy is, its data checksum and version)
// and the segment usage table (per segment: live blocks, seq of its newest
// write). The tables live in the slot itself, not in the log as Sprite
// LFS's inode map and usage blocks do: recovery then reads two fixed
// regions and needs no pointers into the log, and the cleaner never moves
// metadata.
//
// The record authenticates the table sectors, and carries its own MAC: a
// slot is valid only whole, so a checkpoint torn by a crash leaves the other
// slot, one generation older, to recover from (paper 002's twin roots, as
// vld's log record slots). Recovery takes the valid slot with the higher
// generation (pick_checkpoint), then rolls forward through the segment
// summaries from seq next_seq on, starting at (segment, next_sector).
//
// How a checkpoint's cost follows what changed depends on the format
// version. Version 2: the record MACs every table sector, so every
// checkpoint writes the whole tables (16 bytes per logical block). Version
// 3: the record MACs the XXH3-64 hash of each table sector in turn
// (table_digest), so a checkpoint writes only the sectors that changed
// since that slot was last written, and the record (CheckpointSectors);
// but in place, where one changed sector on a track costs about a
// revolution, and random writes change a sector on most tracks. Version 4:
// the slot ends in a journal (checkpoint_journal_sectors), and a checkpoint
// appends the changed sectors there in one run, as chunks of an index
// sector and the sectors it names; the record says how many journal
// sectors the tables need, and the tables are the base sectors with the
// journal's laid over them in order (assemble_slot_tables). Only when the
// journal is full does a checkpoint write in place, every sector the
// journal or the changes hold (a fold), and empty the journal: the journal
// holds a quarter of the tables, so a fold's cost, at most a pass over the
// tables, comes once per that many appended sectors, whatever the disk's
// size. Version 3 is version 4 with a journal of no sectors. An append
// leaves the journal sectors the record names untouched, so a torn append
// leaves that slot's previous checkpoint whole; a slot torn in place fails
// the digest, and the other slot is used.
//
// Invariants of a decoded slot: generation > 0; next_seq > checkpoint_seq;
// journal_sectors <= checkpoint_journal_sectors; every summary with seq <=
// checkpoint_seq is reflected in the tables and none after it is; the
// position and the table sizes fit the shape.
//
// Thread-safety: plain values and pure functions.
#ifndef VLD_CORE_LLD_CHECKPOINT_H_
#define VLD_CORE_LLD_CHECKPOINT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/lld/lld_shape.h"
#include "core/util/mac.h"

namespace vld {

inline constexpr uint32_t kBlockMapEntryBytes = 16;
inline constexpr uint32_t kSegmentUsageBytes = 12;

struct BlockMapEntry {
  uint32_t psn_plus_one = 0;  // first sector of the newest copy + 1; 0: unmapped (zeros)
  uint32_t checksum = 0;      // data_checksum, as in the summary that wrote it
  uint64_t version = 0;       // of the newest write (kept when trimmed); 0: never written
  bool operator==(const BlockMapEntry&) const = default;
};

struct SegmentUsage {
  uint32_t live_blocks = 0;
  uint64_t last_seq = 0;  // seq of the newest write into it (age, for the cleaner); 0: none
  bool operator==(const SegmentUsage&) const = default;
};

struct CheckpointTables {
  std::vector<BlockMapEntry> map;    // shape.logical_blocks entries
  std::vector<SegmentUsage> usage;   // shape.segment_count entries
  bool operator==(const CheckpointTables&) const = default;
};

struct Checkpoint {
  bool clean = false;           // written by a clean shutdown: nothing to roll forward
  uint64_t generation = 0;      // +1 per checkpoint; slot = generation % 2
  uint64_t checkpoint_seq = 0;  // tables reflect every summary with seq <= this
  uint64_t next_seq = 1;        // seq of the next segment write
  uint32_t segment = 0;         // where the next segment write goes ..
  uint32_t next_sector = 0;     // .. and at which sector of it
  uint32_t journal_sectors = 0;  // version 4: of the slot's journal, the sectors the tables need
  CheckpointTables tables;
  bool operator==(const Checkpoint&) const = default;
};

// Sectors of the tables, of a slot's journal (0 before version 4), and of
// one slot (record + tables + journal).
uint32_t checkpoint_table_sectors(const LldShape& shape);
uint32_t checkpoint_journal_sectors(const LldShape& shape);
uint32_t checkpoint_slot_sectors(const LldShape& shape);

// Version 4's journal: chunks of one index sector naming up to
// kJournalChunkSectors table sectors, then those sectors.
inline constexpr uint32_t kJournalChunkSectors = 126;
// Journal sectors that hold `changed` table sectors.
uint32_t journal_append_sectors(size_t changed);
// The chunks holding table sectors `which` (ascending), whose bytes are
// `sectors` (512 each, in the same order). REQUIRES: which is not empty.
std::vector<unsigned char> encode_journal(std::span<const uint32_t> which,
                                          std::span<const unsigned char> sectors);
// The table sectors the first journal_sectors sectors of `journal` hold,
// ascending and each once; nullopt unless those sectors are whole chunks
// naming sectors below table_sectors.
std::optional<std::vector<uint32_t>> journal_listing(std::span<const unsigned char> journal,
                                                     uint32_t journal_sectors,
                                                     uint32_t table_sectors);

// Table sector i (512 bytes into out) of the tables map and usage: the
// entries that fall in it, zero past the tables' end. REQUIRES: i <
// checkpoint_table_sectors of their shape.
void encode_table_sector(std::span<const BlockMapEntry> map, std::span<const SegmentUsage> usage,
                         uint32_t i, unsigned char* out);
// Version 3: a table sector's hash, and the tables' digest from them all.
uint64_t table_sector_hash(const unsigned char* sector);
Mac table_digest(std::span<const uint64_t> sector_hashes, const MacKey& key);

// A slot's record and tables, its journal empty: 1 + checkpoint_table_sectors
// sectors. REQUIRES: c is valid for shape and c.journal_sectors == 0 (asserted).
std::vector<unsigned char> encode_checkpoint(const Checkpoint& c, const LldShape& shape,
                                             const MacKey& key);
// The record sector alone (c.tables not used), for tables authenticated
// by tables_mac (version 2: their MAC; versions 3 and 4: their digest).
std::vector<unsigned char> encode_checkpoint_record(const Checkpoint& c, const LldShape& shape,
                                                    const Mac& tables_mac, const MacKey& key);
// nullopt unless both MACs are right and every field makes sense for shape.
// sector_hashes (versions 3 and 4, if given): each table sector's hash.
std::optional<Checkpoint> decode_checkpoint(std::span<const unsigned char> slot,
                                            const LldShape& shape, const MacKey& key,
                                            std::vector<uint64_t>* sector_hashes = nullptr);
// The same in two steps, so that an open reads a slot's tables only once
// its record has won: the record (a slot's first sector: its MAC right,
// its fields sane), then the tables that follow it (their authenticator
// the record's, and sane).
struct CheckpointRecord {
  Checkpoint checkpoint;  // without tables
  Mac tables_mac;         // their MAC (version 2) or digest (versions 3 and 4)
};
std::optional<CheckpointRecord> decode_checkpoint_record(std::span<const unsigned char> sector,
                                                         const LldShape& shape, const MacKey& key);
// The sectors after a record that its tables need: the tables, then
// record.checkpoint.journal_sectors of the journal.
uint32_t checkpoint_sectors_after_record(const CheckpointRecord& record, const LldShape& shape);
// A slot's tables as its record says they stand: the base sectors with
// the journal's laid over them.
struct SlotTables {
  std::vector<unsigned char> bytes;  // checkpoint_table_sectors x 512
  std::vector<uint32_t> journaled;   // the table sectors the journal holds, ascending
};
// nullopt if after_record is short of checkpoint_sectors_after_record or
// the journal is not whole chunks (journal_listing). Not authenticated.
std::optional<SlotTables> assemble_slot_tables(const CheckpointRecord& record,
                                               std::span<const unsigned char> after_record,
                                               const LldShape& shape);
// after_record: the slot's sectors after its record (at least
// checkpoint_sectors_after_record of them). tables, if given: what
// assemble_slot_tables made of them.
std::optional<Checkpoint> decode_checkpoint_tables(const CheckpointRecord& record,
                                                   std::span<const unsigned char> after_record,
                                                   const LldShape& shape, const MacKey& key,
                                                   std::vector<uint64_t>* sector_hashes = nullptr,
                                                   SlotTables* tables = nullptr);

// The order in which an open tries the two slots by their records: the
// valid one with the higher generation first (a tie, which writes alone
// never make, goes to slot 0); a slot whose tables then fail yields to the
// other.
std::array<int, 2> checkpoint_slot_order(const std::optional<CheckpointRecord>& slot0,
                                         const std::optional<CheckpointRecord>& slot1);

struct PickedCheckpoint {
  int slot = 0;  // 0 or 1; the next checkpoint goes to the other one
  Checkpoint checkpoint;
  std::vector<uint64_t> sector_hashes;  // versions 3, 4: the picked slot's table sectors'
};
// The first slot of checkpoint_slot_order whose record and tables are
// whole; nullopt if neither is.
std::optional<PickedCheckpoint> pick_checkpoint(std::span<const unsigned char> slot0,
                                                std::span<const unsigned char> slot1,
                                                const LldShape& shape, const MacKey& key);

}  // namespace vld

#endif  // VLD_CORE_LLD_CHECKPOINT_H_
