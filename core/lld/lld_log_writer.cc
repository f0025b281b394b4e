// The log head of mode=lld: segment writes and checkpoints (LldDisk::Impl;
// lld_disk_impl.h). Every segment write is [summary][blocks] at the open
// segment's head_sector_ (docs/format.md, "mode=lld / Segment summary"),
// one sequential transfer through the drive model.
#include <algorithm>
#include <cassert>

#include "core/lld/lld_disk_impl.h"
#include "core/util/error.h"
#include "core/util/host_phases.h"

namespace vld {

uint32_t LldDisk::Impl::room_sectors() const { return shape_.segment_sectors - head_sector_; }

bool LldDisk::Impl::must_close_after(uint32_t sectors_written) const {
  // A write that leaves no room for one more block closes the segment, so
  // roll-forward always finds the next write where a summary says.
  const uint32_t left = room_sectors() - sectors_written;
  return left < 1 + shape_.block_sectors;
}

std::vector<const LogEntry*> LldDisk::Impl::pending_chain() const {
  std::vector<const LogEntry*> chain;
  chain.reserve(pending_.live_entries());
  pending_.for_each_live([&](const LogEntry& e) {
    chain.push_back(&e);
    return true;
  });
  return chain;
}

bool LldDisk::Impl::write_one(LldClock& c) {
  const std::vector<PlannedWrite> w = plan_chain(pending_chain(), /*whole=*/true, 1);
  if (w.empty()) return false;
  write_out(w.front(), c);  // a failure changes nothing: the entries stay buffered
  for (size_t i = apply_chain(w, c); i > 0; --i) pending_.pop_front();
  return true;
}

void LldDisk::Impl::write_pending(bool force, LldClock& c) {
  const std::vector<PlannedWrite> writes = plan_chain(pending_chain(), /*whole=*/force);
  if (writes.empty()) return;
  write_chain(writes, c);
  for (size_t i = apply_chain(writes, c); i > 0; --i) pending_.pop_front();
  assert(!in_group_);
}

size_t LldDisk::Impl::apply_chain(const std::vector<PlannedWrite>& writes, LldClock& c) {
  size_t entries = 0;
  for (const PlannedWrite& w : writes) {
    apply_write(w, c);
    stats_.client_blocks_written += w.summary.data_blocks();  // chains carry client entries only
    entries += w.entries.size();
  }
  return entries;
}

void LldDisk::Impl::write_chain(const std::vector<PlannedWrite>& writes, LldClock& c) {
  try {
    for (const PlannedWrite& w : writes) write_out(w, c);
  } catch (const Error&) {
    void_chain(writes.size(), c);
    throw;
  }
}

std::vector<LldDisk::Impl::PlannedWrite> LldDisk::Impl::plan_chain(
    const std::vector<const LogEntry*>& chain, bool whole, size_t max_writes) const {
  HostPhaseTimer phase_timer(HostPhase::kAllocator);
  assert(!in_group_);
  std::vector<PlannedWrite> out;
  uint32_t segment = *usage_.open_segment(), head = head_sector_;
  uint32_t free_from = 0;  // segments below it are not free, or opened already
  for (size_t i = 0; i < chain.size() && out.size() < max_writes;) {
    // As many entries as fit the segment's room.
    const uint32_t room = shape_.segment_sectors - head;
    size_t k = 0;
    uint32_t data = 0;
    for (; i + k < chain.size(); ++k) {
      const uint32_t d = data + (chain[i + k]->is_trim() ? 0 : 1);
      if (write_sectors(static_cast<uint32_t>(k + 1), d, shape_) > room) break;
      data = d;
    }
    assert(k > 0);  // must_close_after keeps room for a block
    const auto sectors =
        static_cast<uint32_t>(write_sectors(static_cast<uint32_t>(k), data, shape_));
    // LLD's partial-segment rule (paper 001 section 4.4): a forced write
    // that leaves the segment at least partial% full closes it as if full.
    const bool partial_full = uint64_t{head + sectors} * 100 >=
                              uint64_t{options_.partial_percent} * shape_.segment_sectors;
    // Without `whole`, the rest stays in memory once it fits the open
    // segment, unless it finishes a request the last write began.
    if (!whole && i + k == chain.size() && (out.empty() || !out.back().summary.continues)) break;
    // A write that leaves no room for one more block closes the segment
    // (must_close_after), so roll-forward finds the next write where a
    // summary says.
    const bool close = i + k < chain.size() || room - sectors < 1 + shape_.block_sectors ||
                       partial_full;
    uint32_t next = segment;
    if (close) {
      // Free segments open lowest first, as emit_write opens them.
      const std::optional<uint32_t> free = usage_.free_at_or_after(free_from);
      if (!free)  // admitting the request (or the cleaner) made room: never here
        throw Error("mode=lld has no clean segment left to write into (the cleaner could not "
                    "keep up); this is a bug: please report it with the image's vld-inspect "
                    "output",
                    ENOSPC);
      next = *free;
      free_from = next + 1;
    }
    const bool continues = !chain[i + k - 1]->ends_request;
    std::vector<const LogEntry*> part(chain.begin() + i, chain.begin() + i + k);
    out.push_back(plan_write(std::move(part), segment, head, next_seq_ + out.size(), close,
                             continues, next));
    i += k;
    head = close ? 0 : head + sectors;
    segment = next;
  }
  assert(out.empty() || out.size() == max_writes || !out.back().summary.continues);
  return out;
}

void LldDisk::Impl::void_chain(size_t writes, LldClock& c) {
  // None of the chain is applied, but any of its writes may be in the
  // image, whole (all before the one that failed, and that one too if the
  // error came after its bytes) or torn. Roll-forward from the last
  // checkpoint would take a whole write that ends a request, and later
  // writes reusing their seqs and places could complete a piece of a
  // request. So their seqs are never used again, and a checkpoint (sync,
  // write, sync) starts roll-forward past them, as recovery does for the
  // writes it drops.
  next_seq_ += writes;
  try {
    write_checkpoint(/*clean=*/false, c);
  } catch (const Error& e) {
    store_->stop(std::string("a checkpoint voiding a failed segment write could not be "
                             "written (") +
                 e.what() + ")");
  }
}

void LldDisk::Impl::kill_copy(uint32_t block) {
  const BlockMapEntry& m = map_[block];
  if (m.psn_plus_one == 0) return;
  auto where = layout_.segment_of(psn_of(m));
  assert(where);
  usage_.kill_block(where->segment);
  cp_sectors_.touch_usage(where->segment);
}

void LldDisk::Impl::apply_entry(const LogEntry& e, uint32_t segment, uint64_t psn, uint64_t seq) {
  if (e.is_trim()) {
    for (uint32_t b = e.logical_block; b - e.logical_block < e.trim_blocks; ++b) {
      if (map_[b].version > e.version) continue;  // a newer write (recovery only)
      kill_copy(b);
      map_[b] = BlockMapEntry{0, 0, e.version};
      cp_sectors_.touch_map(b);
    }
    return;
  }
  BlockMapEntry& m = map_[e.logical_block];
  if (m.version > e.version) return;  // a newer write (recovery only)
  kill_copy(e.logical_block);
  m = BlockMapEntry{static_cast<uint32_t>(psn + 1), e.checksum, e.version};
  cp_sectors_.touch_map(e.logical_block);
  usage_.write_block(segment, seq);
  cp_sectors_.touch_usage(segment);
  segment_blocks_[segment].push_back(e.logical_block);
}

void LldDisk::Impl::emit_write(const std::vector<const LogEntry*>& entries, bool close,
                               bool continues, LldClock& c) {
  const uint32_t segment = *usage_.open_segment();
  uint32_t next = segment;
  if (close) {
    auto free = usage_.lowest_free();
    if (!free)
      throw Error("mode=lld has no clean segment left to write into (the cleaner could not keep "
                  "up); this is a bug: please report it with the image's vld-inspect output",
                  ENOSPC);
    next = *free;
  }
  const PlannedWrite w =
      plan_write(entries, segment, head_sector_, next_seq_, close, continues, next);
  write_out(w, c);  // before anything changes: a failed write leaves the disk as it was
  apply_write(w, c);
}

LldDisk::Impl::PlannedWrite LldDisk::Impl::plan_write(std::vector<const LogEntry*> entries,
                                                      uint32_t segment, uint32_t head_sector,
                                                      uint64_t seq, bool close, bool continues,
                                                      uint32_t next_segment) const {
  HostPhaseTimer phase_timer(HostPhase::kMap);
  PlannedWrite w;
  SegmentSummary& s = w.summary;
  s.segment = segment;
  s.seq = seq;
  s.first_sector = head_sector;
  s.closes_segment = close;
  s.continues = continues;
  s.next_segment = close ? next_segment : segment;
  for (const LogEntry* e : entries)
    s.blocks.push_back(SummaryEntry{e->logical_block, e->checksum, e->version, e->trim_blocks});
  w.bytes = encode_segment_summary(s, shape_, key_);
  size_t data_bytes = 0;
  for (const LogEntry* e : entries) data_bytes += e->data.size();
  w.bytes.reserve(w.bytes.size() + data_bytes);  // grown once, not copied at each doubling
  for (const LogEntry* e : entries) w.bytes.insert(w.bytes.end(), e->data.begin(), e->data.end());
  w.entries = std::move(entries);
  w.psn = layout_.segment_first_psn(segment) + head_sector;
  return w;
}

void LldDisk::Impl::write_out(const PlannedWrite& w, LldClock& c) {
  {
    HostPhaseTimer io_timer(HostPhase::kStoreIo);
    store_->write(sb_.platter_offset + w.psn * kSectorBytes, std::as_bytes(std::span(w.bytes)));
  }
  const SectorRun run{w.psn, w.sectors()};
  c.add(drive_.access(std::span(&run, 1), c.now));
}

void LldDisk::Impl::apply_write(const PlannedWrite& w, LldClock& c) {
  HostPhaseTimer phase_timer(HostPhase::kMap);
  const SegmentSummary& s = w.summary;
  assert(s.segment == *usage_.open_segment() && s.first_sector == head_sector_ &&
         s.seq == next_seq_);
  const uint32_t summary = summary_sectors(static_cast<uint32_t>(s.blocks.size()));
  uint64_t data_psn = w.psn + summary;
  for (const LogEntry* e : w.entries) {
    apply_entry(*e, s.segment, data_psn, s.seq);
    if (!e->is_trim()) data_psn += shape_.block_sectors;
  }
  c.blocks_written += s.data_blocks();
  ++stats_.segment_writes;
  stats_.summary_sectors_written += summary;
  ++next_seq_;
  in_group_ = s.continues;
  head_sector_ += w.sectors();
  if (s.closes_segment) {
    usage_.close(s.segment);
    usage_.open(s.next_segment);
    segment_blocks_[s.next_segment].clear();
    head_sector_ = 0;
    ++stats_.segments_closed;
  } else {
    ++stats_.partial_writes;
  }
}

void LldDisk::Impl::sync(LldClock& c) {
  { HostPhaseTimer io_timer(HostPhase::kStoreIo); store_->sync(); }
  ++c.syncs;
  nvram_commit_.synced_all();  // whatever appends group commit left are durable too
}

void LldDisk::Impl::write_checkpoint(bool clean, LldClock& c) {
  assert(!in_group_);  // a checkpoint never splits a request's writes
  sync(c);  // every segment write the tables reflect is durable first
  Checkpoint cp;
  cp.clean = clean;
  // The generation counts only once its slot is written: after a failed
  // write the next checkpoint must go to the same (torn) slot again, never
  // over the other one, which holds the only whole checkpoint.
  cp.generation = checkpoint_generation_ + 1;
  cp.checkpoint_seq = next_seq_ - 1;
  cp.next_seq = next_seq_;
  cp.segment = *usage_.open_segment();
  cp.next_sector = head_sector_;
  const SimTime before = c.now;
  std::vector<SectorRun> runs;
  CheckpointPlan plan;
  if (shape_.incremental_checkpoints()) {
    plan = plan_checkpoint();
    write_checkpoint_sectors(cp, plan);
    runs = plan.runs;
  } else {
    runs = write_whole_checkpoint(cp);
  }
  checkpoint_generation_ = cp.generation;
  c.add(drive_.access(runs, c.now));
  sync(c);
  if (shape_.incremental_checkpoints()) {
    if (plan.append) {
      cp_sectors_.appended(plan.slot, plan.sectors, plan.journal_used);
    } else {
      cp_sectors_.folded(plan.slot);
      ++stats_.checkpoint_folds;
    }
    cp_sectors_.written(plan.slot);
  }
  ++stats_.checkpoints;
  for (const SectorRun& r : runs) stats_.checkpoint_sectors_written += r.count;
  stats_.checkpoint_time += c.now - before;
  // Segments the durable checkpoint shows empty can be reused now: nothing
  // recovery reads (the checkpoint, the writes after it) lies in them.
  for (uint32_t s = 0; s < usage_.segment_count(); ++s) {
    if (usage_.state(s) != SegmentState::kFull || usage_.usage(s).live_blocks != 0) continue;
    usage_.free_segment(s);
    cp_sectors_.touch_usage(s);
    segment_blocks_[s].clear();
    ++stats_.segments_freed;
  }
}

std::vector<SectorRun> LldDisk::Impl::write_whole_checkpoint(Checkpoint& cp) {
  cp.tables.map = map_;
  cp.tables.usage = usage_.usage_table();
  const std::vector<unsigned char> bytes = encode_checkpoint(cp, shape_, key_);
  const LldExtent& slot = layout_.checkpoint[cp.generation % 2];
  assert(bytes.size() == slot.sectors * kSectorBytes);  // no journal before version 4
  store_->write(sb_.platter_offset + slot.first_psn * kSectorBytes, std::as_bytes(std::span(bytes)));
  return {SectorRun{slot.first_psn, static_cast<uint32_t>(slot.sectors)}};
}

LldDisk::Impl::CheckpointPlan LldDisk::Impl::plan_checkpoint() const {
  assert(shape_.incremental_checkpoints());
  CheckpointPlan plan;
  plan.slot = static_cast<int>((checkpoint_generation_ + 1) % 2);
  const LldExtent& slot = layout_.checkpoint[plan.slot];
  const uint64_t tables_psn = slot.first_psn + 1;
  const uint64_t journal_psn = tables_psn + checkpoint_table_sectors(shape_);
  plan.sectors = cp_sectors_.stale(plan.slot);
  const uint32_t used = cp_sectors_.journal_used(plan.slot);
  const uint32_t append = plan.sectors.empty() ? 0 : journal_append_sectors(plan.sectors.size());
  plan.runs.push_back(SectorRun{slot.first_psn, 1});  // the record
  plan.append = used + uint64_t{append} <= checkpoint_journal_sectors(shape_);
  if (plan.append) {
    // One run where the journal ends: the changed sectors and their
    // index sectors (checkpoint.h).
    plan.journal_used = used + append;
    if (append > 0) plan.runs.push_back(SectorRun{journal_psn + used, append});
    return plan;
  }
  plan.sectors = cp_sectors_.fold_sectors(plan.slot);  // the fold: in place
  for (uint32_t sector : plan.sectors) {
    const uint64_t psn = tables_psn + sector;
    if (plan.runs.size() > 1 && plan.runs.back().first_psn + plan.runs.back().count == psn)
      ++plan.runs.back().count;
    else
      plan.runs.push_back(SectorRun{psn, 1});
  }
  return plan;
}

std::vector<SectorRun> LldDisk::Impl::checkpoint_runs() const {
  if (shape_.incremental_checkpoints()) return plan_checkpoint().runs;
  const LldExtent& slot = layout_.checkpoint[(checkpoint_generation_ + 1) % 2];
  return {SectorRun{slot.first_psn, 1 + checkpoint_table_sectors(shape_)}};
}

void LldDisk::Impl::write_checkpoint_sectors(Checkpoint& cp, const CheckpointPlan& plan) {
  assert(cp.generation == checkpoint_generation_ + 1 && cp.generation % 2 == uint64_t(plan.slot));
  cp.journal_sectors = plan.journal_used;
  // The sectors, encoded anew.
  std::vector<unsigned char> bytes(plan.sectors.size() * kSectorBytes);
  for (size_t k = 0; k < plan.sectors.size(); ++k) {
    unsigned char* p = bytes.data() + k * kSectorBytes;
    encode_table_sector(map_, usage_.rows(), plan.sectors[k], p);
    cp_sectors_.set_hash(plan.sectors[k], table_sector_hash(p));
  }
  const auto write_at = [&](uint64_t psn, std::span<const unsigned char> b) {
    store_->write(sb_.platter_offset + psn * kSectorBytes, std::as_bytes(b));
  };
  if (plan.append && !plan.sectors.empty()) {
    write_at(plan.runs[1].first_psn, encode_journal(plan.sectors, bytes));
  } else if (!plan.append) {
    size_t k = 0;  // each run of sectors in place, at once
    for (auto run = plan.runs.begin() + 1; run != plan.runs.end(); ++run) {
      write_at(run->first_psn, std::span(bytes).subspan(k * kSectorBytes, size_t{run->count} * kSectorBytes));
      k += run->count;
    }
  }
  write_at(plan.runs.front().first_psn,
           encode_checkpoint_record(cp, shape_, table_digest(cp_sectors_.hashes(), key_), key_));
}

}  // namespace vld
