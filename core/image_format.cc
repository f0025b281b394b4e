#include "core/image_format.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "core/util/checksum.h"
#include "core/util/coding.h"

namespace vld {

namespace {
constexpr char kMagic[8] = {'V', 'L', 'D', 'I', 'M', 'A', 'G', 'E'};
constexpr size_t kChecksumAt = kSuperblockBytes - 8;
constexpr size_t kSegmentBytesAt = 184;  // format_versions 2 to 4
constexpr size_t kNvramBytesAt = 192;    // format_versions 2 to 4
// Zero from here to kSpanAt: 184 in version 1, 200 in versions 2 to 4. The
// damaged-start test, which cannot trust the version field, uses the later.
constexpr size_t kFieldsEndV1 = 184;
constexpr size_t kFieldsEndV2 = 200;
constexpr size_t kSpanAt = 240;  // u32 span_first_cylinder, u32 drive_cylinders; any version
constexpr size_t kNameBytes = 32;
// A zoned drive's zone table (any version): a u32 count, a u32 zero, then
// per zone u32 first_cylinder, sectors_per_track, track_skew_sectors,
// cylinder_skew_sectors. A single-zone drive's count is 0.
constexpr size_t kWriteSettleAt = 248;  // u64 ns, any version
constexpr size_t kZoneCountAt = 256;
constexpr size_t kZonesAt = 264;
constexpr size_t kZoneBytes = 16;
constexpr uint32_t kMaxSuperblockZones = (kChecksumAt - kZonesAt) / kZoneBytes;  // 239
static_assert(kMaxSuperblockZones >= kMaxZones);

bool all_zero(const unsigned char* from, const unsigned char* to) {
  return std::all_of(from, to, [](unsigned char c) { return c == 0; });
}

// Where the zone table's bytes end: nothing after it may be nonzero.
size_t zone_table_end(uint32_t zone_count) { return kZonesAt + size_t{zone_count} * kZoneBytes; }

void encode_zones(const DriveGeometry& g, unsigned char* p) {
  if (!g.zoned()) return;
  encode_fixed32(p + kZoneCountAt, static_cast<uint32_t>(g.zones.size()));
  unsigned char* z = p + kZonesAt;
  for (const Zone& zone : g.zones) {
    encode_fixed32(z, zone.first_cylinder);
    encode_fixed32(z + 4, zone.sectors_per_track);
    encode_fixed32(z + 8, zone.track_skew_sectors);
    encode_fixed32(z + 12, zone.cylinder_skew_sectors);
    z += kZoneBytes;
  }
}

// REQUIRES: the count at kZoneCountAt is at most kMaxSuperblockZones.
void decode_zones(const unsigned char* p, DriveGeometry* g) {
  const uint32_t count = decode_fixed32(p + kZoneCountAt);
  g->zones.resize(count);
  const unsigned char* z = p + kZonesAt;
  for (Zone& zone : g->zones) {
    zone = Zone{decode_fixed32(z), decode_fixed32(z + 4), decode_fixed32(z + 8),
                decode_fixed32(z + 12), 0};
    z += kZoneBytes;
  }
  g->number_zones();
}
}  // namespace

const char* mode_name(DiskMode m) {
  switch (m) {
    case DiskMode::kInplace: return "inplace";
    case DiskMode::kVld: return "vld";
    case DiskMode::kLld: return "lld";
  }
  return "unknown";
}

const char* mode_description(DiskMode m) {
  switch (m) {
    case DiskMode::kInplace: return "update in place";
    case DiskMode::kVld: return "eager writing to a virtual log";
    case DiskMode::kLld: return "log-structured logical disk";
  }
  return "unknown";
}

uint32_t format_version_of(DiskMode m) {
  return m == DiskMode::kLld ? kLldFormatVersion : kFormatVersion;
}

bool same_image(const Superblock& a, const Superblock& b) {
  return encode_superblock(a) == encode_superblock(b);
}

std::array<unsigned char, kSuperblockBytes> encode_superblock(const Superblock& sb) {
  std::array<unsigned char, kSuperblockBytes> b{};
  unsigned char* p = b.data();
  const DriveGeometry& g = sb.geometry;
  std::memcpy(p, kMagic, 8);
  assert(sb.mode == DiskMode::kLld ? is_lld_format_version(sb.version())
                                   : sb.version() == kFormatVersion);
  encode_fixed32(p + 8, sb.version());
  encode_fixed32(p + 12, static_cast<uint32_t>(sb.mode));
  encode_fixed64(p + 16, sb.export_bytes);
  encode_fixed32(p + 24, sb.block_bytes);
  encode_fixed32(p + 28, sb.spare_percent);
  encode_fixed32(p + 32, sb.simulated_cylinders);
  encode_fixed32(p + 36, g.sectors_per_track);
  encode_fixed32(p + 40, g.tracks_per_cylinder);
  encode_fixed32(p + 44, g.cylinders);
  encode_fixed32(p + 48, g.rpm);
  encode_fixed32(p + 52, g.track_skew_sectors);
  encode_fixed32(p + 56, g.cylinder_skew_sectors);
  encode_fixed32(p + 60, g.seek.boundary_cylinders());
  encode_fixed64(p + 64, static_cast<uint64_t>(g.head_switch.count()));
  encode_fixed64(p + 72, static_cast<uint64_t>(g.controller_overhead.count()));
  encode_double(p + 80, g.seek.a_ms());
  encode_double(p + 88, g.seek.b_ms());
  encode_double(p + 96, g.seek.c_ms());
  encode_double(p + 104, g.seek.e_ms());
  std::memcpy(p + 112, g.name.data(), std::min(g.name.size(), kNameBytes - 1));
  std::memcpy(p + 144, sb.secret.data(), sb.secret.size());
  encode_fixed64(p + 176, sb.platter_offset);
  static_assert(kFieldsEndV1 == kSegmentBytesAt && kFieldsEndV2 == kNvramBytesAt + 8);
  static_assert(kFieldsEndV2 <= kSpanAt && kSpanAt + 8 == kWriteSettleAt &&
                kWriteSettleAt + 8 == kZoneCountAt);
  encode_fixed32(p + kSpanAt, sb.span_first_cylinder);
  encode_fixed32(p + kSpanAt + 4, sb.drive_cylinders);
  encode_fixed64(p + kWriteSettleAt, static_cast<uint64_t>(g.write_settle.count()));
  encode_zones(g, p);
  if (sb.mode == DiskMode::kLld) {
    encode_fixed64(p + kSegmentBytesAt, sb.segment_bytes);
    encode_fixed64(p + kNvramBytesAt, sb.nvram_bytes);
  }
  encode_fixed64(p + kChecksumAt, checksum64(p, kChecksumAt));
  return b;
}

namespace {

// Magic, checksum, version and mode: whether these bytes are a superblock
// this build reads, and of which mode.
DecodeResult decode_header(const unsigned char* p, Superblock* sb, std::string* why) {
  if (std::memcmp(p, kMagic, 8) != 0) {
    const uint32_t zones = decode_fixed32(p + kZoneCountAt);
    const bool shaped = decode_fixed64(p + kChecksumAt) != 0 &&
                        all_zero(p + kFieldsEndV2, p + kSpanAt) && zones <= kMaxSuperblockZones &&
                        all_zero(p + kZoneCountAt + 4, p + kZonesAt) &&
                        all_zero(p + zone_table_end(zones), p + kChecksumAt);
    return shaped ? DecodeResult::kDamagedStart : DecodeResult::kNotVld;
  }
  if (decode_fixed64(p + kChecksumAt) != checksum64(p, kChecksumAt))
    return DecodeResult::kBadChecksum;
  const uint32_t version = decode_fixed32(p + 8);
  const bool lld_version = is_lld_format_version(version);
  if (version != kFormatVersion && !lld_version) return DecodeResult::kUnsupportedVersion;
  const uint32_t mode = decode_fixed32(p + 12);
  const bool known = mode == 1 || mode == 2 || mode == 3;
  if (!known || (mode == 3) != lld_version) {
    *why = "mode field " + std::to_string(mode) + " in format_version " + std::to_string(version);
    return DecodeResult::kInvalid;
  }
  sb->mode = static_cast<DiskMode>(mode);
  sb->format_version = version;
  return DecodeResult::kOk;
}

void decode_fields(const unsigned char* p, Superblock* sb) {
  sb->export_bytes = decode_fixed64(p + 16);
  sb->block_bytes = decode_fixed32(p + 24);
  sb->spare_percent = decode_fixed32(p + 28);
  sb->simulated_cylinders = decode_fixed32(p + 32);
  DriveGeometry& g = sb->geometry;
  g.sectors_per_track = decode_fixed32(p + 36);
  g.tracks_per_cylinder = decode_fixed32(p + 40);
  g.cylinders = decode_fixed32(p + 44);
  g.rpm = decode_fixed32(p + 48);
  g.track_skew_sectors = decode_fixed32(p + 52);
  g.cylinder_skew_sectors = decode_fixed32(p + 56);
  uint32_t boundary = decode_fixed32(p + 60);
  g.head_switch = SimDuration{static_cast<int64_t>(decode_fixed64(p + 64))};
  g.controller_overhead = SimDuration{static_cast<int64_t>(decode_fixed64(p + 72))};
  g.seek = SeekCurve(decode_double(p + 80), decode_double(p + 88), boundary,
                     decode_double(p + 96), decode_double(p + 104));
  g.name.assign(reinterpret_cast<const char*>(p + 112), strnlen(reinterpret_cast<const char*>(p + 112), kNameBytes));
  std::memcpy(sb->secret.data(), p + 144, sb->secret.size());
  sb->platter_offset = decode_fixed64(p + 176);
  g.write_settle = SimDuration{static_cast<int64_t>(decode_fixed64(p + kWriteSettleAt))};
  sb->span_first_cylinder = decode_fixed32(p + kSpanAt);
  sb->drive_cylinders = decode_fixed32(p + kSpanAt + 4);
  if (decode_fixed32(p + kZoneCountAt) <= kMaxSuperblockZones) decode_zones(p, &g);
  const bool lld = sb->mode == DiskMode::kLld;
  sb->segment_bytes = lld ? decode_fixed64(p + kSegmentBytesAt) : 0;
  sb->nvram_bytes = lld ? decode_fixed64(p + kNvramBytesAt) : 0;
}

// "" if the span fields are consistent, else what is wrong: a span's
// platters are the whole band, within the drive.
std::string invalid_span(const Superblock& sb) {
  if (!sb.spanned())
    return sb.span_first_cylinder == 0 ? "" : "span first cylinder without drive cylinders";
  const uint64_t end = uint64_t{sb.span_first_cylinder} + sb.geometry.cylinders;
  if (sb.drive_cylinders > 10'000'000 || end > sb.drive_cylinders)
    return "span of cylinders " + std::to_string(sb.span_first_cylinder) + " to " +
           std::to_string(end - 1) + " on a drive of " + std::to_string(sb.drive_cylinders);
  if (sb.simulated_cylinders != sb.geometry.cylinders)
    return "simulated cylinders " + std::to_string(sb.simulated_cylinders) + " of a span of " +
           std::to_string(sb.geometry.cylinders);
  return "";
}

// "" if the decoded fields are consistent, else which one is not.
std::string invalid_field(const unsigned char* p, const Superblock& sb) {
  const DriveGeometry& g = sb.geometry;
  const uint32_t zones = decode_fixed32(p + kZoneCountAt);
  if (zones > kMaxSuperblockZones)
    return "zone count " + std::to_string(zones) + " (at most " +
           std::to_string(kMaxSuperblockZones) + ")";
  if (!all_zero(p + zone_table_end(zones), p + kChecksumAt))
    return "bytes after the zone table are not zero";
  if (std::string w = g.check(); !w.empty()) return "geometry: " + w;
  if (sb.block_bytes < kSectorBytes || sb.block_bytes > 65536 ||
      (sb.block_bytes & (sb.block_bytes - 1)) != 0)
    return "block size " + std::to_string(sb.block_bytes);
  if (sb.simulated_cylinders == 0 || sb.simulated_cylinders > g.cylinders)
    return "simulated cylinders " + std::to_string(sb.simulated_cylinders);
  if (std::string w = invalid_span(sb); !w.empty()) return w;
  if (sb.platter_offset < kSuperblockBytes || sb.platter_offset % kSectorBytes != 0)
    return "platter offset";
  if (sb.export_bytes == 0 || sb.export_bytes % sb.block_bytes != 0 ||
      sb.export_bytes > sb.platter_bytes())
    return "export size " + std::to_string(sb.export_bytes);
  if (sb.mode == DiskMode::kLld && sb.segment_bytes == 0) return "segment bytes 0";
  // plan_image refuses to make such an image; one that claims it is damaged.
  if (has_32bit_psns(sb.mode) && g.sectors_in_cylinders(sb.simulated_cylinders) > kMaxPlatterSectors)
    return "platters of more than 2^32 - 1 sectors";
  return "";
}

}  // namespace

DecodeResult decode_superblock(const unsigned char* p, Superblock* sb, std::string* why) {
  if (DecodeResult r = decode_header(p, sb, why); r != DecodeResult::kOk) return r;
  decode_fields(p, sb);
  if (std::string w = invalid_field(p, *sb); !w.empty()) {
    *why = w;
    return DecodeResult::kInvalid;
  }
  return DecodeResult::kOk;
}

uint64_t metadata_allowance_bytes(uint64_t export_bytes, uint32_t block_bytes) {
  uint64_t blocks = export_bytes / block_bytes;
  uint64_t map_sectors = (blocks + 31) / 32;
  return 2 * map_sectors * kSectorBytes;
}

uint32_t cylinders_needed(const DriveGeometry& g, uint64_t export_bytes, uint32_t block_bytes,
                          uint32_t spare_percent) {
  uint64_t payload = export_bytes + metadata_allowance_bytes(export_bytes, block_bytes);
  // Round the spare up so that a full export never exceeds 100/(100+spare).
  __int128 physical = (static_cast<__int128>(payload) * (100 + spare_percent) + 99) / 100;
  if (!g.zoned()) {
    __int128 cyl = (physical + g.cylinder_bytes() - 1) / g.cylinder_bytes();
    return cyl > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(cyl);
  }
  // The outermost cylinders, as few as hold it; beyond the drive (which
  // the caller refuses, naming the count), more of its innermost size.
  const __int128 drive = g.bytes_in_cylinders(g.cylinders);
  if (physical > drive) {
    const uint64_t inner = g.cylinder_sectors(g.cylinders - 1) * kSectorBytes;
    const __int128 cyl = g.cylinders + (physical - drive + inner - 1) / inner;
    return cyl > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(cyl);
  }
  uint32_t lo = 1, hi = g.cylinders;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (static_cast<__int128>(g.bytes_in_cylinders(mid)) >= physical) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

}  // namespace vld
