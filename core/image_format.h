// The vld image: what a backing file holds and where. docs/format.md is
// the one description of the format; this summary must agree with it.
//
//   offset 0          superblock (4 KiB, below)
//   4 KiB .. 1 MiB    reserved, zero (format_versions 1 and 2); never exported
//                     (mode=vld's log record lives on the platters, in
//                     sectors 0 and 1 of the system track)
//   1 MiB ..          the platters: simulated_cylinders whole cylinders,
//                     sector psn at platter_offset + psn * 512
//                     (DriveGeometry's numbering)
//
// Superblock, all integers little-endian (core/util/coding.h):
//
//   0   char[8]  magic "VLDIMAGE"
//   8   u32      format_version: 1 (kFormatVersion) for modes 1 and 2,
//                4 (kLldFormatVersion), 3 (kLldDigestFormatVersion) or
//                2 (kLldPackedFormatVersion) for mode 3, and only for it
//   12  u32      mode: 1 inplace, 2 vld, 3 lld
//   16  u64      export_bytes: the size clients see
//   24  u32      block_bytes: physical block (allocation unit), 512..64 KiB
//   28  u32      spare_percent used to size the platters
//   32  u32      simulated_cylinders: whole cylinders in the image
//   36  u32      sectors_per_track
//   40  u32      tracks_per_cylinder
//   44  u32      cylinders (of the modelled drive)
//   48  u32      rpm
//   52  u32      track_skew_sectors
//   56  u32      cylinder_skew_sectors
//   60  u32      seek boundary (cylinders)
//   64  u64      head_switch_ns
//   72  u64      controller_overhead_ns
//   80  f64 x4   seek a, b, c, e (ms)
//   112 char[32] geometry name, NUL-padded
//   144 u8[32]   per-image secret (MAC key of mode=vld and mode=lld metadata); it lives
//                here, outside the exported range, so no client can read it
//   176 u64      platter_offset
//   format_version 1:
//   184 ..       zero up to 240
//   format_versions 2 and 3 (mode=lld):
//   184 u64      segment_bytes: segment= as given (> 0; the layout rounds it)
//   192 u64      nvram_bytes: nvram= (0: no NVRAM)
//   200 ..       zero up to 240
//   every version:
//   240 u32      span_first_cylinder: the drive cylinder the platters start at
//                (span=, geometry/span.h); 0 without a span
//   244 u32      drive_cylinders: the whole drive's cylinders with span=, and
//                then the geometry above is the band's (span_of: its
//                cylinders, zones clipped and shifted); 0 without a span
//   248 u64      write_settle_ns: added to a seek before a write (0: none)
//   256 u32      zone_count: 0 for a single-zone drive (sectors_per_track and
//                the skews above), else 1..239 and those three fields 0
//   260 u32      zero
//   264 16 bytes per zone: u32 first_cylinder, sectors_per_track,
//                track_skew_sectors, cylinder_skew_sectors
//   .. 4088      zero
//   4088 u64     XXH3-64 of bytes [0, 4088)
//
// A zoned drive's image keeps its format_version: its sectors_per_track
// field is 0, which builds that know no zones refuse as a bad geometry.
//
// An inplace or vld image is format_version 1, byte for byte as before
// mode=lld existed, so older vld builds still open it; only an lld image
// needs version 2 or 3, and older builds refuse it as an unsupported
// version. Versions 2 and 3 differ only in mode=lld's NVRAM records and
// checkpoint tables (docs/format.md, "mode=lld"); a version 2 image is
// read and written as version 2, for its whole life.
//
// The superblock is written once, at format time, and then only read: a
// crash can never leave it half-updated. Format-time parameters (size,
// geometry, block, spare or span, mode, and mode=lld's segment and nvram) come from
// it on every later open.
//
// Thread-safety: plain values and pure functions.
#ifndef VLD_CORE_IMAGE_FORMAT_H_
#define VLD_CORE_IMAGE_FORMAT_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "geometry/drive_geometry.h"
#include "geometry/span.h"

namespace vld {

enum class DiskMode : uint32_t { kInplace = 1, kVld = 2, kLld = 3 };
const char* mode_name(DiskMode m);
// What a mode's disk is, in a few words, for output that also says "vld"
// for the plugin: "eager writing to a virtual log" for mode=vld.
const char* mode_description(DiskMode m);

// mode=vld and mode=lld name a physical sector by psn + 1 in 32 bits (vld's
// map entries and map sector pointers, lld's block map: docs/format.md), so
// their platters hold at most 2^32 - 1 sectors, 2 TiB less one sector.
// mode=inplace addresses the platters by 64-bit offsets: no such limit.
// Kept at 32 bits on purpose: the in-memory map is 8 bytes per block
// (MapEntry) and is most of a served disk's memory.
inline constexpr uint64_t kMaxPlatterSectors = UINT32_MAX;
inline bool has_32bit_psns(DiskMode m) { return m != DiskMode::kInplace; }

inline constexpr uint32_t kFormatVersion = 1;            // mode=inplace and mode=vld
inline constexpr uint32_t kLldFormatVersion = 4;         // mode=lld, new images
inline constexpr uint32_t kLldDigestFormatVersion = 3;   // mode=lld, older images ..
inline constexpr uint32_t kLldPackedFormatVersion = 2;   // .. and the oldest
// Whether v is a format_version of mode=lld.
inline bool is_lld_format_version(uint32_t v) {
  return v == kLldFormatVersion || v == kLldDigestFormatVersion || v == kLldPackedFormatVersion;
}
// The format_version a new image of this mode is created with.
uint32_t format_version_of(DiskMode m);

// mode=lld's format-time defaults (paper 001, section 4.4): 0.5 MB
// segments and a 6.1 MB NVRAM write buffer.
inline constexpr uint64_t kDefaultSegmentBytes = 512 * 1024;
inline constexpr uint64_t kDefaultNvramBytes = 6100000;
inline constexpr uint64_t kSuperblockBytes = 4096;
inline constexpr uint64_t kPlatterOffset = 1 << 20;

struct Superblock {
  DiskMode mode = DiskMode::kInplace;
  uint64_t export_bytes = 0;
  uint32_t block_bytes = 4096;
  uint32_t spare_percent = 25;
  uint32_t simulated_cylinders = 0;
  DriveGeometry geometry;
  std::array<unsigned char, 32> secret{};
  uint64_t platter_offset = kPlatterOffset;
  // mode=lld only (0 otherwise): segment= and nvram= as given at format time.
  uint64_t segment_bytes = 0;
  uint64_t nvram_bytes = 0;
  // span= (geometry/span.h): the platters are drive cylinders
  // span_first_cylinder .. + simulated_cylinders - 1 of a drive of
  // drive_cylinders, and `geometry` is that band's (span_of), so that every
  // mode runs on it unchanged. drive_cylinders 0: no span, the geometry is
  // the drive's and the platters its outermost cylinders.
  uint32_t span_first_cylinder = 0;
  uint32_t drive_cylinders = 0;
  // As decoded; 0 (a superblock not read from an image): the newest of its
  // mode, format_version_of(mode). version() says which.
  uint32_t format_version = 0;

  bool spanned() const { return drive_cylinders != 0; }
  // The drive cylinders the platters are. REQUIRES: spanned().
  CylinderSpan span() const {
    return {span_first_cylinder, span_first_cylinder + geometry.cylinders - 1};
  }

  uint32_t version() const { return format_version ? format_version : format_version_of(mode); }

  uint64_t platter_bytes() const { return geometry.bytes_in_cylinders(simulated_cylinders); }
  uint64_t image_bytes() const { return platter_offset + platter_bytes(); }
  uint64_t physical_blocks() const { return platter_bytes() / block_bytes; }
};

// Encodes into exactly kSuperblockBytes, in sb.version():
// segment_bytes and nvram_bytes are written for mode=lld only.
std::array<unsigned char, kSuperblockBytes> encode_superblock(const Superblock& sb);

// Whether two superblocks are the same image's (bytes equal once encoded).
// A served image is unlocked between its read-only open and the first
// writable one, so another may take its place: every open after the first
// asks this of what it finds, and refuses with EIO and kImageReplaced.
bool same_image(const Superblock& a, const Superblock& b);
inline constexpr std::string_view kImageReplaced =
    "the image changed while it was served read-only (its superblock differs): restart nbdkit "
    "to serve the new one";

// kDamagedStart: no magic, but the rest has a vld superblock's shape (zero
// from byte 200 to 240 and after the zone table, a checksum at 4088; any
// version): a vld image whose first bytes are damaged.
// kUnsupportedVersion: a format_version other than 1, 2 and 3.
enum class DecodeResult { kOk, kNotVld, kDamagedStart, kBadChecksum, kUnsupportedVersion, kInvalid };
// On kInvalid, *why says which field: among others a mode that is not its
// version's (1 and 2 need version 1, 3 needs version 2 or 3), or
// segment_bytes 0. A version-1 superblock decodes with segment_bytes =
// nvram_bytes = 0.
DecodeResult decode_superblock(const unsigned char* bytes, Superblock* sb, std::string* why);

// Map metadata the vld mode may keep on the platters, counted against every
// image alike so that both modes of one size simulate the same drive: room
// for two versions of every 512-byte map sector of 32 entries.
uint64_t metadata_allowance_bytes(uint64_t export_bytes, uint32_t block_bytes);

// Whole cylinders needed to hold export + metadata + spare_percent.
uint32_t cylinders_needed(const DriveGeometry& g, uint64_t export_bytes, uint32_t block_bytes,
                          uint32_t spare_percent);

}  // namespace vld

#endif  // VLD_CORE_IMAGE_FORMAT_H_
