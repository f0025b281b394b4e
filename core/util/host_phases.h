// Host time per write, by phase: where this machine's time goes while the
// simulator serves a write (not simulated time). vld-bench hostcpu and the
// plugin's profile=phases report it (docs/stats.md, "host_phases_us";
// docs/benchmarks.md, "Host CPU per write, by phase").
//
// A HostRequestTimer spans one request (DiskController::serve); inside it,
// HostPhaseTimer scopes charge their phase. Phases are exclusive: a nested
// timer pauses the one around it, so a checksum inside a map sector's
// encoding counts as checksum only. "Other" is the request's total less
// the phases, so the phases never sum to more than the total.
//
// The clock is steady_clock (CLOCK_MONOTONIC, read through the vDSO in
// about 20 ns): wall time, not CPU time. CLOCK_THREAD_CPUTIME_ID would leave
// out time the thread is descheduled, but costs a system call (about
// 10 times as much) per reading, and a write reads the clock a dozen times;
// the store's writes and syncs are then wall time too, which is what they
// cost a client.
//
// Off (the default), each timer is one load of a relaxed atomic flag and a
// predictable branch: no clock is read and nothing is counted.
//
// Thread-safety: enable() and the timers may be used from any thread; the
// counters are process-wide atomics, added to with relaxed order, and each
// thread keeps its own nesting. snapshot() while requests run may see a
// request's phases without its total (or the reverse): read it between
// requests for exact sums. reset() and snapshot() do not stop the timers.
#ifndef VLD_CORE_UTIL_HOST_PHASES_H_
#define VLD_CORE_UTIL_HOST_PHASES_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace vld {

enum class HostPhase : uint8_t {
  kAllocator,  // choosing where data goes: vld's EagerAllocator and repacks, lld's
               // segment plan and cleaner
  kMap,        // the map and its on-disk records: vld's map sectors and log
               // records, lld's summaries, NVRAM records and block map
  kChecksum,   // data checksums (XXH3) and MACs (libsodium)
  kStoreIo,    // writes and syncs of the backing store
  kStats,      // the controller's statistics of the request
  kCount,      // not a phase: the number of them
};
inline constexpr size_t kHostPhaseCount = static_cast<size_t>(HostPhase::kCount);

// The phase's name in JSON and tables: "allocator", "map", "checksum",
// "store_io", "stats".
const char* host_phase_name(HostPhase p);

// Totals since the last reset(), in nanoseconds of steady_clock.
// Invariant (between requests): sum(phase_ns) <= total_ns.
struct HostPhaseTotals {
  uint64_t writes = 0;    // write requests timed
  uint64_t requests = 0;  // requests timed (writes and flushes)
  uint64_t total_ns = 0;  // wall time inside the timed requests
  std::array<uint64_t, kHostPhaseCount> phase_ns{};

  uint64_t phases_ns() const;
  // total_ns less the phases (0 if a snapshot caught them out of step).
  uint64_t other_ns() const;
};

namespace host_phases {

extern std::atomic<bool> g_enabled;  // read inline by the timers

inline bool enabled() { return g_enabled.load(std::memory_order_relaxed); }
void enable(bool on);
void reset();
HostPhaseTotals snapshot();

}  // namespace host_phases

// Spans one request on this thread: writes and flushes are timed (counted
// in writes if `write`), anything else is not. A request inside another on
// the same thread adds nothing of its own.
class HostRequestTimer {
 public:
  HostRequestTimer(bool timed, bool write) {
    if (timed && host_phases::enabled()) start(write);
  }
  ~HostRequestTimer() {
    if (active_) stop();
  }
  HostRequestTimer(const HostRequestTimer&) = delete;
  HostRequestTimer& operator=(const HostRequestTimer&) = delete;

 private:
  void start(bool write);
  void stop();
  bool active_ = false;
  bool write_ = false;
  uint64_t start_ns_ = 0;
};

// Charges its scope to `phase`, if a timed request runs on this thread;
// pauses the phase around it (if any) meanwhile.
class HostPhaseTimer {
 public:
  explicit HostPhaseTimer(HostPhase phase) {
    if (host_phases::enabled()) start(phase);
  }
  ~HostPhaseTimer() {
    if (active_) stop();
  }
  HostPhaseTimer(const HostPhaseTimer&) = delete;
  HostPhaseTimer& operator=(const HostPhaseTimer&) = delete;

 private:
  void start(HostPhase phase);
  void stop();
  bool active_ = false;
  HostPhase outer_ = HostPhase::kCount;  // the phase paused (kCount: none)
};

}  // namespace vld

#endif  // VLD_CORE_UTIL_HOST_PHASES_H_
