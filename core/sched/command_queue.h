// Command queueing: which of the queued commands the drive serves next.
//
// A drive of this class (SCSI tagged command queueing) holds several
// commands at once and, each time the actuator is free, picks one:
//
//   fifo  the earliest arrival (what the drive did before queueing: the
//         order the commands reached it);
//   sptf  shortest positioning time first: the command whose seek + head
//         switch + rotational wait, from where the head is at the moment of
//         the choice, is least; ties by arrival. Greedy on positioning
//         rather than on seek distance alone (SSTF), because at these seek
//         speeds rotation is half the cost of a random access.
//
// A command estimated at 0 (a flush, a trim, a vld write: Disk::
// positioning_estimate has no opinion) is as short as a command can be: it
// goes ahead of any that needs the head to move, and such commands keep
// their arrival order among themselves. So under sptf a stream of vld
// writes is served before the reads queued with it, up to the aging bound.
//
// SPTF can starve a command whose sectors are always far from the head, so
// it ages: a command that has waited longer than the aging bound goes first
// (the oldest such, in arrival order), whatever its positioning time. This
// is Worthington, Ganger & Patt's "aged SPTF" reduced to a hard bound, the
// form drives document as a maximum command age. The default, 100 ms, is
// about 16 random accesses on the st19101 (about 6 ms each): at queue
// depths up to 16 a command SPTF keeps passing over is served after a
// bounded extra wait of the order of one full queue, while the bound is
// rarely reached in a steady closed loop, so SPTF's gain stays.
//
// References (docs/references.md): M. Seltzer, P. Chen, J. Ousterhout,
// "Disk Scheduling Revisited", USENIX Winter 1990 (shortest access time
// first); D. Jacobson, J. Wilkes, "Disk scheduling algorithms based on
// rotational position", HP Labs HPL-CSP-91-7, 1991 (aged shortest access
// time first); B. Worthington, G. Ganger, Y. Patt, "Scheduling Algorithms
// for Modern Disk Drives", SIGMETRICS 1994 (SPTF and its aged variant
// against seek-based policies).
//
// pick_next is a pure function: DiskController (real threads, latency=
// sleep) and vld-bench qd (a simulated closed loop) make the same choice
// from the same queue.
//
// Thread-safety: plain values and a pure function.
#ifndef VLD_CORE_SCHED_COMMAND_QUEUE_H_
#define VLD_CORE_SCHED_COMMAND_QUEUE_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "geometry/sim_time.h"

namespace vld {

enum class SchedPolicy { kFifo, kSptf };

// "fifo" / "sptf"; nullopt for anything else. Inline: plugin/parameters.h
// uses it in a tool that links nothing (vld-man-parameters).
inline std::optional<SchedPolicy> parse_sched_policy(std::string_view name) {
  if (name == "fifo") return SchedPolicy::kFifo;
  if (name == "sptf") return SchedPolicy::kSptf;
  return std::nullopt;
}
inline const char* sched_policy_name(SchedPolicy p) {
  return p == SchedPolicy::kSptf ? "sptf" : "fifo";
}

inline constexpr SimDuration kDefaultSchedAging = std::chrono::milliseconds(100);

struct QueuedCommand {
  uint64_t id = 0;          // the caller's name for it (not used to order)
  SimTime arrival{};        // when it reached the drive
  SimDuration positioning{};  // seek + head switch + rotation from the head
                              // at the moment of the choice; 0: no opinion
};

// The index in `queue` of the command served next when the drive is free
// at `now`. FIFO: the earliest arrival (ties: the lower index). SPTF: any
// command with now - arrival > aging first, earliest arrival first; else
// the least positioning, ties by arrival, then index.
// REQUIRES: queue non-empty; every arrival <= now.
size_t pick_next(std::span<const QueuedCommand> queue, SimTime now, SchedPolicy policy,
                 SimDuration aging = kDefaultSchedAging);

}  // namespace vld

#endif  // VLD_CORE_SCHED_COMMAND_QUEUE_H_
