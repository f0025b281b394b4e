// Which format a trace is, from its first line that is neither blank nor
// a comment: each format's first line is unlike the others'.
//   fio iolog     "fio version 2 iolog" or "fio version 3 iolog"
//   blkparse      "Input file NAME added" or an event "MAJOR,MINOR CPU ..."
//   nbdkit log    "YYYY-MM-DD HH:MM:SS.UUUUUU ..."
//   MSR CSV       "Timestamp,Hostname,..." or 7 fields NUMBER,...,Read|Write,...
#include <string_view>

#include "tools/trace/fields.h"
#include "tools/trace/readers.h"

namespace vld::trace {

namespace {

std::optional<TraceFormat> detect_fio(std::string_view line) {
  std::string_view rest = line;
  if (next_field(rest) != "fio" || next_field(rest) != "version") return std::nullopt;
  std::string_view version = next_field(rest);
  if (next_field(rest) != "iolog") return std::nullopt;
  if (version == "2") return TraceFormat::kFioV2;
  if (version == "3") return TraceFormat::kFioV3;
  return std::nullopt;
}

bool looks_like_blkparse(std::string_view line) {
  std::string_view rest = line;
  std::string_view first = next_field(rest);
  if (first == "Input" && next_field(rest) == "file") return true;
  size_t comma = first.find(',');
  uint32_t n = 0;
  if (comma == std::string_view::npos || !parse_number(first.substr(0, comma), n) ||
      !parse_number(first.substr(comma + 1), n)) {
    return false;
  }
  next_field(rest);  // CPU
  next_field(rest);  // sequence
  return next_field(rest).find('.') != std::string_view::npos && !next_field(rest).empty();
}

bool looks_like_nbdkit_log(std::string_view line) {
  std::string_view rest = line;
  std::string_view date = next_field(rest);
  std::string_view time = next_field(rest);
  int64_t us = 0;
  return parse_nbdkit_log_time(date, time, us);
}

bool looks_like_msr(std::string_view line) {
  line = skip_blanks(line);
  if (line.substr(0, 10) == "Timestamp,") return true;
  std::string_view f[7];
  size_t n = 0;
  for (; n < 7; ++n) {
    size_t comma = line.find(',');
    f[n] = line.substr(0, comma);
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
  uint64_t ticks = 0;
  return n == 6 && parse_number(f[0], ticks) && (f[3] == "Read" || f[3] == "Write");
}

std::optional<TraceFormat> classify(std::string_view line) {
  if (std::optional<TraceFormat> fio = detect_fio(line)) return fio;
  if (looks_like_nbdkit_log(line)) return TraceFormat::kNbdkitLog;
  if (looks_like_blkparse(line)) return TraceFormat::kBlkparse;
  if (looks_like_msr(line)) return TraceFormat::kMsr;
  return std::nullopt;
}

}  // namespace

std::optional<TraceFormat> detect_trace_format(LineSource& src) {
  src.begin_peek();
  std::string_view line;
  bool found = false;
  while (src.next_line(line)) {
    if (!is_blank_or_comment(line)) {
      found = true;
      break;
    }
  }
  std::optional<TraceFormat> format = found ? classify(line) : std::nullopt;
  src.end_peek();
  return format;
}

}  // namespace vld::trace
