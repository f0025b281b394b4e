// Inspection: everything the report, the check and the picture need to know
// about an opened image, computed once by inspect() and read-only after.
//
// mode=vld: the two log record slots as found; the record's tree walked
// independently (tree_walk.h); the state core's recover() reaches (it only
// reads) -- or, when recovery refuses a damaged image, the walk's state with
// the refusal kept in recovery_error; and what that state claims, sector by
// sector, as a VldDisk opening the image would mark its free map before
// writing anything: the system track, every mapped data block, every live
// map sector. After a crash, requests newer than the record that recovery
// rolls back are not damage: the crash contract allows them.
//
// mode=inplace: logical sector n is physical sector n; what holds data is
// what the backing file holds (trimmed and never-written blocks are holes),
// as InplaceDisk counts it; and the ARU redo journal past the export, read
// as InplaceDisk's open reads it (a committed record is replayed there, not
// here: vld-inspect reads only).
//
// Invariants after inspect(): live_sectors and used_sectors have one entry
// per track; for vld, data_claims and map_claims are set, state.map has one
// entry per logical block and state.nodes one per piece, newest_slot names
// a kValid slot when set, and double_claims holds at most
// kMaxDoubleClaimsKept of the double_claim_count sectors claimed twice.
//
// Thread-safety: none needed (vld-inspect is single-threaded).
#ifndef VLD_TOOLS_INSPECT_INSPECTION_H_
#define VLD_TOOLS_INSPECT_INSPECTION_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/inplace/redo_journal.h"
#include "core/lld/lld_disk.h"
#include "core/vld/map_sector.h"
#include "core/vld/recovery.h"
#include "tools/inspect/open_image.h"
#include "tools/inspect/sector_bitmap.h"
#include "tools/inspect/tree_walk.h"

namespace vld::inspect {

// A log record slot as found.
struct RecordSlot {
  enum class State { kValid, kEmpty, kInvalid } state = State::kEmpty;
  std::optional<LogRecord> record;
};
const char* slot_state_name(RecordSlot::State state);

// A mapped block that does not lie on the platters' data area.
struct BadMapping {
  uint64_t block;
  uint64_t psn;
};

struct Inspection {
  static constexpr size_t kMaxDoubleClaimsKept = 64;

  const OpenedImage* img = nullptr;
  VldLayout layout;
  uint64_t sectors = 0;                // on the simulated platters
  uint64_t live_blocks = 0;            // mapped (vld) or holding data (inplace)
  std::vector<uint32_t> live_sectors;  // per track: sectors of live data
  std::vector<uint32_t> used_sectors;  // per track: sectors in use (vld: data, map, system)
  uint32_t empty_tracks = 0;
  uint64_t free_sectors = 0;           // vld only
  uint64_t free_block_holes = 0;       // vld: blocks the free runs can hold side by side

  // mode=vld only.
  std::array<RecordSlot, VldLayout::kRecordSlots> slots;
  std::optional<uint32_t> newest_slot;
  TreeWalk walk;                       // the record's tree, read independently
  RecoveredState state;                // recover()'s, or the walk's if recovery refuses
  std::optional<std::string> recovery_error;  // why recover() refuses to open the image
  uint64_t live_pieces = 0;
  std::optional<SectorBitmap> data_claims;  // system track + mapped data blocks
  std::optional<SectorBitmap> map_claims;   // live map sectors
  std::vector<BadMapping> bad_mappings;     // outside the platters or on the system track
  std::vector<uint64_t> double_claims;      // sectors claimed twice (first few)
  uint64_t double_claim_count = 0;

  // mode=inplace only: its ARU redo journal (core/inplace/redo_journal.h).
  struct Inplace {
    uint64_t journal_bytes = 0;      // the area past the export
    uint64_t last_seq = 0;           // of the header there; 0: never used
    // A committed record not voided yet: its blocks may not all be home,
    // and the next writable open writes them there again (replays it).
    std::optional<RedoJournal::Record> pending;
  } inplace;

  // mode=lld only (lld_inspect.h): the disk recovered in memory.
  struct Lld {
    std::shared_ptr<LldDisk> disk;    // null if it cannot be opened
    std::string open_error;
    std::optional<LldReport> report;
    std::string consistency;          // check_consistency(): "" if it agrees
    uint32_t system_tracks = 0;
  } lld;

  explicit Inspection(const OpenedImage& image) : img(&image), layout(image.sb) {
    sectors = layout.platter_sectors();
  }
  bool vld() const { return img->sb.mode == DiskMode::kVld; }
  bool is_lld() const { return img->sb.mode == DiskMode::kLld; }
  double utilization() const {
    const uint64_t physical = img->sb.physical_blocks();
    return physical ? static_cast<double>(live_blocks) / static_cast<double>(physical) : 0.0;
  }
  const LogRecord& record() const { return state.record; }
  Chs chs(uint64_t psn) const { return img->sb.geometry.chs_of(psn); }
};

// Fills in everything above from the image (reads only). A failed read is
// core's vld::Error.
void inspect(Inspection& in);

}  // namespace vld::inspect

#endif  // VLD_TOOLS_INSPECT_INSPECTION_H_
