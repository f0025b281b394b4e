// blkparse's default text output (man blkparse, "DEFAULT OUTPUT"; the
// code is blkparse_fmt.c, process_default): every event of blktrace, one
// line each, headed "%D %2c %8s %5T.%9t %5p %2a %3d ":
//
//   8,0    1       12     0.000184216  4262  D  WS 1052672 + 8 [fio]
//   8,0    1       13     0.000399781     0  C  WS 1052672 + 8 [0]
//
// device MAJOR,MINOR, CPU, sequence, SECONDS.NANOSECONDS since the trace
// began, pid, action, RWBS, then for a block request "SECTOR + NBLOCKS"
// (just "SECTOR", or nothing, when NBLOCKS is 0), "(ELAPSED)" with -t, and
// "[ERROR]" after a completion (C) or "[COMMAND]" after the others.
//
// A request is taken at its completion (C) with no error: SECTOR and
// NBLOCKS are 512-byte units; RWBS is a leading F (preflush), then R, W,
// D (discard: trim) or N (no data: with the leading F, a flush), then any
// of F (FUA), A (readahead), S (sync), M (metadata). Its arrival is the
// time of its issue (D) to the driver, paired by device, sector and
// operation; a completion seen without one arrives at its own time.
// Every other event, blkparse's "Input file ... added" lines and its
// closing summary ("CPU0 (8,0):", "Total (8,0):" and their indented
// statistics) are passed over. docs/traces.md, "blkparse".
//
// Times are clamped (paired_reader.h): blkparse merges the per-CPU
// streams, whose clocks and batches of events do not line up exactly, so
// events of different CPUs can come slightly out of time order.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tools/trace/paired_reader.h"
#include "tools/trace/readers.h"

namespace vld::trace {

namespace {

constexpr uint64_t kSectorBytes = 512;
constexpr const char* kShape =
    "'MAJOR,MINOR CPU SEQUENCE SECONDS.NANOSECONDS PID ACTION RWBS [SECTOR [+ NBLOCKS]] "
    "[ERROR]'";

// MAJOR,MINOR packed into 32 bits (the kernel's dev_t has 12 and 20).
bool parse_device(std::string_view s, uint64_t& dev) {
  size_t comma = s.find(',');
  uint32_t major = 0;
  uint32_t minor = 0;
  if (comma == std::string_view::npos || !parse_number(s.substr(0, comma), major) ||
      !parse_number(s.substr(comma + 1), minor)) {
    return false;
  }
  dev = (uint64_t{major} << 20) | minor;
  return true;
}

// Nanoseconds from "SECONDS.NANOSECONDS" (%5T.%9t).
int64_t parse_time_ns(std::string_view s) {
  size_t dot = s.find('.');
  uint64_t seconds = 0;
  uint64_t fraction = 0;
  size_t digits = dot == std::string_view::npos ? 0 : s.size() - dot - 1;
  if (digits == 0 || digits > 9 || !parse_number(s.substr(0, dot), seconds) ||
      !parse_number(s.substr(dot + 1), fraction)) {
    throw BadLine{quoted(s) + " is not a blkparse time; expected SECONDS.NANOSECONDS"};
  }
  for (size_t i = digits; i < 9; ++i) fraction *= 10;
  return static_cast<int64_t>(seconds * 1000000000 + fraction);
}

struct Rwbs {
  char op = 'N';  // R, W, D or N
  bool preflush = false;
  bool fua = false;
};

bool is_rwbs_op(char c) { return c == 'R' || c == 'W' || c == 'D' || c == 'N'; }
bool is_rwbs_hint(char c) { return c == 'A' || c == 'S' || c == 'M'; }

Rwbs parse_rwbs(std::string_view s) {
  Rwbs r;
  size_t i = 0;
  if (s.size() > 1 && s[0] == 'F') {
    r.preflush = true;
    i = 1;
  }
  bool ok = i < s.size() && is_rwbs_op(s[i]);
  if (ok) r.op = s[i++];
  if (ok && i < s.size() && s[i] == 'F') {
    r.fua = true;
    ++i;
  }
  while (ok && i < s.size()) ok = is_rwbs_hint(s[i++]);
  if (!ok) {
    throw BadLine{quoted(s) +
                  " is not a blkparse RWBS; expected F (preflush), then R, W, D or N, then "
                  "any of F (FUA), A, S, M"};
  }
  return r;
}

// What follows the RWBS: "[SECTOR [+ NBLOCKS]] [(ELAPSED)] [ERROR]".
struct Extent {
  uint64_t sector = 0;
  uint64_t nblocks = 0;
  int64_t error = 0;
};

// "[ERROR]" after a completion, with -t's "(ELAPSED)" before it; `f` is
// the first field after the extent.
int64_t parse_error(std::string_view f, std::string_view rest) {
  if (!f.empty() && f[0] == '(') {  // "(%8llu)": may hold blanks
    while (!f.empty() && f.back() != ')') f = next_field(rest);
    f = next_field(rest);
  }
  if (f.size() < 3 || f.front() != '[' || f.back() != ']') {
    throw BadLine{"missing the completion's error '[ERROR]'; expected " + std::string(kShape)};
  }
  int64_t error = 0;
  if (!parse_number(f.substr(1, f.size() - 2), error)) {
    throw BadLine{quoted(f) + " is not a completion's error; expected [ERROR], an errno or 0"};
  }
  return error;
}

Extent parse_extent(std::string_view rest, bool completion) {
  Extent e;
  std::string_view f = next_field(rest);
  if (!f.empty() && f[0] != '(' && f[0] != '[') {
    e.sector = need_u64(f, "the SECTOR");
    f = next_field(rest);
    if (f == "+") {
      e.nblocks = need_u64(need_field(rest, "NBLOCKS after '+'", kShape), "NBLOCKS");
      f = next_field(rest);
    }
  }
  if (completion) e.error = parse_error(f, rest);
  return e;
}

// Lines blkparse writes around its events.
bool is_banner_or_summary(std::string_view line, std::string_view first) {
  if (!first.empty() && first.back() == ':') first.remove_suffix(1);  // "Skips:"
  if (first == "Input" || first == "Total" || first == "Throughput" || first == "Events" ||
      first == "Skips") {
    return true;
  }
  if (first.size() > 3 && first.substr(0, 3) == "CPU" && first[3] >= '0' && first[3] <= '9') {
    return true;
  }
  // An indented statistic: " Reads Queued:  12,  48KiB ..."
  return is_blank(line[0]) && line.find(':') != std::string_view::npos;
}

class BlkparseReader : public PairedLineReader {
 public:
  BlkparseReader(std::unique_ptr<LineSource> src, bool skip_bad)
      : PairedLineReader(std::move(src), skip_bad, 1000.0) {}  // nanoseconds

  TraceFormat format() const override { return TraceFormat::kBlkparse; }
  bool records_sync() const override { return true; }

 private:
  void parse_line(std::string_view line) override;
  void issue(const ArrivalOrder::Key& key, const TraceRequest& req, int64_t time_ns);
  void complete(const ArrivalOrder::Key& key, const TraceRequest& req, int64_t time_ns,
                bool ok);
};

void BlkparseReader::parse_line(std::string_view line) {
  if (is_blank_or_comment(line)) return;
  std::string_view rest = line;
  std::string_view device = next_field(rest);
  uint64_t dev = 0;
  if (!parse_device(device, dev)) {
    if (is_banner_or_summary(line, device)) return;
    throw BadLine{quoted(device) + " is not a device MAJOR,MINOR; expected a blkparse event " +
                  kShape};
  }
  need_u64(need_field(rest, "the CPU", kShape), "the CPU");
  need_field(rest, "the sequence number", kShape);
  std::string_view time = need_field(rest, "the time", kShape);
  need_field(rest, "the pid", kShape);
  std::string_view action = need_field(rest, "the action", kShape);
  bool completion = action == "C";
  if (!completion && action != "D") return;  // queue, merge, plug, ... events
  Rwbs rwbs = parse_rwbs(need_field(rest, "the RWBS", kShape));
  int64_t time_ns = parse_time_ns(time);
  Extent extent = parse_extent(rest, completion);
  TraceRequest req;
  req.line = src().line_number();
  switch (rwbs.op) {
    case 'R': req.op = TraceOp::kRead; break;
    case 'W': req.op = TraceOp::kWrite; break;
    case 'D': req.op = TraceOp::kTrim; break;
    default:
      if (!rwbs.preflush) return;  // no data, no flush: not a block request
      req.op = TraceOp::kFlush;
  }
  if (req.op != TraceOp::kFlush) {
    // No "+ NBLOCKS": a SCSI passthrough command (its byte count where
    // the sector would be), not a block request.
    if (extent.nblocks == 0) return;
    req.offset_bytes = extent.sector * kSectorBytes;
    req.len_bytes = extent.nblocks * kSectorBytes;
    req.preflush = rwbs.preflush;
    req.fua = rwbs.fua;
  }
  ArrivalOrder::Key key{(dev << 8) | static_cast<uint8_t>(rwbs.op), extent.sector};
  if (completion) {
    complete(key, req, time_ns, extent.error == 0);
  } else {
    issue(key, req, time_ns);
  }
}

void BlkparseReader::issue(const ArrivalOrder::Key& key, const TraceRequest& req,
                           int64_t time_ns) {
  // A request issued again (after a requeue) keeps its first issue time.
  order().arrive(key, req, time_ns);
}

void BlkparseReader::complete(const ArrivalOrder::Key& key, const TraceRequest& req,
                              int64_t time_ns, bool ok) {
  if (TraceRequest* issued = order().in_flight(key)) {
    *issued = req;  // the completion's flags and extent; the issue's time
    order().complete(key, ok);
  } else if (ok) {
    order().arrive_completed(req, time_ns);
  }
}

}  // namespace

std::unique_ptr<TraceReader> make_blkparse_reader(std::unique_ptr<LineSource> src,
                                                  bool skip_bad) {
  return std::make_unique<BlkparseReader>(std::move(src), skip_bad);
}

}  // namespace vld::trace
