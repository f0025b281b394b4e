#include "core/util/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
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

}  // namespace
}  // namespace vld
