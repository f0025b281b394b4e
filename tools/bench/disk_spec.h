// The disk that fig10, fig11, table2 and fill measure (DiskSpec: the drive
// preset, the export, how full, vld's settings, the workload's seed and
// skew), and what those experiments share: its image's plan, a prepared
// copy in memory that every point reopens, the region the updates go to,
// and the "disk" object of their JSON lines.
//
// Images live in memory (MemoryBackingStore): a prepared disk (filled,
// warmed up, cleanly closed) is snapshotted once and every point reopens a
// copy, so points differ only in what they vary.
//
// Thread-safety: values and functions of their arguments.
#ifndef VLD_TOOLS_BENCH_DISK_SPEC_H_
#define VLD_TOOLS_BENCH_DISK_SPEC_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/disk_controller.h"
#include "core/image.h"
#include "core/modes/mode_image.h"
#include "core/vld/vld_options.h"
#include "tools/bench/update_picker.h"

namespace vld {

struct DiskSpec {
  std::string geometry = "st19101";
  double fill = 0.75;         // fill= of the vld disk
  uint32_t window = 0;        // window= (0: the default)
  double window_move = 0.85;  // VldOptions::window_move_fraction
  bool one_way_seeks = false;    // VldOptions::one_way_seeks (--one-way-seeks)
  bool keep_dry_window = false;  // !VldOptions::move_dry_window (--keep-dry-window)
  uint32_t checkpoint_every = VldOptions{}.checkpoint_every_map_sectors;  // checkpoint_every=
  uint64_t export_bytes = 256ull << 20;
  uint32_t spare_percent = 5;
  // --span (the plugin's span=, geometry/span.h): the platters are these
  // drive cylinders and spare_percent is not used; "": the outermost
  // cylinders the export, its map and spare_percent need.
  std::string span;
  double util = 0.80;         // live data blocks / physical blocks after the fill
  uint64_t warmup_writes = 0; // random updates after the fill (0: one per region block / 2)
  uint64_t seed = 1;
  HotCold hot_cold;           // where the random updates go (uniform by default)
};

// The vld disk's settings a DiskSpec names.
void apply_spec(const DiskSpec& spec, VldOptions& vld);

// The format of `mode`'s image of the spec's drive, export and spare (or
// span).
FormatOptions disk_format(const DiskSpec& spec, DiskMode mode);
// Sets format->span from --span's text ("": none) on format->geometry, the
// drive; throws Error (EINVAL, "--span=TEXT: why") if it is no span or not
// on the drive.
void apply_span(const std::string& span, FormatOptions* format);
// With a span, j["span"] = {"first_cylinder", "last_cylinder",
// "drive_cylinders"}, as the stats file's geometry has it; else nothing.
void add_span_json(const Superblock& sb, nlohmann::json* j);
// "" if `text` is a span's form, else what is expected (a CLI11 check).
std::string check_span_text(const std::string& text);
Superblock plan(const DiskSpec& spec, DiskMode mode);

// A disk served from a copy of an image's bytes, in memory.
std::unique_ptr<DiskController> open_copy(const Superblock& sb, std::vector<std::byte> bytes,
                                          const DiskOptions& options);

// The blocks of mode=lld's NVRAM region: whole tracks (core/lld/lld_layout.h).
// It stands for the paper's NVRAM buffer cache, memory, not disk.
uint64_t nvram_region_blocks(const Superblock& sb);

// The region of logical blocks the workload updates: util x the disk's
// blocks (the physical blocks, less mode=lld's NVRAM region).
uint64_t region_blocks(const Superblock& sb, double util);

// A prepared disk: the region filled with 1 MiB writes, then random
// updates so that free space is fragmented as in a steady state, closed
// cleanly; the image's bytes.
std::vector<std::byte> prepared_image(const DiskSpec& spec, const Superblock& sb,
                                      const DiskOptions& options);

// The "disk" object of a line: the spec and the planned image's shape
// (with a span, "span": {"first_cylinder", "last_cylinder", "drive_cylinders"}).
nlohmann::json disk_json(const DiskSpec& spec, const Superblock& sb);

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_DISK_SPEC_H_
