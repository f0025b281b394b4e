// The names of trace_reader.h and open_trace(), which picks a reader of
// tools/trace/readers.h.
#include "tools/trace/trace_reader.h"

#include <cassert>
#include <cerrno>

#include "core/util/error.h"
#include "tools/trace/line_source.h"
#include "tools/trace/readers.h"

namespace vld {

const char* trace_op_name(TraceOp op) {
  switch (op) {
    case TraceOp::kRead: return "read";
    case TraceOp::kWrite: return "write";
    case TraceOp::kFlush: return "flush";
    case TraceOp::kTrim: return "trim";
    case TraceOp::kZero: return "zero";
  }
  return "?";
}

const char* trace_format_name(TraceFormat f) {
  switch (f) {
    case TraceFormat::kAuto: return "auto";
    case TraceFormat::kFioV2: return "fio-v2";
    case TraceFormat::kFioV3: return "fio-v3";
    case TraceFormat::kBlkparse: return "blkparse";
    case TraceFormat::kNbdkitLog: return "nbdkit-log";
    case TraceFormat::kMsr: return "msr";
  }
  return "?";
}

std::optional<TraceFormat> parse_trace_format(const std::string& name) {
  for (TraceFormat f : {TraceFormat::kAuto, TraceFormat::kFioV2, TraceFormat::kFioV3,
                        TraceFormat::kBlkparse, TraceFormat::kNbdkitLog, TraceFormat::kMsr}) {
    if (name == trace_format_name(f)) return f;
  }
  return std::nullopt;
}

std::unique_ptr<TraceReader> open_trace(const std::string& path, TraceFormat format,
                                        bool skip_bad) {
  auto src = std::make_unique<trace::LineSource>(path);
  if (format == TraceFormat::kAuto) {
    std::optional<TraceFormat> detected = trace::detect_trace_format(*src);
    if (!detected) {
      throw Error(src->name() +
                      ": not a trace vld-bench replay reads (fio iolog v2/v3, blkparse, nbdkit "
                      "log filter, MSR-Cambridge CSV); name one with --format",
                  EINVAL);
    }
    format = *detected;
  }
  switch (format) {
    case TraceFormat::kFioV2:
    case TraceFormat::kFioV3:
      return trace::make_fio_iolog_reader(std::move(src), format, skip_bad);
    case TraceFormat::kBlkparse:
      return trace::make_blkparse_reader(std::move(src), skip_bad);
    case TraceFormat::kNbdkitLog:
      return trace::make_nbdkit_log_reader(std::move(src), skip_bad);
    case TraceFormat::kMsr:
      return trace::make_msr_csv_reader(std::move(src), skip_bad);
    case TraceFormat::kAuto:
      break;
  }
  assert(false);
  return nullptr;
}

}  // namespace vld
