// Atomic recovery units in mode=lld (issue 15): Disk::commit_group, EndARU +
// Flush (LldDisk::Impl; lld_disk_impl.h).
//
// Paper 000 section 4: LLD writes an ARU's blocks into segments with their
// summary entries, generates "the commit record for the ARU" after them,
// and roll-forward ignores the blocks of an ARU without one. Here an ARU's
// shadow state stays in host memory until EndARU (core/aru), so the disk
// sees an ARU only at its commit, as one group of blocks, and the two
// whole-request mechanisms mode=lld already has give the commit record:
//
//   - With NVRAM, a group no larger than the region is one NVRAM request:
//     its records go in with one write and one fdatasync, each carries the
//     request's first seq and record count, and replay takes a request only
//     if it reaches its last record (nvram_log.h). That last record is the
//     commit record. The region keeps the request whole until the drain
//     that writes it into segments is durable, so a drain may cut it.
//   - Otherwise (nvram=0, or a group larger than the region) the group is
//     one `continues` chain of segment writes, after whatever the memory
//     copy holds: every write but the last carries the flag, and the last
//     write's summary, without it, is the commit record. Roll-forward
//     holds the chain's writes until it finds that one whole, and drops
//     them otherwise (segment_summary.h). No new on-disk field is needed.
//
// What the chain adds to a plain request's: it is never split. A request
// the free segments cannot take after cleaning is logged in pieces
// (LldStats::split_requests); a group is refused with ENOSPC before
// anything is written. And it is applied in memory only after every write
// of it and the sync succeeded: after a failed write nothing of it is
// applied, its seqs are voided by a checkpoint (as recovery voids the
// writes roll-forward dropped) so that no later write can line up behind
// a piece of it left in the image, and if that checkpoint fails too the
// disk stops.
#include <cassert>

#include <fmt/format.h>

#include "core/lld/lld_disk_impl.h"
#include "core/util/error.h"

namespace vld {

std::vector<LogEntry> LldDisk::Impl::group_entries(std::span<const GroupBlock> blocks) {
  std::vector<LogEntry> entries;
  for (size_t i = 0; i < blocks.size();) {
    assert(blocks[i].block < map_.size() && (i == 0 || blocks[i - 1].block < blocks[i].block));
    const auto block = static_cast<uint32_t>(blocks[i].block);
    if (blocks[i].data) {
      const auto* p = reinterpret_cast<const unsigned char*>(blocks[i].data);
      entries.push_back(data_entry(block, std::vector<unsigned char>(p, p + block_bytes())));
      ++i;
      continue;
    }
    // Zeros: a trim entry (reads as zeros, frees the old copy), one per run
    // of consecutive zero blocks.
    size_t j = i + 1;
    while (j < blocks.size() && !blocks[j].data && blocks[j].block == blocks[j - 1].block + 1) ++j;
    entries.push_back(trim_entry(block, static_cast<uint32_t>(j - i)));
    i = j;
  }
  for (LogEntry& e : entries) e.ends_request = false;
  entries.back().ends_request = true;
  return entries;
}

Completion LldDisk::Impl::commit_group(std::span<const GroupBlock> blocks, SimTime start) {
  assert(!blocks.empty());
  store_->check();
  LldClock c{start};
  const uint64_t first_version = next_version_;
  std::vector<LogEntry> entries = group_entries(blocks);
  if (has_nvram() && entries.size() <= layout_.nvram_records) {
    // One NVRAM request: durable and whole at once; every earlier write is
    // durable already.
    submit(std::move(entries), /*fua=*/true, c);
    return c.done();
  }
  if (has_nvram()) {
    ++stats_.nvram_bypasses;
    // Buffered blocks would read over the group's newer copies in segments.
    if (!pending_.empty()) drain(c);
  }
  const size_t want = pending_.live_entries() + entries.size();
  if (!make_room(want, c)) {
    next_version_ = first_version;  // nothing of the group exists
    throw Error(fmt::format("mode=lld cannot commit this atomic recovery unit of {} blocks "
                            "whole: the clean segments, even after cleaning, hold {} more "
                            "entries beside the live data; the ARU stays open (commit fewer "
                            "blocks, or free space first)",
                            blocks.size(), room_beside_pending()),
                ENOSPC);
  }
  commit_chain(entries, c);
  return c.done();
}

size_t LldDisk::Impl::room_beside_pending() const {
  const size_t capacity = group_capacity_entries();
  return capacity > pending_.live_entries() ? capacity - pending_.live_entries() : 0;
}

bool LldDisk::Impl::make_room(size_t entries, LldClock& c) {
  // As log_to_segments admits a piece of a request: clean first if the free
  // segments are short, then what the open segment's room and the free
  // segments take (group_capacity_entries leaves a segment free after).
  const uint32_t need = segments_for_entries(entries) + 1;
  if (usage_.free_count() < need) clean_until(need + kCleanerBatchSegments, c);
  return group_capacity_entries() >= entries;
}

void LldDisk::Impl::commit_chain(const std::vector<LogEntry>& group, LldClock& c) {
  const SimTime before = c.now;
  std::vector<const LogEntry*> chain;  // the memory copy's entries (nvram=0), then the group
  pending_.for_each_live([&](const LogEntry& e) {
    chain.push_back(&e);
    return true;
  });
  const size_t from_pending = chain.size();
  for (const LogEntry& e : group) chain.push_back(&e);
  const std::vector<PlannedWrite> writes = plan_chain(chain);
  try {
    for (const PlannedWrite& w : writes) write_out(w, c);
  } catch (const Error&) {
    void_chain(writes.size(), c);
    throw;
  }
  sync(c);  // a failure stops the disk (FailStopStore); nothing is applied
  for (const PlannedWrite& w : writes) {
    apply_write(w, c);
    stats_.client_blocks_written += w.summary.data_blocks();
  }
  assert(!in_group_);
  for (size_t i = 0; i < from_pending; ++i) pending_.pop_front();
  stats_.segment_write_time += c.now - before;
}

std::vector<LldDisk::Impl::PlannedWrite> LldDisk::Impl::plan_chain(
    const std::vector<const LogEntry*>& chain) const {
  // The free segments in the order emit_write would open them (lowest first).
  std::vector<uint32_t> free;
  for (uint32_t s = 0; s < usage_.segment_count(); ++s)
    if (usage_.state(s) == SegmentState::kFree) free.push_back(s);
  std::vector<PlannedWrite> out;
  uint32_t segment = *usage_.open_segment(), head = head_sector_;
  size_t opened = 0;
  for (size_t i = 0; i < chain.size();) {
    // As many entries as fit the segment's room, laid out as write_one does.
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
    const bool partial_full = uint64_t{head + sectors} * 100 >=
                              uint64_t{options_.partial_percent} * shape_.segment_sectors;
    const bool close = i + k < chain.size() || room - sectors < 1 + shape_.block_sectors ||
                       partial_full;
    if (close && opened == free.size())  // make_room admitted it: never here
      throw Error("mode=lld planned an ARU's commit past its clean segments; this is a bug: "
                  "please report it",
                  ENOSPC);
    const uint32_t next = close ? free[opened++] : segment;
    const bool continues = !chain[i + k - 1]->ends_request;
    std::vector<const LogEntry*> part(chain.begin() + i, chain.begin() + i + k);
    out.push_back(plan_write(std::move(part), segment, head, next_seq_ + out.size(), close,
                             continues, next));
    i += k;
    head = close ? 0 : head + sectors;
    segment = next;
  }
  assert(!out.back().summary.continues);
  return out;
}

void LldDisk::Impl::void_chain(size_t writes, LldClock& c) {
  // Any of the chain's writes may be in the image, whole (all but the one
  // that failed) or torn. Roll-forward from the last checkpoint takes them
  // only as a whole chain, which the failed write broke; but later writes
  // reusing their seqs and places could complete a piece of it. So their
  // seqs are never used again, and a checkpoint (sync, write, sync) starts
  // roll-forward past them, as recovery does for the writes it drops.
  next_seq_ += writes;
  try {
    write_checkpoint(/*clean=*/false, c);
  } catch (const Error& e) {
    store_->stop(std::string("a checkpoint voiding an atomic recovery unit's failed commit could "
                             "not be written (") +
                 e.what() + ")");
  }
}

}  // namespace vld
