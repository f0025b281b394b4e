#include "core/sched/command_queue.h"

#include <cassert>
#include <tuple>

namespace vld {

size_t pick_next(std::span<const QueuedCommand> queue, SimTime now, SchedPolicy policy,
                 SimDuration aging) {
  assert(!queue.empty());
  // The key each policy minimises; index last, so the order is total.
  auto key = [&](size_t i) {
    const QueuedCommand& c = queue[i];
    assert(c.arrival <= now);
    if (policy == SchedPolicy::kFifo) return std::tuple(false, SimDuration{0}, c.arrival, i);
    const bool aged = now - c.arrival > aging;
    // Aged commands first (false < true), by arrival alone.
    return std::tuple(!aged, aged ? SimDuration{0} : c.positioning, c.arrival, i);
  };
  size_t best = 0;
  for (size_t i = 1; i < queue.size(); ++i)
    if (key(i) < key(best)) best = i;
  return best;
}

}  // namespace vld
