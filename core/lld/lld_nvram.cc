// mode=lld's NVRAM region (LldDisk::Impl; lld_disk_impl.h; the format is
// core/lld/nvram_log.h). Each client request is appended as records and
// fdatasynced before it is acknowledged; the buffer (pending_) keeps the
// newest version of each block until a drain writes them into segments.
#include <cassert>

#include "core/lld/lld_disk_impl.h"
#include "core/util/error.h"
#include "core/util/host_phases.h"

namespace vld {

uint64_t LldDisk::Impl::nvram_region_offset() const {
  return sb_.platter_offset + layout_.nvram.first_psn * kSectorBytes;
}

uint64_t LldDisk::Impl::nvram_free_records() const {
  const uint64_t used = nvram_next_seq_ - nvram_header_.first_seq;
  assert(used <= layout_.nvram_records);
  return layout_.nvram_records - used;
}

SimDuration LldDisk::Impl::nvram_cost(size_t records) const {
  return sim_us(options_.nvram_us_per_4k * static_cast<double>(records) * block_bytes() / 4096.0);
}

void LldDisk::Impl::nvram_append(const std::vector<LogEntry>& entries, LldClock& c) {
  HostPhaseTimer phase_timer(HostPhase::kMap);
  assert(!entries.empty() && entries.size() <= nvram_free_records());
  std::vector<NvramBlock> blocks;
  blocks.reserve(entries.size());
  for (const LogEntry& e : entries)
    blocks.push_back(NvramBlock{e.logical_block, e.version, e.data, e.trim_blocks,
                                e.is_trim() ? std::nullopt : std::optional<uint32_t>(e.checksum)});
  // How far the region is durable: every earlier append, unless group
  // commit leaves some of them to a sync still to come.
  const uint64_t durable_seq = nvram_commit_.synced();
  assert(group_commit_ || durable_seq + 1 == nvram_next_seq_);
  const std::vector<unsigned char> bytes = encode_nvram_request(
      nvram_header_, nvram_next_seq_, blocks, durable_seq, shape_, key_);
  const uint64_t at = nvram_record_offset(nvram_header_, nvram_next_seq_, shape_);
  try {
    HostPhaseTimer io_timer(HostPhase::kStoreIo);
    store_->write(nvram_region_offset() + at, std::as_bytes(std::span(bytes)));
  } catch (const Error&) {
    void_nvram_request(at, c);
    throw;
  }
  nvram_next_seq_ += entries.size();
  nvram_commit_.wrote(nvram_next_seq_ - 1);
  // Acknowledged only once it is on stable storage: synced now, or by the
  // caller's sync_through, shared with the appends made meanwhile.
  if (group_commit_)
    c.sync_ticket = nvram_next_seq_ - 1;
  else
    sync(c);
  stats_.nvram_records_written += entries.size();
  const SimDuration cost = nvram_cost(entries.size());
  c.spend(cost);
  stats_.nvram_time += cost;
}

uint32_t LldDisk::Impl::sync_through(uint64_t ticket) {
  return nvram_commit_.sync_through(ticket, [this] { store_->sync_file(); });
}

void LldDisk::Impl::group_sync_failed() {
  if (std::optional<Error> e = nvram_commit_.take_failure()) (void)store_->note_failed_sync(*e);
}

void LldDisk::Impl::void_nvram_request(uint64_t at, LldClock& c) {
  // The failed write may have put all of the request's records in the
  // region, and replay would take a request whose last record it reaches:
  // a failed write would come back after a crash. Zeroing its first
  // record's header (and syncing) makes replay stop before it
  // (nvram_log.h). Its other records stay, at seqs the next request would
  // reuse: records of the two with the same length could replay as one
  // request mixed of both, so the next append drains and resets first,
  // making them all stale.
  nvram_reset_due_ = true;
  const std::vector<std::byte> zeros(nvram_record_header_bytes(shape_));
  try {
    store_->write(nvram_region_offset() + at, zeros);
    sync(c);
  } catch (const Error& e) {
    store_->stop(std::string("an NVRAM record voiding a failed write could not be written (") +
                 e.what() + ")");
  }
}

void LldDisk::Impl::drain(LldClock& c) {
  assert(has_nvram() && !in_group_);
  const SimTime before = c.now;
  while (!pending_.empty()) {
    if (usage_.free_count() < kCleanerLowSegments)
      clean_until(kCleanerLowSegments + kCleanerBatchSegments, c);
    write_one(c);
  }
  sync(c);  // the segments hold every buffered block before the region forgets them
  nvram_reset(c);
  ++stats_.nvram_drains;
  stats_.segment_write_time += c.now - before;
}

void LldDisk::Impl::nvram_reset(LldClock& c) {
  assert(pending_.empty());
  const NvramHeader next{nvram_header_.epoch + 1, nvram_next_seq_};
  const std::vector<unsigned char> bytes = encode_nvram_header(next, key_);
  // Until a reset succeeds, appends wait: the new header may be in the
  // image although its write failed, and replay would then read the new
  // epoch and take none of the records appended in the old one.
  nvram_reset_due_ = true;
  store_->write(nvram_region_offset() + nvram_header_offset(next), std::as_bytes(std::span(bytes)));
  sync(c);  // appends of the new epoch must never land under the old header
  nvram_header_ = next;
  nvram_reset_due_ = false;
}

}  // namespace vld
