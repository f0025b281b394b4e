// ArrivalOrder: requests a trace shows twice, when they arrive and when
// they complete (blkparse's D and C events, an nbdkit log's call and
// return lines), handed out in the order they arrived and only once they
// completed well.
//
// A device or server completes requests out of order (a disk's command
// queue, nbdkit's threads), so a request that completed is held until
// every one that arrived before it has completed or failed. A failed one
// is dropped: it is not replayed.
//
// Invariants: requests come out in arrival order; each key names at most
// one request in flight; memory is bounded by max_in_flight: when that many
// are held, the oldest still in flight is taken as lost (its completion
// never logged) and dropped, and at the end of the trace so is every
// request still in flight.
//
// Thread-safety: one thread.
#ifndef VLD_TOOLS_TRACE_ARRIVAL_ORDER_H_
#define VLD_TOOLS_TRACE_ARRIVAL_ORDER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>

#include "tools/trace/trace_reader.h"

namespace vld::trace {

class ArrivalOrder {
 public:
  // What pairs an arrival with its completion, as the format defines it.
  struct Key {
    uint64_t a = 0;
    uint64_t b = 0;
    bool operator==(const Key& o) const { return a == o.a && b == o.b; }
  };

  explicit ArrivalOrder(size_t max_in_flight = 1 << 16) : max_in_flight_(max_in_flight) {}

  // A request arrived at `raw_time` (the trace's unit) and is in flight
  // under `key`. False, and nothing changes, if one already is.
  bool arrive(const Key& key, const TraceRequest& req, int64_t raw_time);
  // A request seen only at its completion: it arrived after every request
  // held.
  void arrive_completed(const TraceRequest& req, int64_t raw_time);
  // The request in flight under `key`, for its completion to amend, or
  // nullptr.
  TraceRequest* in_flight(const Key& key);
  // Completes the request in flight under `key`: kept if `ok`, else
  // dropped. REQUIRES: in_flight(key).
  void complete(const Key& key, bool ok);
  // The end of the trace: whatever is still in flight never completed.
  void drop_in_flight();

  // The oldest request if it completed well, with its arrival time.
  bool pop(TraceRequest& out, int64_t& raw_time);

 private:
  enum class State : uint8_t { kInFlight, kDone, kDropped };
  struct Entry {
    TraceRequest req;
    int64_t raw_time;
    Key key;
    State state;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return static_cast<size_t>(k.a * 0x9e3779b97f4a7c15ull ^ k.b);
    }
  };

  Entry& entry(uint64_t seq) { return entries_[seq - front_seq_]; }
  // Makes room for one more entry (drops the oldest in flight if full).
  void make_room();
  void pop_dropped();

  size_t max_in_flight_;
  std::deque<Entry> entries_;  // in arrival order; entries_[0] is front_seq_
  uint64_t front_seq_ = 0;
  std::unordered_map<Key, uint64_t, KeyHash> in_flight_;  // key -> sequence
};

}  // namespace vld::trace

#endif  // VLD_TOOLS_TRACE_ARRIVAL_ORDER_H_
