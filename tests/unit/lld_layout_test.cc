// mode=lld's placement (core/lld/lld_layout.h): on st19101, hp97560 and
// savvio10k4 the regions are disjoint, inside the simulated cylinders, in
// whole tracks where promised; psn <-> segment round-trips; the segments
// hold the export plus the cleaner's reserve; and the refusals say which
// parameter and what will do.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <functional>

#include <fmt/format.h>
#include <string>
#include <vector>

#include "core/image_format.h"
#include "core/lld/checkpoint.h"
#include "core/lld/lld_layout.h"
#include "core/lld/nvram_log.h"
#include "core/lld/segment_summary.h"
#include "core/util/error.h"
#include "geometry/presets.h"

namespace vld {
namespace {

constexpr uint64_t kExport = 64ull << 20;
constexpr uint32_t kBlock = 4096;
constexpr uint64_t kSegment = 512 * 1024;
constexpr uint64_t kNvram = 6'100'000;  // paper 001, section 4.4: 6.1 MB

DriveGeometry preset(const char* name) {
  auto g = find_preset(name);
  EXPECT_TRUE(g.has_value()) << name;
  return *g;
}

// The image sizing every mode shares (25% spare), as plan_image would pick.
uint32_t cylinders_for(const DriveGeometry& g) { return cylinders_needed(g, kExport, kBlock, 25); }

LldLayout plan(const char* name) {
  DriveGeometry g = preset(name);
  return plan_lld_layout(g, cylinders_for(g), kExport, kBlock, kSegment, kNvram);
}

// Every property the header promises, for any layout.
void expect_sound(const LldLayout& l, uint32_t cylinders, const DriveGeometry& g) {
  const uint64_t spt = g.sectors_per_track;
  EXPECT_EQ(l.platter_sectors, uint64_t{cylinders} * g.sectors_per_cylinder());
  // Order, disjointness, whole-track starts of the system regions.
  EXPECT_EQ(l.checkpoint[0].first_psn, 0u);
  EXPECT_LE(l.checkpoint[0].end_psn(), l.checkpoint[1].first_psn);
  EXPECT_LE(l.checkpoint[1].end_psn(), l.nvram.first_psn);
  EXPECT_LE(l.nvram.end_psn(), l.segments_first_psn);
  for (const LldExtent& e : {l.checkpoint[0], l.checkpoint[1], l.nvram}) {
    EXPECT_EQ(e.first_psn % spt, 0u);
  }
  EXPECT_EQ(l.segments_first_psn, l.system_tracks * spt);
  // Sizes agree with the record code, by construction.
  EXPECT_TRUE(l.shape.valid());
  EXPECT_EQ(l.shape.segment_count, l.segment_count);
  EXPECT_EQ(l.shape.segment_sectors, l.segment_sectors);
  EXPECT_EQ(l.shape.platter_sectors, l.platter_sectors);
  EXPECT_EQ(l.shape.logical_blocks, kExport / kBlock);
  EXPECT_EQ(l.checkpoint[0].sectors, checkpoint_slot_sectors(l.shape));
  EXPECT_EQ(l.checkpoint[1].sectors, checkpoint_slot_sectors(l.shape));
  EXPECT_EQ(l.nvram.sectors, (l.nvram_bytes + 511) / 512);
  EXPECT_EQ(l.nvram_records, nvram_capacity_records(l.nvram_bytes, l.shape));
  if (l.nvram_bytes == 0) {
    // No NVRAM: an empty region where it would start, taking no track.
    EXPECT_EQ(l.nvram_records, 0u);
    EXPECT_EQ(l.nvram.first_psn, l.segments_first_psn);
  } else {
    EXPECT_GE(l.nvram_records, 1u);
  }
  // Segments: contiguous, inside the platters, whole tracks if promised.
  EXPECT_EQ(l.segments_track_aligned, l.segment_sectors % spt == 0);
  for (uint32_t s = 0; s < l.segment_count; ++s) {
    const uint64_t first = l.segment_first_psn(s);
    const uint64_t last = first + l.segment_sectors - 1;
    EXPECT_EQ(first, l.segments_first_psn + uint64_t{s} * l.segment_sectors);
    if (l.segments_track_aligned) {
      EXPECT_EQ(first % spt, 0u);
    }
    EXPECT_LT(last, l.platter_sectors);
    EXPECT_EQ(l.segment_of(first), (SegmentSector{s, 0}));
    EXPECT_EQ(l.segment_of(last), (SegmentSector{s, l.segment_sectors - 1}));
  }
  EXPECT_FALSE(l.segment_of(l.segments_first_psn - 1).has_value());
  EXPECT_FALSE(l.segment_of(0).has_value());
  EXPECT_FALSE(l.segment_of(l.segment_first_psn(l.segment_count - 1) + l.segment_sectors));
  // No more segments would fit in the tail.
  EXPECT_LT(l.platter_sectors - l.segment_first_psn(l.segment_count - 1) - l.segment_sectors,
            l.segment_sectors);
  // Capacity: the export plus the cleaner's reserve.
  const uint32_t per_segment = max_blocks_per_write(l.shape);
  EXPECT_GE(l.capacity_blocks(), kExport / kBlock + kLldCleanerReserveSegments * per_segment);
  EXPECT_GE(l.segment_count, lld_min_segments(kExport / kBlock, per_segment));
}

TEST(LldLayout, St19101SegmentsAreFourTracks) {
  DriveGeometry g = preset("st19101");
  LldLayout l = plan("st19101");
  expect_sound(l, cylinders_for(g), g);
  EXPECT_EQ(l.segment_sectors, 1024u);  // 512 KiB = 4 x 256 exactly
  EXPECT_TRUE(l.segments_track_aligned);
  EXPECT_EQ(max_blocks_per_write(l.shape), 127u);
}

TEST(LldLayout, Hp97560RoundsToFourteenTracks) {
  DriveGeometry g = preset("hp97560");
  LldLayout l = plan("hp97560");
  expect_sound(l, cylinders_for(g), g);
  EXPECT_EQ(l.segment_sectors, 14u * 72);  // 1024 / 72 = 14.2 -> 14 tracks, 504 KiB
  EXPECT_TRUE(l.segments_track_aligned);
}

TEST(LldLayout, Savvio10k4TrackLargerThanSegmentTakesOneTrack) {
  DriveGeometry g = preset("savvio10k4");
  LldLayout l = plan("savvio10k4");
  expect_sound(l, cylinders_for(g), g);
  EXPECT_EQ(l.segment_sectors, 1323u);  // 1024 / 1323 = 0.77 -> 1 track, 661.5 KiB
  EXPECT_TRUE(l.segments_track_aligned);
}

TEST(LldLayout, SegmentUnderHalfATrackKeepsItsSizeUnaligned) {
  DriveGeometry g = preset("savvio10k4");
  EXPECT_EQ(lld_segment_sectors(g, 256 * 1024, kBlock), 512u);  // 512 < 1323 / 2
  LldLayout l = plan_lld_layout(g, cylinders_for(g), kExport, kBlock, 256 * 1024, kNvram);
  expect_sound(l, cylinders_for(g), g);
  EXPECT_FALSE(l.segments_track_aligned);
}

TEST(LldLayout, RoundingRule) {
  DriveGeometry g = preset("hp97560");  // 72 sectors a track
  EXPECT_EQ(lld_segment_sectors(g, 36 * 512, 512), 72u);       // half a track rounds up
  EXPECT_EQ(lld_segment_sectors(g, 35 * 512, 512), 35u);       // under half: as asked
  EXPECT_EQ(lld_segment_sectors(g, 107 * 512, 512), 72u);      // 1.49 tracks -> 1
  EXPECT_EQ(lld_segment_sectors(g, 108 * 512, 512), 144u);     // 1.5 -> 2
  // One track would not hold a 64 KiB block and its summary: two.
  EXPECT_EQ(lld_segment_sectors(g, 100 * 512, 65536), 144u);
}

void expect_refused(const std::function<void()>& f, const std::string& names) {
  try {
    f();
    ADD_FAILURE() << "not refused: " << names;
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), EINVAL);
    EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("will do"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

TEST(LldLayout, Refusals) {
  DriveGeometry g = preset("st19101");
  const uint32_t c = cylinders_for(g);
  expect_refused([&] { plan_lld_layout(g, c, kExport, 1000, kSegment, kNvram); }, "block_bytes=1000");
  expect_refused([&] { plan_lld_layout(g, c, 100, kBlock, kSegment, kNvram); }, "export size 100");
  expect_refused([&] { plan_lld_layout(g, c, kExport, kBlock, 4096, kNvram); }, "segment=4096");
  expect_refused([&] { plan_lld_layout(g, c, kExport, kBlock, kSegment, 5000); }, "nvram=5000");
  expect_refused([&] { plan_lld_layout(g, 0, kExport, kBlock, kSegment, kNvram); },
                 "simulated_cylinders=0");
  expect_refused([&] { plan_lld_layout(g, g.cylinders + 1, kExport, kBlock, kSegment, kNvram); },
                 "simulated_cylinders=6963");
  // A nonzero NVRAM too small for a record is refused, saying that 0 means
  // none: a record is a 512-byte header and a block (format_version 3).
  for (uint64_t nvram : {1ull, 5000ull, 1024ull + 512 + 4096 - 1}) {
    expect_refused([&] { plan_lld_layout(g, c, kExport, kBlock, kSegment, nvram); },
                   fmt::format("nvram={} ", nvram));
    expect_refused([&] { plan_lld_layout(g, c, kExport, kBlock, kSegment, nvram); },
                   "nvram=0 for no NVRAM");
  }
  // Smallest acceptable ones are accepted at once.
  EXPECT_NO_THROW(plan_lld_layout(g, c, kExport, kBlock, 4096 + 512, kNvram));
  EXPECT_NO_THROW(plan_lld_layout(g, c, kExport, kBlock, kSegment, 1024 + 512 + 4096));
  EXPECT_NO_THROW(plan_lld_layout(g, c, kExport, kBlock, kSegment, 0));
  // An image of format_version 2 packs records: a 64-byte header and a block.
  EXPECT_NO_THROW(plan_lld_layout(g, c, kExport, kBlock, kSegment, 1024 + 64 + 4096,
                                  kLldPackedFormatVersion));
  expect_refused([&] { plan_lld_layout(g, c, kExport, kBlock, kSegment, 1024 + 64 + 4096 - 1,
                                       kLldPackedFormatVersion); }, "nvram=5183 ");
}

TEST(LldLayout, NoNvram) {
  for (const char* name : {"st19101", "hp97560", "savvio10k4"}) {
    DriveGeometry g = preset(name);
    const uint32_t need = lld_cylinders_needed(g, kExport, kBlock, kSegment, 0);
    EXPECT_LE(need, lld_cylinders_needed(g, kExport, kBlock, kSegment, kNvram)) << name;
    for (uint32_t cylinders : {need, cylinders_for(g)}) {
      const LldLayout l = plan_lld_layout(g, cylinders, kExport, kBlock, kSegment, 0);
      expect_sound(l, cylinders, g);
      const uint64_t slot_tracks = l.checkpoint[1].first_psn / g.sectors_per_track;
      EXPECT_EQ(l.nvram, (LldExtent{2 * slot_tracks * g.sectors_per_track, 0})) << name;
      EXPECT_EQ(l.system_tracks, 2 * slot_tracks) << name;
      // The same plan with the NVRAM (where it fits) differs only by the NVRAM's tracks.
      if (cylinders < lld_cylinders_needed(g, kExport, kBlock, kSegment, kNvram)) continue;
      const LldLayout with = plan_lld_layout(g, cylinders, kExport, kBlock, kSegment, kNvram);
      EXPECT_EQ(with.checkpoint, l.checkpoint) << name;
      EXPECT_EQ(with.nvram.first_psn, l.nvram.first_psn) << name;
      EXPECT_EQ(with.system_tracks - l.system_tracks,
                (with.nvram.sectors + g.sectors_per_track - 1) / g.sectors_per_track)
          << name;
    }
    expect_refused([&] { plan_lld_layout(g, need - 1, kExport, kBlock, kSegment, 0); },
                   fmt::format("simulated_cylinders={} will do", need));
  }
}

TEST(LldLayout, SystemAreaTracksBeforeChoosingCylinders) {
  DriveGeometry g = preset("st19101");
  // All 6962 cylinders: 27848 segments bound each slot, 1 + ceil((16 x 16384 +
  // 12 x 27848) / 512) = 1166 sectors and a journal of ceil(1165 / 4) = 292:
  // 6 tracks a slot. 6.1 MB of NVRAM is ceil(11915 / 256) = 47 tracks.
  EXPECT_EQ(lld_system_area_tracks(g, kExport, kBlock, kSegment, 0), 12u);
  EXPECT_EQ(lld_system_area_tracks(g, kExport, kBlock, kSegment, kNvram), 59u);
  for (uint64_t nvram : {uint64_t{0}, kNvram}) {
    const uint64_t tracks = lld_system_area_tracks(g, kExport, kBlock, kSegment, nvram);
    EXPECT_EQ(plan_lld_layout(g, g.cylinders, kExport, kBlock, kSegment, nvram).system_tracks,
              tracks);
    // Fewer cylinders: an upper bound (fewer segments, shorter slots).
    const uint32_t need = lld_cylinders_needed(g, kExport, kBlock, kSegment, nvram);
    for (uint32_t cylinders : {need, cylinders_for(g), g.cylinders / 2}) {
      const LldLayout l = plan_lld_layout(g, cylinders, kExport, kBlock, kSegment, nvram);
      EXPECT_LE(l.system_tracks, tracks) << cylinders;
    }
    EXPECT_LT(plan_lld_layout(g, need, kExport, kBlock, kSegment, nvram).system_tracks, tracks);
  }
  expect_refused([&] { lld_system_area_tracks(g, kExport, kBlock, kSegment, 5000); },
                 "nvram=5000");
}

TEST(LldLayout, TooFewSegmentsRefusedWithTheCylindersThatWillDo) {
  for (const char* name : {"st19101", "hp97560", "savvio10k4"}) {
    DriveGeometry g = preset(name);
    const uint32_t need = lld_cylinders_needed(g, kExport, kBlock, kSegment, kNvram);
    LldLayout l = plan_lld_layout(g, need, kExport, kBlock, kSegment, kNvram);
    expect_sound(l, need, g);
    expect_refused([&] { plan_lld_layout(g, need - 1, kExport, kBlock, kSegment, kNvram); },
                   fmt::format("simulated_cylinders={} will do", need));
    EXPECT_LE(need, cylinders_for(g)) << name << ": the shared 25% spare covers mode=lld";
  }
}

TEST(LldLayout, PrintsThePresetNumbers) {
  for (const char* name : {"st19101", "hp97560", "savvio10k4"}) {
    DriveGeometry g = preset(name);
    LldLayout l = plan(name);
    std::printf("%s: cyl %u (lld needs %u), spt %u, slot %llu sectors, nvram %llu sectors "
                "(%llu records), system %llu tracks, segment %u sectors, %u segments, "
                "capacity %llu blocks (export %llu), tail %llu sectors\n",
                name, cylinders_for(g), lld_cylinders_needed(g, kExport, kBlock, kSegment, kNvram),
                g.sectors_per_track, (unsigned long long)l.checkpoint[0].sectors,
                (unsigned long long)l.nvram.sectors, (unsigned long long)l.nvram_records,
                (unsigned long long)l.system_tracks, l.segment_sectors, l.segment_count,
                (unsigned long long)l.capacity_blocks(), (unsigned long long)(kExport / kBlock),
                (unsigned long long)(l.platter_sectors - l.segment_first_psn(l.segment_count - 1) -
                                     l.segment_sectors));
  }
}

}  // namespace
}  // namespace vld
