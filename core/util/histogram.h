// LatencyHistogram: mean, max and percentiles of durations without keeping
// every sample. Buckets are log-linear (128 per power of two, like
// HdrHistogram), so a percentile is within 0.8% of the true sample; mean and
// max are exact.
//
// Thread-safety: not thread-safe; the owner serialises.
#ifndef VLD_CORE_UTIL_HISTOGRAM_H_
#define VLD_CORE_UTIL_HISTOGRAM_H_

#include <array>
#include <cstdint>

namespace vld {

class LatencyHistogram {
 public:
  void add(int64_t value_ns);

  uint64_t count() const { return count_; }
  double mean_ns() const { return count_ ? static_cast<double>(sum_ns_) / count_ : 0.0; }
  int64_t max_ns() const { return max_ns_; }
  int64_t min_ns() const { return count_ ? min_ns_ : 0; }
  // The value below which a fraction q (0..1) of the samples lie.
  int64_t percentile_ns(double q) const;

 private:
  static constexpr int kSubBits = 7;  // 128 buckets per power of two
  static constexpr int kBuckets = (64 - kSubBits + 1) << kSubBits;
  static int bucket_of(uint64_t v);
  static uint64_t bucket_low(int b);

  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  __int128 sum_ns_ = 0;
  int64_t max_ns_ = 0;
  int64_t min_ns_ = INT64_MAX;
};

}  // namespace vld

#endif  // VLD_CORE_UTIL_HISTOGRAM_H_
