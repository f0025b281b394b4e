// The readers of tools/trace, one file each, behind open_trace(), and the
// detection that picks one. docs/traces.md describes each format as read.
//
// Thread-safety: the readers are used by one thread; detection reads
// from the source it is given.
#ifndef VLD_TOOLS_TRACE_READERS_H_
#define VLD_TOOLS_TRACE_READERS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "tools/trace/line_source.h"
#include "tools/trace/trace_reader.h"

namespace vld::trace {

// REQUIRES: format is kFioV2 or kFioV3.
std::unique_ptr<TraceReader> make_fio_iolog_reader(std::unique_ptr<LineSource> src,
                                                   TraceFormat format, bool skip_bad);
std::unique_ptr<TraceReader> make_blkparse_reader(std::unique_ptr<LineSource> src,
                                                  bool skip_bad);
std::unique_ptr<TraceReader> make_nbdkit_log_reader(std::unique_ptr<LineSource> src,
                                                    bool skip_bad);
std::unique_ptr<TraceReader> make_msr_csv_reader(std::unique_ptr<LineSource> src,
                                                 bool skip_bad);

// Microseconds since 1970 of an nbdkit log filter time, "YYYY-MM-DD"
// "HH:MM:SS.UUUUUU" (UTC), or false.
bool parse_nbdkit_log_time(std::string_view date, std::string_view time, int64_t& us);

// The format the first line that is neither blank nor a comment shows, or
// nullopt. The lines it reads are read again by the reader.
// REQUIRES: no line of `src` read yet.
std::optional<TraceFormat> detect_trace_format(LineSource& src);

}  // namespace vld::trace

#endif  // VLD_TOOLS_TRACE_READERS_H_
