// Images on a span of a drive's cylinders (span=, geometry/span.h): the
// superblock's span fields, plan_image's sizing and refusals, the image
// file's size, and a disk of every mode served on the band.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/disk_controller.h"
#include "core/image.h"
#include "core/image_format.h"
#include "core/modes/mode_image.h"
#include "core/util/error.h"
#include "geometry/presets.h"

namespace vld {
namespace {

uint32_t le32(const unsigned char* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

FormatOptions savvio_span(DiskMode mode, uint64_t export_bytes, CylinderSpan span) {
  FormatOptions o;
  o.mode = mode;
  o.export_bytes = export_bytes;
  o.geometry = *find_preset("savvio10k4");
  o.span = span;
  return o;
}

std::string plan_error(const FormatOptions& o) {
  try {
    plan_image(o);
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), EINVAL);
    return e.what();
  }
  return "(planned)";
}

TEST(SpanImage, ThePlattersAreTheBandAndTheSuperblockSaysWhichCylinders) {
  const FormatOptions o = savvio_span(DiskMode::kVld, 1ull << 30, {100000, 120000});
  const Superblock sb = plan_image(o);
  EXPECT_EQ(sb.geometry, span_of(o.geometry, {100000, 120000}));
  EXPECT_EQ(sb.simulated_cylinders, 20001u);
  EXPECT_EQ(sb.spare_percent, 0u);
  EXPECT_TRUE(sb.spanned());
  EXPECT_EQ(sb.span(), (CylinderSpan{100000, 120000}));
  EXPECT_EQ(sb.drive_cylinders, 147620u);
  EXPECT_EQ(sb.image_bytes(), kPlatterOffset + 20001 * o.geometry.cylinder_bytes());

  const auto bytes = encode_superblock(sb);
  EXPECT_EQ(le32(bytes.data() + 240), 100000u);
  EXPECT_EQ(le32(bytes.data() + 244), 147620u);
  EXPECT_EQ(le32(bytes.data() + 44), 20001u);  // the band's cylinders
  Superblock back;
  std::string why;
  ASSERT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kOk) << why;
  EXPECT_TRUE(same_image(back, sb));
  EXPECT_EQ(back.span(), sb.span());
  EXPECT_EQ(back.drive_cylinders, sb.drive_cylinders);
  EXPECT_EQ(back.geometry, sb.geometry);
}

TEST(SpanImage, WithoutASpanTheFieldsAreZero) {
  FormatOptions o = savvio_span(DiskMode::kVld, 1ull << 30, {});
  o.span.reset();
  const Superblock sb = plan_image(o);
  EXPECT_FALSE(sb.spanned());
  const auto bytes = encode_superblock(sb);
  for (int i = 184; i < 248; ++i) EXPECT_EQ(bytes[i], 0) << i;
}

TEST(SpanImage, InconsistentSpanFieldsAreInvalid) {
  const Superblock sb = plan_image(savvio_span(DiskMode::kInplace, 64 << 20, {0, 99}));
  struct Case {
    uint32_t first, drive, simulated;
    const char* why;
  };
  for (const Case& k : {
           Case{147600, 147620, 100, "span of cylinders 147600 to 147699 on a drive of 147620"},
           Case{5, 0, 100, "span first cylinder without drive cylinders"},
           Case{0, 147620, 99, "simulated cylinders 99 of a span of 100"},
       }) {
    Superblock bad = sb;
    bad.span_first_cylinder = k.first;
    bad.drive_cylinders = k.drive;
    bad.simulated_cylinders = k.simulated;
    if (k.drive == 0) bad.geometry.cylinders = 147620;  // a drive's own geometry
    const auto bytes = encode_superblock(bad);
    Superblock back;
    std::string why;
    EXPECT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kInvalid) << k.why;
    EXPECT_EQ(why, k.why);
  }
}

TEST(SpanImage, RefusalsSayWhatAndWhatToDo) {
  EXPECT_EQ(plan_error(savvio_span(DiskMode::kVld, 1ull << 30, {0, 400000})),
            "span=0-400000 reaches past the drive: the savvio10k4 has 147620 cylinders "
            "(0-147619); choose cylinders within them");
  EXPECT_EQ(plan_error(savvio_span(DiskMode::kInplace, 1ull << 30, {0, 99})),
            "size=1 GiB and its metadata need 267 cylinders but span=0-99 has 100; widen "
            "span= or lower size=");
  EXPECT_EQ(plan_error(savvio_span(DiskMode::kLld, 1ull << 30, {0, 99})),
            "size=1 GiB and its metadata, with mode=lld's checkpoints and NVRAM "
            "(segment=524288, nvram=6100000), need 278 cylinders but span=0-99 has 100; "
            "widen span= or lower size=");
  // mode=vld needs room to write every block however the tracks fragment.
  const Superblock fits = plan_image(savvio_span(DiskMode::kInplace, 1ull << 30, {0, 266}));
  EXPECT_EQ(fits.simulated_cylinders, 267u);
  EXPECT_EQ(plan_error(savvio_span(DiskMode::kVld, 1ull << 30, {0, 266})),
            "span=0-266 is too narrow for mode=vld with block=4096: its 267 cylinders could "
            "hold only 261952 of the export's 262144 blocks once writes have fragmented them; "
            "widen it to at least 268 cylinders (span=0-267) or lower size=");
  // Each count named is the least that plans.
  EXPECT_EQ(plan_image(savvio_span(DiskMode::kVld, 1ull << 30, {0, 267})).simulated_cylinders,
            268u);
  EXPECT_EQ(plan_image(savvio_span(DiskMode::kLld, 1ull << 30, {0, 277})).simulated_cylinders,
            278u);
  EXPECT_NE(plan_error(savvio_span(DiskMode::kLld, 1ull << 30, {0, 276})), "(planned)");
  EXPECT_NE(plan_error(savvio_span(DiskMode::kInplace, 1ull << 30, {0, 265})), "(planned)");
}

TEST(SpanImage, ABandBeyondThe32BitSectorNumbersIsRefusedForVld) {
  // 600,000 cylinders of 6 x 1323 sectors: 4.76e9 sectors; 541,064
  // cylinders are the most below 2^32.
  FormatOptions o = savvio_span(DiskMode::kVld, 1ull << 30, {0, 599999});
  o.geometry.cylinders = 600000;
  EXPECT_EQ(plan_error(o),
            "span=0-599999 holds 2.218 TiB of platters, and mode=vld addresses at most 2 TiB of "
            "platters (2^32 - 1 sectors of 512 bytes); narrow span= to at most 541064 cylinders");
  o.span = CylinderSpan{0, 541063};
  EXPECT_EQ(plan_image(o).simulated_cylinders, 541064u);
  o.mode = DiskMode::kInplace;  // 64-bit offsets: no such limit
  o.span = CylinderSpan{0, 599999};
  EXPECT_EQ(plan_image(o).simulated_cylinders, 600000u);
}

TEST(SpanImage, TheBackingFileHoldsTheSpanOnly) {
  char dir[] = "/tmp/vld-span-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/disk.img";
  const Superblock sb = plan_image(savvio_span(DiskMode::kVld, 1ull << 30, {0, 20000}));
  {
    auto store = create_image(path, sb);
    DiskController ctl(make_disk(std::move(store), sb));
    std::vector<std::byte> block(4096, std::byte{0x5a});
    ctl.write((1ull << 30) - 4096, block, /*fua=*/true, std::nullopt);
    ctl.close();
  }
  {  // Reopened: the same band, the block where it was written.
    Superblock again;
    DiskController ctl(make_disk(open_image(path, &again), again));
    EXPECT_TRUE(same_image(again, sb));
    std::vector<std::byte> back(4096);
    ctl.read((1ull << 30) - 4096, back, std::nullopt);
    EXPECT_EQ(back, std::vector<std::byte>(4096, std::byte{0x5a}));
    ctl.close();
  }
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), sb.image_bytes());
  // The band's 20001 cylinders, not the drive's 147620: about 1/7 of it.
  EXPECT_LT(static_cast<uint64_t>(st.st_size),
            find_preset("savvio10k4")->bytes_in_cylinders(147620) / 7);
  ::unlink(path.c_str());
  ::rmdir(dir);
}

}  // namespace
}  // namespace vld
