#include "core/util/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <random>
#include <vector>

namespace vld {
namespace {

TEST(LatencyHistogram, EmptyIsZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.mean_ns(), 0.0);
  EXPECT_EQ(h.percentile_ns(0.5), 0);
}

TEST(LatencyHistogram, MeanAndMaxAreExact) {
  LatencyHistogram h;
  for (int64_t v : {100, 200, 300, 4'000'000}) h.add(v);
  EXPECT_EQ(h.count(), 4u);
  EXPECT_DOUBLE_EQ(h.mean_ns(), (100 + 200 + 300 + 4'000'000) / 4.0);
  EXPECT_EQ(h.max_ns(), 4'000'000);
  EXPECT_EQ(h.min_ns(), 100);
}

TEST(LatencyHistogram, PercentilesWithinOnePercentOfSorted) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(12.0, 1.0);  // ~ 160 us median
  std::vector<int64_t> v;
  LatencyHistogram h;
  for (int i = 0; i < 100000; ++i) {
    int64_t x = static_cast<int64_t>(dist(rng));
    v.push_back(x);
    h.add(x);
  }
  std::sort(v.begin(), v.end());
  for (double q : {0.5, 0.9, 0.99}) {
    double truth = static_cast<double>(v[static_cast<size_t>(q * v.size()) - 1]);
    EXPECT_NEAR(static_cast<double>(h.percentile_ns(q)), truth, truth * 0.01) << "q=" << q;
  }
}

// The exported buckets (UsBuckets, docs/stats.md) of samples on and just
// below bucket edges, 0, a negative and the largest, computed by hand from
// the formula: below 32 us one bucket per us; above, e = floor(log2 us),
// m = us >> (e - 4), bounds [m << (e - 4), (m + 1) << (e - 4)).
TEST(LatencyHistogram, ExportedBucketsMatchTheDocumentedScheme) {
  LatencyHistogram h;
  for (int64_t ns : {int64_t{0}, int64_t{999}, int64_t{-5},  // [0, 1)
                     int64_t{1000},                           // [1, 2)
                     int64_t{31'999},                         // 31 us: [31, 32)
                     int64_t{32'000}, int64_t{33'999},        // e 5, m 16: [32, 34)
                     int64_t{34'000},                         // [34, 36)
                     int64_t{63'999},                         // 63 = 31 << 1: [62, 64)
                     int64_t{64'000},                         // e 6, m 16: [64, 68)
                     int64_t{100'000},                        // 100 = 25 << 2: [100, 104)
                     int64_t{4'095'999},                      // 4095 >> 7 = 31: [3968, 4096)
                     int64_t{4'096'000},                      // e 12, m 16: [4096, 4352)
                     int64_t{5'000'000},                      // 5000 >> 8 = 19: [4864, 5120)
                     INT64_MAX})                              // e 53, m 16
    h.add(ns);
  const uint64_t top = uint64_t{1} << 53;
  const std::vector<HistogramBucket> want = {
      {0, 1, 3},       {1, 2, 1},       {31, 32, 1},       {32, 34, 2},
      {34, 36, 1},     {62, 64, 1},     {64, 68, 1},       {100, 104, 1},
      {3968, 4096, 1}, {4096, 4352, 1}, {4864, 5120, 1},   {top, top / 16 * 17, 1}};
  EXPECT_EQ(h.buckets_us(), want);
  EXPECT_EQ(h.count(), 15u);
}

// Every bucket's bounds: contiguous, index() maps both ends into it, and a
// bucket is 1 us wide below 32 us and 1/16 of its power of two above.
TEST(LatencyHistogram, ExportedBucketsTileTheRange) {
  EXPECT_EQ(UsBuckets::low(0), 0u);
  for (int i = 0; i < UsBuckets::kCount; ++i) {
    const uint64_t lo = UsBuckets::low(i), hi = UsBuckets::high(i);
    ASSERT_LT(lo, hi) << i;
    EXPECT_EQ(UsBuckets::index(lo), i);
    EXPECT_EQ(UsBuckets::index(hi - 1), i);
    if (lo < 32) EXPECT_EQ(hi - lo, 1u) << i;
    else EXPECT_EQ((hi - lo) * 16, uint64_t{1} << (63 - __builtin_clzll(lo))) << i;
  }
  // The largest sample lands in the last power of two, 2^53 us, whose
  // buckets end at 2^54.
  EXPECT_EQ(UsBuckets::index(static_cast<uint64_t>(INT64_MAX) / 1000), UsBuckets::kCount - 16);
  EXPECT_EQ(UsBuckets::high(UsBuckets::kCount - 1), uint64_t{1} << 54);
}

}  // namespace
}  // namespace vld
