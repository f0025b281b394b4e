// Atomic recovery units in mode=lld (docs/aru.md): Disk::commit_group, EndARU +
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
// As a plain request (room_for_request), a group the clean segments cannot
// take whole after cleaning is refused with ENOSPC before anything is
// written. What the chain adds: it is synced before it is applied in
// memory, so a commit is durable when it returns; after a failed write
// nothing of it is applied, its seqs are voided by a checkpoint (as
// recovery voids the writes roll-forward dropped) so that no later write
// can line up behind a piece of it left in the image, and if that
// checkpoint fails too the disk stops.
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
  changed_since_open_ = true;
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
  if (!room_for_request(entries.size(), c)) {
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

void LldDisk::Impl::commit_chain(const std::vector<LogEntry>& group, LldClock& c) {
  const SimTime before = c.now;
  // The memory copy's entries (nvram=0), then the group.
  std::vector<const LogEntry*> chain = pending_chain();
  const size_t from_pending = chain.size();
  for (const LogEntry& e : group) chain.push_back(&e);
  const std::vector<PlannedWrite> writes = plan_chain(chain, /*whole=*/true);
  write_chain(writes, c);
  sync(c);  // a failure stops the disk (FailStopStore); nothing is applied
  apply_chain(writes, c);
  assert(!in_group_);
  for (size_t i = 0; i < from_pending; ++i) pending_.pop_front();
  stats_.segment_write_time += c.now - before;
}

}  // namespace vld
