#include "core/util/host_phases.h"

#include <cassert>
#include <chrono>

namespace vld {
namespace {

// This thread's place in a timed request.
struct ThreadState {
  bool in_request = false;               // a HostRequestTimer is active
  HostPhase current = HostPhase::kCount;  // the phase being charged (kCount: none)
  uint64_t since_ns = 0;                  // when `current` last started or resumed
};
thread_local ThreadState t_state;

std::atomic<uint64_t> g_writes{0};
std::atomic<uint64_t> g_requests{0};
std::atomic<uint64_t> g_total_ns{0};
std::array<std::atomic<uint64_t>, kHostPhaseCount> g_phase_ns{};

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Adds the time since the current phase (if any) last started to it.
void charge_current(uint64_t now) {
  ThreadState& t = t_state;
  if (t.current == HostPhase::kCount) return;
  g_phase_ns[static_cast<size_t>(t.current)].fetch_add(now - t.since_ns,
                                                      std::memory_order_relaxed);
}

}  // namespace

const char* host_phase_name(HostPhase p) {
  switch (p) {
    case HostPhase::kAllocator: return "allocator";
    case HostPhase::kMap: return "map";
    case HostPhase::kChecksum: return "checksum";
    case HostPhase::kStoreIo: return "store_io";
    case HostPhase::kStats: return "stats";
    case HostPhase::kCount: break;
  }
  return "?";
}

uint64_t HostPhaseTotals::phases_ns() const {
  uint64_t sum = 0;
  for (uint64_t ns : phase_ns) sum += ns;
  return sum;
}

uint64_t HostPhaseTotals::other_ns() const {
  const uint64_t phases = phases_ns();
  return total_ns > phases ? total_ns - phases : 0;
}

namespace host_phases {

std::atomic<bool> g_enabled{false};

void enable(bool on) { g_enabled.store(on, std::memory_order_relaxed); }

void reset() {
  g_writes.store(0, std::memory_order_relaxed);
  g_requests.store(0, std::memory_order_relaxed);
  g_total_ns.store(0, std::memory_order_relaxed);
  for (auto& ns : g_phase_ns) ns.store(0, std::memory_order_relaxed);
}

HostPhaseTotals snapshot() {
  HostPhaseTotals t;
  t.writes = g_writes.load(std::memory_order_relaxed);
  t.requests = g_requests.load(std::memory_order_relaxed);
  t.total_ns = g_total_ns.load(std::memory_order_relaxed);
  for (size_t i = 0; i < kHostPhaseCount; ++i)
    t.phase_ns[i] = g_phase_ns[i].load(std::memory_order_relaxed);
  return t;
}

}  // namespace host_phases

void HostRequestTimer::start(bool write) {
  ThreadState& t = t_state;
  if (t.in_request) return;  // nested: the outer request times it
  t.in_request = true;
  t.current = HostPhase::kCount;
  active_ = true;
  write_ = write;
  start_ns_ = now_ns();
}

void HostRequestTimer::stop() {
  const uint64_t now = now_ns();
  ThreadState& t = t_state;
  assert(t.in_request && t.current == HostPhase::kCount);  // phase scopes ended first
  charge_current(now);
  t.current = HostPhase::kCount;
  t.in_request = false;
  g_total_ns.fetch_add(now - start_ns_, std::memory_order_relaxed);
  g_requests.fetch_add(1, std::memory_order_relaxed);
  if (write_) g_writes.fetch_add(1, std::memory_order_relaxed);
}

void HostPhaseTimer::start(HostPhase phase) {
  ThreadState& t = t_state;
  if (!t.in_request) return;  // outside a timed request (a read, idle work)
  const uint64_t now = now_ns();
  charge_current(now);
  outer_ = t.current;
  t.current = phase;
  t.since_ns = now;
  active_ = true;
}

void HostPhaseTimer::stop() {
  const uint64_t now = now_ns();
  ThreadState& t = t_state;
  charge_current(now);
  t.current = outer_;
  t.since_ns = now;
}

}  // namespace vld
