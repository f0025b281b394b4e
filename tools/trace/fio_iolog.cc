// fio's iolog, versions 2 and 3 (man fio, "TRACE FILE FORMAT"; fio reads
// it in iolog.c, read_iolog). docs/traces.md, "fio iolog".
//
//   fio version 3 iolog
//   TIME FILE add|open|close
//   TIME FILE read|write|trim OFFSET LENGTH
//   TIME FILE sync|datasync [OFFSET LENGTH]
//
// Version 2 has no TIME. TIME is microseconds from the start of fio's run
// (fio writes utime_since_now() in log_io_u and sleeps that many
// microseconds in iolog_delay); OFFSET and LENGTH are bytes. fio writes a
// sync with the offset it had and length 0, and is read here with or
// without them. Every FILE is the one device replayed. "wait" (version 2
// only; fio ignores it in version 3) is passed over: version 2 requests
// carry no time.
#include <memory>
#include <string>
#include <string_view>

#include "tools/trace/line_reader.h"
#include "tools/trace/readers.h"

namespace vld::trace {

namespace {

constexpr std::string_view kV2Header = "fio version 2 iolog";
constexpr std::string_view kV3Header = "fio version 3 iolog";

enum class Action { kData, kFlush, kPassOver };

Action classify(std::string_view action, TraceOp& op) {
  if (action == "read") return op = TraceOp::kRead, Action::kData;
  if (action == "write") return op = TraceOp::kWrite, Action::kData;
  if (action == "trim") return op = TraceOp::kTrim, Action::kData;
  if (action == "sync" || action == "datasync") return op = TraceOp::kFlush, Action::kFlush;
  if (action == "add" || action == "open" || action == "close" || action == "wait") {
    return Action::kPassOver;
  }
  throw BadLine{quoted(action) +
                " is not a fio iolog action; expected read, write, sync, datasync, trim, add, "
                "open or close"};
}

class FioIologReader : public OneLineReader {
 public:
  FioIologReader(std::unique_ptr<LineSource> src, TraceFormat format, bool skip_bad)
      : OneLineReader(std::move(src), skip_bad), format_(format) {}

  TraceFormat format() const override { return format_; }
  bool records_sync() const override { return true; }

 private:
  bool v3() const { return format_ == TraceFormat::kFioV3; }
  const char* shape() const {
    return v3() ? "'TIME FILE ACTION [OFFSET LENGTH]'" : "'FILE ACTION [OFFSET LENGTH]'";
  }
  // The first line that is not blank or a comment names the version.
  void check_header(std::string_view line) const;
  // Fills `out` from a request line; false for any other line.
  bool parse_line(std::string_view line, TraceRequest& out) override;

  TraceFormat format_;
  bool header_seen_ = false;
  RelativeClock clock_{1.0};  // TIME is in microseconds
};

void FioIologReader::check_header(std::string_view line) const {
  std::string_view want = v3() ? kV3Header : kV2Header;
  std::string_view got = skip_blanks(line);
  while (!got.empty() && is_blank(got.back())) got.remove_suffix(1);
  if (got != want) {
    throw BadLine{quoted(got) + " is not a fio iolog header; expected '" + std::string(want) +
                  "' as the first line"};
  }
}

bool FioIologReader::parse_line(std::string_view line, TraceRequest& out) {
  if (is_blank_or_comment(line)) return false;
  if (!header_seen_) {
    header_seen_ = true;
    check_header(line);
    return false;
  }
  std::string_view rest = line;
  uint64_t time = 0;
  if (v3()) time = need_u64(need_field(rest, "the time", shape()), "the time in microseconds");
  need_field(rest, "the file name", shape());
  std::string_view action = need_field(rest, "the action", shape());
  TraceOp op = TraceOp::kRead;
  Action kind = classify(action, op);
  if (kind == Action::kPassOver) return false;
  std::string_view offset = next_field(rest);
  std::string_view length = next_field(rest);
  if (kind == Action::kData && offset.empty()) {
    throw BadLine{"missing the offset of " + quoted(action) + "; expected " + shape()};
  }
  if (!offset.empty() && length.empty()) {
    throw BadLine{"missing the length of " + quoted(action) + "; expected " + shape()};
  }
  need_end(rest, "the length");
  out = TraceRequest{};
  out.op = op;
  if (!offset.empty()) {
    uint64_t off = need_u64(offset, "the offset in bytes");
    uint64_t len = need_u64(length, "the length in bytes");
    if (kind == Action::kData) {
      out.offset_bytes = off;
      out.len_bytes = len;
    }
  }
  if (v3()) out.time_us = clock_.next_us(static_cast<int64_t>(time));
  out.line = src().line_number();
  return true;
}

}  // namespace

std::unique_ptr<TraceReader> make_fio_iolog_reader(std::unique_ptr<LineSource> src,
                                                   TraceFormat format, bool skip_bad) {
  return std::make_unique<FioIologReader>(std::move(src), format, skip_bad);
}

}  // namespace vld::trace
