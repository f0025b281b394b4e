// The superblock format (core/image_format.h), platter sizing and
// plan_image / read_superblock (core/modes/mode_image.h, core/image.h).
#include <gtest/gtest.h>
#include <xxhash.h>

#include <array>
#include <cstring>
#include <memory>
#include <string>

#include "core/store/backing_store.h"
#include "core/modes/mode_image.h"
#include "core/image_format.h"
#include "core/lld/lld_layout.h"
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

// The same fields as an lld image: format_version 2 with segment and nvram.
Superblock unusual_lld_superblock() {
  Superblock sb = unusual_superblock();
  sb.mode = DiskMode::kLld;
  sb.segment_bytes = 0x0102030405060708ull;  // every byte distinct, to catch swaps
  sb.nvram_bytes = 6'100'001;
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
  EXPECT_EQ(a.segment_bytes, b.segment_bytes);
  EXPECT_EQ(a.nvram_bytes, b.nvram_bytes);
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

// An inplace or vld superblock is format_version 1 exactly as before
// mode=lld: the encoding of unusual_superblock() hashes to what the
// encoder wrote before format_version 2 existed (commit b795900), and
// segment_bytes / nvram_bytes, meaningless for these modes, are not written.
TEST(Superblock, VersionOneIsByteIdenticalToBeforeLld) {
  Superblock sb = unusual_superblock();
  auto before = encode_superblock(sb);
  EXPECT_EQ(XXH3_64bits(before.data(), before.size()), 0x6dbed9369137d95cull);
  sb.segment_bytes = 512 * 1024;
  sb.nvram_bytes = 6'100'000;
  EXPECT_EQ(encode_superblock(sb), before) << "mode=vld must not record segment= or nvram=";
  sb.mode = DiskMode::kInplace;
  auto inplace = encode_superblock(sb);
  EXPECT_EQ(le32(inplace.data() + 8), 1u);
  for (int i = 184; i < 4088; ++i) ASSERT_EQ(inplace[i], 0) << "byte " << i;
}

// A version-1 superblock decodes as before, whatever bytes 184..4087 hold
// (version 1 never read them): segment_bytes and nvram_bytes are 0.
TEST(Superblock, VersionOneDecodesAsBefore) {
  for (DiskMode mode : {DiskMode::kInplace, DiskMode::kVld}) {
    Superblock sb = unusual_superblock();
    sb.mode = mode;
    auto bytes = encode_superblock(sb);
    put64(bytes.data() + 184, 512 * 1024);  // as if an lld superblock's fields
    put64(bytes.data() + 192, 6'100'000);
    reseal(bytes);
    Superblock back;
    back.segment_bytes = back.nvram_bytes = 99;
    std::string why = "untouched";
    ASSERT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kOk) << why;
    EXPECT_EQ(why, "untouched");
    expect_same(back, sb);
    EXPECT_EQ(back.segment_bytes, 0u);
    EXPECT_EQ(back.nvram_bytes, 0u);
  }
}

// A new lld image is format_version 4; one decoded from version 3 or 2
// bytes stays that version, byte for byte, when encoded again (its NVRAM
// records and checkpoints keep their layout: lld_shape.h).
TEST(Superblock, LldRoundTripsAsVersionsFourThreeAndTwo) {
  Superblock sb = unusual_lld_superblock();
  auto b4 = encode_superblock(sb);
  EXPECT_EQ(le32(b4.data() + 8), kLldFormatVersion);
  EXPECT_EQ(le32(b4.data() + 8), 4u);
  sb.format_version = kLldDigestFormatVersion;
  auto b3 = encode_superblock(sb);
  EXPECT_EQ(le32(b3.data() + 8), 3u);
  sb.format_version = kLldPackedFormatVersion;
  auto b = encode_superblock(sb);
  const unsigned char* p = b.data();
  EXPECT_EQ(le32(p + 8), 2u);
  for (int i = 0; i < 4088; ++i) {
    if (i < 8 || i >= 12) {
      ASSERT_EQ(p[i], b3[i]) << "byte " << i;
    }
  }
  EXPECT_EQ(le32(p + 12), 3u);  // lld
  EXPECT_EQ(le64(p + 184), 0x0102030405060708ull);
  EXPECT_EQ(le64(p + 192), 6'100'001u);
  for (int i = 200; i < 4088; ++i) ASSERT_EQ(p[i], 0) << "byte " << i;
  EXPECT_EQ(le64(p + 4088), XXH3_64bits(p, 4088));
  // Everything else where version 1 has it.
  auto v1 = encode_superblock(unusual_superblock());
  for (int i = 16; i < 184; ++i) ASSERT_EQ(p[i], v1[i]) << "byte " << i;
  Superblock back;
  std::string why;
  ASSERT_EQ(decode_superblock(p, &back, &why), DecodeResult::kOk) << why;
  expect_same(back, sb);
  EXPECT_EQ(back.version(), 2u);
  EXPECT_EQ(encode_superblock(back), b);
  ASSERT_EQ(decode_superblock(b3.data(), &back, &why), DecodeResult::kOk) << why;
  EXPECT_EQ(back.version(), 3u);
  EXPECT_EQ(encode_superblock(back), b3);
  ASSERT_EQ(decode_superblock(b4.data(), &back, &why), DecodeResult::kOk) << why;
  EXPECT_EQ(back.version(), 4u);
  EXPECT_EQ(encode_superblock(back), b4);
  for (int i = 0; i < 4088; ++i) {
    if (i < 8 || i >= 12) {
      ASSERT_EQ(b4[i], b3[i]) << "byte " << i;
    }
  }
  // nvram=0 (no NVRAM) is a valid lld superblock.
  Superblock none = sb;
  none.nvram_bytes = 0;
  auto nb = encode_superblock(none);
  ASSERT_EQ(decode_superblock(nb.data(), &back, &why), DecodeResult::kOk) << why;
  expect_same(back, none);
}

TEST(Superblock, LldFieldsAreCoveredByTheChecksum) {
  for (size_t at : {184, 187, 192, 199, 200}) {
    auto bytes = encode_superblock(unusual_lld_superblock());
    bytes[at] ^= 0x04;
    Superblock back;
    std::string why;
    EXPECT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kBadChecksum)
        << "flipped byte " << at;
  }
}

// Each version carries only its own modes; an lld superblock needs a segment.
TEST(Superblock, ModeMustBeItsVersions) {
  struct Case {
    uint32_t version;
    uint32_t mode;
  };
  for (const Case& k : {Case{1, 3}, Case{2, 1}, Case{2, 2}, Case{2, 0}, Case{2, 4}, Case{4, 2}}) {
    auto bytes = encode_superblock(unusual_lld_superblock());
    put32(bytes.data() + 8, k.version);
    put32(bytes.data() + 12, k.mode);
    reseal(bytes);
    Superblock back;
    std::string why;
    EXPECT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kInvalid)
        << "version " << k.version << " mode " << k.mode;
    EXPECT_NE(why.find("mode"), std::string::npos) << why;
  }
  auto bytes = encode_superblock(unusual_lld_superblock());
  put64(bytes.data() + 184, 0);
  reseal(bytes);
  Superblock back;
  std::string why;
  EXPECT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kInvalid);
  EXPECT_NE(why.find("segment"), std::string::npos) << why;
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

// A superblock's shape without its magic (zero from byte 200, a checksum at
// 4088) is a damaged vld superblock, of either version; anything else
// without it is not vld.
TEST(Superblock, WrongMagicIsDamagedOnlyWhereTheRestIsAVldSuperblocks) {
  for (const Superblock& sb : {unusual_superblock(), unusual_lld_superblock()}) {
    SCOPED_TRACE(mode_name(sb.mode));
    auto bytes = encode_superblock(sb);
    bytes[0] = 'X';
    Superblock back;
    std::string why;
    EXPECT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kDamagedStart);
    bytes[1000] = 1;  // not zero where a superblock is
    EXPECT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kNotVld);
    bytes = encode_superblock(sb);
    bytes[0] = 'X';
    bytes[200] = 1;  // the first byte that is zero in both versions
    EXPECT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kNotVld);
  }
  Superblock back;
  std::string why;
  std::array<unsigned char, kSuperblockBytes> zeros{};
  EXPECT_EQ(decode_superblock(zeros.data(), &back, &why), DecodeResult::kNotVld);
  std::array<unsigned char, kSuperblockBytes> text{};
  text.fill('a');
  EXPECT_EQ(decode_superblock(text.data(), &back, &why), DecodeResult::kNotVld);
}

TEST(Superblock, OtherVersionIsUnsupported) {
  for (uint32_t version : {0u, 5u, 0x01000000u}) {
    for (const Superblock& sb : {unusual_superblock(), unusual_lld_superblock()}) {
      auto bytes = encode_superblock(sb);
      put32(bytes.data() + 8, version);
      reseal(bytes);
      Superblock back;
      std::string why;
      EXPECT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kUnsupportedVersion)
          << "version " << version << ", " << mode_name(sb.mode);
    }
  }
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

// mode=vld and mode=lld name physical sectors in 32 bits (kMaxPlatterSectors):
// st19101 with cylinders=4000000 (4096 sectors a cylinder) holds at most
// 1,048,575 cylinders. With 4 KiB blocks and spare=25 the largest export
// needs exactly that many; one block more needs 1,048,576 (2^32 sectors).
constexpr uint64_t kLargestVld4k = 1745579585536;  // 1.59 TiB

FormatOptions huge_drive_options(DiskMode mode, uint64_t export_bytes) {
  FormatOptions o = good_options();
  o.mode = mode;
  o.export_bytes = export_bytes;
  o.geometry.cylinders = 4'000'000;  // seek curve: full stroke 4.7 s
  return o;
}

TEST(PlanImage, VldAtTheAddressLimitPlansAndOneBlockMoreIsRefused) {
  const Superblock sb = plan_image(huge_drive_options(DiskMode::kVld, kLargestVld4k));
  EXPECT_EQ(sb.simulated_cylinders, 1'048'575u);
  EXPECT_LE(uint64_t{sb.simulated_cylinders} * sb.geometry.sectors_per_cylinder(),
            kMaxPlatterSectors);
  const FormatOptions over = huge_drive_options(DiskMode::kVld, kLargestVld4k + 4096);
  EXPECT_EQ(cylinders_needed(over.geometry, over.export_bytes, 4096, 25), 1'048'576u);
  // The parameter, its value, the limit, and what will do: the largest
  // whole GiB that plans, and the spare that would (at the same size).
  expect_plan_error(over, {"size=1.588 TiB", "spare=25", "mode=vld", "2 TiB", "2^32",
                           "use size<=1625G", "or spare<=24"});
  FormatOptions fix = huge_drive_options(DiskMode::kVld, 1625ull << 30);
  EXPECT_NO_THROW(plan_image(fix));
  fix.export_bytes = 1626ull << 30;
  expect_plan_error(fix, {"size<=1625G"});
  fix = over;
  fix.spare_percent = 24;
  EXPECT_NO_THROW(plan_image(fix));
  // The refusal is about the image, not its checks: the unchecked plan
  // refuses too.
  EXPECT_THROW(plan_image_unchecked(over), Error);
}

TEST(PlanImage, LldHasTheAddressLimitInplaceDoesNot) {
  // mode=lld's system area makes its limit a little lower than vld's.
  expect_plan_error(huge_drive_options(DiskMode::kLld, kLargestVld4k),
                    {"mode=lld", "2^32", "use size<=", "checkpoints and NVRAM"});
  EXPECT_NO_THROW(plan_image(huge_drive_options(DiskMode::kLld, 1500ull << 30)));
  // mode=inplace addresses by 64-bit offsets: 3 TiB of export plans.
  const Superblock sb = plan_image(huge_drive_options(DiskMode::kInplace, 3ull << 40));
  EXPECT_GT(uint64_t{sb.simulated_cylinders} * sb.geometry.sectors_per_cylinder(),
            kMaxPlatterSectors);
}

TEST(Superblock, VldPlattersBeyondTheAddressLimitAreInvalid) {
  Superblock sb = plan_image(huge_drive_options(DiskMode::kVld, kLargestVld4k));
  sb.simulated_cylinders += 1;  // 2^32 sectors: as no plan makes it
  auto bytes = encode_superblock(sb);
  Superblock back;
  std::string why;
  EXPECT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kInvalid);
  EXPECT_NE(why.find("2^32"), std::string::npos) << why;
  sb.mode = DiskMode::kInplace;  // the same platters are fine in place
  bytes = encode_superblock(sb);
  EXPECT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kOk) << why;
}

// mode=lld on st19101, 64 MiB: the 41 cylinders mode=vld gets, plus the
// system area's whole cylinders. That area, sized for the whole drive
// (6962 cylinders / 4-track segments = 27848 segments): two checkpoint slots
// of 1 + ceil((16 x 16384 + 12 x 27848) / 512) = 1166 sectors, 5 tracks
// each, and the NVRAM region, ceil(6100000 / 512) = 11915 sectors in 47
// tracks: 57 tracks, 4 cylinders of 16.
TEST(PlanImage, LldIsVldsCylindersPlusTheSystemArea) {
  FormatOptions o = good_options();
  o.mode = DiskMode::kVld;
  const Superblock vld = plan_image(o);
  ASSERT_EQ(vld.simulated_cylinders, 41u);
  EXPECT_EQ(vld.segment_bytes, 0u);
  EXPECT_EQ(vld.nvram_bytes, 0u);

  o.mode = DiskMode::kLld;
  EXPECT_EQ(o.segment_bytes, 512u * 1024);  // the defaults, paper 001 section 4.4
  EXPECT_EQ(o.nvram_bytes, 6'100'000u);
  const Superblock sb = plan_image(o);
  EXPECT_EQ(sb.mode, DiskMode::kLld);
  EXPECT_EQ(sb.segment_bytes, 512u * 1024);
  EXPECT_EQ(sb.nvram_bytes, 6'100'000u);
  EXPECT_EQ(sb.export_bytes, 64u << 20);
  EXPECT_EQ(sb.spare_percent, 25u);
  const DriveGeometry& g = o.geometry;
  EXPECT_EQ(lld_system_area_tracks(g, sb.export_bytes, 4096, sb.segment_bytes, sb.nvram_bytes),
            59u);
  EXPECT_EQ(plan_lld_layout(g, g.cylinders, sb.export_bytes, 4096, sb.segment_bytes,
                            sb.nvram_bytes).system_tracks,
            59u);
  EXPECT_EQ(sb.simulated_cylinders, 41u + 4);
  EXPECT_GE(sb.simulated_cylinders,
            lld_cylinders_needed(g, sb.export_bytes, 4096, sb.segment_bytes, sb.nvram_bytes));
  // The layout LldDisk will plan from it exists, and holds the export.
  const LldLayout layout = plan_lld_layout(g, sb.simulated_cylinders, sb.export_bytes, 4096,
                                           sb.segment_bytes, sb.nvram_bytes);
  EXPECT_GE(layout.capacity_blocks(), sb.export_bytes / 4096);
  // And it is what the image records.
  auto bytes = encode_superblock(sb);
  Superblock back;
  std::string why;
  ASSERT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kOk) << why;
  expect_same(back, sb);
}

// Where the segments, not the spare, set the size (few large segments and
// no spare), the platters are what the layout needs.
TEST(PlanImage, LldIsAtLeastWhatTheLayoutNeeds) {
  FormatOptions o = good_options();
  o.mode = DiskMode::kLld;
  o.spare_percent = 0;
  o.segment_bytes = 8 << 20;
  const Superblock sb = plan_image(o);
  const uint32_t least =
      lld_cylinders_needed(o.geometry, o.export_bytes, 4096, o.segment_bytes, o.nvram_bytes);
  EXPECT_GT(least, cylinders_needed(o.geometry, o.export_bytes, 4096, 0) + 4);
  EXPECT_EQ(sb.simulated_cylinders, least);
}

TEST(PlanImage, LldRefusesBadSegmentNvramAndSizeNamingTheParameter) {
  FormatOptions o = good_options();
  o.mode = DiskMode::kLld;
  o.segment_bytes = 4096;  // no room for the summary beside a block
  expect_plan_error(o, {"segment=4096"});
  o = good_options();
  o.mode = DiskMode::kLld;
  o.nvram_bytes = 100;  // not one record
  expect_plan_error(o, {"nvram=100"});
  o = good_options();
  o.mode = DiskMode::kLld;
  // 10.75 GiB: mode=vld's 6934 cylinders fit the drive's 6962, not with
  // the system area's (sized for 2.8 M blocks) on top.
  o.export_bytes = 11008ull << 20;
  expect_plan_error(o, {"size=", "nvram=", "cylinders", "6962"});
  o.mode = DiskMode::kVld;
  EXPECT_EQ(plan_image(o).simulated_cylinders, 6934u);
  o = good_options();
  o.mode = DiskMode::kLld;
  o.nvram_bytes = 20ull << 30;  // an NVRAM region larger than the drive
  expect_plan_error(o, {"size=", "nvram=", "6962"});
}

// nvram=0 is a disk without NVRAM: no region, only the checkpoint slots
// (10 tracks: one more cylinder than mode=vld's 41).
TEST(PlanImage, LldWithoutNvram) {
  FormatOptions o = good_options();
  o.mode = DiskMode::kLld;
  o.nvram_bytes = 0;
  const Superblock sb = plan_image(o);
  EXPECT_EQ(sb.nvram_bytes, 0u);
  EXPECT_EQ(sb.simulated_cylinders, 42u);
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
      EXPECT_NE(std::string(e.what()).find("not an image of the vld plugin"), std::string::npos) << e.what();
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

// format_store writes an lld image whose superblock reads back as planned.
TEST(ReadSuperblock, ReadsAFormattedLldImage) {
  FormatOptions o = good_options();
  o.mode = DiskMode::kLld;
  o.segment_bytes = 1 << 20;
  o.nvram_bytes = 1 << 20;
  const Superblock sb = plan_image(o);
  MemoryBackingStore store(sb.image_bytes());
  format_store(store, sb);
  expect_same(read_superblock(store, "img"), sb);
}

}  // namespace
}  // namespace vld
