// What the readers of tools/trace share: a LineSource, the one way a
// malformed line is handled, and the clock that turns a trace's times into
// microseconds after its first request.
//
// Thread-safety: one thread, as TraceReader.
#ifndef VLD_TOOLS_TRACE_LINE_READER_H_
#define VLD_TOOLS_TRACE_LINE_READER_H_

#include <cstdint>
#include <memory>

#include "tools/trace/fields.h"
#include "tools/trace/line_source.h"
#include "tools/trace/trace_reader.h"

namespace vld::trace {

class LineTraceReader : public TraceReader {
 public:
  uint64_t position_bytes() const override { return src_->position_bytes(); }
  uint64_t size_bytes() const override { return src_->size_bytes(); }

 protected:
  LineTraceReader(std::unique_ptr<LineSource> src, bool skip_bad)
      : src_(std::move(src)), skip_bad_(skip_bad) {}

  LineSource& src() { return *src_; }
  // The line last read was malformed: throws Error(EINVAL)
  // "FILE:LINE: what", or, with skip_bad, counts it.
  void bad_line(const BadLine& bad);

 private:
  std::unique_ptr<LineSource> src_;
  bool skip_bad_;
};

// A format whose every request is one line (fio's iolog, MSR's CSV): next()
// reads lines until parse_line() makes a request of one, handing a
// malformed line to bad_line().
class OneLineReader : public LineTraceReader {
 public:
  bool next(TraceRequest& out) override {
    std::string_view line;
    while (src().next_line(line)) {
      try {
        if (parse_line(line, out)) return true;
      } catch (const BadLine& bad) {
        bad_line(bad);
      }
    }
    return false;
  }

 protected:
  using LineTraceReader::LineTraceReader;
  // Fills `out` from a request's line and returns true; false for a line
  // that is not a request (a comment, a header). Throws BadLine.
  virtual bool parse_line(std::string_view line, TraceRequest& out) = 0;
};

// A trace's request times, integers in the trace's own unit, as
// microseconds after its first request.
class RelativeClock {
 public:
  explicit RelativeClock(double units_per_us) : units_per_us_(units_per_us) {}

  // The next request's time. Throws BadLine if `raw` is before the
  // previous request's (the clock is then unchanged).
  double next_us(int64_t raw);
  // The same, but a time before the previous request's is taken as that
  // time: for traces whose writers stamp times before serialising lines.
  double next_us_clamped(int64_t raw);

 private:
  double since_first_us(int64_t raw);

  double units_per_us_;
  bool started_ = false;
  int64_t first_ = 0;
  int64_t last_ = 0;
};

}  // namespace vld::trace

#endif  // VLD_TOOLS_TRACE_LINE_READER_H_
