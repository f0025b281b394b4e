#include "core/modes/mode_image.h"

#include <sodium.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <span>
#include <string>

#include "core/inplace/inplace_disk.h"
#include "core/lld/lld_disk.h"
#include "core/lld/lld_plan.h"
#include "core/util/error.h"
#include "core/util/units.h"
#include "core/vld/vld_disk.h"

namespace vld {

namespace {

[[noreturn]] void refuse_too_big(const FormatOptions& o, uint32_t cyl) {
  const DriveGeometry& g = o.geometry;
  const std::string what =
      o.mode == DiskMode::kLld
          ? fmt::format(" and mode=lld's checkpoints and NVRAM (segment={}, nvram={})",
                        o.segment_bytes, o.nvram_bytes)
          : "";
  const std::string lower = o.mode == DiskMode::kLld ? "size=, spare= or nvram=" : "size= or spare=";
  throw Error("size=" + human_bytes(o.export_bytes) + " with spare=" +
                  std::to_string(o.spare_percent) + "%" + what + " needs " + std::to_string(cyl) +
                  " cylinders but the " + g.name + " has " + std::to_string(g.cylinders) +
                  "; lower " + lower + ", or raise cylinders=",
              EINVAL);
}

// The cylinders an image of these options gets (mode=lld's system area
// included), before any check against the drive.
uint32_t platter_cylinders(const FormatOptions& o) {
  const uint32_t cyl = cylinders_needed(o.geometry, o.export_bytes, o.block_bytes, o.spare_percent);
  return o.mode == DiskMode::kLld ? lld_platter_cylinders(o, cyl) : cyl;
}

bool addressable(const FormatOptions& o) {
  try {
    return o.geometry.sectors_in_cylinders(platter_cylinders(o)) <= kMaxPlatterSectors;
  } catch (const Error&) {  // mode=lld's own refusal of a size this large
    return false;
  }
}

// The largest export (whole blocks) whose platters stay addressable with
// o's other options; 0 if none.
uint64_t largest_addressable_export(FormatOptions o) {
  uint64_t lo = 0, hi = (kMaxPlatterSectors * kSectorBytes) / o.block_bytes;  // in blocks
  while (lo < hi) {  // addressable() falls as the export grows
    const uint64_t mid = lo + (hi - lo + 1) / 2;
    o.export_bytes = mid * o.block_bytes;
    if (addressable(o)) lo = mid;
    else hi = mid - 1;
  }
  return lo * o.block_bytes;
}

// The largest spare= below o's that is addressable (and, for mode=vld,
// fillable), if any.
std::optional<uint32_t> largest_addressable_spare(FormatOptions o) {
  const uint32_t asked = o.spare_percent;
  for (uint32_t spare = asked; spare-- > 0;) {
    o.spare_percent = spare;
    if (!addressable(o)) continue;
    if (o.mode != DiskMode::kVld) return spare;
    Superblock sb;
    sb.export_bytes = o.export_bytes;
    sb.block_bytes = o.block_bytes;
    sb.geometry = o.geometry;
    sb.simulated_cylinders = platter_cylinders(o);
    return vld_block_capacity(sb) >= o.export_bytes / o.block_bytes ? std::optional(spare)
                                                                      : std::nullopt;
  }
  return std::nullopt;
}

// A size= value no larger than `bytes` that nbdkit's size parser takes.
std::string size_at_most(uint64_t bytes, uint32_t block_bytes) {
  if (bytes >= (uint64_t{1} << 30)) return std::to_string(bytes >> 30) + "G";
  if (bytes >= (uint64_t{1} << 20)) return std::to_string(bytes >> 20) + "M";
  return std::to_string(bytes / block_bytes * block_bytes);
}

// One line: the parameter, its value, the limit and what will do.
[[noreturn]] void refuse_unaddressable(const FormatOptions& o, uint32_t cyl) {
  const uint64_t platter = o.geometry.bytes_in_cylinders(cyl);
  const uint64_t largest = largest_addressable_export(o);
  const std::optional<uint32_t> spare = largest_addressable_spare(o);
  std::string fix = largest >= o.block_bytes
                        ? "use size<=" + size_at_most(largest, o.block_bytes)
                        : "use a smaller block=";
  if (spare) fix += " or spare<=" + std::to_string(*spare);
  throw Error(fmt::format("size={} needs {} of platters with spare={}{}; mode={} addresses at "
                          "most 2 TiB of platters (2^32 - 1 sectors of 512 bytes): {}",
                          human_bytes(o.export_bytes), human_bytes(platter), o.spare_percent,
                          o.mode == DiskMode::kLld ? " and mode=lld's checkpoints and NVRAM" : "",
                          mode_name(o.mode), fix),
              EINVAL);
}

// The superblock of o on its drive's first `cyl` cylinders (mode=lld's
// layout planned), its secret drawn.
Superblock make_superblock(const FormatOptions& o, uint32_t cyl) {
  Superblock sb;
  if (o.mode == DiskMode::kLld) plan_lld(o, cyl, &sb);
  sb.mode = o.mode;
  sb.export_bytes = o.export_bytes;
  sb.block_bytes = o.block_bytes;
  sb.spare_percent = o.spare_percent;
  sb.simulated_cylinders = cyl;
  sb.geometry = o.geometry;
  if (sodium_init() < 0) throw Error("libsodium failed to initialise", EIO);
  randombytes_buf(sb.secret.data(), sb.secret.size());
  return sb;
}

// The most cylinders from the band's first whose sectors mode=vld and
// mode=lld can number (at least 1: a cylinder holds far fewer).
uint32_t addressable_cylinders(const DriveGeometry& band) {
  uint32_t lo = 1, hi = band.cylinders;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo + 1) / 2;
    if (band.sectors_in_cylinders(mid) <= kMaxPlatterSectors) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// A span's image: its platters are the band, all of it (geometry/span.h),
// and the band's geometry is the image's.
Superblock plan_span(const FormatOptions& o) {
  const DriveGeometry& g = o.geometry;
  const CylinderSpan span = *o.span;
  const std::string given = "span=" + span.to_string();
  if (span.first > span.last || span.last >= g.cylinders)
    throw Error(fmt::format("{} reaches past the drive: the {} has {} cylinders (0-{}); choose "
                            "cylinders within them",
                            given, g.name, g.cylinders, g.cylinders - 1),
                EINVAL);
  FormatOptions band = o;
  band.geometry = span_of(g, span);
  band.spare_percent = 0;
  band.span.reset();
  const uint32_t cyl = band.geometry.cylinders;
  if (has_32bit_psns(o.mode) && band.geometry.sectors_in_cylinders(cyl) > kMaxPlatterSectors)
    throw Error(fmt::format("{} holds {} of platters, and mode={} addresses at most 2 TiB of "
                            "platters (2^32 - 1 sectors of 512 bytes); narrow span= to at most "
                            "{} cylinders",
                            given, human_bytes(band.geometry.bytes_in_cylinders(cyl)),
                            mode_name(o.mode), addressable_cylinders(band.geometry)),
                EINVAL);
  // Counted on the drive from the span's first cylinder on, so that the
  // count is the cylinders there (and mode=lld's system area is in it).
  FormatOptions rest = band;
  rest.geometry = span_of(g, {span.first, g.cylinders - 1});
  const uint32_t needed = platter_cylinders(rest);
  if (needed > cyl)
    throw Error(fmt::format("size={} and its metadata{} need {} cylinders but {} has {}; widen "
                            "span= or lower size=",
                            human_bytes(o.export_bytes),
                            o.mode == DiskMode::kLld
                                ? fmt::format(", with mode=lld's checkpoints and NVRAM "
                                              "(segment={}, nvram={}),",
                                              o.segment_bytes, o.nvram_bytes)
                                : std::string(),
                            needed, given, cyl),
                EINVAL);
  Superblock sb = make_superblock(band, cyl);
  sb.span_first_cylinder = span.first;
  sb.drive_cylinders = g.cylinders;
  return sb;
}

}  // namespace

Superblock plan_image(const FormatOptions& o) {
  Superblock sb = plan_image_unchecked(o);
  check_vld_fillable(o, sb);  // a plan that cannot hold its export is never returned
  return sb;
}

Superblock plan_image_unchecked(const FormatOptions& o) {
  const DriveGeometry& g = o.geometry;
  if (std::string why = g.check(); !why.empty()) throw Error("geometry: " + why, EINVAL);
  if (o.block_bytes < kSectorBytes || o.block_bytes > 65536 ||
      (o.block_bytes & (o.block_bytes - 1)) != 0)
    throw Error("block=" + std::to_string(o.block_bytes) +
                    " must be a power of two from 512 to 65536",
                EINVAL);
  if (o.export_bytes == 0 || o.export_bytes % o.block_bytes != 0)
    throw Error("size=" + std::to_string(o.export_bytes) + " must be a positive multiple of the " +
                    std::to_string(o.block_bytes) + "-byte block (e.g. size=1G)",
                EINVAL);
  if (o.spare_percent > 1000)
    throw Error("spare=" + std::to_string(o.spare_percent) + " must be from 0 to 1000 (percent)",
                EINVAL);
  if (o.span) return plan_span(o);
  const uint32_t cyl = platter_cylinders(o);
  // First: raising cylinders= cannot help here.
  if (has_32bit_psns(o.mode) && g.sectors_in_cylinders(cyl) > kMaxPlatterSectors)
    refuse_unaddressable(o, cyl);
  if (cyl > g.cylinders) refuse_too_big(o, cyl);
  return make_superblock(o, cyl);
}

void format_store(BackingStore& store, const Superblock& sb) {
  auto bytes = encode_superblock(sb);
  store.write(0, std::as_bytes(std::span(bytes)));
  if (sb.mode == DiskMode::kVld) VldDisk::format(store, sb);
  if (sb.mode == DiskMode::kLld) LldDisk::format(store, sb);
  store.sync();
}

std::unique_ptr<FileBackingStore> create_image(const std::string& path, const Superblock& sb) {
  auto store = FileBackingStore::create(path, sb.image_bytes());
  // Half an image would be refused later as not vld's: remove it.
  auto remove_half_image = [&] {
    store.reset();
    ::unlink(path.c_str());
  };
  try {
    format_store(*store, sb);
  } catch (const Error& e) {
    remove_half_image();
    throw Error("cannot create file=" + path + ": " + e.what() +
                    "; the half-made file was removed: free space there or give another path",
                e.err());
  } catch (...) {
    remove_half_image();
    throw;
  }
  return store;
}

std::unique_ptr<Disk> make_disk(std::unique_ptr<BackingStore> store, const Superblock& sb,
                                const DiskOptions& options) {
  std::unique_ptr<Disk> disk;
  switch (sb.mode) {
    case DiskMode::kInplace: disk = std::make_unique<InplaceDisk>(std::move(store), sb); break;
    case DiskMode::kVld:
      disk = std::make_unique<VldDisk>(std::move(store), sb, options.vld, options.track_buffer);
      break;
    case DiskMode::kLld:
      disk = std::make_unique<LldDisk>(std::move(store), sb, options.lld, options.track_buffer);
      break;
  }
  if (!disk) throw Error("unknown disk mode", EINVAL);
  disk->set_track_buffer(options.track_buffer);
  return disk;
}

}  // namespace vld
