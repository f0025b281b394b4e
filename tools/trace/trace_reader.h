// Block traces, read one request at a time: fio's iolog (v2 and v3),
// blkparse's default text output, nbdkit's log filter (logfile=) and the
// MSR-Cambridge CSV. docs/traces.md describes each format as read here.
//
// Invariants of every reader:
//   - Streaming: next() reads only as far as the next request; memory is
//     independent of the trace's length (a reader that pairs lines, e.g.
//     an nbdkit log's call and return, keeps only the requests in flight).
//   - Requests come out in the order of their arrival in the trace; their
//     time_us never decreases. In fio's iolog and the MSR CSV a time that
//     goes backwards is malformed at that line; in blkparse and the nbdkit
//     log, whose lines from different CPUs or threads can be slightly out
//     of time order, it is taken as the previous one.
//   - A format that logs a request at its arrival and its completion
//     (blkparse, the nbdkit log) gives it once it completed, and only if
//     it succeeded.
//   - A malformed line throws Error(EINVAL) whose message is one line:
//     "FILE:LINE: what was wrong; expected what", unless the reader was
//     opened with skip_bad, which counts it (skipped_lines()) and goes on.
//   - Lines that are well formed but not requests (comments, fio's "add"
//     and "open" actions, blkparse's non-completion events and summary,
//     nbdkit's Connect and Extents) are passed over without a count.
//   - A file whose first two bytes are gzip's magic is read through zlib.
//
// Thread-safety: a reader is used by one thread.
#ifndef VLD_TOOLS_TRACE_TRACE_READER_H_
#define VLD_TOOLS_TRACE_TRACE_READER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace vld {

enum class TraceOp { kRead, kWrite, kFlush, kTrim, kZero };

const char* trace_op_name(TraceOp op);

// One request of a trace. Offsets and lengths are in bytes as the trace
// gives them (blkparse's 512-byte sectors converted); a flush has 0 and 0.
struct TraceRequest {
  TraceOp op = TraceOp::kRead;
  uint64_t offset_bytes = 0;
  uint64_t len_bytes = 0;
  bool fua = false;              // the write (or zero, trim) is forced unit access
  bool preflush = false;         // a flush is asked for before it (blkparse "FW...")
  std::optional<double> time_us; // arrival, from the trace's first request; none in fio v2
  uint64_t line = 0;             // of the file, for messages
};

enum class TraceFormat { kAuto, kFioV2, kFioV3, kBlkparse, kNbdkitLog, kMsr };

// "fio-v2", "fio-v3", "blkparse", "nbdkit-log", "msr" ("auto" for kAuto).
const char* trace_format_name(TraceFormat f);
// The format a name gives, or nullopt.
std::optional<TraceFormat> parse_trace_format(const std::string& name);

class TraceReader {
 public:
  virtual ~TraceReader() = default;

  // The next request, or false at the end of the trace.
  virtual bool next(TraceRequest& out) = 0;

  virtual TraceFormat format() const = 0;
  // Whether the format records flushes and FUA (MSR does not: the caller
  // chooses a sync policy, and says so).
  virtual bool records_sync() const = 0;

  // Lines passed over as malformed (skip_bad only).
  uint64_t skipped_lines() const { return skipped_lines_; }
  // How far the reader is through the file, and the file's size, in bytes
  // of the file as stored (compressed bytes for a .gz): for progress.
  virtual uint64_t position_bytes() const = 0;
  virtual uint64_t size_bytes() const = 0;

 protected:
  uint64_t skipped_lines_ = 0;
};

// Opens `path` ("-" for standard input) as `format`, or, with kAuto, as the
// format its first request-like lines show. Throws Error (one line naming
// the file, and the formats if none matches) if it cannot be opened or
// recognised.
std::unique_ptr<TraceReader> open_trace(const std::string& path, TraceFormat format,
                                        bool skip_bad);

}  // namespace vld

#endif  // VLD_TOOLS_TRACE_TRACE_READER_H_
