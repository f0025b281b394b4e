// VldDisk, what it says about itself: trace lines (core/util/trace.h),
// the consistency check of its in-memory state, and the statistics
// (report, compactor_report). None of these changes the disk.
// The class, its invariants and its thread contract: vld_disk.h.
#include "core/vld/vld_disk_impl.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/util/error.h"
#include "core/util/trace.h"

namespace vld {

// ---- trace lines ----------------------------------------------------------

std::string VldDisk::Impl::where(const Extent& e) const {
  return fmt::format("{}/{}/{}+{}", e.track / layout_.heads, e.track % layout_.heads, e.sector,
                     e.sectors);
}

// One line per command: each piece's place (cylinder/head/first sector+
// sectors), how the allocator planned it, and what reaching it cost.
void VldDisk::Impl::trace_placement(std::span<const Update> updates, std::span<const PlannedNode> group,
                              std::span<const Extent> ext, size_t data_pieces, bool move,
                              const ServiceBreakdown& before, const ServiceClock& clock,
                              const AllocatorStats& alloc_before) const {
  constexpr size_t kShown = 8;  // a 32 MiB write has 8192 blocks
  std::string data;
  size_t k = 0;
  size_t unmapped = 0, placed = 0;
  for (const Update& u : updates) {
    unmapped += u.data ? 0 : 1;
    placed += u.placed ? 1 : 0;
    if (!u.data || u.placed) continue;
    if (k < kShown)
      data += fmt::format("{}block {} at {}", k ? ", " : "", u.block, where(ext[k]));
    ++k;
  }
  if (k > kShown) data += fmt::format(" and {} more", k - kShown);
  if (placed)
    data += fmt::format("{}{} blocks placed before (an ARU)", data.empty() ? "" : ", ", placed);
  if (unmapped)
    data += fmt::format("{}unmapped {} blocks", data.empty() ? "" : ", ", unmapped);
  std::string map;
  for (size_t i = 0; i < group.size(); ++i) {
    if (i == kShown) {
      map += fmt::format(" and {} more", group.size() - kShown);
      break;
    }
    map += fmt::format("{}piece {}{} at {}", i ? ", " : "", group[i].piece,
                       group[i].relay ? " (relay)" : "", where(ext[data_pieces + i]));
  }
  const AllocatorStats& a = alloc_.stats();
  std::string plan = a.contiguous_commands > alloc_before.contiguous_commands
                         ? "planned as one run"
                     : a.small_first_commands > alloc_before.small_first_commands
                         ? "planned map sectors first"
                         : "planned piece by piece";
  if (a.fill_switches > alloc_before.fill_switches) plan += ", new fill track";
  if (a.greedy_pieces > alloc_before.greedy_pieces) plan += ", greedy (no empty track)";
  const SimDuration seek = clock.breakdown.seek - before.seek;
  const SimDuration hs = clock.breakdown.head_switch - before.head_switch;
  const SimDuration rot = clock.breakdown.rotation - before.rotation;
  trace::emit(trace::Channel::kAllocator,
              "{}: {}; map {}; {}, {} sectors passed; locate {:.1f} us (seek {:.1f}, head "
              "switch {:.1f}, rotation {:.1f}), transfer {:.1f} us; window cylinders {}+{}",
              move ? "move" : data_pieces ? "write" : "unmap", data, map, plan,
              a.skipped_sectors - alloc_before.skipped_sectors, to_us(seek + hs + rot),
              to_us(seek), to_us(hs), to_us(rot), to_us(clock.breakdown.transfer - before.transfer),
              window_.first, window_.count);
}

void VldDisk::Impl::trace_recovery(const RecoveredState& st) const {
  const RecoveryReport& r = st.report;
  trace::emit(trace::Channel::kRecovery,
              "{} open by {}: record {} (durable seq {}, window cylinders {}+{}); read {} "
              "sectors ({} map sectors walked, {} tracks scanned) in {:.1f} ms simulated, {:.1f} "
              "ms wall",
              r.clean ? "clean" : "unclean", r.method, st.record.generation,
              st.record.durable_seq, st.record.window_first, st.record.window_cylinders,
              r.sectors_read, r.map_sectors_walked, r.tracks_scanned, r.simulated_ms, r.wall_ms);
  if (!r.clean)
    trace::emit(trace::Channel::kRecovery,
                "{} map sectors newer than the record: {} requests accepted, {} rolled back; {} "
                "data blocks checked ({} read on their own); {}",
                r.candidates, r.groups_accepted, r.groups_rejected, r.data_blocks_checked,
                r.data_blocks_read,
                stats_.checkpoints > 0       ? "wrote a checkpoint"
                : r.groups_accepted > 0      ? "they extend the record's tree"
                                             : "kept the tree");
  trace::emit(trace::Channel::kRecovery,
              "serving {} live blocks of {}, {} live map sectors; head at {}/{}", live_blocks_,
              layout_.blocks, log_.live_nodes(), drive_.head().cylinder, drive_.head().head);
}

// ---- checks and stats -----------------------------------------------------

std::string VldDisk::Impl::check_consistency() const {
  FreeSpaceMap expect(layout_.track_sizes());
  try {
    expect.reserve_track(0);
    uint64_t live = 0;
    for (uint64_t b = 0; b < map_.size(); ++b) {
      if (!map_[b].mapped()) continue;
      Extent e = extent_of(map_[b]);
      expect.allocate(e.track, e.sector, e.sectors);
      ++live;
    }
    if (live != live_blocks_) return "live block count is off";
    uint64_t window_free = 0;
    for (const CylinderWindow::TrackRange& r :
         window_.track_ranges(layout_.cylinders, layout_.heads))
      window_free += free_.free_sectors_in(r.first, r.count);
    if (window_free != window_free_sectors()) return "the window's free sector count is off";
    const std::string why =
        blocks_on_.check(layout_.blocks, [this](uint32_t b) -> std::optional<TrackSlots::Where> {
          if (!map_[b].mapped()) return std::nullopt;
          const Extent e = extent_of(map_[b]);
          return TrackSlots::Where{e.track, e.sector};
        });
    if (!why.empty()) return "data blocks per track: " + why;
    for (uint32_t p = 0; p < layout_.pieces; ++p) {
      const LogNode& n = log_.node(p);
      if (n.seq) {
        const Extent e = sector_at(n.psn);
        expect.allocate(e.track, e.sector, 1);
      }
    }
    for (uint32_t psn : retired_map_) {
      const Extent e = sector_at(psn);
      expect.allocate(e.track, e.sector, 1);
    }
    for (const Extent& e : pending_data_) expect.allocate(e.track, e.sector, e.sectors);
    std::vector<uint32_t> shadow_on_track(layout_.tracks, 0);
    for (const auto& [token, copy] : shadow_) {
      const Extent e = extent_of(copy.entry);
      expect.allocate(e.track, e.sector, e.sectors);
      ++shadow_on_track[e.track];
    }
    if (shadow_on_track != shadow_on_track_) return "ARU placed blocks per track are miscounted";
  } catch (const Error& e) {
    return std::string("a physical sector is claimed twice: ") + e.what();
  }
  for (uint32_t t = 0; t < layout_.tracks; ++t)
    for (uint32_t s = 0; s < free_.sectors_on(t); ++s)
      if (expect.is_free(t, s) != free_.is_free(t, s))
        return "free map disagrees at track " + std::to_string(t) + " sector " + std::to_string(s) +
               (free_.is_free(t, s) ? " (in use but marked free)" : " (leaked)");
  return log_.check();
}

VldReport VldDisk::Impl::report() const {
  VldReport v;
  v.stats = stats_;
  v.live_map_sectors = log_.live_nodes();
  v.retired_map_sectors = retired_map_.size();
  v.scattered_map_sectors = scattered_pieces_.size();
  v.pending_data_frees = pending_data_.size();
  v.window = window_;
  v.fill = options_.fill_fraction;
  v.allocator = alloc_.stats();
  v.empty_tracks = free_.empty_tracks();
  v.reserve_track = alloc_.reserved_track();
  v.free_sectors = free_.free_sectors();
  v.block_sectors = layout_.block_sectors;
  for (uint32_t t = 0; t < layout_.tracks; ++t)
    v.block_holes += free_.holes_for(t, layout_.block_sectors);
  return v;
}

CompactorReport VldDisk::Impl::compactor_report() const {
  CompactorReport c;
  c.enabled = compactor_.options().enabled;
  c.policy = compactor_.options().policy;
  c.stats = compactor_.stats();
  if (victim_) c.victim = victim_->track;
  c.empty_tracks = free_.empty_tracks();
  c.data_blocks_written = stats_.data_blocks_written;
  c.map_sectors_written = stats_.map_sectors_written;
  c.client_blocks_written = stats_.client_blocks_written;
  c.block_sectors = layout_.block_sectors;
  return c;
}

}  // namespace vld
