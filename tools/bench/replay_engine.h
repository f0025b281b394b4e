// The replay of one trace on one disk: each trace request becomes drive
// commands at their arrival times (tools/bench/replay_bench.h says how
// arrivals are made), and what they took is counted.
//
// Invariants:
//   - Commands reach the DiskController in trace order, so the drive
//     serves them in that order (no command queue is set).
//   - Open loop: idle time is granted as a latency=sleep server's idle
//     worker grants it (plugin/idle_worker.h), in simulated time: once no
//     request has ended for `quiet`, one DiskController::idle_step at a
//     time, the next at the end of the last; when the disk has nothing to
//     do, it is asked again a poll (quiet, at least 10 ms) later; all only
//     while the next request has not arrived.
//   - Closed loop: command i of a slot arrives when the slot's previous
//     command completed; slots are taken round robin, qd of them.
//   - A command the disk refuses (Error: ENOSPC, EIO) is counted by errno
//     and the replay goes on, as a client would see an error and go on.
//
// Thread-safety: single-threaded.
#ifndef VLD_TOOLS_BENCH_REPLAY_ENGINE_H_
#define VLD_TOOLS_BENCH_REPLAY_ENGINE_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/disk_controller.h"
#include "core/util/histogram.h"
#include "tools/trace/trace_reader.h"

namespace vld {

// Flushes for a trace format that records none (TraceReader::records_sync).
struct SyncPolicy {
  enum class Kind { kRecorded, kWrites, kEvery, kNone };
  Kind kind = Kind::kRecorded;
  uint64_t every_writes = 0;  // kEvery: a flush after this many writes
  // "recorded", "writes", "every=N", "none".
  std::string name() const;
};
// "writes", "every=N" (N >= 1) or "none"; nullopt otherwise.
std::optional<SyncPolicy> parse_sync_policy(const std::string& text);

// Where a trace's byte offsets land on the export.
class AddressMap {
 public:
  enum class Kind { kNone, kFold, kScale };
  // trace_extent_bytes: the end of the trace's furthest request (kScale).
  AddressMap(Kind kind, uint64_t export_bytes, uint64_t trace_extent_bytes);
  // The export offset of [offset, offset + len). kNone throws Error(EINVAL)
  // "TRACE:LINE: ..." naming --map for a request beyond the export; the
  // others keep the request whole on the export (512-byte aligned).
  // REQUIRES: len <= export bytes.
  uint64_t map(uint64_t offset, uint64_t len, const std::string& trace, uint64_t line) const;
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
  uint64_t export_bytes_;
  uint64_t trace_extent_bytes_;
};
std::optional<AddressMap::Kind> parse_address_map(const std::string& text);
const char* address_map_name(AddressMap::Kind kind);

struct ReplayOptions {
  std::string trace;        // for messages
  bool closed_loop = false;
  uint32_t qd = 1;
  SyncPolicy sync;
  AddressMap map{AddressMap::Kind::kNone, 0, 0};
  std::FILE* requests_csv = nullptr;  // one line per drive command, or none
  // Open loop: the quiet time before idle work (the plugin's compactor_quiet_ms=).
  SimDuration quiet = std::chrono::milliseconds(50);
};

struct ReplayCounts {
  uint64_t requests = 0;  // trace requests served
  uint64_t reads = 0, writes = 0, flushes = 0, trims = 0, zeroes = 0;
  uint64_t added_flushes = 0;  // by --sync every=N and by preflush
  uint64_t bytes_read = 0, bytes_written = 0;
  std::map<std::string, uint64_t> errors;  // by errno name
};

class Replayer {
 public:
  Replayer(DiskController& ctl, ReplayOptions options);

  // Serves one trace request and the flushes its preflush or the sync
  // policy add. Throws Error(EINVAL) for a request the address map refuses.
  void serve(const TraceRequest& q);

  const ReplayCounts& counts() const { return counts_; }
  // Completion - arrival of every trace request, and by kind.
  const LatencyHistogram& latency() const { return all_; }
  const LatencyHistogram& latency(TraceOp op) const { return by_op_[static_cast<int>(op)]; }
  // From the first arrival to the last completion.
  SimDuration elapsed() const { return last_end_ - origin_; }
  // The trace time of the last request served (open loop), in us.
  double trace_time_us() const { return trace_time_us_; }

 private:
  std::optional<SimTime> arrival_of(const TraceRequest& q);
  void idle_before(SimTime arrival);
  RequestTiming command(TraceOp op, uint64_t offset, uint64_t len, bool fua, SimTime arrival,
                        const TraceRequest& q);
  void account(TraceOp op, uint64_t len, SimTime arrival, SimTime end);
  void write_csv(TraceOp op, uint64_t offset, uint64_t len, bool fua, SimTime arrival,
                 const RequestTiming& t, uint64_t line);

  DiskController& ctl_;
  ReplayOptions options_;
  SimTime origin_;                  // the drive's time when the replay began
  SimTime last_end_;
  std::vector<SimTime> slot_free_;  // closed loop: when each of the qd slots completed
  uint64_t next_slot_ = 0;
  uint64_t commands_ = 0;           // drive commands issued (the CSV's index)
  uint64_t writes_since_flush_ = 0;
  double trace_time_us_ = 0;
  std::vector<std::byte> buffer_;       // the data of writes (not zeros: see bench_payload)
  std::vector<std::byte> read_buffer_;  // where reads land
  ReplayCounts counts_;
  LatencyHistogram all_;
  LatencyHistogram by_op_[5];
};

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_REPLAY_ENGINE_H_
