// Opening mode=lld images: format, recovery (checkpoint, roll-forward, NVRAM
// replay), and the disk's report and self-check (LldDisk::Impl;
// lld_disk_impl.h). Sprite LFS section 4 and paper 000 section 4 recover
// the same way: the newest whole checkpoint, then the log written after it.
#include <algorithm>
#include <cassert>
#include <chrono>

#include <fmt/format.h>

#include "core/lld/lld_disk_impl.h"
#include "core/util/coding.h"
#include "core/util/error.h"
#include "core/util/checksum.h"

namespace vld {

namespace {

LldLayout layout_of(const Superblock& sb) {
  assert(sb.mode == DiskMode::kLld);
  return plan_lld_layout(sb.geometry, sb.simulated_cylinders, sb.export_bytes, sb.block_bytes,
                         sb.segment_bytes, sb.nvram_bytes, sb.version());
}

Checkpoint empty_checkpoint(const LldShape& shape) {
  Checkpoint cp;
  cp.clean = true;
  cp.generation = 1;
  cp.checkpoint_seq = 0;
  cp.next_seq = 1;
  cp.tables.map.resize(shape.logical_blocks);
  cp.tables.usage.resize(shape.segment_count);
  return cp;
}

}  // namespace

void LldDisk::Impl::format(BackingStore& store, const Superblock& sb) {
  const LldLayout layout = layout_of(sb);
  // Both slots hold the empty disk (generations 1 and 2), so that the first
  // checkpoint, to slot 1, writes only the sectors it changes.
  Checkpoint cp = empty_checkpoint(layout.shape);
  for (uint64_t generation : {1, 2}) {
    cp.generation = generation;
    const std::vector<unsigned char> bytes = encode_checkpoint(cp, layout.shape, sb.secret);
    const LldExtent& slot = layout.checkpoint[generation % 2];
    store.write(sb.platter_offset + slot.first_psn * kSectorBytes, std::as_bytes(std::span(bytes)));
  }
  if (layout.nvram_records == 0) return;
  const NvramHeader h{1, 1};
  const std::vector<unsigned char> header = encode_nvram_header(h, sb.secret);
  store.write(sb.platter_offset + layout.nvram.first_psn * kSectorBytes + nvram_header_offset(h),
              std::as_bytes(std::span(header)));
}

LldDisk::Impl::Impl(std::unique_ptr<BackingStore> store, const Superblock& sb, LldOptions options,
                    bool track_buffer)
    : store_(FailStopStore::wrap(std::move(store))),
      sb_(sb),
      layout_(layout_of(sb)),
      shape_(layout_.shape),
      key_(sb.secret),
      options_(options),
      blocks_per_write_(max_blocks_per_write(layout_.shape)),
      drive_(sb.geometry, sb.simulated_cylinders),
      usage_(layout_.shape.segment_count, blocks_per_write_),
      cp_sectors_(checkpoint_table_sectors(layout_.shape), layout_.shape.logical_blocks),
      segment_blocks_(layout_.shape.segment_count),
      pending_(/*dedup=*/layout_.nvram_records > 0) {
  assert(options_.partial_percent >= 1 && options_.partial_percent <= 100);
  drive_.set_track_buffer(track_buffer);
  recover();
  nvram_commit_.wrote(nvram_next_seq_ - 1);  // recovered, or synced by recovery's drain
  nvram_commit_.synced_all();
}

std::vector<unsigned char> LldDisk::Impl::read_sectors(uint64_t psn, uint64_t sectors) {
  std::vector<unsigned char> bytes(sectors * kSectorBytes);
  store_->read(sb_.platter_offset + psn * kSectorBytes, std::as_writable_bytes(std::span(bytes)));
  return bytes;
}

std::optional<Checkpoint> LldDisk::Impl::load_checkpoint(LldClock& c) {
  std::array<std::optional<CheckpointRecord>, 2> records;
  std::array<SectorRun, 2> record_runs;
  for (int i = 0; i < 2; ++i) {
    record_runs[i] = SectorRun{layout_.checkpoint[i].first_psn, 1};
    records[i] = decode_checkpoint_record(read_sectors(record_runs[i].first_psn, 1), shape_, key_);
  }
  c.add(drive_.read(record_runs, c.now));
  recovery_.sectors_read += 2;
  // What follows each record that its tables need (checkpoint.h), read once.
  std::array<std::vector<unsigned char>, 2> after;
  const auto read_run = [&](uint64_t first_psn, uint32_t count) {
    const SectorRun run{first_psn, count};
    c.add(drive_.read(std::span(&run, 1), c.now));
    recovery_.sectors_read += count;
    return read_sectors(first_psn, count);
  };
  const auto read_after = [&](int i) -> std::span<const unsigned char> {
    if (after[i].empty())
      after[i] = read_run(layout_.checkpoint[i].first_psn + 1,
                          checkpoint_sectors_after_record(*records[i], shape_));
    return after[i];
  };
  for (int i : checkpoint_slot_order(records[0], records[1])) {
    if (!records[i]) continue;
    std::vector<uint64_t> hashes;
    SlotTables tables;
    std::optional<Checkpoint> cp =
        decode_checkpoint_tables(*records[i], read_after(i), shape_, key_, &hashes, &tables);
    if (!cp) continue;
    if (shape_.incremental_checkpoints()) {
      // The next checkpoint goes to the other slot and writes only where
      // it differs, into its journal if there is room, so each slot's
      // journal is listed too.
      const std::optional<CheckpointRecord>& other = records[1 - i];
      SlotTables other_tables;
      bool other_whole = false, same = false;
      if (other && other->checkpoint.generation < cp->generation &&
          other->tables_mac == records[i]->tables_mac) {
        // An older record with the same digest was durable, its tables
        // with it, before this one was written: the same bytes, not read
        // again (close() leaves both slots so); only its journal's list.
        same = true;
        const uint32_t n = other->checkpoint.journal_sectors;
        const uint32_t table_sectors = checkpoint_table_sectors(shape_);
        const std::optional<std::vector<uint32_t>> listed =
            n == 0 ? std::vector<uint32_t>{}
                   : journal_listing(
                         read_run(layout_.checkpoint[1 - i].first_psn + 1 + table_sectors, n), n,
                         table_sectors);
        other_whole = listed.has_value();
        if (listed) other_tables.journaled = *listed;
      } else if (other) {
        other_whole = decode_checkpoint_tables(*other, read_after(1 - i), shape_, key_, nullptr,
                                               &other_tables)
                          .has_value();
      }
      std::span<const unsigned char> other_bytes;
      if (other_whole) other_bytes = same ? tables.bytes : other_tables.bytes;
      cp_sectors_.loaded(i, std::move(hashes), tables.bytes, other_bytes);
      cp_sectors_.set_journal(i, cp->journal_sectors, tables.journaled);
      if (other_whole)
        cp_sectors_.set_journal(1 - i, other->checkpoint.journal_sectors, other_tables.journaled);
    }
    return cp;
  }
  return std::nullopt;
}

void LldDisk::Impl::recover() {
  const auto wall_start = std::chrono::steady_clock::now();
  LldClock c{SimTime{}};
  recovery_.method = has_nvram() ? "checkpoint+roll-forward+nvram" : "checkpoint+roll-forward";
  const std::optional<Checkpoint> loaded = load_checkpoint(c);
  if (!loaded)
    throw Error("mode=lld image: neither checkpoint slot is whole and authentic, so the image "
                "cannot be recovered; restore it from a copy",
                EIO);
  const Checkpoint& cp = *loaded;
  recovery_.checkpoint_generation = cp.generation;
  checkpoint_generation_ = cp.generation;
  map_ = cp.tables.map;
  usage_ = SegmentUsageTable::restore(cp.tables.usage, blocks_per_write_, cp.segment);
  head_sector_ = cp.next_sector;
  next_seq_ = cp.next_seq;
  for (uint32_t b = 0; b < map_.size(); ++b) {
    next_version_ = std::max(next_version_, map_[b].version + 1);
    if (map_[b].psn_plus_one == 0) continue;
    auto where = layout_.segment_of(psn_of(map_[b]));
    if (!where) throw Error(fmt::format("mode=lld image: the checkpoint maps block {} outside "
                                        "the segments; restore the image from a copy", b), EIO);
    segment_blocks_[where->segment].push_back(b);
  }
  if (std::string why = check_consistency(); !why.empty())
    throw Error("mode=lld image: the newest checkpoint disagrees with itself (" + why +
                    "); restore the image from a copy",
                EIO);
  roll_forward(c);
  const bool nvram_empty = replay_nvram_region(c);
  // After a clean close nothing is left to do: no write after the
  // checkpoint, an NVRAM region without a record of its epoch. Otherwise
  // (in memory on a read-only server's overlay): a checkpoint that bridges
  // what roll-forward discarded, then the replayed buffer drained and the
  // NVRAM given a new epoch, so no new record can line up behind a torn one
  // (nvram_log.h).
  recovery_.clean = cp.clean && recovery_.writes_rolled_forward == 0 &&
                    recovery_.writes_discarded == 0 && nvram_empty;
  changed_since_open_ = !recovery_.clean;
  if (changed_since_open_) {
    write_checkpoint(/*clean=*/false, c);
    if (has_nvram()) drain(c);
  }
  recovery_.simulated_ms = to_ms(c.now - SimTime{});
  recovery_.wall_ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - wall_start)
                          .count();
  stats_ = LldStats{};  // the counters are the served requests'; recovery_ has the open's
}

std::optional<LldDisk::Impl::RecoveredWrite> LldDisk::Impl::read_log_write(uint32_t segment,
                                                                        uint32_t sector,
                                                                        uint64_t seq,
                                                                        LldClock& c) {
  if (sector + 1 > shape_.segment_sectors) return std::nullopt;
  const uint64_t psn = layout_.segment_first_psn(segment) + sector;
  std::vector<unsigned char> head = read_sectors(psn, 1);
  const uint32_t count = decode_fixed32(head.data() + 20);
  const uint32_t room = shape_.segment_sectors - sector;
  if (count == 0 || summary_sectors(count) > room) return std::nullopt;
  std::vector<unsigned char> summary = read_sectors(psn, summary_sectors(count));
  auto s = decode_segment_summary(summary, shape_, key_);
  if (!s || s->segment != segment || s->first_sector != sector || s->seq != seq) return std::nullopt;
  RecoveredWrite w{*s, read_sectors(psn + summary_sectors(count),
                                    uint64_t{s->data_blocks()} * shape_.block_sectors)};
  const SectorRun run{psn, static_cast<uint32_t>(s->end_sector(shape_) - sector)};
  c.add(drive_.read(std::span(&run, 1), c.now));
  recovery_.sectors_read += run.count;
  // A torn write: some block is not what its summary says.
  size_t at = 0;
  for (const SummaryEntry& e : s->blocks) {
    if (e.trim_blocks > 0) continue;
    if (data_checksum(w.data.data() + at, block_bytes(), e.logical_block) != e.checksum)
      return std::nullopt;
    at += block_bytes();
  }
  return w;
}

void LldDisk::Impl::apply_recovered(const RecoveredWrite& w) {
  const uint64_t first = layout_.segment_first_psn(w.summary.segment) + w.summary.first_sector +
                         summary_sectors(static_cast<uint32_t>(w.summary.blocks.size()));
  uint64_t data_psn = first;
  size_t at = 0;
  for (const SummaryEntry& s : w.summary.blocks) {
    LogEntry e;
    e.logical_block = s.logical_block;
    e.trim_blocks = s.trim_blocks;
    e.version = s.version;
    e.checksum = s.checksum;
    next_version_ = std::max(next_version_, s.version + 1);
    apply_entry(e, w.summary.segment, data_psn, w.summary.seq);
    if (s.trim_blocks == 0) {
      data_psn += shape_.block_sectors;
      at += block_bytes();
    }
  }
  head_sector_ = w.summary.end_sector(shape_);
  next_seq_ = w.summary.seq + 1;
  if (w.summary.closes_segment) {
    usage_.close(w.summary.segment);
    usage_.open(w.summary.next_segment);
    segment_blocks_[w.summary.next_segment].clear();
    head_sector_ = 0;
  }
}

void LldDisk::Impl::roll_forward(LldClock& c) {
  uint32_t segment = *usage_.open_segment();
  uint32_t sector = head_sector_;
  uint64_t seq = next_seq_;
  std::vector<RecoveredWrite> group;  // writes of a request not yet ended
  std::vector<uint32_t> group_opens;  // segments the group's closes open
  for (;;) {
    auto w = read_log_write(segment, sector, seq, c);
    if (!w) {
      recovery_.stopped_because = fmt::format("no whole write of seq {} at segment {} sector {}",
                                              seq, segment, sector);
      break;
    }
    if (w->summary.closes_segment) {
      const uint32_t next = w->summary.next_segment;
      if (next == segment || usage_.state(next) != SegmentState::kFree ||
          std::count(group_opens.begin(), group_opens.end(), next)) {
        recovery_.stopped_because = fmt::format("seq {} names segment {}, which is not free", seq, next);
        break;
      }
      group_opens.push_back(next);
      segment = next;
      sector = 0;
    } else {
      sector = w->summary.end_sector(shape_);
    }
    ++seq;
    const bool ends = !w->summary.continues;
    group.push_back(std::move(*w));
    if (!ends) continue;
    for (const RecoveredWrite& g : group) apply_recovered(g);
    recovery_.writes_rolled_forward += group.size();
    group.clear();
    group_opens.clear();
  }
  recovery_.writes_discarded = group.size();
  // Never reuse a seq a discarded write holds: the checkpoint written next
  // bridges the gap, and a stale write can never pass for a new one.
  next_seq_ = seq;
}

bool LldDisk::Impl::replay_nvram_region(LldClock& c) {
  if (!has_nvram()) return true;
  const std::vector<unsigned char> region = read_sectors(layout_.nvram.first_psn, layout_.nvram.sectors);
  (void)c;  // the NVRAM is memory in the paper: reading it costs no drive time
  auto replay = replay_nvram(std::span(region).first(layout_.nvram_bytes), key_, shape_);
  if (!replay)
    throw Error("mode=lld image: the NVRAM region has no authentic header and no record, so "
                "acknowledged writes may be lost; restore the image from a copy",
                EIO);
  if (!replay->damage.empty())
    throw Error("mode=lld image: the NVRAM region is damaged: " + replay->damage +
                    "; acknowledged writes cannot be replayed, so the image is not served; "
                    "restore it from a copy",
                EIO);
  check_damaged_records(*replay);
  nvram_header_ = replay->header;
  nvram_next_seq_ = replay->next_seq;
  recovery_.nvram_records_dropped = replay->dropped;
  if (replay->header_rebuilt)
    note_damage(fmt::format("the newest NVRAM header slot (epoch {}) fails its MAC check; "
                            "rebuilt from its records",
                            replay->header.epoch));
  const bool empty = replay->records.empty() && replay->damaged.empty() &&
                     replay->dropped == 0 && !replay->header_rebuilt;
  for (NvramRecord& r : replay->records) replay_record(r);
  return empty;
}

void LldDisk::Impl::check_damaged_records(const NvramReplay& replay) {
  for (const NvramDamagedRecord& d : replay.damaged) {
    // Exact without it if a newer version of the block is in the segments
    // or later in the region.
    bool newer = map_[d.logical_block].version > d.version;
    for (const NvramRecord& r : replay.records)
      if (r.version > d.version && r.logical_block <= d.logical_block &&
          d.logical_block - r.logical_block < std::max<uint32_t>(r.trim_blocks, 1))
        newer = true;
    if (!newer)
      throw Error(fmt::format("mode=lld image: the NVRAM region is damaged: record seq {} (block "
                              "{}, version {}) fails its data checksum, a later request says it "
                              "was written, and no newer version of the block exists; the image "
                              "is not served; restore it from a copy",
                              d.seq, d.logical_block, d.version),
                  EIO);
    note_damage(fmt::format("NVRAM record seq {} (block {}) fails its data checksum; a newer "
                            "version of the block replaces it",
                            d.seq, d.logical_block));
  }
}

void LldDisk::Impl::note_damage(const std::string& what) {
  if (!recovery_.damage.empty()) recovery_.damage += "; ";
  recovery_.damage += what;
}

void LldDisk::Impl::replay_record(NvramRecord& r) {
  next_version_ = std::max(next_version_, r.version + 1);
  if (r.trim_blocks == 0) {
    if (r.version <= map_[r.logical_block].version) return;  // in a segment already
    LogEntry e;
    e.logical_block = r.logical_block;
    e.version = r.version;
    e.checksum = data_checksum(r.data.data(), r.data.size(), r.logical_block);
    e.data = std::move(r.data);
    pending_.push(std::move(e));
    ++recovery_.nvram_records_replayed;
    return;
  }
  // A trim: only the blocks the segments have not seen newer writes of.
  for (uint32_t b = r.logical_block; b - r.logical_block < r.trim_blocks;) {
    uint32_t end = b;
    while (end - r.logical_block < r.trim_blocks && map_[end].version < r.version) ++end;
    if (end > b) {
      LogEntry e;
      e.logical_block = b;
      e.trim_blocks = end - b;
      e.version = r.version;
      pending_.push(std::move(e));
      ++recovery_.nvram_records_replayed;
    }
    b = end + (end - r.logical_block < r.trim_blocks ? 1 : 0);
  }
}

LldReport LldDisk::Impl::report() const {
  LldReport r;
  r.stats = stats_;
  r.recovery = recovery_;
  r.segment_count = shape_.segment_count;
  r.segment_sectors = shape_.segment_sectors;
  r.blocks_per_segment = blocks_per_write_;
  r.free_segments = usage_.free_count();
  r.live_blocks = usage_.total_live_blocks();
  r.nvram_capacity_records = layout_.nvram_records;
  r.nvram_used_records = has_nvram() ? nvram_next_seq_ - nvram_header_.first_seq : 0;
  r.nvram_buffered_blocks = has_nvram() ? pending_.live_data_entries() : 0;
  r.partial_percent = options_.partial_percent;
  r.cleaner_policy = std::string(cleaner_policy_name(options_.cleaner_policy));
  r.nvram_us = options_.nvram_us_per_4k;
  return r;
}

std::string LldDisk::Impl::check_consistency() const {
  if (!usage_.consistent()) return "the segment usage table breaks its invariants";
  if (!usage_.open_segment()) return "no segment is open";
  if (head_sector_ >= shape_.segment_sectors) return "the log head is past its segment";
  std::vector<uint32_t> live(shape_.segment_count, 0);
  for (uint32_t b = 0; b < map_.size(); ++b) {
    if (map_[b].psn_plus_one == 0) continue;
    auto where = layout_.segment_of(psn_of(map_[b]));
    if (!where) return fmt::format("block {} is mapped outside the segments", b);
    if (usage_.state(where->segment) == SegmentState::kFree)
      return fmt::format("block {} is mapped into free segment {}", b, where->segment);
    if (where->segment == *usage_.open_segment() && where->sector >= head_sector_)
      return fmt::format("block {} is mapped past the log head", b);
    ++live[where->segment];
  }
  for (uint32_t s = 0; s < shape_.segment_count; ++s)
    if (live[s] != usage_.usage(s).live_blocks)
      return fmt::format("segment {} counts {} live blocks but the map has {}", s,
                         usage_.usage(s).live_blocks, live[s]);
  return "";
}

}  // namespace vld
