#include "core/lld/checkpoint.h"

#include <algorithm>
#include <cassert>

#include "core/lld/segment_summary.h"
#include "core/util/checksum.h"
#include "core/util/coding.h"

namespace vld {

namespace {

constexpr uint32_t kCheckpointMagic = 0x5043444c;  // "LDCP"
constexpr uint32_t kJournalIndexMagic = 0x4a43444c;  // "LDCJ"
constexpr size_t kJournalSectorsAt = 52;
constexpr size_t kRecordMacAt = kLldSectorBytes - kMacBytes;
constexpr size_t kTablesMacAt = 56;

bool position_ok(const Checkpoint& c, const LldShape& shape) {
  return c.generation != 0 && c.next_seq > c.checkpoint_seq && c.segment < shape.segment_count &&
         c.next_sector < shape.segment_sectors &&
         c.journal_sectors <= checkpoint_journal_sectors(shape);
}

bool tables_ok(const Checkpoint& c, const LldShape& shape) {
  const CheckpointTables& t = c.tables;
  if (t.map.size() != shape.logical_blocks || t.usage.size() != shape.segment_count) return false;
  for (const BlockMapEntry& e : t.map)
    if (e.psn_plus_one != 0 && (e.psn_plus_one > shape.platter_sectors || e.version == 0)) return false;
  const uint32_t max_live = max_blocks_per_write(shape);
  return std::all_of(t.usage.begin(), t.usage.end(), [&](const SegmentUsage& u) {
    return u.live_blocks <= max_live && u.last_seq < c.next_seq;
  });
}

void encode_map_entry(const BlockMapEntry& e, unsigned char* p) {
  encode_fixed32(p, e.psn_plus_one);
  encode_fixed32(p + 4, e.checksum);
  encode_fixed64(p + 8, e.version);
}

void encode_usage(const SegmentUsage& u, unsigned char* p) {
  encode_fixed32(p, u.live_blocks);
  encode_fixed64(p + 4, u.last_seq);
}

void encode_tables(const CheckpointTables& t, unsigned char* p) {
  for (const BlockMapEntry& e : t.map) {
    encode_map_entry(e, p);
    p += kBlockMapEntryBytes;
  }
  for (const SegmentUsage& u : t.usage) {
    encode_usage(u, p);
    p += kSegmentUsageBytes;
  }
}

// The authenticator of `sectors` table sectors at `tables` (version 2:
// their MAC; version 3: their digest, with each sector's hash to *hashes).
Mac tables_mac(const unsigned char* tables, uint32_t sectors, const LldShape& shape,
               const MacKey& key, std::vector<uint64_t>* hashes) {
  if (!shape.incremental_checkpoints()) return mac_of(tables, size_t{sectors} * kLldSectorBytes, key);
  std::vector<uint64_t> h(sectors);
  for (uint32_t i = 0; i < sectors; ++i) h[i] = table_sector_hash(tables + size_t{i} * kLldSectorBytes);
  const Mac m = table_digest(h, key);
  if (hashes) *hashes = std::move(h);
  return m;
}

void decode_tables(const unsigned char* p, const LldShape& shape, CheckpointTables* t) {
  t->map.resize(shape.logical_blocks);
  for (BlockMapEntry& e : t->map) {
    e = BlockMapEntry{decode_fixed32(p), decode_fixed32(p + 4), decode_fixed64(p + 8)};
    p += kBlockMapEntryBytes;
  }
  t->usage.resize(shape.segment_count);
  for (SegmentUsage& u : t->usage) {
    u = SegmentUsage{decode_fixed32(p), decode_fixed64(p + 4)};
    p += kSegmentUsageBytes;
  }
}

}  // namespace

uint32_t checkpoint_table_sectors(const LldShape& shape) {
  const uint64_t bytes = uint64_t{kBlockMapEntryBytes} * shape.logical_blocks +
                         uint64_t{kSegmentUsageBytes} * shape.segment_count;
  return static_cast<uint32_t>((bytes + kLldSectorBytes - 1) / kLldSectorBytes);
}

// A quarter of the tables, so that a fold (a pass over the tables at
// most) comes once per a quarter of the tables appended: its cost per
// appended sector is the same at any size. At least 16 sectors, so that
// a small disk's checkpoint appends a few changes before it folds.
uint32_t checkpoint_journal_sectors(const LldShape& shape) {
  if (!shape.checkpoint_journal()) return 0;
  return std::max<uint32_t>(16, (checkpoint_table_sectors(shape) + 3) / 4);
}

uint32_t checkpoint_slot_sectors(const LldShape& shape) {
  return 1 + checkpoint_table_sectors(shape) + checkpoint_journal_sectors(shape);
}

uint32_t journal_append_sectors(size_t changed) {
  const size_t chunks = (changed + kJournalChunkSectors - 1) / kJournalChunkSectors;
  return static_cast<uint32_t>(chunks + changed);
}

std::vector<unsigned char> encode_journal(std::span<const uint32_t> which,
                                          std::span<const unsigned char> sectors) {
  assert(!which.empty() && sectors.size() == which.size() * kLldSectorBytes);
  assert(std::is_sorted(which.begin(), which.end()));
  std::vector<unsigned char> out(size_t{journal_append_sectors(which.size())} * kLldSectorBytes, 0);
  unsigned char* p = out.data();
  for (size_t first = 0; first < which.size(); first += kJournalChunkSectors) {
    const size_t n = std::min<size_t>(kJournalChunkSectors, which.size() - first);
    encode_fixed32(p, kJournalIndexMagic);
    encode_fixed32(p + 4, static_cast<uint32_t>(n));
    for (size_t k = 0; k < n; ++k) encode_fixed32(p + 8 + 4 * k, which[first + k]);
    p += kLldSectorBytes;
    std::copy_n(sectors.begin() + static_cast<ptrdiff_t>(first * kLldSectorBytes),
                n * kLldSectorBytes, p);
    p += n * kLldSectorBytes;
  }
  assert(p == out.data() + out.size());
  return out;
}

namespace {

// Walks the first journal_sectors sectors of `journal` chunk by chunk,
// calling put(table sector, its bytes) in order; false unless they are
// whole chunks naming sectors below table_sectors, each index sector zero
// past its list (so that no bit of it goes unchecked).
template <typename Put>
bool walk_journal(std::span<const unsigned char> journal, uint32_t journal_sectors,
                  uint32_t table_sectors, Put put) {
  if (journal.size() < size_t{journal_sectors} * kLldSectorBytes) return false;
  for (uint32_t at = 0; at < journal_sectors;) {
    const unsigned char* index = journal.data() + size_t{at} * kLldSectorBytes;
    const uint32_t n = decode_fixed32(index + 4);
    if (decode_fixed32(index) != kJournalIndexMagic || n == 0 || n > kJournalChunkSectors ||
        n > journal_sectors - at - 1 ||
        !std::all_of(index + 8 + 4 * n, index + kLldSectorBytes, [](unsigned char b) { return b == 0; }))
      return false;
    for (uint32_t k = 0; k < n; ++k) {
      const uint32_t sector = decode_fixed32(index + 8 + 4 * k);
      if (sector >= table_sectors) return false;
      put(sector, index + size_t{k + 1} * kLldSectorBytes);
    }
    at += 1 + n;
  }
  return true;
}

void sort_unique(std::vector<uint32_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

std::optional<std::vector<uint32_t>> journal_listing(std::span<const unsigned char> journal,
                                                     uint32_t journal_sectors,
                                                     uint32_t table_sectors) {
  std::vector<uint32_t> listed;
  if (!walk_journal(journal, journal_sectors, table_sectors,
                    [&](uint32_t sector, const unsigned char*) { listed.push_back(sector); }))
    return std::nullopt;
  sort_unique(listed);
  return listed;
}

void encode_table_sector(std::span<const BlockMapEntry> map, std::span<const SegmentUsage> usage,
                         uint32_t i, unsigned char* out) {
  std::fill(out, out + kLldSectorBytes, 0);
  const uint64_t from = uint64_t{i} * kLldSectorBytes, to = from + kLldSectorBytes;
  const uint64_t map_end = uint64_t{kBlockMapEntryBytes} * map.size();
  unsigned char entry[kBlockMapEntryBytes];
  // Each entry's bytes that fall in [from, to): a map entry never straddles
  // a sector (16 divides 512), a usage entry may.
  auto put = [&](uint64_t at, uint64_t len) {
    const uint64_t lo = std::max(at, from), hi = std::min(at + len, to);
    if (lo < hi) std::copy(entry + (lo - at), entry + (hi - at), out + (lo - from));
  };
  for (uint64_t b = from / kBlockMapEntryBytes; b < map.size() && b * kBlockMapEntryBytes < to; ++b) {
    encode_map_entry(map[b], entry);
    put(b * kBlockMapEntryBytes, kBlockMapEntryBytes);
  }
  const uint64_t first_usage = from > map_end ? (from - map_end) / kSegmentUsageBytes : 0;
  for (uint64_t s = first_usage; s < usage.size() && map_end + s * kSegmentUsageBytes < to; ++s) {
    encode_usage(usage[s], entry);
    put(map_end + s * kSegmentUsageBytes, kSegmentUsageBytes);
  }
}

uint64_t table_sector_hash(const unsigned char* sector) {
  return checksum64(sector, kLldSectorBytes, 0x4c44435053454354ULL);  // "LDCPSECT"
}

Mac table_digest(std::span<const uint64_t> sector_hashes, const MacKey& key) {
  std::vector<unsigned char> bytes(sector_hashes.size() * 8);
  for (size_t i = 0; i < sector_hashes.size(); ++i) encode_fixed64(&bytes[i * 8], sector_hashes[i]);
  return mac_of(bytes.data(), bytes.size(), key);
}

std::vector<unsigned char> encode_checkpoint(const Checkpoint& c, const LldShape& shape,
                                             const MacKey& key) {
  assert(position_ok(c, shape) && tables_ok(c, shape) && c.journal_sectors == 0);
  std::vector<unsigned char> b(size_t{1 + checkpoint_table_sectors(shape)} * kLldSectorBytes);
  unsigned char* tables = b.data() + kLldSectorBytes;
  encode_tables(c.tables, tables);
  const Mac m = tables_mac(tables, checkpoint_table_sectors(shape), shape, key, nullptr);
  const std::vector<unsigned char> record = encode_checkpoint_record(c, shape, m, key);
  std::copy(record.begin(), record.end(), b.begin());
  return b;
}

std::vector<unsigned char> encode_checkpoint_record(const Checkpoint& c, const LldShape& shape,
                                                    const Mac& tables_mac, const MacKey& key) {
  assert(position_ok(c, shape));
  std::vector<unsigned char> b(kLldSectorBytes);
  unsigned char* p = b.data();
  encode_fixed32(p, kCheckpointMagic);
  encode_fixed32(p + 4, c.clean ? 1 : 0);
  encode_fixed64(p + 8, c.generation);
  encode_fixed64(p + 16, c.checkpoint_seq);
  encode_fixed64(p + 24, c.next_seq);
  encode_fixed32(p + 32, c.segment);
  encode_fixed32(p + 36, c.next_sector);
  encode_fixed32(p + 40, shape.logical_blocks);
  encode_fixed32(p + 44, shape.segment_count);
  encode_fixed32(p + 48, checkpoint_table_sectors(shape));
  encode_fixed32(p + kJournalSectorsAt, c.journal_sectors);
  std::copy(tables_mac.begin(), tables_mac.end(), p + kTablesMacAt);
  mac_seal(p, kRecordMacAt, key);
  return b;
}

std::optional<CheckpointRecord> decode_checkpoint_record(std::span<const unsigned char> sector,
                                                         const LldShape& shape, const MacKey& key) {
  if (sector.size() < kLldSectorBytes) return std::nullopt;
  const unsigned char* p = sector.data();
  if (decode_fixed32(p) != kCheckpointMagic || !mac_valid(p, kRecordMacAt, key)) return std::nullopt;
  const uint32_t clean = decode_fixed32(p + 4);
  if (clean > 1 || decode_fixed32(p + 40) != shape.logical_blocks ||
      decode_fixed32(p + 44) != shape.segment_count ||
      decode_fixed32(p + 48) != checkpoint_table_sectors(shape))
    return std::nullopt;
  CheckpointRecord r;
  Checkpoint& c = r.checkpoint;
  c.clean = clean == 1;
  c.generation = decode_fixed64(p + 8);
  c.checkpoint_seq = decode_fixed64(p + 16);
  c.next_seq = decode_fixed64(p + 24);
  c.segment = decode_fixed32(p + 32);
  c.next_sector = decode_fixed32(p + 36);
  c.journal_sectors = decode_fixed32(p + kJournalSectorsAt);
  std::copy(p + kTablesMacAt, p + kTablesMacAt + kMacBytes, r.tables_mac.begin());
  if (!position_ok(c, shape)) return std::nullopt;
  return r;
}

uint32_t checkpoint_sectors_after_record(const CheckpointRecord& record, const LldShape& shape) {
  return checkpoint_table_sectors(shape) + record.checkpoint.journal_sectors;
}

std::optional<SlotTables> assemble_slot_tables(const CheckpointRecord& record,
                                               std::span<const unsigned char> after_record,
                                               const LldShape& shape) {
  const uint32_t sectors = checkpoint_table_sectors(shape);
  const size_t table_bytes = size_t{sectors} * kLldSectorBytes;
  if (after_record.size() < size_t{checkpoint_sectors_after_record(record, shape)} * kLldSectorBytes)
    return std::nullopt;
  SlotTables t;
  t.bytes.assign(after_record.begin(), after_record.begin() + static_cast<ptrdiff_t>(table_bytes));
  const bool whole = walk_journal(
      after_record.subspan(table_bytes), record.checkpoint.journal_sectors, sectors,
      [&](uint32_t sector, const unsigned char* bytes) {
        std::copy_n(bytes, kLldSectorBytes, t.bytes.data() + size_t{sector} * kLldSectorBytes);
        t.journaled.push_back(sector);
      });
  if (!whole) return std::nullopt;
  sort_unique(t.journaled);
  return t;
}

std::optional<Checkpoint> decode_checkpoint_tables(const CheckpointRecord& record,
                                                   std::span<const unsigned char> after_record,
                                                   const LldShape& shape, const MacKey& key,
                                                   std::vector<uint64_t>* sector_hashes,
                                                   SlotTables* tables) {
  std::optional<SlotTables> t = assemble_slot_tables(record, after_record, shape);
  if (!t) return std::nullopt;
  std::vector<uint64_t> hashes;
  if (tables_mac(t->bytes.data(), checkpoint_table_sectors(shape), shape, key, &hashes) !=
      record.tables_mac)
    return std::nullopt;
  Checkpoint c = record.checkpoint;
  decode_tables(t->bytes.data(), shape, &c.tables);
  if (!tables_ok(c, shape)) return std::nullopt;
  if (sector_hashes) *sector_hashes = std::move(hashes);
  if (tables) *tables = std::move(*t);
  return c;
}

std::optional<Checkpoint> decode_checkpoint(std::span<const unsigned char> slot,
                                            const LldShape& shape, const MacKey& key,
                                            std::vector<uint64_t>* sector_hashes) {
  if (slot.size() < kLldSectorBytes) return std::nullopt;
  const std::optional<CheckpointRecord> r =
      decode_checkpoint_record(slot.first(kLldSectorBytes), shape, key);
  if (!r) return std::nullopt;
  return decode_checkpoint_tables(*r, slot.subspan(kLldSectorBytes), shape, key, sector_hashes);
}

std::array<int, 2> checkpoint_slot_order(const std::optional<CheckpointRecord>& slot0,
                                         const std::optional<CheckpointRecord>& slot1) {
  const bool one_first =
      slot1 && (!slot0 || slot1->checkpoint.generation > slot0->checkpoint.generation);
  return one_first ? std::array{1, 0} : std::array{0, 1};
}

std::optional<PickedCheckpoint> pick_checkpoint(std::span<const unsigned char> slot0,
                                                std::span<const unsigned char> slot1,
                                                const LldShape& shape, const MacKey& key) {
  const std::array<std::span<const unsigned char>, 2> slots{slot0, slot1};
  std::array<std::optional<CheckpointRecord>, 2> records;
  for (int i = 0; i < 2; ++i)
    records[i] = decode_checkpoint_record(slots[i], shape, key);
  for (int i : checkpoint_slot_order(records[0], records[1])) {
    if (!records[i]) continue;
    std::vector<uint64_t> hashes;
    std::optional<Checkpoint> c = decode_checkpoint_tables(
        *records[i], slots[i].subspan(kLldSectorBytes), shape, key, &hashes);
    if (c) return PickedCheckpoint{i, std::move(*c), std::move(hashes)};
  }
  return std::nullopt;
}

}  // namespace vld
