// PairedLineReader: a reader for a format that logs a request twice, at
// its arrival and at its completion (blkparse, the nbdkit log filter). The
// format's parse_line() feeds an ArrivalOrder; next() hands out what it
// releases, in arrival order, with times relative to the first request.
//
// Times are clamped, not checked: in both formats the lines of different
// CPUs or threads can be slightly out of time order (each reader says
// why).
//
// Thread-safety: one thread, as TraceReader.
#ifndef VLD_TOOLS_TRACE_PAIRED_READER_H_
#define VLD_TOOLS_TRACE_PAIRED_READER_H_

#include <memory>
#include <string_view>

#include "tools/trace/arrival_order.h"
#include "tools/trace/line_reader.h"

namespace vld::trace {

class PairedLineReader : public LineTraceReader {
 public:
  bool next(TraceRequest& out) override {
    for (;;) {
      int64_t raw_time = 0;
      if (order_.pop(out, raw_time)) {
        out.time_us = clock_.next_us_clamped(raw_time);
        return true;
      }
      if (at_end_) return false;
      std::string_view line;
      if (!src().next_line(line)) {
        order_.drop_in_flight();
        at_end_ = true;
        continue;
      }
      try {
        parse_line(line);
      } catch (const BadLine& bad) {
        bad_line(bad);
      }
    }
  }

 protected:
  PairedLineReader(std::unique_ptr<LineSource> src, bool skip_bad, double units_per_us)
      : LineTraceReader(std::move(src), skip_bad), clock_(units_per_us) {}

  // Reads one line into order(); throws BadLine if it is malformed, and
  // then changes nothing.
  virtual void parse_line(std::string_view line) = 0;
  ArrivalOrder& order() { return order_; }

 private:
  ArrivalOrder order_;
  RelativeClock clock_;
  bool at_end_ = false;
};

}  // namespace vld::trace

#endif  // VLD_TOOLS_TRACE_PAIRED_READER_H_
