// LatencyHistogram: mean, max and percentiles of durations without keeping
// every sample. Buckets are log-linear (128 per power of two, like
// HdrHistogram), so a percentile is within 0.8% of the true sample; mean and
// max are exact.
//
// For the stats file it also counts each sample in a second, coarser and
// fixed set of buckets in whole microseconds (UsBuckets below, documented in
// docs/stats.md), which buckets_us() lists: the histogram a user plots. The
// nanosecond buckets cannot be re-binned into microsecond ones exactly (a
// power of two of nanoseconds is not a whole number of microseconds), hence
// two arrays; add() stays O(1) and allocates nothing.
//
// Thread-safety: not thread-safe; the owner serialises.
#ifndef VLD_CORE_UTIL_HISTOGRAM_H_
#define VLD_CORE_UTIL_HISTOGRAM_H_

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace vld {

// Log-linear bucket indexes (HdrHistogram's shape) with 2^SubBits
// sub-buckets per power of two: a value v below 2^(SubBits + 1) has bucket
// v; above, with e = floor(log2 v) and m = v >> (e - SubBits) (in
// [2^SubBits, 2^(SubBits + 1))), bucket (e - SubBits + 1) 2^SubBits + m -
// 2^SubBits, bounds [m << (e - SubBits), (m + 1) << (e - SubBits)): each
// bucket 1/2^SubBits of its power of two.
template <int SubBits>
struct LogLinearBuckets {
  static constexpr int kSubBits = SubBits;
  static int index(uint64_t v) {
    if (v < (uint64_t{1} << kSubBits)) return static_cast<int>(v);
    const int shift = 63 - std::countl_zero(v) - kSubBits;  // bits dropped
    const uint64_t mantissa = v >> shift;                   // in [2^k, 2^(k+1))
    return ((shift + 1) << kSubBits) + static_cast<int>(mantissa - (uint64_t{1} << kSubBits));
  }
  static uint64_t low(int i) {  // inclusive
    if (i < (1 << kSubBits)) return static_cast<uint64_t>(i);
    const int shift = (i >> kSubBits) - 1;
    const uint64_t mantissa =
        (uint64_t{1} << kSubBits) + static_cast<uint64_t>(i & ((1 << kSubBits) - 1));
    return mantissa << shift;
  }
  static uint64_t high(int i) { return low(i + 1); }  // exclusive
};

// The exported bucket scheme, in whole microseconds with 16 sub-buckets per
// power of two (docs/stats.md, "Histograms"):
//   us < 32:            bucket i = us, bounds [us, us + 1)
//   us >= 32, e = floor(log2 us), m = us >> (e - 4) (16..31):
//                       bucket i = 16 (e - 3) + m - 16,
//                       bounds [m << (e - 4), (m + 1) << (e - 4))
// so a bucket is 1 us wide below 32 us and 1/16 of its power of two above
// (at most 6.25% of its low bound). A sample of t ns counts in the bucket
// with low * 1000 <= t < high * 1000 (us = floor(t / 1000)).
struct UsBuckets : LogLinearBuckets<4> {
  // floor(INT64_MAX / 1000) < 2^54: the last power of two is 2^53.
  static constexpr int kCount = (53 - kSubBits + 2) << kSubBits;
};

// One exported bucket: samples with low_us <= t < high_us.
struct HistogramBucket {
  uint64_t low_us;
  uint64_t high_us;
  uint64_t count;
  bool operator==(const HistogramBucket&) const = default;
};

class LatencyHistogram {
 public:
  void add(int64_t value_ns);

  uint64_t count() const { return count_; }
  double mean_ns() const { return count_ ? static_cast<double>(sum_ns_) / count_ : 0.0; }
  int64_t max_ns() const { return max_ns_; }
  int64_t min_ns() const { return count_ ? min_ns_ : 0; }
  // The value below which a fraction q (0..1) of the samples lie.
  int64_t percentile_ns(double q) const;
  // The non-empty UsBuckets, lowest first; their counts sum to count().
  std::vector<HistogramBucket> buckets_us() const;

 private:
  using NsBuckets = LogLinearBuckets<7>;  // 128 buckets per power of two
  static constexpr int kBuckets = (64 - NsBuckets::kSubBits + 1) << NsBuckets::kSubBits;

  std::array<uint64_t, kBuckets> buckets_{};
  std::array<uint64_t, UsBuckets::kCount> us_buckets_{};
  uint64_t count_ = 0;
  __int128 sum_ns_ = 0;
  int64_t max_ns_ = 0;
  int64_t min_ns_ = INT64_MAX;
};

}  // namespace vld

#endif  // VLD_CORE_UTIL_HISTOGRAM_H_
