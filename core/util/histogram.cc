#include "core/util/histogram.h"

#include <algorithm>
#include <cmath>

namespace vld {

void LatencyHistogram::add(int64_t value_ns) {
  uint64_t v = value_ns < 0 ? 0 : static_cast<uint64_t>(value_ns);
  ++buckets_[NsBuckets::index(v)];
  ++us_buckets_[UsBuckets::index(v / 1000)];
  ++count_;
  sum_ns_ += v;
  max_ns_ = std::max<int64_t>(max_ns_, static_cast<int64_t>(v));
  min_ns_ = std::min<int64_t>(min_ns_, static_cast<int64_t>(v));
}

int64_t LatencyHistogram::percentile_ns(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
  rank = std::max<uint64_t>(rank, 1);
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += buckets_[b];
    if (seen >= rank) {
      // Middle of the bucket, clamped to what was really seen.
      uint64_t lo = NsBuckets::low(b), hi = NsBuckets::high(b);
      int64_t mid = static_cast<int64_t>(lo + (hi - lo) / 2);
      return std::clamp(mid, min_ns_, max_ns_);
    }
  }
  return max_ns_;
}

std::vector<HistogramBucket> LatencyHistogram::buckets_us() const {
  std::vector<HistogramBucket> out;
  for (int i = 0; i < UsBuckets::kCount; ++i)
    if (us_buckets_[i]) out.push_back({UsBuckets::low(i), UsBuckets::high(i), us_buckets_[i]});
  return out;
}

}  // namespace vld
