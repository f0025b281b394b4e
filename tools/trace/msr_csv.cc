// The MSR-Cambridge block traces (SNIA IOTTA repository, "MSR Cambridge
// Traces"; Narayanan et al., "Write Off-Loading", FAST 2008): one CSV line per
// request,
//
//   Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
//   128166372003061629,hm,1,Read,383496192,32768,1175
//
// Timestamp is a Windows FILETIME (100 ns ticks since 1601), Type "Read"
// or "Write", Offset and Size bytes; Hostname, DiskNumber and
// ResponseTime are not used (one file is one disk). The published files
// have no header line; one is accepted as the first line. The traces say
// nothing of flushes or FUA (records_sync() is false). docs/traces.md,
// "MSR-Cambridge CSV".
#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "tools/trace/line_reader.h"
#include "tools/trace/readers.h"

namespace vld::trace {

namespace {

constexpr size_t kFields = 7;
constexpr const char* kShape =
    "7 comma-separated fields 'Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime'";

std::string_view trimmed(std::string_view s) {
  s = skip_blanks(s);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// Splits `line` at its commas; throws BadLine unless there are kFields.
std::array<std::string_view, kFields> split(std::string_view line) {
  std::array<std::string_view, kFields> f;
  size_t n = 0;
  for (;;) {
    size_t comma = line.find(',');
    if (n == kFields) {
      throw BadLine{"more than 7 fields; expected " + std::string(kShape)};
    }
    f[n++] = trimmed(line.substr(0, comma));
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
  if (n != kFields) {
    throw BadLine{std::to_string(n) + " field" + (n == 1 ? "" : "s") + "; expected " + kShape};
  }
  return f;
}

class MsrCsvReader : public OneLineReader {
 public:
  MsrCsvReader(std::unique_ptr<LineSource> src, bool skip_bad)
      : OneLineReader(std::move(src), skip_bad) {}

  TraceFormat format() const override { return TraceFormat::kMsr; }
  bool records_sync() const override { return false; }

 private:
  bool parse_line(std::string_view line, TraceRequest& out) override;

  bool first_line_seen_ = false;
  RelativeClock clock_{10.0};  // FILETIME ticks are 100 ns
};

bool MsrCsvReader::parse_line(std::string_view line, TraceRequest& out) {
  if (is_blank_or_comment(line)) return false;
  bool first = !first_line_seen_;
  first_line_seen_ = true;
  if (first && skip_blanks(line).substr(0, 10) == "Timestamp,") return false;
  std::array<std::string_view, kFields> f = split(line);
  uint64_t ticks = need_u64(f[0], "the Timestamp in 100 ns ticks");
  TraceOp op;
  if (f[3] == "Read") {
    op = TraceOp::kRead;
  } else if (f[3] == "Write") {
    op = TraceOp::kWrite;
  } else {
    throw BadLine{quoted(f[3]) + " is not an MSR request Type; expected Read or Write"};
  }
  out = TraceRequest{};
  out.op = op;
  out.offset_bytes = need_u64(f[4], "the Offset in bytes");
  out.len_bytes = need_u64(f[5], "the Size in bytes");
  out.time_us = clock_.next_us(static_cast<int64_t>(ticks));
  out.line = src().line_number();
  return true;
}

}  // namespace

std::unique_ptr<TraceReader> make_msr_csv_reader(std::unique_ptr<LineSource> src,
                                                 bool skip_bad) {
  return std::make_unique<MsrCsvReader>(std::move(src), skip_bad);
}

}  // namespace vld::trace
