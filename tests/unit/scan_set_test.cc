// ScanSet (core/vld/scan_set.h): cylinders indexed within the window (which
// wraps at the last cylinder), neighbourhoods that never leave it, and the
// bits a log record carries.
#include "core/vld/scan_set.h"

#include <gtest/gtest.h>

#include <array>

namespace vld {
namespace {

TEST(ScanSet, IndexesCylindersFromTheWindowsFirstAndWraps) {
  const ScanSet s = ScanSet::none(CylinderWindow{98, 4}, 100);  // 98, 99, 0, 1
  EXPECT_EQ(s.width(), 4u);
  EXPECT_EQ(s.index_of(98), 0u);
  EXPECT_EQ(s.index_of(99), 1u);
  EXPECT_EQ(s.index_of(0), 2u);
  EXPECT_EQ(s.index_of(1), 3u);
  EXPECT_FALSE(s.index_of(2).has_value());
  EXPECT_FALSE(s.index_of(97).has_value());
  EXPECT_FALSE(s.index_of(100).has_value()) << "past the disk";
  EXPECT_EQ(s.cylinder_at(2), 0u);
}

TEST(ScanSet, ANeighbourhoodIsACylinderAndTheOnesBesideItInTheWindow) {
  ScanSet s = ScanSet::none(CylinderWindow{10, 8}, 100);
  EXPECT_EQ(s.count(), 0u);
  s.add_neighbourhood(13);
  EXPECT_EQ(s.count(), 3u);
  EXPECT_TRUE(s.contains(12));
  EXPECT_TRUE(s.contains(13));
  EXPECT_TRUE(s.contains(14));
  EXPECT_FALSE(s.contains(15));
  s.add_neighbourhood(10);  // the window's edge: 9 is not in it
  EXPECT_TRUE(s.contains(11));
  EXPECT_FALSE(s.contains(9));
  EXPECT_EQ(s.count(), 5u);
  s.add_neighbourhood(50);  // outside the window: nothing
  s.add(60);
  EXPECT_EQ(s.count(), 5u);
  // The window's two edges, and a cylinder inside it.
  EXPECT_EQ(s.neighbourhood(0).first, 0u);
  EXPECT_EQ(s.neighbourhood(0).last, 1u);
  EXPECT_EQ(s.neighbourhood(7).first, 6u);
  EXPECT_EQ(s.neighbourhood(7).last, 7u);
  EXPECT_EQ(s.neighbourhood(3).first, 2u);
  EXPECT_EQ(s.neighbourhood(3).last, 4u);
}

TEST(ScanSet, WholeHoldsTheWindowAndOnlyIt) {
  ScanSet s = ScanSet::whole(CylinderWindow{10, 8}, 100);
  EXPECT_TRUE(s.is_whole());
  EXPECT_EQ(s.count(), 8u);
  EXPECT_TRUE(s.contains(10));
  EXPECT_TRUE(s.contains(17));
  EXPECT_FALSE(s.contains(18));
  s.add_neighbourhood(13);  // no change, no bits
  EXPECT_EQ(s.count(), 8u);
}

TEST(ScanSet, ItsBitsRoundTripThroughARecord) {
  const CylinderWindow w{5, 40};
  ScanSet s = ScanSet::none(w, 1000);
  s.add_neighbourhood(5);
  s.add(30);
  s.add_neighbourhood(44);
  std::array<unsigned char, ScanSet::kMaxCylinders / 8> bits{};
  s.encode_bits(bits.data());
  EXPECT_EQ(bits[0], 0b11);  // indices 0 and 1
  const ScanSet back = ScanSet::decode_bits(bits.data(), w, 1000);
  ASSERT_FALSE(back.is_whole());
  for (uint32_t c = 0; c < 1000; ++c) EXPECT_EQ(back.contains(c), s.contains(c)) << c;
}

TEST(ScanSet, AWindowWiderThanARecordCanNameIsAlwaysWhole) {
  const CylinderWindow wide{0, ScanSet::kMaxCylinders + 1};
  EXPECT_FALSE(ScanSet::narrow_allowed(wide, 100000));
  EXPECT_TRUE(ScanSet::narrow_allowed(wide, ScanSet::kMaxCylinders)) << "clipped to the disk";
  std::array<unsigned char, ScanSet::kMaxCylinders / 8> bits{};
  EXPECT_TRUE(ScanSet::decode_bits(bits.data(), wide, 100000).is_whole());
}

}  // namespace
}  // namespace vld
