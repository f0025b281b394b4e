// VldOptions: mode=vld's run-time choices (not stored in the image), the
// plugin's and vld-bench's vld parameters. Plain values: VldDisk reads them
// once, when it opens the image.
//
// Thread-safety: values; copy them freely.
#ifndef VLD_CORE_VLD_VLD_OPTIONS_H_
#define VLD_CORE_VLD_VLD_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <string_view>

#include "core/vld/compactor.h"

namespace vld {

// How far an open has come, for long ones (docs/scale.md: a clean walk of a
// 1 TiB image reads a million map sectors): what it is doing, and how much
// of it is done. Phases: "walking the map" (map sectors; total: the pieces,
// an upper bound), "scanning the window" and "scanning the whole disk"
// (tracks). Called every few thousand map sectors and after every track.
using ScanProgress = std::function<void(std::string_view what, uint64_t done, uint64_t total)>;

// Recovery after a crash reads this many cylinders at most (st19101: 32 x
// 16 tracks x 6 ms = 3.1 s simulated), whatever the size of the disk.
inline constexpr uint32_t kDefaultWindowCylinders = 32;

struct VldOptions {
  double fill_fraction = 0.75;     // fill=
  uint32_t window_cylinders = 0;   // window= (0: kDefaultWindowCylinders)
  // Move the window on when it has this fraction of its opening free space
  // left: a fuller window makes eager writing slower. 0.85 measured best on
  // st19101 at 80% (docs/benchmarks.md section 11: 916 us/write in steady
  // state against 935 at 0.75, and Table 2 over 5,000 writes 374 us against
  // 443, where the window must move on into compacted cylinders in time).
  double window_move_fraction = 0.85;
  // Move the window on, too, once it has no empty track left that a write
  // may use while a window around the head has (VldDisk::
  // window_with_empty_tracks). false: the window stays while it has
  // free sectors in tracks that are not empty (vld-bench --keep-dry-window).
  bool move_dry_window = true;
  uint32_t retired_limit = 4096;   // replaced map sectors that trigger a record
  // Delta checkpoints (vld_disk_checkpoint.cc): once this many pieces have
  // a live map sector written since the last checkpoint (scattered by eager
  // writing), or this many simulated seconds after the last checkpoint with
  // any scattered, they are rewritten as one compact group with a record.
  // After a crash, recovery then walks at most this many scattered map
  // sectors, plus one request's group (docs/scale.md). 0: never.
  uint32_t checkpoint_every_map_sectors = 4096;  // checkpoint_every=
  double checkpoint_every_s = 60;                 // checkpoint_s=
  // Pieces per group of a delta checkpoint, and so per request while one
  // is spread over requests. 0: a track's worth (the sectors of the
  // smallest track, which any track holds); the tests set a few, so that
  // short workloads spread theirs.
  uint32_t checkpoint_group_pieces = 0;
  // Seek only ahead of the head (AllocatorPolicy::one_way_seeks), for
  // vld-bench's comparisons (docs/compaction.md section 2a).
  bool one_way_seeks = false;
  CompactorOptions compactor;      // compactor=, compactor_policy=, seed=
  // How far opening has come (recovery.h); used only while the constructor
  // runs, and dropped then.
  ScanProgress open_progress;
};

}  // namespace vld

#endif  // VLD_CORE_VLD_VLD_OPTIONS_H_
