// The one description of every parameter of `nbdkit vld ...`.
//
// Two texts are made from this table and nothing else:
//   - `nbdkit vld --help` (config_help() in options.cc): for each entry,
//     "key=VALUE" padded to kHelpColumn, then `help`, whose further lines
//     are indented to that column;
//   - the PARAMETERS section of nbdkit-vld-plugin(1): vld-man-parameters
//     (gen_man_parameters.cc) writes each entry as a POD =item with `pod`
//     as its text, a =head2 wherever `group` changes, and splices the
//     result into nbdkit-vld-plugin.pod at build time.
// set_option() (options.cc) applies a key=value from this table too: each
// entry says how its value is read and checked (`rule`: a ValueKind with
// its bounds and error text) and where it is stored (`store`). So a
// parameter is added here and nowhere else, unless it needs a new kind.
// tests/unit/options_test.cc checks that set_option() knows every key and
// has a table of good and bad values with a row for each.
//
// Rules for the texts: `help` is wrapped by hand, lines separated by '\n',
// no trailing newline. `pod` is POD (perlpod(1)): paragraphs separated by
// "\n\n", B<> for literal keys and values, C<> for commands, L<> for links;
// it may hold a nested =over/=back list.
//
// Thread-safety: constant data.
#ifndef VLD_PLUGIN_PARAMETERS_H_
#define VLD_PLUGIN_PARAMETERS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/lld/cleaner_policy.h"
#include "plugin/options.h"

namespace vld {

enum class ParameterGroup { kImage, kFormat, kRunTime };

// How set_option() reads a value; options.cc has one reader per kind.
// Sizes, whole numbers and booleans are read by nbdkit's parsers
// (params/nbdkit_values.h), so they take nbdkit's forms. A value of the
// wrong form or out of range is refused with "key=value: " + the problem
// (e.g. "not a size", "too small (at least 512 bytes)") + "; " + expected;
// the other kinds' errors are "key=value: " + expected, unless said
// otherwise.
enum class ValueKind {
  kText,              // any text; the store checks it
  kNonEmpty,          // any text but ""; "" is refused with "key= " + expected
  kSize,              // nbdkit_parse_size (1G, 512K, 131072s, 1048576), from min to max
  kWholeNumber,       // nbdkit_parse_uint64_t (decimal, 0x hex, 0 octal), from min to max
  kMicroseconds,      // a duration in microseconds from 0 to 1000000, fractions allowed
  kOnOff,             // nbdkit_parse_bool: on|off, yes|no, true|false, 1|0, any case
  kPreset,            // a geometry preset's name; the error lists them after expected
  kSeekCurve,         // SeekCurve::parse(); the error is its reason, then expected
  kCompactionPolicy,  // parse_compaction_policy()
  kCleanerPolicy,     // parse_cleaner_policy()
};

inline constexpr uint64_t kMaxU32 = UINT32_MAX;

struct ValueRule {
  ValueKind kind;
  const char* expected;    // the error's text
  // kSize, kWholeNumber: bounds, inclusive (a size is at most
  // kMaxNbdkitSize whatever max says).
  uint64_t min = 0;
  uint64_t max = UINT64_MAX;
};

// A value as its rule read it: `text` always, and the field of its kind.
struct ParameterValue {
  std::string_view text;
  uint64_t number = 0;     // kSize, kWholeNumber
  double real = 0;         // kMicroseconds
  bool on = false;         // kOnOff
  std::optional<SeekCurve> seek;           // kSeekCurve
  std::optional<CompactionPolicy> policy;  // kCompactionPolicy
  std::optional<CleanerPolicy> cleaner;    // kCleanerPolicy
  uint32_t u32() const { return static_cast<uint32_t>(number); }  // REQUIRES: max <= kMaxU32
};

// Stores a value read by the rule; false refuses it ("key=value: " +
// expected), e.g. a kText that is none of the choices.
using StoreValue = bool (*)(PluginOptions& o, const ParameterValue& v);

inline constexpr const char* kMicrosecondsExpected =
    "expected a duration in microseconds from 0 to 1000000 (1 s), e.g. 500";
inline constexpr const char* kOnOffExpected =
    "expected on or off (or yes|no, true|false, 1|0, in any case)";

struct ParameterDoc {
  const char* key;        // "file"
  const char* value;      // the metavariable in --help: "PATH", "vld|inplace"
  ParameterGroup group;
  ValueRule rule;         // how set_option() reads the value
  StoreValue store;       // and where it puts it
  const char* help;       // --help text after the column
  const char* pod;        // the man page's text for the item
  // The item's value in the man page if not `value` (POD), e.g. the choices
  // of a value that --help shows as one letter.
  const char* man_value = nullptr;
  bool magic = false;     // nbdkit's magic config key: "key=" may be omitted
};

// Column where --help's descriptions start.
inline constexpr size_t kHelpColumn = 23;

inline constexpr ParameterDoc kParameters[] = {
    {"file", "PATH", ParameterGroup::kImage,
     {ValueKind::kNonEmpty, "must name the backing image"},
     [](PluginOptions& o, const ParameterValue& v) { o.file = v.text; return true; },
     "(required) backing image; created if absent (needs size=)",
     "The backing image: the simulated drive's platters in one file, with a superblock "
     "and the log records. This parameter is required.\n\n"
     "If the file does not exist it is created (mode 0600), and B<size=> is required: the "
     "format-time parameters below shape the new image and are stored in it. If it exists "
     "it is served as it is: its size, geometry, block size and mode come from the image, "
     "and a format-time parameter that disagrees with the image is an error, never a "
     "reformat. A file that is not an image of the vld plugin is refused untouched.\n\n"
     "While it is served the image is locked (L<flock(2)>): a second server on the same "
     "file fails with a message saying so.\n\n"
     "C<file=> is a magic config key and may be omitted in most cases. See "
     "L<nbdkit(1)/Magic parameters>.",
     nullptr, /*magic=*/true},

    {"size", "SIZE", ParameterGroup::kFormat,
     {ValueKind::kSize,
      "expected a size of at least one 512-byte sector, e.g. size=1G, size=131072s or "
      "size=1048576",
      512},
     [](PluginOptions& o, const ParameterValue& v) { o.size_bytes = v.number; return true; },
     "export size for a new image, e.g. 1G or 131072s (no default)",
     "The size of the export (the disk clients see) when B<file=> is created, as nbdkit "
     "reads sizes (see L</Values>): bytes, or a number with one suffix, B<s> for 512-byte "
     "sectors or B<K>, B<M>, B<G>, B<T>, B<P>, B<E> for powers of 1024, e.g. C<size=1G> or "
     "C<size=131072s>. It must be a multiple of B<block=>. There is no default. The "
     "simulated platters are larger: see B<spare=>."},

    {"mode", "vld|inplace|lld", ParameterGroup::kFormat,
     {ValueKind::kText, "expected mode=vld, mode=inplace or mode=lld"},
     [](PluginOptions& o, const ParameterValue& v) {
       if (v.text == "inplace") o.mode = DiskMode::kInplace;
       else if (v.text == "vld") o.mode = DiskMode::kVld;
       else if (v.text == "lld") o.mode = DiskMode::kLld;
       else return false;
       return true;
     },
     "disk mode of a new image: the virtual log disk, the\n"
     "conventional update-in-place disk, or the log-structured\n"
     "disk with NVRAM (default vld)",
     "The disk a new image simulates. B<vld> (the default) is the virtual log disk: eager "
     "writing and an indirection map kept as a virtual log. B<inplace> is the conventional "
     "disk of the same geometry: logical sector I<n> lives at physical sector I<n>. B<lld> "
     "is the log-structured logical disk with an NVRAM write buffer and a segment cleaner, "
     "the \"LFS\" of paper 001's section 4.4 (see B<segment=>, B<nvram=>, B<partial=>, "
     "B<cleaner_policy=>). See L</DESCRIPTION>.",
     "B<vld>|B<inplace>|B<lld>"},

    {"geometry", "NAME|FILE", ParameterGroup::kFormat,
     {ValueKind::kPreset, "unknown geometry; choose one of "},
     [](PluginOptions& o, const ParameterValue& v) { o.geometry = v.text; return true; },
     "drive preset: hp97560|hp97560-rw|st19101|savvio10k4|\n"
     "atlas10k|cheetah9lp|hc310, or a drive file (default st19101)",
     "The drive: one of the presets\n\n"
     "=over 4\n\n"
     "=item B<hp97560>\n\n"
     "HP 97560 (1992), the paper's older drive: 72 sectors per track, 19 heads, 1962 "
     "cylinders, 4002 RPM, 2.5 ms head switch, 2.3 ms controller overhead (paper 001's "
     "Table 1).\n\n"
     "=item B<hp97560-rw>\n\n"
     "The same drive with the head switch (1.6 ms) and controller overhead (2.2 ms) "
     "Ruemmler and Wilkes measured; the two sources disagree, and the difference moves "
     "Figure 8 on this drive (F<docs/geometry.md>).\n\n"
     "=item B<st19101>\n\n"
     "Seagate ST19101 (1997), the paper's newer drive and the default: 256 sectors per "
     "track, 16 heads, 6962 cylinders, 10,000 RPM, 0.5 ms head switch, 0.1 ms controller "
     "overhead.\n\n"
     "=item B<savvio10k4>\n\n"
     "Seagate Savvio 10K.4 (2009): 1323 sectors per track, 6 heads, 147,620 cylinders, "
     "10,000 RPM, 0.2 ms controller overhead.\n\n"
     "=item B<atlas10k>\n\n"
     "Quantum Atlas 10K (1999), zoned: 24 zones of 334 to 229 sectors per track, 6 heads, "
     "10,042 cylinders, 10,025 RPM; DiskSim 4.0's validated model of the real drive.\n\n"
     "=item B<cheetah9lp>\n\n"
     "Seagate Cheetah 9LP (1998), zoned: 11 zones of 254 to 167 sectors per track, 12 "
     "heads, 6962 cylinders, 10,045 RPM; DiskSim 4.0's validated model.\n\n"
     "=item B<hc310>\n\n"
     "WD Ultrastar DC HC310 6 TB (2018), zoned, from its data sheet with stated "
     "assumptions: 24 zones of 4314 to 2157 sectors per track, 8 heads, 452,832 "
     "cylinders, 7200 RPM.\n\n"
     "=back\n\n"
     "or a drive file: a path (with a C</>) or a name ending in C<.drive>, whose lines give "
     "the drive's name, heads, cylinders, rpm, seek curve and either sectors_per_track or "
     "one zone per line (F<docs/geometry.md>, \"Drive files\").\n\n"
     "Each number of the preset can be overridden by the parameters that follow "
     "(sectors_per_track= only on a single-zone drive; on a zoned one, rpm=, "
     "head_switch_us= and seek= derive every zone's skews afresh); the resulting geometry, "
     "zones included, is stored in the image. Where each number comes from is in "
     "F<docs/geometry.md> of the source.",
     "I<PRESET>|I<FILE>"},

    {"block", "BYTES", ParameterGroup::kFormat,
     {ValueKind::kSize, "expected a power of two from 512 to 64K (bytes), e.g. block=4096", 512,
      65536},
     [](PluginOptions& o, const ParameterValue& v) {
       if ((v.number & (v.number - 1)) != 0) return false;  // not a power of two
       o.block_bytes = v.u32();
       return true;
     },
     "physical block of a new image (default 4096)",
     "The physical block of a new image in bytes: a power of two from 512 to 64K (default "
     "4096). The map has one entry per block, a write smaller than a block reads the rest "
     "of it first (read-modify-write), and nbdkit advertises it as the preferred block "
     "size. Match it to the client's block: ext4 of 1 KiB blocks on a disk of 4 KiB ones "
     "makes mode=vld and mode=lld read before most of its writes, and block=1K reads "
     "nothing, at four times the map (8 bytes a block in memory, the map sectors a clean "
     "open reads) (docs/benchmarks.md, section 13)."},

    {"spare", "PERCENT", ParameterGroup::kFormat,
     {ValueKind::kWholeNumber, "expected a percentage from 0 to 1000, e.g. spare=25", 0, 1000},
     [](PluginOptions& o, const ParameterValue& v) { o.spare_percent = v.u32(); return true; },
     "spare beyond export+metadata (default 25 -> 80% full)",
     "Room on the simulated platters beyond the export and the map, in percent of the "
     "export (0 to 1000, default 25): a full export then fills 80% of the platters, the "
     "utilization of the paper's experiments. Eager writing needs free sectors near the "
     "head; the less spare, the longer each write travels to find them. B<mode=vld> refuses "
     "a spare too small for every block of the export to be written once writes have "
     "fragmented the tracks, and names the least that will do (st19101 and savvio10k4: "
     "about 3; hp97560: 12, as its 72-sector tracks hold only 8 blocks beside a map "
     "sector)."},

    {"span", "CYLINDERS", ParameterGroup::kFormat,
     {ValueKind::kText,
      "expected FIRST-LAST (drive cylinders, e.g. span=0-9999), N (the outermost N), P%-Q% "
      "(percent of the drive's cylinders from the outer edge, e.g. span=90%-100%) or P%"},
     [](PluginOptions& o, const ParameterValue& v) {
       o.span = SpanSpec::parse(v.text);
       return o.span.has_value();
     },
     "the drive cylinders the platters are, e.g.\n"
     "0-9999 or 90%-100% (default: as few outermost\n"
     "cylinders as size=, the map and spare= need)",
     "The band of the drive's cylinders that a new image's platters are (short-stroking): "
     "B<span=>I<FIRST>B<->I<LAST> names drive cylinders, inclusive, cylinder 0 the "
     "outermost (B<span=0-9999>); B<span=>I<N> is the outermost I<N> cylinders; "
     "B<span=>I<P>B<%->I<Q>B<%> is cylinders from I<P> to I<Q> percent of the drive's, "
     "counted from the outer edge (B<span=90%-100%> is the innermost tenth; spans that meet "
     "at a percent share no cylinder); B<span=>I<P>B<%> is B<0%->I<P>B<%>.\n\n"
     "The disk is then that band: its seeks stay within it, its tracks hold what the drive's "
     "hold there (a zoned drive's zones clipped to it), and the image holds the band's "
     "platters only, however large the drive, so a small export on a drive of hundreds of "
     "thousands of cylinders can be placed and measured at its outer or inner edge. The "
     "whole band is platters, so B<spare=> is refused beside B<span=>; a band too narrow "
     "for the export and its metadata, or reaching past the drive, is refused with the "
     "cylinders it needs or has. The stats file's geometry names the band (B<span>, "
     "F<docs/stats.md>); F<docs/geometry.md>, \"Span (short-stroking)\", says what it "
     "models. Without B<span=> the platters are the outermost cylinders that the export, "
     "its map and B<spare=> need."},

    {"sectors_per_track", "N", ParameterGroup::kFormat,
     {ValueKind::kWholeNumber, "expected a positive whole number (sectors per track)", 1,
      kMaxU32},
     [](PluginOptions& o, const ParameterValue& v) { o.sectors_per_track = v.u32(); return true; },
     "override the preset (e.g. st19101: 256)",
     "Override the preset's sectors (of 512 bytes) per track (st19101: 256)."},

    {"tracks_per_cylinder", "N", ParameterGroup::kFormat,
     {ValueKind::kWholeNumber,
      "expected a positive whole number (tracks per cylinder, i.e. heads)", 1, kMaxU32},
     [](PluginOptions& o, const ParameterValue& v) { o.tracks_per_cylinder = v.u32(); return true; },
     "override the preset (heads; st19101: 16)",
     "Override the preset's tracks per cylinder, i.e. heads (st19101: 16)."},

    {"cylinders", "N", ParameterGroup::kFormat,
     {ValueKind::kWholeNumber, "expected a positive whole number (cylinders of the whole drive)",
      1, kMaxU32},
     [](PluginOptions& o, const ParameterValue& v) { o.cylinders = v.u32(); return true; },
     "override the preset's whole-drive cylinders (st19101: 6962)",
     "Override the preset's cylinders of the whole drive (st19101: 6962). The image holds "
     "only the cylinders that the export, the map and the spare need (the statistics' "
     "C<simulated_cylinders>)."},

    {"rpm", "N", ParameterGroup::kFormat,
     {ValueKind::kWholeNumber, "expected a positive whole number (revolutions per minute)", 1,
      kMaxU32},
     [](PluginOptions& o, const ParameterValue& v) { o.rpm = v.u32(); return true; },
     "override the preset (st19101: 10000)",
     "Override the preset's rotation speed in revolutions per minute (st19101: 10000)."},

    {"head_switch_us", "US", ParameterGroup::kFormat,
     {ValueKind::kMicroseconds, kMicrosecondsExpected},
     [](PluginOptions& o, const ParameterValue& v) { o.head_switch_us = v.real; return true; },
     "override the preset (st19101: 500)",
     "Override the preset's time to switch heads within a cylinder, in microseconds "
     "(st19101: 500)."},

    {"overhead_us", "US", ParameterGroup::kFormat,
     {ValueKind::kMicroseconds, kMicrosecondsExpected},
     [](PluginOptions& o, const ParameterValue& v) { o.overhead_us = v.real; return true; },
     "controller overhead per command (st19101: 100)",
     "Override the preset's controller overhead, paid by every command before the "
     "mechanics, in microseconds (st19101: 100)."},

    {"seek", "A,B,D,C,E", ParameterGroup::kFormat,
     {ValueKind::kSeekCurve, "; e.g. seek=3.24,0.400,383,8.00,0.008"},
     [](PluginOptions& o, const ParameterValue& v) { o.seek = v.seek; return true; },
     "seek curve in ms: A+B*sqrt(d) below D cylinders, C+E*d above",
     "Override the preset's seek curve. A seek of I<d> cylinders takes I<A> + I<B> * "
     "sqrt(I<d>) milliseconds below I<D> cylinders and I<C> + I<E> * I<d> from there on "
     "(the two-piece curve of Ruemmler and Wilkes). The hp97560's is "
     "C<seek=3.24,0.400,383,8.00,0.008>."},

    {"segment", "SIZE", ParameterGroup::kFormat,
     {ValueKind::kSize, "expected a segment size such as 512K or 1M", 1},
     [](PluginOptions& o, const ParameterValue& v) { o.segment_bytes = v.number; return true; },
     "lld: segment size of a new image, rounded to whole\n"
     "tracks (default 512K, paper 001 section 4.4)",
     "B<mode=lld> only (refused with another mode): the size of the log's segments, each "
     "written in one sequential transfer, in bytes or with a suffix as for B<size=> "
     "(default 512K: the 0.5 MB segments of paper 001, section 4.4). It is rounded to the "
     "nearest whole number of tracks (st19101: 512K is 4 tracks exactly; hp97560: 504 KiB), "
     "unless it is under half a track; it must hold at least one block and its 512-byte "
     "summary. Stored in the image."},

    {"nvram", "SIZE", ParameterGroup::kFormat,
     {ValueKind::kSize, "expected a size in bytes such as 6100000 or 8M, or 0 for no NVRAM"},
     [](PluginOptions& o, const ParameterValue& v) { o.nvram_bytes = v.number; return true; },
     "lld: NVRAM write buffer of a new image; 0: none\n"
     "(default 6100000, paper 001 section 4.4's 6.1 MB)",
     "B<mode=lld> only (refused with another mode): the size of the battery-backed write "
     "buffer, in bytes or with a suffix as for B<size=> (default 6100000: the 6.1 MB buffer "
     "of paper 001, section 4.4). A write is durable once it is in the buffer; the buffer "
     "is written to segments when it is full, and in idle time. It is kept as a region of the platters after "
     "the checkpoints, so the image grows by its size. B<0> means no NVRAM: writes gather "
     "in the open segment, and a flush writes it under the B<partial=> rule. Stored in the "
     "image."},

    {"fill", "PERCENT", ParameterGroup::kRunTime,
     {ValueKind::kWholeNumber,
      "expected the percentage an empty track is filled to, 1-100, e.g. fill=75", 1, 100},
     [](PluginOptions& o, const ParameterValue& v) {
       o.disk.vld.fill_fraction = v.u32() / 100.0;
       return true;
     },
     "vld: fill empty tracks to this before moving on (default 75)",
     "B<mode=vld>: the allocator fills an empty track until this percentage of it is in "
     "use (1 to 100, default 75), unless an empty track is sooner under the head; then the "
     "nearest empty track becomes the one it fills. With no empty track left, every block "
     "goes to the nearest free run. A track filled to the last sector makes its last holes "
     "slow to reach (paper 001, section 2.3)."},

    {"window", "CYLINDERS", ParameterGroup::kRunTime,
     {ValueKind::kWholeNumber, "expected a number of cylinders >= 1, e.g. window=32", 1, kMaxU32},
     [](PluginOptions& o, const ParameterValue& v) {
       o.disk.vld.window_cylinders = v.u32();
       return true;
     },
     "vld: cylinders written between log records; recovery after\n"
     "a crash scans only these (default 32)",
     "B<mode=vld>: every write between two log records goes into a window of this many "
     "cylinders (default 32), and the log record names it. After a crash recovery reads "
     "only the window's tracks to find what was written since the record: on st19101, 32 "
     "cylinders of 16 tracks at 6 ms a revolution, 3.1 s simulated, whatever the size of "
     "the disk. The window moves on, with a new record, when 15% of its free space is "
     "used. A wider window means fewer records and a longer recovery. On a 4 GiB st19101 "
     "disk window=2 with checkpoint_every=1024 brings recovery after a crash to 2x a clean "
     "open, and costs each synchronous write 22% more (docs/scale.md section 0a; "
     "B<vld-bench recovery> measures it)."},

    {"checkpoint_every", "N", ParameterGroup::kRunTime,
     {ValueKind::kWholeNumber,
      "expected a number of map pieces, 0 (never) or more, e.g. checkpoint_every=4096", 0,
      kMaxU32},
     [](PluginOptions& o, const ParameterValue& v) {
       o.disk.vld.checkpoint_every_map_sectors = v.u32();
       return true;
     },
     "vld: rewrite the map pieces written since the last checkpoint\n"
     "compactly once this many are scattered; bounds recovery\n"
     "after a crash (default 4096; 0: never)",
     "B<mode=vld>: eager writing scatters map sectors over the disk, and after a crash "
     "recovery reads each scattered one on its own (about a millisecond each). Once this "
     "many map pieces have a map sector written since the last checkpoint (or "
     "B<checkpoint_s> after it, or in idle time once the compactor is done), a delta "
     "checkpoint rewrites them, and half as many older pieces in turn, in groups of a "
     "track's worth placed near the head, one group with each request that follows (so "
     "that no request waits for all of it), then a log record: recovery after a crash then "
     "reads at most this many scattered map sectors, and those scattered while a delta is "
     "written. Default 4096 (on st19101 about what scanning the window "
     "costs); a 256 MiB disk has 2048 pieces and never reaches it. Each scattered piece "
     "costs about 1.5 map sector writes more. 0 turns delta checkpoints off "
     "(docs/scale.md)."},

    {"checkpoint_s", "SECONDS", ParameterGroup::kRunTime,
     {ValueKind::kWholeNumber, "expected a number of seconds, 0 (never) or more, e.g. checkpoint_s=60",
      0, 86400},
     [](PluginOptions& o, const ParameterValue& v) {
       o.disk.vld.checkpoint_every_s = static_cast<double>(v.number);
       return true;
     },
     "vld: a delta checkpoint at the latest this many simulated\n"
     "seconds after the last one, if any map piece is scattered\n"
     "(default 60; 0: only by checkpoint_every)",
     "B<mode=vld>: a delta checkpoint (see B<checkpoint_every>) is also written by the first "
     "write this many seconds of simulated time after the last checkpoint, whatever the "
     "number of scattered pieces. Default 60; 0: only B<checkpoint_every> and idle time."},

    {"track_buffer", "on|off", ParameterGroup::kRunTime,
     {ValueKind::kOnOff, kOnOffExpected},
     [](PluginOptions& o, const ParameterValue& v) { o.disk.track_buffer = v.on; return true; },
     "reads go through the drive's one-track read-ahead buffer\n"
     "(paper 001 section 4.2) (default on)",
     "With B<on> (the default) reads go through the drive's one-track read-ahead buffer: "
     "while the head is on a track the drive keeps what passes under it, and a read of "
     "that track then costs no media time, only the controller overhead. The next read of "
     "another track replaces it. Recovery and the compactor read through it too. With "
     "B<off> every read pays its seek, rotation and transfer.",
     "B<on>|B<off>"},

    {"compactor", "on|off", ParameterGroup::kRunTime,
     {ValueKind::kOnOff, kOnOffExpected},
     [](PluginOptions& o, const ParameterValue& v) {
       o.disk.vld.compactor.enabled = v.on;
       return true;
     },
     "vld: empty tracks in idle time by moving their blocks\n"
     "into holes elsewhere (default on; runs only with\n"
     "latency=sleep, after compactor_quiet_ms of no requests)",
     "B<mode=vld>: in idle time, empty tracks by moving their live blocks and map sectors "
     "into holes on tracks that hold data, so that eager writing finds empty tracks again "
     "(paper 001, section 4.2). B<on> by default. It runs only with B<latency=sleep>, after "
     "B<compactor_quiet_ms> of no requests, one block per step, so a request that arrives "
     "meanwhile waits for one step at most. With B<latency=none> it never runs.",
     "B<on>|B<off>"},

    {"compactor_policy", "P", ParameterGroup::kRunTime,
     {ValueKind::kCompactionPolicy,
      "expected compactor_policy=fewest-live, cost-benefit or random"},
     [](PluginOptions& o, const ParameterValue& v) {
       o.disk.vld.compactor.policy = *v.policy;
       return true;
     },
     "vld: which track to empty first: fewest-live,\n"
     "cost-benefit or random (default fewest-live)",
     "B<mode=vld>: which track of the window the compactor empties next: B<fewest-live> "
     "(the default: the fewest sectors to move), B<cost-benefit> (the LFS cleaner's "
     "(1 - u) * age / (1 + u), which leaves recently written tracks alone), or B<random> "
     "(the paper's; see B<seed=>).",
     "B<fewest-live>|B<cost-benefit>|B<random>"},

    {"compactor_quiet_ms", "MS", ParameterGroup::kRunTime,
     {ValueKind::kWholeNumber,
      "expected milliseconds of idle time before compacting, 0-3600000, e.g. 50", 0, 3600000},
     [](PluginOptions& o, const ParameterValue& v) { o.compactor_quiet_ms = v.u32(); return true; },
     "vld, lld: idle time before the compactor or cleaner\n"
     "starts (default 50)",
     "B<mode=vld> and B<mode=lld>: how long the drive must have been idle, in milliseconds "
     "of wall time (0 to 3600000, default 50), before the compactor (B<mode=vld>) or the "
     "segment cleaner (B<mode=lld>) starts. The time from start-up to the first request "
     "is idle time too."},

    {"partial", "PERCENT", ParameterGroup::kRunTime,
     {ValueKind::kWholeNumber, "expected a percentage of a segment from 1 to 100, e.g. 75", 1,
      100},
     [](PluginOptions& o, const ParameterValue& v) {
       o.disk.lld.partial_percent = v.u32();
       return true;
     },
     "lld: a flush writes the open segment as full at or above\n"
     "this much of it (default 75, paper 001 section 4.4)",
     "B<mode=lld> (other modes ignore it, as they do B<fill=>): the partial-segment "
     "threshold, in percent of a segment (1 to 100, default 75: LLD's, \"set to 75%\" in "
     "paper 001, section 4.4). When a flush or FUA write finds the open segment at least "
     "this full, it is written as full and closed; below it, the blocks gathered are "
     "written as a partial segment and the segment stays open. With NVRAM "
     "(B<nvram=> above 0) a flush writes no segment: the writes are already durable in "
     "the buffer."},

    {"cleaner_policy", "P", ParameterGroup::kRunTime,
     {ValueKind::kCleanerPolicy, "expected cleaner_policy=greedy or cleaner_policy=cost-benefit"},
     [](PluginOptions& o, const ParameterValue& v) {
       o.disk.lld.cleaner_policy = *v.cleaner;
       return true;
     },
     "lld: which segment the cleaner empties first: greedy or\n"
     "cost-benefit (default greedy, paper 001 section 5.3)",
     "B<mode=lld> (other modes ignore it): which segment the cleaner empties next. "
     "B<greedy> (the default: LLD's, which \"chooses less utilized segments\", paper 001, "
     "section 5.3) takes the one with the fewest live blocks; B<cost-benefit> takes the "
     "highest (1 - u) * age / (1 + u), Sprite LFS's, which leaves recently written "
     "segments alone.",
     "B<greedy>|B<cost-benefit>"},

    {"nvram_us", "US", ParameterGroup::kRunTime,
     {ValueKind::kMicroseconds, kMicrosecondsExpected},
     [](PluginOptions& o, const ParameterValue& v) {
       o.disk.lld.nvram_us_per_4k = v.real;
       return true;
     },
     "lld: simulated time to copy 4 KiB into NVRAM (default 20:\n"
     "4 KiB at 200 MB/s, the paper's workstation's memory copy)",
     "B<mode=lld> (other modes ignore it): the simulated time, in microseconds (0 to "
     "1000000, fractions allowed), of copying one 4 KiB block into the NVRAM buffer, "
     "scaled by the block size (default 20: 4 KiB at 200 MB/s, the memory-copy rate of "
     "the UltraSPARC-170 class of workstation of paper 001's measurements)."},

    {"aru_max", "SIZE", ParameterGroup::kRunTime,
     {ValueKind::kSize, "expected a size from 4K to 1G, e.g. 32M", 4096, uint64_t{1} << 30},
     [](PluginOptions& o, const ParameterValue& v) {
       o.aru_max_bytes = v.number;
       return true;
     },
     "the most one atomic recovery unit (export aru) may change\n"
     "before its flush commits it (default 32M)",
     "The most data one atomic recovery unit may hold (4K to 1G, default 32M, the largest "
     "request the plugin serves as one unit), counting every block its writes, zeroes "
     "and trims change. A request on an B<aru> connection that would take it past this "
     "fails with B<ENOSPC>; the ARU stays open and intact, and nothing committed is "
     "touched. The shadow data lives in the server's memory until the commit. See "
     "L</ATOMIC RECOVERY UNITS>."},

    {"latency", "sleep|none", ParameterGroup::kRunTime,
     {ValueKind::kText, "expected latency=sleep or latency=none"},
     [](PluginOptions& o, const ParameterValue& v) {
       if (v.text == "sleep") o.latency = LatencyMode::kSleep;
       else if (v.text == "none") o.latency = LatencyMode::kNone;
       return v.text == "sleep" || v.text == "none";
     },
     "sleep: replies leave at their simulated completion time;\n"
     "none: memory speed, simulated time only (default sleep)",
     "With B<sleep> (the default) each reply leaves when the simulated drive would have "
     "finished the request: the drive serves one request at a time and keeps turning "
     "while idle, so clients see the drive's timing. With B<none> replies leave at memory "
     "speed and simulated time is only accounted (see L</STATISTICS>), so a run is a "
     "deterministic function of its requests in the order they reach the drive; the "
     "compactor does not run. nbdkit's worker threads then only queue for the drive: "
     "with nbdkit B<--threads=1> each connection's requests reach it in the order the "
     "client sent them, for less of the host's CPU (on 2 cores, 15% less per 4 KiB write "
     "at queue depth 16: docs/benchmarks.md, section 24).",
     "B<sleep>|B<none>"},

    {"sched", "fifo|sptf", ParameterGroup::kRunTime,
     {ValueKind::kText, "expected sched=fifo or sched=sptf"},
     [](PluginOptions& o, const ParameterValue& v) {
       const std::optional<SchedPolicy> p = parse_sched_policy(v.text);
       if (p) o.sched = *p;
       return p.has_value();
     },
     "order of queued requests: fifo (arrival) or sptf (shortest\n"
     "positioning time first; latency=sleep only; default fifo)",
     "How the drive orders the requests queued while it is busy (several in flight: an "
     "iodepth above 1, or several connections), as a drive with tagged command queueing "
     "does. With B<fifo> (the default) they are served in the order they arrive. With "
     "B<sptf> (shortest positioning time first), each time the drive becomes free it "
     "serves the queued request whose seek, head switch and rotational wait from where the "
     "head is then is least: B<mode=inplace> reads and writes, and B<mode=vld> reads "
     "(through its map; its writes go near the head whatever the order). Flushes, trims "
     "and zeroes need no positioning and go first. A request that has waited longer than "
     "B<sched_aging_ms> goes before all others, oldest first. Queueing needs arrival "
     "times: with B<latency=none> requests are served in the order they reach the drive "
     "whatever B<sched> says. The statistics count the reordered requests (see "
     "L</STATISTICS>).",
     "B<fifo>|B<sptf>"},

    {"sched_aging_ms", "MS", ParameterGroup::kRunTime,
     {ValueKind::kWholeNumber, "expected milliseconds from 1 to 10000, e.g. 100", 1, 10000},
     [](PluginOptions& o, const ParameterValue& v) { o.sched_aging_ms = v.u32(); return true; },
     "sched=sptf: a request waiting longer goes first (default 100)",
     "With B<sched=sptf>: a queued request that has waited longer than this, in "
     "milliseconds of simulated time (1 to 10000, default 100, about sixteen random "
     "accesses), is served before any other, oldest first, so that no request starves."},

    {"statsfile", "PATH", ParameterGroup::kRunTime,
     {ValueKind::kNonEmpty, "must name a file"},
     [](PluginOptions& o, const ParameterValue& v) { o.statsfile = v.text; return true; },
     "JSON statistics, rewritten every second and at exit (default off)",
     "Write the drive's statistics to this file as one JSON object, every second and once "
     "more when nbdkit exits (through I<PATH>B<.tmp>, renamed over I<PATH>). See "
     "L</STATISTICS>. By default none are written. I<PATH>, I<PATH>B<.tmp> and, with a time "
     "series, I<PATH>B<.jsonl> must each be absent or a regular file that is not the image: a "
     "directory, a device, a symbolic link or the image itself is refused at start-up."},

    {"stats_interval", "SECONDS", ParameterGroup::kRunTime,
     {ValueKind::kWholeNumber, "expected seconds from 0 (no time series) to 86400, e.g. 1", 0,
      86400},
     [](PluginOptions& o, const ParameterValue& v) { o.stats_interval_s = v.u32(); return true; },
     "with statsfile=PATH: append a line of that interval's\n"
     "statistics to PATH.jsonl every SECONDS (default 1; 0: none)",
     "With B<statsfile=>I<PATH>: every this many seconds of wall time (default 1), append "
     "one JSON line to I<PATH>B<.jsonl> with what the drive did in that interval (requests, "
     "latency percentiles and histograms, per request size too) and the totals so far, and "
     "a last line for the partial interval when nbdkit exits, so that a run can be plotted "
     "over time. The file is emptied when the server starts. B<0> writes no time series. "
     "See L</STATISTICS> and docs/stats.md."},

    {"profile", "phases|none", ParameterGroup::kRunTime,
     {ValueKind::kText, "expected profile=phases or profile=none"},
     [](PluginOptions& o, const ParameterValue& v) {
       o.profile_phases = v.text == "phases";
       return v.text == "phases" || v.text == "none";
     },
     "phases: with statsfile=PATH, this host's time per write by\n"
     "phase in host_phases_us (default none)",
     "With B<phases> and B<statsfile=>I<PATH>, time the host's work on each write and flush "
     "by phase (the allocator, the map and its records, checksums and MACs, the backing "
     "file's writes and syncs, the statistics, and the rest) and write the totals and the "
     "means per write to the stats file's C<host_phases_us> (see L</STATISTICS>). These are "
     "wall times of this machine, not simulated ones. With B<none> (the default) the timers "
     "cost one test of a flag each.",
     "B<phases>|B<none>"},

    {"seed", "N", ParameterGroup::kRunTime,
     {ValueKind::kWholeNumber, "expected a whole number from 0 to 2^64 - 1, e.g. seed=42"},
     [](PluginOptions& o, const ParameterValue& v) {
       o.seed = v.number;
       o.disk.vld.compactor.seed = v.number;
       return true;
     },
     "seed for compactor_policy=random (default 0)",
     "The seed of B<compactor_policy=random> (default 0)."},
};

inline constexpr size_t kParameterCount = sizeof(kParameters) / sizeof(kParameters[0]);

// The man page's subsection heading for a group.
constexpr const char* group_heading(ParameterGroup g) {
  switch (g) {
    case ParameterGroup::kImage: return "The image";
    case ParameterGroup::kFormat: return "Format-time parameters";
    case ParameterGroup::kRunTime: return "Run-time parameters";
  }
  return "";
}

// The paragraph under a group's heading (POD).
constexpr const char* group_intro(ParameterGroup g) {
  switch (g) {
    case ParameterGroup::kImage: return "";
    case ParameterGroup::kFormat:
      return "These shape a new image and are stored in it. On an existing image they may "
             "be repeated but must agree with it; leave them out to serve the image as it "
             "is.";
    case ParameterGroup::kRunTime:
      return "These apply to this server only and may change from one run to the next.";
  }
  return "";
}

}  // namespace vld

#endif  // VLD_PLUGIN_PARAMETERS_H_
