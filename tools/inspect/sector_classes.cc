#include "tools/inspect/sector_classes.h"

#include <algorithm>
#include <memory>

#include "core/lld/nvram_log.h"

namespace vld::inspect {
namespace {

constexpr const char* kFreeColour = "#e0e0e0";
constexpr const char* kDataColour = "#2c7fb8";

TrackClassifier vld_classifier(const Inspection& in) {
  enum : uint8_t { kFree, kData, kMap, kRecord };
  TrackClassifier c;
  c.classes = {
      {"free", kFreeColour, true, "no data, no map sector: where eager writing may write next"},
      {"data", kDataColour, false, "sectors of mapped data blocks"},
      {"map sector", "#f28e2b", false, "live map sectors (the virtual log's pieces)"},
      {"log record", "#59a14f", false,
       "track 0, the system track: the two log record slots (psn 0 and 1), the rest reserved"},
  };
  c.classify = [&in](uint32_t track, std::vector<uint8_t>& out) {
    const uint64_t base = in.layout.track_first_psn(track);
    const uint32_t spt = in.layout.track_sectors(track);
    for (uint32_t s = 0; s < spt; ++s) {
      const uint64_t psn = base + s;
      out[s] = track == 0                 ? kRecord
               : in.map_claims->test(psn)  ? kMap
               : in.data_claims->test(psn) ? kData
                                           : kFree;
    }
  };
  return c;
}

// The backing file's data ranges over the export, sector by sector (as
// inspect_inplace reads them).
std::shared_ptr<SectorBitmap> inplace_data_sectors(const Inspection& in) {
  const Superblock& sb = in.img->sb;
  auto bits = std::make_shared<SectorBitmap>(in.sectors);
  in.img->store->for_each_data_range(sb.platter_offset, sb.export_bytes, [&](uint64_t off,
                                                                             uint64_t len) {
    const uint64_t rel = off - sb.platter_offset;
    for (uint64_t s = rel / kSectorBytes; s < (rel + len + kSectorBytes - 1) / kSectorBytes; ++s)
      if (s < in.sectors) bits->test_and_set(s);
  });
  return bits;
}

TrackClassifier inplace_classifier(const Inspection& in) {
  enum : uint8_t { kFree, kData, kJournal };
  TrackClassifier c;
  c.classes = {
      {"free", kFreeColour, true, "sectors of the export never written or trimmed (holes)"},
      {"data", kDataColour, false, "sectors of the export holding data"},
      {"ARU journal area", "#b07aa1", false,
       "the platters past the export: the ARU redo journal's area"},
  };
  const uint64_t export_sectors = in.img->sb.export_bytes / kSectorBytes;
  c.classify = [data = inplace_data_sectors(in), export_sectors, &layout = in.layout](
                   uint32_t track, std::vector<uint8_t>& out) {
    const uint64_t base = layout.track_first_psn(track);
    const uint32_t spt = layout.track_sectors(track);
    for (uint32_t s = 0; s < spt; ++s) {
      const uint64_t psn = base + s;
      out[s] = psn >= export_sectors ? kJournal : data->test(psn) ? kData : kFree;
    }
  };
  return c;
}

enum : uint8_t {
  kLldFree, kLldLive, kLldDead, kLldOpen, kLldCheckpoint, kLldNvram, kLldNvramFree, kLldUnused,
  kLldUnknown
};

std::vector<SectorClass> lld_classes() {
  return {
      {"free segment", kFreeColour, true, "sectors of free segments"},
      {"live data", kDataColour, false, "the newest copy of a block, in a segment"},
      {"dead or summary", "#9c755f", false,
       "a full segment's other sectors: overwritten copies and segment summaries"},
      {"open segment", "#edc948", false,
       "the open segment's sectors not holding live data (unwritten, summaries, dead)"},
      {"checkpoint slot", "#59a14f", false, "the two checkpoint slots"},
      {"NVRAM records", "#e15759", false,
       "the NVRAM region's headers and the records appended since the last drain"},
      {"NVRAM free", "#ff9da7", false, "the rest of the NVRAM region"},
      {"unused", "#555555", true, "padding of the system area's tracks, the tail after the last segment"},
      {"unknown", "#000000", false, "the image does not open: nothing is known"},
  };
}

// Sectors of live blocks' copies in segments.
std::shared_ptr<SectorBitmap> lld_live_sectors(const Inspection& in) {
  auto bits = std::make_shared<SectorBitmap>(in.sectors);
  const uint32_t block_sectors = in.img->sb.block_bytes / kSectorBytes;
  for (uint32_t b = 0; b < in.layout.blocks; ++b)
    if (auto psn = in.lld.disk->segment_psn(b))
      for (uint64_t s = *psn; s < *psn + block_sectors && s < in.sectors; ++s) bits->test_and_set(s);
  return bits;
}

uint8_t lld_class(const LldDisk& disk, const SectorBitmap& live, uint64_t nvram_used_end,
                  uint64_t psn) {
  const LldLayout& l = disk.layout();
  for (const LldExtent& slot : l.checkpoint)
    if (psn >= slot.first_psn && psn < slot.end_psn()) return kLldCheckpoint;
  if (psn >= l.nvram.first_psn && psn < l.nvram.end_psn())
    return psn < nvram_used_end ? kLldNvram : kLldNvramFree;
  const auto where = l.segment_of(psn);
  if (!where) return kLldUnused;
  if (live.test(psn)) return kLldLive;
  switch (disk.segment_state(where->segment)) {
    case SegmentState::kFree: return kLldFree;
    case SegmentState::kOpen: return kLldOpen;
    case SegmentState::kFull: return kLldDead;
  }
  return kLldUnknown;
}

TrackClassifier lld_classifier(const Inspection& in) {
  TrackClassifier c;
  c.classes = lld_classes();
  const VldLayout& layout = in.layout;
  if (!in.lld.disk) {
    c.classify = [&layout](uint32_t track, std::vector<uint8_t>& out) {
      std::fill_n(out.begin(), layout.track_sectors(track), kLldUnknown);
    };
    return c;
  }
  const LldDisk& disk = *in.lld.disk;
  const LldLayout& l = disk.layout();
  const uint64_t record_bytes = nvram_record_bytes(l.shape);
  const uint64_t used_bytes =
      l.nvram.sectors ? kNvramRecordsOffsetBytes + in.lld.report->nvram_used_records * record_bytes
                      : 0;
  const uint64_t nvram_used_end = l.nvram.first_psn + (used_bytes + kSectorBytes - 1) / kSectorBytes;
  c.classify = [&disk, live = lld_live_sectors(in), nvram_used_end, &layout](
                   uint32_t track, std::vector<uint8_t>& out) {
    const uint64_t base = layout.track_first_psn(track);
    const uint32_t spt = layout.track_sectors(track);
    for (uint32_t s = 0; s < spt; ++s) out[s] = lld_class(disk, *live, nvram_used_end, base + s);
  };
  return c;
}

}  // namespace

TrackClassifier classifier_for(const Inspection& in) {
  if (in.vld()) return vld_classifier(in);
  if (in.is_lld()) return lld_classifier(in);
  return inplace_classifier(in);
}

}  // namespace vld::inspect
