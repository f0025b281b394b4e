#include "tools/trace/line_reader.h"

#include <cerrno>
#include <string>

#include "core/util/error.h"

namespace vld::trace {

void LineTraceReader::bad_line(const BadLine& bad) {
  if (!skip_bad_) {
    throw Error(src_->name() + ":" + std::to_string(src_->line_number()) + ": " + bad.what,
                EINVAL);
  }
  ++skipped_lines_;
}

double RelativeClock::next_us(int64_t raw) {
  if (started_ && raw < last_) {
    throw BadLine{"time " + std::to_string(raw) + " is before the previous request's time " +
                  std::to_string(last_) + "; expected times that never decrease"};
  }
  return since_first_us(raw);
}

double RelativeClock::next_us_clamped(int64_t raw) {
  return since_first_us(started_ && raw < last_ ? last_ : raw);
}

double RelativeClock::since_first_us(int64_t raw) {
  if (!started_) {
    started_ = true;
    first_ = raw;
  }
  last_ = raw;
  return static_cast<double>(raw - first_) / units_per_us_;
}

}  // namespace vld::trace
