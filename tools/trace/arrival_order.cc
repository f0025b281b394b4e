#include "tools/trace/arrival_order.h"

#include <cassert>

namespace vld::trace {

bool ArrivalOrder::arrive(const Key& key, const TraceRequest& req, int64_t raw_time) {
  if (in_flight_.count(key) != 0) return false;
  make_room();
  in_flight_.emplace(key, front_seq_ + entries_.size());
  entries_.push_back(Entry{req, raw_time, key, State::kInFlight});
  return true;
}

void ArrivalOrder::arrive_completed(const TraceRequest& req, int64_t raw_time) {
  make_room();
  entries_.push_back(Entry{req, raw_time, Key{}, State::kDone});
}

TraceRequest* ArrivalOrder::in_flight(const Key& key) {
  auto it = in_flight_.find(key);
  return it == in_flight_.end() ? nullptr : &entry(it->second).req;
}

void ArrivalOrder::complete(const Key& key, bool ok) {
  auto it = in_flight_.find(key);
  assert(it != in_flight_.end());
  entry(it->second).state = ok ? State::kDone : State::kDropped;
  in_flight_.erase(it);
}

void ArrivalOrder::drop_in_flight() {
  for (const auto& [key, seq] : in_flight_) entry(seq).state = State::kDropped;
  in_flight_.clear();
}

bool ArrivalOrder::pop(TraceRequest& out, int64_t& raw_time) {
  pop_dropped();
  if (entries_.empty() || entries_.front().state != State::kDone) return false;
  out = entries_.front().req;
  raw_time = entries_.front().raw_time;
  entries_.pop_front();
  ++front_seq_;
  return true;
}

void ArrivalOrder::make_room() {
  pop_dropped();
  while (entries_.size() >= max_in_flight_ && !entries_.empty()) {
    Entry& oldest = entries_.front();
    if (oldest.state == State::kInFlight) {
      in_flight_.erase(oldest.key);
      oldest.state = State::kDropped;
    }
    // A completed oldest one is still owed to pop(); the caller pops
    // before reading on, so only a lost one can fill the window.
    if (oldest.state == State::kDone) break;
    pop_dropped();
  }
}

void ArrivalOrder::pop_dropped() {
  while (!entries_.empty() && entries_.front().state == State::kDropped) {
    entries_.pop_front();
    ++front_seq_;
  }
}

}  // namespace vld::trace
