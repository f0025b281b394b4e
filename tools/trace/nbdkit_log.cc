// nbdkit's log filter, logfile= (man nbdkit-log-filter, "LOG FILE
// FORMAT"; the filter's filters/log/log.c and output.c): a line when a
// request is called and one when it returns,
//
//   2026-12-06 17:26:41.636277 connection=1 Write id=1 offset=0x0 count=0x1000 fua=1 ...
//   2026-12-06 17:26:41.636324 connection=1 ...Write id=1 return=0
//
// TIME is UTC to the microsecond (gmtime_r and tv_usec in output.c); id
// is unique within its connection. A Read, Write, Zero, Trim or Flush is
// taken from its call line (arrival = the call's time; offset= and count=
// are hexadecimal bytes; fua=1 on Write, Zero and Trim) and replayed once
// its return line says return=0; one that failed (return=-1) or never
// returned is not. Zero's trim= and fast= are not kept. Every other line
// (ListExports, Ready, Fork, Preconnect, Connect, Extents, Cache,
// Disconnect, and whatever a later nbdkit adds) is passed over.
// docs/traces.md, "nbdkit log filter".
//
// Times are clamped (paired_reader.h): output() reads the clock before it
// takes the log file's lock, so threads serving requests in parallel can
// write their lines slightly out of time order.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tools/trace/paired_reader.h"
#include "tools/trace/readers.h"

namespace vld::trace {

namespace {

constexpr const char* kCallShape =
    "'DATE TIME connection=N ACTION id=N offset=0x... count=0x... [fua=0|1] ...'";
constexpr const char* kReturnShape = "'DATE TIME connection=N ...ACTION id=N return=N ...'";

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant,
// "chrono-Compatible Low-Level Date Algorithms", days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool digits_at(std::string_view s, size_t pos, size_t n, unsigned& out) {
  return pos + n <= s.size() && parse_number(s.substr(pos, n), out);
}

// Days since 1970 of "YYYY-MM-DD", or false.
bool parse_date(std::string_view date, int64_t& days) {
  unsigned y, m, d;
  if (date.size() != 10 || date[4] != '-' || date[7] != '-' || !digits_at(date, 0, 4, y) ||
      !digits_at(date, 5, 2, m) || !digits_at(date, 8, 2, d)) {
    return false;
  }
  if (m < 1 || m > 12 || d < 1 || d > 31) return false;
  days = days_from_civil(y, m, d);
  return true;
}

// Microseconds since midnight of "HH:MM:SS.UUUUUU", or false.
bool parse_clock(std::string_view time, int64_t& us) {
  unsigned h, m, s, frac;
  if (time.size() != 15 || time[2] != ':' || time[5] != ':' || time[8] != '.' ||
      !digits_at(time, 0, 2, h) || !digits_at(time, 3, 2, m) || !digits_at(time, 6, 2, s) ||
      !digits_at(time, 9, 6, frac)) {
    return false;
  }
  if (h > 23 || m > 59 || s > 60) return false;  // 60: a leap second
  us = (int64_t{h} * 3600 + m * 60 + s) * 1000000 + frac;
  return true;
}

}  // namespace

bool parse_nbdkit_log_time(std::string_view date, std::string_view time, int64_t& us) {
  int64_t days = 0;
  int64_t clock_us = 0;
  if (!parse_date(date, days) || !parse_clock(time, clock_us)) return false;
  us = days * 86400 * 1000000 + clock_us;
  return true;
}

namespace {

// "NAME=VALUE" with NAME `name`: the value, or false.
bool value_of(std::string_view field, std::string_view name, std::string_view& value) {
  if (field.size() <= name.size() || field[name.size()] != '=' ||
      field.substr(0, name.size()) != name) {
    return false;
  }
  value = field.substr(name.size() + 1);
  return true;
}

uint64_t need_hex(std::string_view value, const char* what) {
  uint64_t v = 0;
  if (value.size() < 3 || value[0] != '0' || value[1] != 'x' ||
      !parse_number(value.substr(2), v, 16)) {
    throw BadLine{quoted(value) + " is not a number; expected " + what +
                  " in bytes (hexadecimal, 0x...)"};
  }
  return v;
}

bool request_op(std::string_view action, TraceOp& op) {
  if (action == "Read") return op = TraceOp::kRead, true;
  if (action == "Write") return op = TraceOp::kWrite, true;
  if (action == "Zero") return op = TraceOp::kZero, true;
  if (action == "Trim") return op = TraceOp::kTrim, true;
  if (action == "Flush") return op = TraceOp::kFlush, true;
  return false;
}

class NbdkitLogReader : public PairedLineReader {
 public:
  NbdkitLogReader(std::unique_ptr<LineSource> src, bool skip_bad)
      : PairedLineReader(std::move(src), skip_bad, 1.0) {}  // microseconds

  TraceFormat format() const override { return TraceFormat::kNbdkitLog; }
  bool records_sync() const override { return true; }

 private:
  void parse_line(std::string_view line) override;
  void call(const ArrivalOrder::Key& key, TraceOp op, std::string_view rest, int64_t time_us);
  void ret(const ArrivalOrder::Key& key, std::string_view rest);
};

void NbdkitLogReader::parse_line(std::string_view line) {
  if (is_blank_or_comment(line)) return;
  std::string_view rest = line;
  std::string_view date = next_field(rest);
  std::string_view time = next_field(rest);
  int64_t time_us = 0;
  if (!parse_nbdkit_log_time(date, time, time_us)) {
    std::string shown(date);
    if (!time.empty()) shown += " " + std::string(time);
    throw BadLine{quoted(shown) +
                  " is not a log filter time; expected 'YYYY-MM-DD HH:MM:SS.UUUUUU'"};
  }
  std::string_view value;
  if (!value_of(next_field(rest), "connection", value)) return;  // not a connection's
  uint64_t connection = need_u64(value, "the connection number");
  std::string_view action = need_field(rest, "the action", kCallShape);
  bool is_return = action.substr(0, 3) == "...";
  if (is_return) action.remove_prefix(3);
  TraceOp op;
  if (!request_op(action, op)) return;  // Connect, Extents, Cache, ...
  std::string_view id_field = need_field(rest, "id=N", is_return ? kReturnShape : kCallShape);
  if (!value_of(id_field, "id", value)) {
    throw BadLine{"missing id=N after " + quoted(action) + "; expected " +
                  (is_return ? kReturnShape : kCallShape)};
  }
  ArrivalOrder::Key key{connection, need_u64(value, "the request's id")};
  if (is_return) {
    ret(key, rest);
  } else {
    call(key, op, rest, time_us);
  }
}

void NbdkitLogReader::call(const ArrivalOrder::Key& key, TraceOp op, std::string_view rest,
                           int64_t time_us) {
  TraceRequest req;
  req.op = op;
  req.line = src().line_number();
  bool has_offset = false;
  bool has_count = false;
  std::string_view value;
  for (std::string_view f = next_field(rest); !f.empty(); f = next_field(rest)) {
    if (value_of(f, "offset", value)) {
      req.offset_bytes = need_hex(value, "offset=");
      has_offset = true;
    } else if (value_of(f, "count", value)) {
      req.len_bytes = need_hex(value, "count=");
      has_count = true;
    } else if (value_of(f, "fua", value)) {
      req.fua = value == "1";
    }
  }
  if (op != TraceOp::kFlush && !(has_offset && has_count)) {
    throw BadLine{std::string("missing ") + (has_offset ? "count=" : "offset=") + " of " +
                  trace_op_name(op) + "; expected " + kCallShape};
  }
  if (!order().arrive(key, req, time_us)) {
    throw BadLine{"id=" + std::to_string(key.b) + " of connection=" + std::to_string(key.a) +
                  " is already in flight; expected its return before the id is used again"};
  }
}

void NbdkitLogReader::ret(const ArrivalOrder::Key& key, std::string_view rest) {
  std::string_view value;
  for (std::string_view f = next_field(rest); !f.empty(); f = next_field(rest)) {
    if (!value_of(f, "return", value)) continue;
    int64_t r = 0;
    if (!parse_number(value, r)) {
      throw BadLine{quoted(value) + " is not a return value; expected return=0 or return=-1"};
    }
    // A return without its call (the log began after it) is passed over.
    if (order().in_flight(key) != nullptr) order().complete(key, r == 0);
    return;
  }
  throw BadLine{std::string("missing return=N; expected ") + kReturnShape};
}

}  // namespace

std::unique_ptr<TraceReader> make_nbdkit_log_reader(std::unique_ptr<LineSource> src,
                                                    bool skip_bad) {
  return std::make_unique<NbdkitLogReader>(std::move(src), skip_bad);
}

}  // namespace vld::trace
