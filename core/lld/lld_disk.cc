// mode=lld's client requests (LldDisk::Impl; lld_disk_impl.h), and the
// LldDisk facade.
#include "core/lld/lld_disk.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include <fmt/format.h>

#include "core/lld/lld_disk_impl.h"
#include "core/util/error.h"
#include "core/util/checksum.h"

namespace vld {

namespace {

// Zeroing without holes writes real blocks; it is logged this many blocks
// per request so that a large zero never holds its whole range in memory.
constexpr uint64_t kZeroChunkBlocks = 8192;

void append_run(std::vector<SectorRun>* runs, uint64_t psn, uint32_t sectors) {
  if (!runs->empty() && runs->back().first_psn + runs->back().count == psn)
    runs->back().count += sectors;
  else
    runs->push_back(SectorRun{psn, sectors});
}

}  // namespace

std::vector<unsigned char> LldDisk::Impl::read_segment_copy(uint32_t block) {
  const BlockMapEntry& m = map_[block];
  std::vector<unsigned char> bytes = read_sectors(psn_of(m), shape_.block_sectors);
  if (data_checksum(bytes.data(), bytes.size(), block) != m.checksum) {
    ++stats_.checksum_failures;
    throw Error(fmt::format("block {} fails its checksum in segment storage (a lost or damaged "
                            "write of the image file); restore the image from a copy",
                            block),
                EIO);
  }
  return bytes;
}

std::vector<unsigned char> LldDisk::Impl::current_block(uint32_t block,
                                                        std::vector<SectorRun>* runs) {
  if (const LogEntry* e = pending_.newest(block))
    return e->is_trim() ? std::vector<unsigned char>(block_bytes()) : e->data;
  const BlockMapEntry& m = map_[block];
  if (m.psn_plus_one == 0) return std::vector<unsigned char>(block_bytes());
  if (runs) append_run(runs, psn_of(m), shape_.block_sectors);
  return read_segment_copy(block);
}

LogEntry LldDisk::Impl::data_entry(uint32_t block, std::vector<unsigned char> bytes) {
  LogEntry e;
  e.logical_block = block;
  e.version = next_version_++;
  e.checksum = data_checksum(bytes.data(), bytes.size(), block);
  e.data = std::move(bytes);
  return e;
}

LogEntry LldDisk::Impl::trim_entry(uint32_t first_block, uint32_t blocks) {
  LogEntry e;
  e.logical_block = first_block;
  e.trim_blocks = blocks;
  e.version = next_version_++;
  return e;
}

std::vector<LogEntry> LldDisk::Impl::entries_for_write(uint64_t offset,
                                                       std::span<const std::byte> data,
                                                       LldClock& c) {
  const uint64_t bs = block_bytes();
  std::vector<LogEntry> entries;
  std::vector<SectorRun> rmw;  // edges read before they are merged
  for (uint64_t b = offset / bs; b * bs < offset + data.size(); ++b) {
    const uint64_t from = std::max(offset, b * bs), to = std::min(offset + data.size(), (b + 1) * bs);
    std::vector<unsigned char> bytes;
    if (to - from == bs) {  // the whole block: copied in, not zeroed first
      const auto* whole = reinterpret_cast<const unsigned char*>(data.data() + (from - offset));
      bytes.assign(whole, whole + bs);
    } else {
      bytes = current_block(static_cast<uint32_t>(b), &rmw);
      std::memcpy(bytes.data() + (from - b * bs), data.data() + (from - offset), to - from);
    }
    entries.push_back(data_entry(static_cast<uint32_t>(b), std::move(bytes)));
  }
  if (!rmw.empty()) c.add(drive_.read(rmw, c.now));
  return entries;
}

void LldDisk::Impl::submit(std::vector<LogEntry> entries, bool fua, LldClock& c) {
  assert(!entries.empty());
  if (has_nvram() && entries.size() <= layout_.nvram_records) {
    // Each entry keeps ends_request: the NVRAM region holds the request
    // whole until the drain that writes it into segments is durable (only
    // then is the region reset), and replay completes a request a crash
    // left partly in segments. So its segment writes are not grouped: a
    // drain or an idle step may cut it anywhere, and clean or checkpoint
    // between the pieces.
    if (nvram_reset_due_) {
      drain(c);  // a failed append's records become stale (nvram_append)
    } else if (entries.size() > nvram_free_records()) {
      // The buffer is full: drain it wholly (paper 001 section 5.3), and the
      // write waits for that.
      const SimTime before = c.now;
      drain(c);
      ++stats_.nvram_stalls;
      stats_.nvram_stall_time += c.now - before;
    }
    nvram_append(entries, c);
    // (With dedup a request's last entry may die, so a flag on it could
    // chain writes across requests: every buffered entry ends its own.)
    for (LogEntry& e : entries) {
      e.ends_request = true;
      pending_.push(std::move(e));
    }
    return;  // durable already: FUA asks nothing more
  }
  for (LogEntry& e : entries) e.ends_request = false;
  entries.back().ends_request = true;
  if (has_nvram()) {
    // Larger than the whole region: straight to segments, durable before
    // the reply as an NVRAM write would be.
    ++stats_.nvram_bypasses;
    if (!pending_.empty()) drain(c);
    log_request(std::move(entries), /*durable=*/true, c);
    return;
  }
  log_request(std::move(entries), fua, c);
}

void LldDisk::Impl::log_request(std::vector<LogEntry> entries, bool durable, LldClock& c) {
  const uint64_t mark = pending_.end_index();
  try {
    log_to_segments(std::move(entries), c);
    if (durable) {
      write_pending(/*force=*/true, c);
      sync(c);
    }
  } catch (const Error&) {
    // A failed segment write applied nothing (write_pending); what the
    // request left in the memory copy goes too, or the next flush would
    // make a failed write durable over an acknowledged one.
    pending_.truncate(mark);
    throw;
  }
}

size_t LldDisk::Impl::room_beside_pending() const {
  const size_t capacity = group_capacity_entries();
  return capacity > pending_.live_entries() ? capacity - pending_.live_entries() : 0;
}

bool LldDisk::Impl::make_room(size_t entries, LldClock& c) {
  // Clean first if the free segments are short, then what the open
  // segment's room and the free segments take (group_capacity_entries
  // leaves a segment free after).
  const uint32_t need = segments_for_entries(entries) + 1;
  if (usage_.free_count() < need) clean_until(need + kCleanerBatchSegments, c, need);
  return group_capacity_entries() >= entries;
}

bool LldDisk::Impl::room_for_request(size_t entries, LldClock& c) {
  if (make_room(pending_.live_entries() + entries, c)) return true;
  if (pending_.empty()) return false;
  // The memory copy out first: the older copies of its blocks die, and the
  // cleaner can take the segments they held.
  write_pending(/*force=*/true, c);
  return make_room(entries, c);
}

void LldDisk::Impl::log_to_segments(std::vector<LogEntry> entries, LldClock& c) {
  const SimTime before = c.now;
  if (!room_for_request(entries.size(), c)) {
    ++stats_.refused_requests;
    throw Error(fmt::format("mode=lld cannot write this request of {} blocks whole: even after "
                            "cleaning, the clean segments take {} more beside the live data; "
                            "nothing of it was written (write at most {} bytes at once, the "
                            "advertised maximum, or free space first)",
                            entries.size(), room_beside_pending(), atomic_write_bytes()),
                ENOSPC);
  }
  for (LogEntry& e : entries) pending_.push(std::move(e));
  // Whole segments out while the rest does not fit; the request is written
  // to its end if its first write is (plan_chain).
  write_pending(/*force=*/false, c);
  stats_.segment_write_time += c.now - before;
}

Completion LldDisk::Impl::read(uint64_t offset, std::span<std::byte> out, SimTime start) {
  assert(offset + out.size() <= sb_.export_bytes);  // the controller checked the range
  LldClock c{start};
  const uint64_t bs = block_bytes();
  std::vector<SectorRun> runs;
  size_t buffered = 0;
  for (uint64_t b = offset / bs; b * bs < offset + out.size(); ++b) {
    const auto block = static_cast<uint32_t>(b);
    if (has_nvram() && pending_.newest(block)) ++buffered;
    const std::vector<unsigned char> bytes = current_block(block, &runs);
    const uint64_t from = std::max(offset, b * bs), to = std::min(offset + out.size(), (b + 1) * bs);
    std::memcpy(out.data() + (from - offset), bytes.data() + (from - b * bs), to - from);
  }
  if (!runs.empty()) {
    c.add(drive_.read(runs, c.now));
    for (const SectorRun& r : runs) c.blocks_read += r.count / shape_.block_sectors;
  } else if (buffered == 0) {
    c.add(drive_.command_only(c.now));
  }
  c.spend(nvram_cost(buffered));
  return c.done();
}

Completion LldDisk::Impl::write(uint64_t offset, std::span<const std::byte> data, bool fua,
                                SimTime start) {
  assert(offset + data.size() <= sb_.export_bytes);  // the controller checked the range
  store_->check();
  changed_since_open_ = true;
  LldClock c{start};
  if (data.empty()) return flush_if(fua, c);
  submit(entries_for_write(offset, data, c), fua, c);
  return c.done();
}

Completion LldDisk::Impl::flush_if(bool fua, LldClock& c) {
  if (fua && !has_nvram()) {
    write_pending(/*force=*/true, c);
    sync(c);
  }
  return c.done();
}

Completion LldDisk::Impl::flush(SimTime start) {
  store_->check();
  LldClock c{start};
  if (has_nvram()) return c.done();  // every acknowledged write is in the NVRAM already
  const bool had_pending = !pending_.empty();
  write_pending(/*force=*/true, c);
  if (!had_pending) c.add(drive_.command_only(c.now));
  sync(c);
  return c.done();
}

Completion LldDisk::Impl::trim(uint64_t offset, uint64_t len, bool fua, SimTime start) {
  store_->check();
  changed_since_open_ = true;
  LldClock c{start};
  uint64_t first, end;
  whole_blocks(offset, len, block_bytes(), &first, &end);
  if (end == first) return flush_if(fua, c);  // trim is advisory: partial blocks stay
  if (!has_nvram()) c.add(drive_.command_only(c.now));
  std::vector<LogEntry> entries;
  entries.push_back(trim_entry(static_cast<uint32_t>(first), static_cast<uint32_t>(end - first)));
  submit(std::move(entries), fua, c);
  return c.done();
}

Completion LldDisk::Impl::zero(uint64_t offset, uint64_t len, ZeroFlags flags, SimTime start) {
  store_->check();
  changed_since_open_ = true;
  const uint64_t bs = block_bytes();
  uint64_t first, end;
  whole_blocks(offset, len, block_bytes(), &first, &end);
  const bool aligned = first * bs == offset && end * bs == offset + len;
  if (flags.fast && !(flags.may_trim && aligned))
    throw Error("zeroing here means writing blocks, which is not fast", ENOTSUP);
  LldClock c{start};
  if (flags.may_trim && end > first) {
    // One request: the partial edges as written zeros, the whole blocks as a trim.
    const std::vector<std::byte> zeros(bs);
    std::vector<LogEntry> entries;
    auto edge = [&](uint64_t from, uint64_t to) {
      if (to <= from) return;
      for (LogEntry& e : entries_for_write(from, std::span(zeros.data(), to - from), c))
        entries.push_back(std::move(e));
    };
    edge(offset, first * bs);
    entries.push_back(trim_entry(static_cast<uint32_t>(first), static_cast<uint32_t>(end - first)));
    edge(end * bs, offset + len);
    submit(std::move(entries), flags.fua, c);
    return c.done();
  }
  const std::vector<std::byte> zeros(kZeroChunkBlocks * bs);
  for (uint64_t at = offset; at < offset + len;) {
    const uint64_t n = std::min<uint64_t>(offset + len - at, zeros.size() - at % bs);
    submit(entries_for_write(at, std::span(zeros.data(), n), c), flags.fua, c);
    at += n;
  }
  return c.done();
}

void LldDisk::Impl::extents(uint64_t offset, uint64_t len, const ExtentFn& fn) {
  emit_block_extents(offset, len, block_bytes(), [this](uint64_t b) {
    const auto block = static_cast<uint32_t>(b);
    if (const LogEntry* e = pending_.newest(block)) return !e->is_trim();
    return map_[block].psn_plus_one != 0;
  }, fn);
}

void LldDisk::Impl::close() {
  store_->check_not_stopped();  // a clean close loses nothing a deferred error was about
  if (!changed_since_open_) return;  // the image is as the clean open found it
  LldClock c{SimTime{}};
  // The buffer into segments and the region reset, so that the next open
  // has nothing to replay (the drive's power-down sequence, as vld's).
  if (has_nvram()) {
    if (!pending_.empty() || nvram_next_seq_ != nvram_header_.first_seq) drain(c);
  } else {
    write_pending(/*force=*/true, c);
  }
  write_checkpoint(/*clean=*/true, c);
  // Until both slots hold the same tables (the second writes what the
  // first changed, a third the usage rows of segments the second freed),
  // so that the next open reads one slot's (load_checkpoint).
  for (int more = 0; shape_.incremental_checkpoints() &&
                     !cp_sectors_.stale(next_checkpoint_slot()).empty();
       ++more) {
    assert(more < 2);
    write_checkpoint(/*clean=*/true, c);
  }
}

// ---- the facade

LldDisk::LldDisk(std::unique_ptr<BackingStore> store, const Superblock& sb, LldOptions options,
                 bool track_buffer)
    : impl_(std::make_unique<Impl>(std::move(store), sb, options, track_buffer)) {}
LldDisk::~LldDisk() = default;
void LldDisk::format(BackingStore& store, const Superblock& sb) { Impl::format(store, sb); }
const Superblock& LldDisk::superblock() const { return impl_->superblock(); }
const DriveModel& LldDisk::drive() const { return impl_->drive(); }
void LldDisk::set_track_buffer(bool on) { impl_->set_track_buffer(on); }
Completion LldDisk::read(uint64_t offset, std::span<std::byte> out, SimTime start) {
  return impl_->read(offset, out, start);
}
Completion LldDisk::write(uint64_t offset, std::span<const std::byte> data, bool fua,
                          SimTime start) {
  return impl_->write(offset, data, fua, start);
}
Completion LldDisk::flush(SimTime start) { return impl_->flush(start); }
Completion LldDisk::trim(uint64_t offset, uint64_t len, bool fua, SimTime start) {
  return impl_->trim(offset, len, fua, start);
}
Completion LldDisk::zero(uint64_t offset, uint64_t len, ZeroFlags flags, SimTime start) {
  return impl_->zero(offset, len, flags, start);
}
Completion LldDisk::commit_group(std::span<const GroupBlock> blocks, SimTime start) {
  return impl_->commit_group(blocks, start);
}

void LldDisk::extents(uint64_t offset, uint64_t len, const ExtentFn& fn) {
  impl_->extents(offset, len, fn);
}
std::optional<Completion> LldDisk::idle_step(SimTime start, SimTime idle_ends) {
  return impl_->idle_step(start, idle_ends);
}
uint64_t LldDisk::live_blocks() const { return impl_->live_blocks(); }
uint64_t LldDisk::max_atomic_write_bytes() const { return impl_->atomic_write_bytes(); }
void LldDisk::close() { impl_->close(); }
void LldDisk::set_group_commit(bool on) { impl_->set_group_commit(on); }
uint32_t LldDisk::sync_through(uint64_t ticket) { return impl_->sync_through(ticket); }
void LldDisk::group_sync_failed() { impl_->group_sync_failed(); }
LldReport LldDisk::report() const { return impl_->report(); }
std::string LldDisk::check_consistency() const { return impl_->check_consistency(); }
const LldLayout& LldDisk::layout() const { return impl_->layout(); }
std::optional<uint64_t> LldDisk::segment_psn(uint32_t block) const {
  return impl_->segment_psn(block);
}
SegmentState LldDisk::segment_state(uint32_t segment) const {
  return impl_->segment_state(segment);
}

}  // namespace vld
