#include "tools/bench/replay_engine.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <cstring>

#include "core/util/error.h"

namespace vld {

std::string SyncPolicy::name() const {
  switch (kind) {
    case Kind::kRecorded: return "recorded";
    case Kind::kWrites: return "writes";
    case Kind::kEvery: return "every=" + std::to_string(every_writes);
    case Kind::kNone: return "none";
  }
  return "?";
}

std::optional<SyncPolicy> parse_sync_policy(const std::string& text) {
  if (text == "writes") return SyncPolicy{SyncPolicy::Kind::kWrites};
  if (text == "none") return SyncPolicy{SyncPolicy::Kind::kNone};
  const std::string prefix = "every=";
  if (text.rfind(prefix, 0) != 0) return std::nullopt;
  uint64_t n = 0;
  const char* first = text.data() + prefix.size();
  const char* last = text.data() + text.size();
  auto [end, ec] = std::from_chars(first, last, n);
  if (ec != std::errc{} || end != last || n == 0) return std::nullopt;
  return SyncPolicy{SyncPolicy::Kind::kEvery, n};
}

std::optional<AddressMap::Kind> parse_address_map(const std::string& text) {
  if (text == "none") return AddressMap::Kind::kNone;
  if (text == "fold") return AddressMap::Kind::kFold;
  if (text == "scale") return AddressMap::Kind::kScale;
  return std::nullopt;
}

const char* address_map_name(AddressMap::Kind kind) {
  switch (kind) {
    case AddressMap::Kind::kNone: return "none";
    case AddressMap::Kind::kFold: return "fold";
    case AddressMap::Kind::kScale: return "scale";
  }
  return "?";
}

AddressMap::AddressMap(Kind kind, uint64_t export_bytes, uint64_t trace_extent_bytes)
    : kind_(kind), export_bytes_(export_bytes), trace_extent_bytes_(trace_extent_bytes) {}

uint64_t AddressMap::map(uint64_t offset, uint64_t len, const std::string& trace,
                         uint64_t line) const {
  if (len > export_bytes_)
    throw Error(trace + ":" + std::to_string(line) + ": a request of " + std::to_string(len) +
                    " bytes is larger than the export (" + std::to_string(export_bytes_) +
                    " bytes); give a larger --size",
                EINVAL);
  const uint64_t last_start = export_bytes_ - len;
  switch (kind_) {
    case Kind::kNone:
      if (offset > last_start)
        throw Error(trace + ":" + std::to_string(line) + ": bytes " + std::to_string(offset) +
                        "+" + std::to_string(len) + " lie beyond the export (" +
                        std::to_string(export_bytes_) +
                        " bytes); give --map fold or --map scale, or a larger --size",
                    EINVAL);
      return offset;
    case Kind::kFold:
      return std::min(offset % export_bytes_ / 512 * 512, last_start / 512 * 512);
    case Kind::kScale: {
      // offset * export / extent, in 128-bit arithmetic: traces of
      // terabytes times exports of gigabytes overflow 64 bits.
      const auto scaled = static_cast<uint64_t>(static_cast<unsigned __int128>(offset) *
                                                export_bytes_ /
                                                std::max<uint64_t>(trace_extent_bytes_, 1));
      return std::min(scaled / 512 * 512, last_start / 512 * 512);
    }
  }
  return offset;
}

Replayer::Replayer(DiskController& ctl, ReplayOptions options)
    : ctl_(ctl),
      options_(std::move(options)),
      origin_(ctl.busy_until()),
      last_end_(origin_),
      slot_free_(std::max<uint32_t>(options_.qd, 1), origin_) {
  assert(options_.closed_loop || options_.qd == 1);
}

// Open loop: the trace's time after the drive's time at the start. Closed
// loop: when the slot's previous command completed.
std::optional<SimTime> Replayer::arrival_of(const TraceRequest& q) {
  if (options_.closed_loop) return slot_free_[next_slot_ % slot_free_.size()];
  if (!q.time_us)
    throw Error(options_.trace + ":" + std::to_string(q.line) +
                    ": this trace has no request times, so it cannot be replayed open loop; "
                    "give --closed-loop",
                EINVAL);
  trace_time_us_ = *q.time_us;
  return origin_ + std::chrono::duration_cast<SimDuration>(
                       std::chrono::duration<double, std::micro>(*q.time_us));
}

// What plugin/idle_worker.h's run_steps does in wall time, in simulated
// time: wake when the quiet time after the last request has passed, step
// while there is work, look again a poll later when there is none.
void Replayer::idle_before(SimTime arrival) {
  const SimDuration poll = std::max<SimDuration>(options_.quiet, std::chrono::milliseconds(10));
  SimTime now = ctl_.last_request_end() + options_.quiet;
  while (now < arrival) {
    const std::optional<SimTime> end = ctl_.idle_step(now);
    now = end ? *end : now + poll;
  }
}

void Replayer::serve(const TraceRequest& q) {
  const SimTime arrived = *arrival_of(q);
  SimTime arrival = arrived;
  const uint64_t offset =
      q.op == TraceOp::kFlush ? 0 : options_.map.map(q.offset_bytes, q.len_bytes, options_.trace, q.line);
  if (!options_.closed_loop) idle_before(arrival);
  const bool sync_writes = options_.sync.kind == SyncPolicy::Kind::kWrites;
  const bool fua = q.fua || (sync_writes && q.op == TraceOp::kWrite);
  if (q.preflush) {
    arrival = command(TraceOp::kFlush, 0, 0, false, arrival, q).end;
    ++counts_.added_flushes;
  }
  const RequestTiming t = command(q.op, offset, q.len_bytes, fua, arrival, q);
  account(q.op, q.len_bytes, arrived, t.end);
  SimTime done = t.end;
  if (q.op == TraceOp::kWrite && options_.sync.kind == SyncPolicy::Kind::kEvery &&
      ++writes_since_flush_ == options_.sync.every_writes) {
    writes_since_flush_ = 0;
    done = command(TraceOp::kFlush, 0, 0, false, done, q).end;  // the client's sync after its write
    ++counts_.added_flushes;
  }
  if (options_.closed_loop) slot_free_[next_slot_++ % slot_free_.size()] = done;
  last_end_ = std::max(last_end_, done);
}

// One drive command; a refused one takes no time and is counted.
RequestTiming Replayer::command(TraceOp op, uint64_t offset, uint64_t len, bool fua,
                                SimTime arrival, const TraceRequest& q) {
  if (buffer_.size() < len) buffer_.resize(len, std::byte{0x5a});
  RequestTiming t{arrival, arrival, {}, {}};
  try {
    switch (op) {
      case TraceOp::kRead:
        read_buffer_.resize(std::max(read_buffer_.size(), len));
        t = ctl_.read(offset, std::span(read_buffer_.data(), len), arrival);
        break;
      case TraceOp::kWrite:
        t = ctl_.write(offset, std::span(buffer_.data(), len), fua, arrival);
        break;
      case TraceOp::kFlush: t = ctl_.flush(arrival); break;
      case TraceOp::kTrim: t = ctl_.trim(offset, len, fua, arrival); break;
      case TraceOp::kZero: t = ctl_.zero(offset, len, ZeroFlags{true, fua, false}, arrival); break;
    }
  } catch (const Error& e) {
    const char* name = strerrorname_np(e.err());
    ++counts_.errors[name ? name : std::to_string(e.err())];
  }
  write_csv(op, offset, len, fua, arrival, t, q.line);
  return t;
}

void Replayer::account(TraceOp op, uint64_t len, SimTime arrival, SimTime end) {
  ++counts_.requests;
  switch (op) {
    case TraceOp::kRead: ++counts_.reads; counts_.bytes_read += len; break;
    case TraceOp::kWrite: ++counts_.writes; counts_.bytes_written += len; break;
    case TraceOp::kFlush: ++counts_.flushes; break;
    case TraceOp::kTrim: ++counts_.trims; break;
    case TraceOp::kZero: ++counts_.zeroes; break;
  }
  const int64_t ns = (end - arrival).count();
  all_.add(ns);
  by_op_[static_cast<int>(op)].add(ns);
}

// index,line,op,offset_bytes,len_bytes,fua,arrival_ns,start_ns,service_ns,latency_ns
// (times in integer nanoseconds of simulated time, as -D vld.requests=1).
void Replayer::write_csv(TraceOp op, uint64_t offset, uint64_t len, bool fua, SimTime arrival,
                         const RequestTiming& t, uint64_t line) {
  ++commands_;
  if (!options_.requests_csv) return;
  std::fprintf(options_.requests_csv,
               "%" PRIu64 ",%" PRIu64 ",%s,%" PRIu64 ",%" PRIu64 ",%d,%" PRId64 ",%" PRId64
               ",%" PRId64 ",%" PRId64 "\n",
               commands_, line, trace_op_name(op), offset, len, fua ? 1 : 0,
               static_cast<int64_t>(arrival.time_since_epoch().count()),
               static_cast<int64_t>(t.start.time_since_epoch().count()),
               static_cast<int64_t>((t.end - t.start).count()),
               static_cast<int64_t>((t.end - arrival).count()));
}

}  // namespace vld
