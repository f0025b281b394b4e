#include "tools/bench/disk_spec.h"

#include <unistd.h>

#include <algorithm>
#include <random>
#include <span>
#include <string>

#include "core/store/backing_store.h"
#include "core/util/error.h"
#include "tools/bench/fill.h"
#include "tools/bench/sync_update.h"

namespace vld {

using json = nlohmann::json;

void apply_spec(const DiskSpec& spec, VldOptions& vld) {
  vld.fill_fraction = spec.fill;
  vld.window_cylinders = spec.window;
  vld.window_move_fraction = spec.window_move;
  vld.one_way_seeks = spec.one_way_seeks;
  vld.move_dry_window = !spec.keep_dry_window;
  vld.checkpoint_every_map_sectors = spec.checkpoint_every;
}

FormatOptions disk_format(const DiskSpec& spec, DiskMode mode) {
  FormatOptions format = preset_format(spec.geometry, mode, spec.export_bytes);
  format.spare_percent = spec.spare_percent;
  apply_span(spec.span, &format);
  return format;
}

void apply_span(const std::string& span, FormatOptions* format) {
  if (span.empty()) return;
  const std::optional<SpanSpec> spec = SpanSpec::parse(span);
  std::string why = check_span_text(span);
  if (spec) {
    format->span = spec->resolve(format->geometry.cylinders, format->geometry.name, &why);
    if (format->span) return;
  }
  throw Error("--span=" + span + ": " + why, EINVAL);
}

void add_span_json(const Superblock& sb, json* j) {
  if (!sb.spanned()) return;
  (*j)["span"] = {{"first_cylinder", sb.span().first},
                  {"last_cylinder", sb.span().last},
                  {"drive_cylinders", sb.drive_cylinders}};
}

std::string check_span_text(const std::string& text) {
  return SpanSpec::parse(text) ? ""
                               : "expected FIRST-LAST (drive cylinders, e.g. 0-9999), N (the "
                                 "outermost N), P%-Q% (percent of the drive's cylinders from "
                                 "the outer edge, e.g. 90%-100%) or P%";
}

namespace {

// vld-bench holds a disk's image in memory, twice while a prepared image is
// copied to be measured: refuse one that cannot fit in half of this
// machine's memory in a line, rather than die of std::bad_alloc.
void check_fits_in_memory(const Superblock& sb) {
  const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return;  // unknown: let the allocation say
  const uint64_t half_bytes = uint64_t(pages) * uint64_t(page_bytes) / 2;
  if (sb.image_bytes() <= half_bytes) return;
  const auto gib = [](uint64_t b) { return std::to_string(b >> 30) + " GiB"; };
  throw Error("the disk's image is " + gib(sb.image_bytes()) + ", more than half of this "
              "machine's memory (" + gib(half_bytes * 2) + "), and vld-bench holds it in memory; "
              "choose a narrower --span or a smaller --size",
              ENOMEM);
}

}  // namespace

Superblock plan(const DiskSpec& spec, DiskMode mode) {
  Superblock sb = plan_image(disk_format(spec, mode));
  check_fits_in_memory(sb);
  return sb;
}

std::unique_ptr<DiskController> open_copy(const Superblock& sb, std::vector<std::byte> bytes,
                                          const DiskOptions& options) {
  auto store = std::make_unique<MemoryBackingStore>(std::move(bytes));
  return std::make_unique<DiskController>(make_disk(std::move(store), sb, options));
}

uint64_t nvram_region_blocks(const Superblock& sb) {
  if (sb.mode != DiskMode::kLld || sb.nvram_bytes == 0) return 0;
  const uint64_t spt = sb.geometry.zone(0).sectors_per_track;  // the system area's zone
  const uint64_t sectors = (sb.nvram_bytes + kSectorBytes - 1) / kSectorBytes;
  return (sectors + spt - 1) / spt * spt * kSectorBytes / sb.block_bytes;
}

uint64_t region_blocks(const Superblock& sb, double util) {
  const uint64_t disk = sb.physical_blocks() - nvram_region_blocks(sb);
  uint64_t r = static_cast<uint64_t>(util * static_cast<double>(disk));
  return std::min(r, sb.export_bytes / sb.block_bytes);
}

std::vector<std::byte> prepared_image(const DiskSpec& spec, const Superblock& sb,
                                      const DiskOptions& options) {
  auto store = std::make_unique<MemoryBackingStore>(sb.image_bytes());
  format_store(*store, sb);
  MemoryBackingStore* raw = store.get();
  DiskOptions no_compaction = options;
  no_compaction.vld.compactor.enabled = false;
  apply_spec(spec, no_compaction.vld);
  DiskController ctl(make_disk(std::move(store), sb, no_compaction));
  const uint64_t region = region_blocks(sb, spec.util);
  fill_in_order(ctl, region, std::span(bench_payload()));
  if (sb.mode == DiskMode::kVld) {
    std::mt19937_64 rng(spec.seed ^ 0x5eed);
    UpdatePicker pick(region, spec.hot_cold);
    uint64_t warm = spec.warmup_writes ? spec.warmup_writes : region / 2;
    for (uint64_t i = 0; i < warm; ++i) sync_update(ctl, pick(rng), std::nullopt);
  }
  ctl.close();
  return raw->take_bytes();  // the disk is closed: hand the image on
}

json disk_json(const DiskSpec& spec, const Superblock& sb) {
  json d = {{"geometry", spec.geometry},
          {"fill", spec.fill},
          {"export_bytes", sb.export_bytes},
          {"platter_bytes", sb.platter_bytes()},
          {"cylinders", sb.simulated_cylinders},
          {"util", spec.util},
          {"seed", spec.seed}};
  add_span_json(sb, &d);
  if (!spec.hot_cold.uniform()) {
    d["hot_writes_percent"] = spec.hot_cold.hot_writes_percent;
    d["hot_blocks_percent"] = spec.hot_cold.hot_blocks_percent;
  }
  return d;
}

}  // namespace vld
