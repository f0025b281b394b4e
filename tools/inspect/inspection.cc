#include "tools/inspect/inspection.h"

#include <algorithm>
#include <memory>
#include <span>

#include "core/util/error.h"
#include "core/vld/eager_allocator.h"
#include "tools/inspect/lld_inspect.h"
#include "tools/inspect/progress.h"

namespace vld::inspect {

const char* slot_state_name(RecordSlot::State state) {
  switch (state) {
    case RecordSlot::State::kValid: return "valid";
    case RecordSlot::State::kEmpty: return "empty";
    case RecordSlot::State::kInvalid: return "invalid";
  }
  return "?";
}

namespace {

// Marks psn in claims; a sector either bitmap had already is claimed twice.
// REQUIRES: data_claims and map_claims set; psn on the platters.
void claim(Inspection& in, SectorBitmap& claims, uint64_t psn) {
  const bool taken = in.data_claims->test(psn) || in.map_claims->test(psn);
  claims.test_and_set(psn);
  if (!taken) return;
  if (in.double_claims.size() < Inspection::kMaxDoubleClaimsKept) in.double_claims.push_back(psn);
  ++in.double_claim_count;
}

// How many data blocks the free runs of track t hold side by side (runs wrap
// past the track's end): free sectors in runs shorter than a block are no use
// to data, only to map sectors.
uint64_t block_holes(const Inspection& in, uint32_t t) {
  const VldLayout& layout = in.layout;
  const uint64_t base = layout.track_first_psn(t);
  const uint32_t spt = layout.track_sectors(t);
  auto used = [&](uint32_t s) { return in.data_claims->test(base + s) || in.map_claims->test(base + s); };
  uint32_t start = 0;
  while (start < spt && !used(start)) ++start;
  if (start == spt) return spt / layout.block_sectors;  // an empty track
  uint64_t holes = 0;
  uint32_t run = 0;
  for (uint32_t i = 1; i <= spt; ++i) {  // from just after a used sector, once round
    if (used((start + i) % spt)) {
      holes += run / layout.block_sectors;
      run = 0;
    } else {
      ++run;
    }
  }
  return holes;
}

// Both log record slots as found, and which holds the newest valid record.
void read_record_slots(Inspection& in) {
  for (uint32_t slot = 0; slot < VldLayout::kRecordSlots; ++slot) {
    SectorBytes bytes;
    in.img->store->read(in.layout.byte_offset(slot), std::as_writable_bytes(std::span(bytes)));
    RecordSlot& s = in.slots[slot];
    s.record = decode_log_record(bytes.data(), in.img->sb.secret);
    s.state = s.record ? RecordSlot::State::kValid
              : std::all_of(bytes.begin(), bytes.end(), [](unsigned char c) { return c == 0; })
                  ? RecordSlot::State::kEmpty
                  : RecordSlot::State::kInvalid;
    if (s.record &&
        (!in.newest_slot || s.record->generation > in.slots[*in.newest_slot].record->generation))
      in.newest_slot = slot;
  }
}

// The record's tree walked independently, then recover()'s state; when
// recovery refuses a damaged image (a server would not open it), the
// report and the check go on with what the walk could read.
void recover_or_walk(Inspection& in) {
  BackingStore& store = *in.img->store;
  const LogRecord newest = in.newest_slot ? *in.slots[*in.newest_slot].record : LogRecord{};
  in.walk = walk_tree(store, in.img->sb, newest);
  try {
    // A scan (of the window, or of every track after damage) reads whole
    // tracks; the walk is quick beside it and shows no bar.
    std::unique_ptr<Progress> scanning;
    std::string phase;
    in.state = recover(store, in.img->sb, /*track_buffer=*/true,
                       [&](std::string_view what, uint64_t done, uint64_t total) {
                         if (!what.starts_with("scanning")) return;
                         if (!scanning || phase != what) {
                           phase = what;
                           // Bytes by the mean track: the scan's tracks differ by zone.
                           const uint64_t track_bytes =
                               in.sectors / in.layout.tracks * kSectorBytes;
                           scanning = std::make_unique<Progress>("recovery: " + phase, total,
                                                                 total * track_bytes);
                         }
                         scanning->advance(1);
                         (void)done;
                       });
  } catch (const Error& e) {
    in.recovery_error = e.what();
    in.state = RecoveredState{};
    in.state.map = in.walk.map;
    in.state.nodes = in.walk.nodes;
    in.state.record = newest;
    in.state.report.method = "refused";
  }
}

// What the recovered state uses, sector by sector: the system track, every
// mapped data block (off-platter mappings set aside), every live map sector.
void claim_recovered_state(Inspection& in) {
  const VldLayout& layout = in.layout;
  in.data_claims.emplace(in.sectors);
  in.map_claims.emplace(in.sectors);
  for (uint32_t s = 0; s < layout.track_sectors(0); ++s)
    in.data_claims->test_and_set(s);  // the system track
  in.live_sectors.assign(layout.tracks, 0);
  for (uint64_t block = 0; block < in.state.map.size(); ++block) {
    const MapEntry& entry = in.state.map[block];
    if (!entry.mapped()) continue;
    ++in.live_blocks;
    if (layout.on_system_track(entry.psn()) || entry.psn() >= in.sectors) {
      in.bad_mappings.push_back(BadMapping{block, entry.psn()});
      continue;
    }
    const Extent extent = extent_at(entry.psn(), layout.block_sectors, layout.geometry);
    in.live_sectors[extent.track] += extent.sectors;
    for (const SectorRun& run : extent_runs(extent, layout.geometry))
      for (uint64_t p = run.first_psn; p < run.first_psn + run.count; ++p)
        claim(in, *in.data_claims, p);
  }
  for (const LogNode& node : in.state.nodes) {
    if (!node.seq) continue;
    ++in.live_pieces;
    if (node.psn < in.sectors) claim(in, *in.map_claims, node.psn);
  }
}

// Per track: sectors in use, free sectors, empty tracks, room for blocks.
// REQUIRES: claim_recovered_state(in) done.
void count_track_use(Inspection& in) {
  const VldLayout& layout = in.layout;
  in.used_sectors.assign(layout.tracks, 0);
  Progress progress("counting free space", layout.tracks, in.sectors * kSectorBytes);
  for (uint32_t t = 0; t < layout.tracks; ++t) {
    progress.advance(1);
    uint32_t used = 0;
    const uint64_t first = layout.track_first_psn(t);
    const uint32_t spt = layout.track_sectors(t);
    for (uint64_t p = first; p < first + spt; ++p)
      used += in.data_claims->test(p) || in.map_claims->test(p);
    in.used_sectors[t] = used;
    in.free_sectors += spt - used;
    if (used == 0) ++in.empty_tracks;
    in.free_block_holes += block_holes(in, t);
  }
}

void inspect_vld(Inspection& in) {
  read_record_slots(in);
  recover_or_walk(in);
  claim_recovered_state(in);
  count_track_use(in);
}

void inspect_inplace(Inspection& in) {
  const Superblock& sb = in.img->sb;
  const VldLayout& layout = in.layout;
  in.live_sectors.assign(layout.tracks, 0);
  std::vector<uint64_t> live((sb.export_bytes / sb.block_bytes + 63) / 64, 0);
  in.img->store->for_each_data_range(sb.platter_offset, sb.export_bytes, [&](uint64_t off,
                                                                             uint64_t len) {
    const uint64_t rel = off - sb.platter_offset;
    for (uint64_t b = rel / sb.block_bytes; b < (rel + len + sb.block_bytes - 1) / sb.block_bytes;
         ++b)
      live[b / 64] |= uint64_t{1} << (b % 64);
    // Track by track: one zone lookup per track, not per sector.
    const uint64_t end = (rel + len + kSectorBytes - 1) / kSectorBytes;
    for (uint64_t s = rel / kSectorBytes; s < end;) {
      const uint32_t t = layout.track_of(s);
      const uint64_t track_end = std::min(end, layout.track_first_psn(t) + layout.track_sectors(t));
      in.live_sectors[t] += static_cast<uint32_t>(track_end - s);
      s = track_end;
    }
  });
  for (uint64_t bits : live) in.live_blocks += static_cast<uint64_t>(__builtin_popcountll(bits));
  in.used_sectors = in.live_sectors;
  for (uint32_t t = 0; t < layout.tracks; ++t)
    if (in.live_sectors[t] == 0) ++in.empty_tracks;
  const RedoJournal journal(sb);
  in.inplace.journal_bytes = journal.capacity();
  in.inplace.pending = journal.read(*in.img->store, &in.inplace.last_seq);
}

}  // namespace

void inspect(Inspection& in) {
  if (in.vld())
    inspect_vld(in);
  else if (in.is_lld())
    inspect_lld(in);
  else
    inspect_inplace(in);
}

}  // namespace vld::inspect
