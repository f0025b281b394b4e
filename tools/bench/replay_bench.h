// vld-bench replay: a block trace (tools/trace/trace_reader.h) replayed on
// one disk mode, in simulated time, in-process like the other subcommands.
//
// Timing (docs/replay.md):
//   open loop (default)  each request arrives at its trace time after the
//                        first; once the drive has been quiet for
//                        --quiet-ms, the disk's idle work (the vld
//                        compactor, the lld cleaner and NVRAM drain) runs
//                        as a latency=sleep server's idle worker runs it;
//                        a request that arrives while the drive is busy
//                        waits.
//   --closed-loop --qd N N requests outstanding: each arrives when the
//                        N-th before it completed; the drive serves them in
//                        trace order. No gap, so no idle work.
// Latency is completion - arrival (waiting included); the stats file keeps
// the drive's service times, as the plugin's does.
//
// Flushes and FUA are taken as recorded; a format without them (MSR) gets
// the --sync policy: every write FUA, a flush after every N writes, or
// none. A request beyond the export is an error unless --map folds it
// (offset modulo the export) or scales the trace's address space onto the
// export (which reads the trace twice).
//
// The disk: a copy in memory of --image, or a new image of the mode,
// geometry and size, aged first to --util (the region filled in order, then
// one random synchronous 4 KiB update per two region blocks, the same in
// every mode and seed). The user's image is never written.
//
// Each run is a deterministic function of its arguments and the trace.
//
// Thread-safety: single-threaded.
#ifndef VLD_TOOLS_BENCH_REPLAY_BENCH_H_
#define VLD_TOOLS_BENCH_REPLAY_BENCH_H_

#include <cstdint>
#include <string>

#include "core/image.h"
#include "core/image_format.h"
#include "tools/bench/disk_spec.h"

namespace vld {

struct ReplaySpec {
  std::string trace;                 // path, or "-" for standard input
  std::string format = "auto";       // trace_format_name()s
  std::string mode = "vld";          // vld, inplace or lld
  uint64_t nvram_bytes = kDefaultNvramBytes;  // mode=lld only; 0: no NVRAM
  // geometry, export_bytes, spare (the plugin's default), util, seed
  DiskSpec disk = [] {
    DiskSpec d;
    d.spare_percent = FormatOptions{}.spare_percent;
    d.util = 0;
    return d;
  }();
  std::string image;                 // start from a copy of this image ("": a new one)
  bool closed_loop = false;
  uint32_t qd = 1;                   // closed loop only
  uint32_t quiet_ms = 50;            // open loop: idle time before idle work (compactor_quiet_ms=)
  std::string sync = "writes";       // formats without flushes: writes, every=N, none
  std::string map = "none";          // none, fold, scale
  bool skip_bad = false;
  std::string requests_path;         // "": no per-request CSV
};

// Replays spec.trace; prints one JSON object (docs/replay.md, "Output") on
// stdout. Returns 0, or 130 if interrupted (SIGINT) after writing what was
// measured. Throws Error for bad arguments, traces and images.
int cmd_replay(const ReplaySpec& spec);

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_REPLAY_BENCH_H_
