#include "tools/inspect/lld_inspect.h"

#include <string>
#include <vector>

#include "core/store/overlay_store.h"
#include "core/util/error.h"
#include "stats/mode_report_json.h"
#include "tools/inspect/progress.h"

namespace vld::inspect {

namespace {

void count_tracks(Inspection& in, const LldDisk& disk) {
  const VldLayout& layout = in.layout;
  const uint32_t block_sectors = in.img->sb.block_bytes / kSectorBytes;
  in.live_sectors.assign(layout.tracks, 0);
  for (uint32_t b = 0; b < layout.blocks; ++b) {
    auto psn = disk.segment_psn(b);
    if (!psn) continue;
    ++in.live_blocks;
    for (uint64_t s = *psn; s < *psn + block_sectors; ++s) ++in.live_sectors[layout.track_of(s)];
  }
  in.used_sectors = in.live_sectors;
  in.lld.system_tracks = static_cast<uint32_t>(disk.layout().system_tracks);
  for (uint32_t t = 0; t < in.lld.system_tracks && t < layout.tracks; ++t)
    in.used_sectors[t] = layout.track_sectors(t);
  for (uint32_t t = 0; t < layout.tracks; ++t)
    if (in.used_sectors[t] == 0) ++in.empty_tracks;
}

}  // namespace

void inspect_lld(Inspection& in) {
  try {
    in.lld.disk = std::make_shared<LldDisk>(std::make_unique<OverlayStore>(*in.img->store),
                                            in.img->sb);
  } catch (const Error& e) {
    in.lld.open_error = e.what();
    in.live_sectors.assign(in.layout.tracks, 0);
    in.used_sectors = in.live_sectors;
    return;
  }
  in.lld.report = in.lld.disk->report();
  in.lld.consistency = in.lld.disk->check_consistency();
  count_tracks(in, *in.lld.disk);
}

void check_lld(const Inspection& in, Findings& findings) {
  if (!in.lld.disk) {
    findings.error("open", "opening the image as the server would fails: " + in.lld.open_error);
    return;
  }
  findings.passed.push_back("recovery: a checkpoint (generation " +
                            std::to_string(in.lld.report->recovery.checkpoint_generation) +
                            ") and the log after it open the image");
  if (in.lld.consistency.empty())
    findings.passed.push_back("map and segment usage table agree");
  else
    findings.error("consistency", "the recovered disk disagrees with itself: " + in.lld.consistency);
  const uint32_t bs = in.img->sb.block_bytes;
  std::vector<std::byte> block(bs);
  Progress progress("checking blocks", in.layout.blocks, uint64_t{in.layout.blocks} * bs);
  const uint64_t mismatches_before = findings.checksum_mismatches;
  for (uint32_t b = 0; b < in.layout.blocks; ++b) {
    progress.advance(1);
    if (!in.lld.disk->segment_psn(b)) continue;
    ++findings.blocks_checked;
    try {
      in.lld.disk->read(uint64_t{b} * bs, block, SimTime{});
    } catch (const Error& e) {
      ++findings.checksum_mismatches;
      findings.error("checksum", e.what(), {{"block", b}});
    }
  }
  if (findings.checksum_mismatches == mismatches_before)
    findings.passed.push_back("data: " + std::to_string(findings.blocks_checked) +
                              " blocks in segments read, every checksum matches");
  const LldRecoveryReport& rep = in.lld.report->recovery;
  if (!rep.clean)
    findings.notes.push_back("unclean: the server did not stop cleanly; the next open rolls " +
                             std::to_string(rep.writes_rolled_forward) +
                             " segment writes forward and replays " +
                             std::to_string(rep.nvram_records_replayed) + " NVRAM records");
  if (rep.writes_discarded)
    findings.notes.push_back(std::to_string(rep.writes_discarded) +
                             " segment writes of a request the server never finished are "
                             "dropped, as the crash contract allows");
}

void add_lld_json(const Inspection& in, nlohmann::json& j) {
  if (!in.lld.disk) {
    j["lld_open_error"] = in.lld.open_error;
    return;
  }
  j["lld"] = *in.lld.report;
  j["lld"]["system_tracks"] = in.lld.system_tracks;
  j["lld"]["consistent"] = in.lld.consistency.empty();
}

void print_lld(const Inspection& in, std::ostream& out) {
  if (!in.lld.disk) {
    out << "  state        cannot be opened: " << in.lld.open_error << "\n";
    return;
  }
  const LldReport& r = *in.lld.report;
  out << "  state        " << (r.recovery.clean ? "clean" : "unclean")
      << " (checkpoint generation " << r.recovery.checkpoint_generation << ")\n";
  out << "  segments     " << r.segment_count << " segments of " << r.segment_sectors
      << " sectors (" << r.blocks_per_segment << " data blocks each), " << r.free_segments
      << " free; after " << in.lld.system_tracks << " system tracks (checkpoint slots, NVRAM)\n";
  if (r.nvram_capacity_records)
    out << "  nvram        " << r.nvram_used_records << " of " << r.nvram_capacity_records
        << " records in use; " << r.recovery.nvram_records_replayed
        << " newer than the segments, which an open replays\n";
  else
    out << "  nvram        none (nvram=0)\n";
  out << "  recovery     " << r.recovery.writes_rolled_forward << " segment writes rolled forward, "
      << r.recovery.writes_discarded << " dropped; " << r.recovery.sectors_read
      << " sectors read, " << r.recovery.simulated_ms << " ms simulated\n";
  // Roll-forward ends where the log does, on every image, clean or not:
  // the first place with no whole write is where the next one goes.
  out << "  log end      " << r.recovery.stopped_because
      << " (roll-forward stops at the log's end on every image)\n";
  out << "  tracks       " << in.empty_tracks << " of " << in.layout.tracks
      << " tracks hold nothing\n";
}

}  // namespace vld::inspect
