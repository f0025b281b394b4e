// The superblock format (core/image_format.h), platter sizing and
// plan_image / read_superblock (core/image.h).
#include <gtest/gtest.h>
#include <xxhash.h>

#include <array>
#include <cstring>
#include <memory>
#include <string>

#include "core/store/backing_store.h"
#include "core/image.h"
#include "core/image_format.h"
#include "core/util/error.h"
#include "geometry/presets.h"

namespace vld {
namespace {

uint32_t le32(const unsigned char* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
uint64_t le64(const unsigned char* p) { return uint64_t{le32(p)} | uint64_t{le32(p + 4)} << 32; }
double f64(const unsigned char* p) {
  uint64_t u = le64(p);
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}
void put32(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
void put64(unsigned char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
// Recomputes the checksum over [0, 4088), so that a field edit is seen by
// the field checks rather than the checksum.
void reseal(std::array<unsigned char, kSuperblockBytes>& b) {
  put64(b.data() + 4088, XXH3_64bits(b.data(), 4088));
}

// Every field set to a distinctive value that still passes validation.
Superblock unusual_superblock() {
  Superblock sb;
  sb.mode = DiskMode::kVld;
  sb.export_bytes = 3 << 20;
  sb.block_bytes = 8192;
  sb.spare_percent = 37;
  sb.simulated_cylinders = 9;
  DriveGeometry& g = sb.geometry;
  g.name = "round-trip-geometry";
  g.sectors_per_track = 300;
  g.tracks_per_cylinder = 5;
  g.cylinders = 1234;
  g.rpm = 7200;
  g.track_skew_sectors = 17;
  g.cylinder_skew_sectors = 29;
  g.head_switch = SimDuration{987'654};
  g.controller_overhead = SimDuration{123'457};
  // Doubles that no short decimal represents, to see every bit survive.
  g.seek = SeekCurve(0.1 + 0.2, 1.0 / 3, 123, 4.0 + 1.0 / 7, 0.001 / 3);
  for (size_t i = 0; i < sb.secret.size(); ++i) sb.secret[i] = static_cast<unsigned char>(i * 7 + 1);
  sb.platter_offset = 2 << 20;
  return sb;
}

void expect_same(const Superblock& a, const Superblock& b) {
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.export_bytes, b.export_bytes);
  EXPECT_EQ(a.block_bytes, b.block_bytes);
  EXPECT_EQ(a.spare_percent, b.spare_percent);
  EXPECT_EQ(a.simulated_cylinders, b.simulated_cylinders);
  EXPECT_EQ(a.geometry, b.geometry);  // every field, incl. name and seek doubles
  EXPECT_EQ(a.geometry.seek.a_ms(), b.geometry.seek.a_ms());
  EXPECT_EQ(a.geometry.seek.e_ms(), b.geometry.seek.e_ms());
  EXPECT_EQ(a.secret, b.secret);
  EXPECT_EQ(a.platter_offset, b.platter_offset);
}

TEST(Superblock, RoundTripsEveryField) {
  Superblock sb = unusual_superblock();
  auto bytes = encode_superblock(sb);
  ASSERT_EQ(bytes.size(), 4096u);
  Superblock back;
  std::string why;
  ASSERT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kOk) << why;
  expect_same(back, sb);
}

TEST(Superblock, RoundTripsEveryPresetPlan) {
  for (const char* name : {"hp97560", "st19101", "savvio10k4"}) {
    FormatOptions o;
    o.export_bytes = 256 << 20;
    o.geometry = *find_preset(name);
    Superblock sb = plan_image(o);
    auto bytes = encode_superblock(sb);
    Superblock back;
    std::string why;
    ASSERT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kOk) << name << why;
    expect_same(back, sb);
  }
}

TEST(Superblock, LayoutIsTheDocumentedOne) {
  Superblock sb = unusual_superblock();
  auto b = encode_superblock(sb);
  const unsigned char* p = b.data();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(p), 8), "VLDIMAGE");
  EXPECT_EQ(le32(p + 8), kFormatVersion);
  EXPECT_EQ(le32(p + 12), 2u);  // vld
  EXPECT_EQ(le64(p + 16), 3u << 20);
  EXPECT_EQ(le32(p + 24), 8192u);
  EXPECT_EQ(le32(p + 28), 37u);
  EXPECT_EQ(le32(p + 32), 9u);
  EXPECT_EQ(le32(p + 36), 300u);
  EXPECT_EQ(le32(p + 40), 5u);
  EXPECT_EQ(le32(p + 44), 1234u);
  EXPECT_EQ(le32(p + 48), 7200u);
  EXPECT_EQ(le32(p + 52), 17u);
  EXPECT_EQ(le32(p + 56), 29u);
  EXPECT_EQ(le32(p + 60), 123u);
  EXPECT_EQ(le64(p + 64), 987'654u);
  EXPECT_EQ(le64(p + 72), 123'457u);
  EXPECT_EQ(f64(p + 80), 0.1 + 0.2);
  EXPECT_EQ(f64(p + 88), 1.0 / 3);
  EXPECT_EQ(f64(p + 96), 4.0 + 1.0 / 7);
  EXPECT_EQ(f64(p + 104), 0.001 / 3);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(p + 112)), "round-trip-geometry");
  for (int i = 112 + 19; i < 144; ++i) EXPECT_EQ(p[i], 0) << "name padding at " << i;
  for (int i = 0; i < 32; ++i) EXPECT_EQ(p[144 + i], i * 7 + 1);
  EXPECT_EQ(le64(p + 176), 2u << 20);
  for (int i = 184; i < 4088; ++i) ASSERT_EQ(p[i], 0) << "byte " << i;
  EXPECT_EQ(le64(p + 4088), XXH3_64bits(p, 4088));  // XXH3-64 of [0, 4088)
}

TEST(Superblock, NameOfThirtyOneCharactersRoundTrips) {
  Superblock sb = unusual_superblock();
  sb.geometry.name = std::string(31, 'n');
  auto bytes = encode_superblock(sb);
  Superblock back;
  std::string why;
  ASSERT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kOk) << why;
  EXPECT_EQ(back.geometry.name, sb.geometry.name);
}

TEST(Superblock, FlippedByteIsABadChecksum) {
  Superblock sb = unusual_superblock();
  for (size_t at : {8, 12, 20, 83, 115, 150, 180, 1000, 4087, 4088, 4095}) {
    auto bytes = encode_superblock(sb);
    bytes[at] ^= 0x10;
    Superblock back;
    std::string why;
    EXPECT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kBadChecksum)
        << "flipped byte " << at;
  }
}

// A superblock's shape without its magic (zero from byte 184, a checksum at
// 4088) is a damaged vld superblock; anything else without it is not vld.
TEST(Superblock, WrongMagicIsDamagedOnlyWhereTheRestIsAVldSuperblocks) {
  Superblock sb = unusual_superblock();
  auto bytes = encode_superblock(sb);
  bytes[0] = 'X';
  Superblock back;
  std::string why;
  EXPECT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kDamagedStart);
  bytes[1000] = 1;  // not zero where a superblock is
  EXPECT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kNotVld);
  std::array<unsigned char, kSuperblockBytes> zeros{};
  EXPECT_EQ(decode_superblock(zeros.data(), &back, &why), DecodeResult::kNotVld);
  std::array<unsigned char, kSuperblockBytes> text{};
  text.fill('a');
  EXPECT_EQ(decode_superblock(text.data(), &back, &why), DecodeResult::kNotVld);
}

TEST(Superblock, OtherVersionIsUnsupported) {
  auto bytes = encode_superblock(unusual_superblock());
  put32(bytes.data() + 8, kFormatVersion + 1);
  reseal(bytes);
  Superblock back;
  std::string why;
  EXPECT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kUnsupportedVersion);
}

TEST(Superblock, InvalidFieldsAreNamed) {
  struct Case {
    size_t at;
    uint32_t value;
    const char* named;
  };
  const Case cases[] = {
      {12, 3, "mode"},            // neither inplace nor vld
      {24, 3000, "block"},        // not a power of two
      {24, 256, "block"},         // too small
      {32, 0, "cylinders"},       // no platters
      {32, 2000, "cylinders"},    // more than the drive has
      {36, 4, "geometry"},        // sectors per track
      {48, 10, "geometry"},       // rpm
  };
  for (const Case& k : cases) {
    auto bytes = encode_superblock(unusual_superblock());
    put32(bytes.data() + k.at, k.value);
    reseal(bytes);
    Superblock back;
    std::string why;
    EXPECT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kInvalid)
        << "offset " << k.at << " = " << k.value;
    EXPECT_NE(why.find(k.named), std::string::npos) << why;
  }
  struct Case64 {
    size_t at;
    uint64_t value;
    const char* named;
  };
  const Case64 cases64[] = {
      {16, 0, "export"},
      {16, (3 << 20) + 512, "export"},  // not a multiple of the block
      {16, 9ull * 300 * 5 * 512 + 8192, "export"},  // larger than the platters
      {176, 512, "platter"},           // inside the superblock
      {176, (1 << 20) + 100, "platter"},  // not sector-aligned
  };
  for (const Case64& k : cases64) {
    auto bytes = encode_superblock(unusual_superblock());
    put64(bytes.data() + k.at, k.value);
    reseal(bytes);
    Superblock back;
    std::string why;
    EXPECT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kInvalid)
        << "offset " << k.at << " = " << k.value;
    EXPECT_NE(why.find(k.named), std::string::npos) << why;
  }
}

// ------------------------------------------------------------- sizing

TEST(Sizing, MetadataAllowanceIsTwoMapSectorsPer32Blocks) {
  // 16384 blocks -> 16384 / 32 = 512 map sectors (pieces), two copies.
  EXPECT_EQ(metadata_allowance_bytes(64 << 20, 4096), 2u * 512 * 512);
  EXPECT_EQ(metadata_allowance_bytes(32 * 4096, 4096), 2u * 1 * 512);
  EXPECT_EQ(metadata_allowance_bytes(33 * 4096, 4096), 2u * 2 * 512);
  EXPECT_EQ(metadata_allowance_bytes(1ull << 30, 65536), 2u * 512 * 512);  // 16384 blocks
}

TEST(Sizing, CylindersNeededByHand) {
  // See drive_model_test.cc for the arithmetic: payload * 1.25 over the
  // cylinder size, rounded up.
  EXPECT_EQ(cylinders_needed(*find_preset("st19101"), 64 << 20, 4096, 25), 41u);
  EXPECT_EQ(cylinders_needed(*find_preset("hp97560"), 32 << 20, 4096, 25), 61u);
  EXPECT_EQ(cylinders_needed(*find_preset("savvio10k4"), 32 << 20, 4096, 25), 11u);
  // 1 GiB of st19101: (1 GiB + 2 * 8192 * 512) * 1.25 = 1,352,663,040 bytes
  // over 2 MiB cylinders = 645.0 -> 645.
  EXPECT_EQ(cylinders_needed(*find_preset("st19101"), 1ull << 30, 4096, 25), 645u);
  // No spare: just the payload. 2 MiB of export needs 2 MiB + 2 * 16 * 512 bytes.
  EXPECT_EQ(cylinders_needed(*find_preset("st19101"), 2 << 20, 4096, 0), 2u);
}

TEST(Sizing, WholeCylindersThatFitAndAFullExportIsAtMost80Percent) {
  const uint64_t sizes[] = {4096, 1 << 20, 7 << 20, 64 << 20, 100'003ull * 4096, 1ull << 30,
                            5ull << 30};
  for (const char* name : {"hp97560", "st19101", "savvio10k4"}) {
    DriveGeometry g = *find_preset(name);
    for (uint64_t size : sizes) {
      for (uint32_t spare : {0u, 10u, 25u, 100u}) {
        uint32_t c = cylinders_needed(g, size, 4096, spare);
        uint64_t blocks = size / 4096;
        uint64_t payload = size + 2 * ((blocks + 31) / 32) * 512;
        double wanted = static_cast<double>(payload) * (100 + spare) / 100;
        double cyl = static_cast<double>(g.cylinder_bytes());
        EXPECT_GE(c * cyl, wanted) << name << " size=" << size << " spare=" << spare;
        EXPECT_LT((c - 1) * cyl, wanted) << name << " size=" << size << " spare=" << spare;
        // Utilization of a full export.
        double util = static_cast<double>(size) / (c * cyl);
        EXPECT_LE(util, 100.0 / (100 + spare) + 1e-12) << name << " size=" << size;
        if (spare == 25) {
          EXPECT_LE(util, 0.80) << name << " size=" << size;
          // And in blocks, as the stats report it.
          FormatOptions o;
          o.export_bytes = size;
          o.geometry = g;
          if (c <= g.cylinders) {
            Superblock sb = plan_image(o);
            EXPECT_EQ(sb.simulated_cylinders, c);
            EXPECT_LE(static_cast<double>(blocks) / sb.physical_blocks(), 0.80);
          }
        }
      }
    }
  }
}

// --------------------------------------------------------- plan_image

FormatOptions good_options() {
  FormatOptions o;
  o.mode = DiskMode::kInplace;
  o.export_bytes = 64 << 20;
  o.block_bytes = 4096;
  o.spare_percent = 25;
  o.geometry = *find_preset("st19101");
  return o;
}

TEST(PlanImage, FillsTheSuperblock) {
  FormatOptions o = good_options();
  o.mode = DiskMode::kVld;
  Superblock sb = plan_image(o);
  EXPECT_EQ(sb.mode, DiskMode::kVld);
  EXPECT_EQ(sb.export_bytes, 64u << 20);
  EXPECT_EQ(sb.block_bytes, 4096u);
  EXPECT_EQ(sb.spare_percent, 25u);
  EXPECT_EQ(sb.simulated_cylinders, 41u);
  EXPECT_EQ(sb.geometry, o.geometry);
  EXPECT_EQ(sb.platter_offset, 1u << 20);
  EXPECT_EQ(sb.image_bytes(), (1u << 20) + 41ull * 2 * 1024 * 1024);
  EXPECT_EQ(sb.physical_blocks(), 41u * 512);
  // A fresh random secret per image.
  Superblock other = plan_image(o);
  EXPECT_NE(sb.secret, other.secret);
  EXPECT_NE(sb.secret, (std::array<unsigned char, 32>{}));
}

void expect_plan_error(const FormatOptions& o, std::initializer_list<const char*> words) {
  try {
    plan_image(o);
    ADD_FAILURE() << "plan_image accepted the options";
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), EINVAL) << e.what();
    for (const char* w : words)
      EXPECT_NE(std::string(e.what()).find(w), std::string::npos)
          << "\"" << e.what() << "\" does not mention " << w;
  }
}

TEST(PlanImage, RejectsBadValuesNamingTheParameter) {
  FormatOptions o = good_options();
  o.export_bytes = 0;
  expect_plan_error(o, {"size="});
  o = good_options();
  o.export_bytes = 4097;
  expect_plan_error(o, {"size=", "4096"});
  for (uint32_t b : {0u, 256u, 1000u, 3000u, 131072u}) {
    o = good_options();
    o.block_bytes = b;
    expect_plan_error(o, {"block="});
  }
  o = good_options();
  o.spare_percent = 1001;
  expect_plan_error(o, {"spare="});
  o = good_options();
  o.geometry.rpm = 1;
  expect_plan_error(o, {"geometry", "rpm"});
}

TEST(PlanImage, RejectsAnExportThatDoesNotFitTheDrive) {
  // st19101: 6962 cylinders of 2 MiB = 13.6 GiB; 16 GiB * 1.25 needs more.
  FormatOptions o = good_options();
  o.export_bytes = 16ull << 30;
  expect_plan_error(o, {"size=", "cylinders", "6962"});
  // The largest that fits with 25% spare still plans. With no spare,
  // 13 GiB does; with 25% it does not.
  o.export_bytes = 13ull << 30;
  o.spare_percent = 0;
  EXPECT_EQ(plan_image(o).simulated_cylinders,
            cylinders_needed(o.geometry, 13ull << 30, 4096, 0));
  o.spare_percent = 25;
  expect_plan_error(o, {"spare="});
}

// ------------------------------------------------------ read_superblock

TEST(ReadSuperblock, ChecksTheStore) {
  Superblock sb = plan_image(good_options());
  auto bytes = encode_superblock(sb);
  {
    MemoryBackingStore store(sb.image_bytes());
    store.write(0, std::as_bytes(std::span(bytes)));
    Superblock back = read_superblock(store, "img");
    expect_same(back, sb);
  }
  {
    MemoryBackingStore store(sb.image_bytes() - 512);  // truncated
    store.write(0, std::as_bytes(std::span(bytes)));
    try {
      read_superblock(store, "img");
      ADD_FAILURE() << "accepted a truncated image";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    }
  }
  {
    MemoryBackingStore store(sb.image_bytes());  // all zeros
    try {
      read_superblock(store, "img");
      ADD_FAILURE() << "accepted zeros";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not a vld image"), std::string::npos) << e.what();
    }
  }
  {
    MemoryBackingStore store(sb.image_bytes());
    bytes[40] ^= 1;
    store.write(0, std::as_bytes(std::span(bytes)));
    try {
      read_superblock(store, "img");
      ADD_FAILURE() << "accepted a damaged superblock";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace vld
