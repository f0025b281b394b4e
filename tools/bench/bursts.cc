#include "tools/bench/bursts.h"

#include <algorithm>
#include <optional>
#include <random>

#include "tools/bench/breakdown_json.h"
#include "tools/bench/fill.h"
#include "tools/bench/sync_update.h"

namespace vld {
namespace {

using json = nlohmann::json;

json percentiles_json(const std::vector<double>& v) {
  const Percentiles p = percentiles(v);
  return {{"p50", p.p50}, {"p99", p.p99}, {"max", p.max}};
}

}  // namespace

BurstTotals burst_loop(DiskController& ctl, uint64_t region, const DiskSpec& spec,
                       const BurstSpec& bs, double idle_ms, const IdleHook& hook) {
  std::mt19937_64 rng(spec.seed);
  UpdatePicker pick(region, spec.hot_cold);
  const SimDuration idle = sim_us(idle_ms * 1000.0);
  BurstTotals t;
  t.before = ctl.mode_report();
  // Every burst's first write has an arrival time, the first burst's too:
  // the drive predicts idle periods from arrivals (IdleGapPredictor), and
  // one burst without would leave the first idle period unpredicted.
  std::optional<SimTime> arrival = ctl.busy_until();
  for (uint64_t k = 0; k < bs.warm_bursts + bs.bursts; ++k) {
    const bool measured = k >= bs.warm_bursts;
    if (k == bs.warm_bursts) t.before = ctl.mode_report();
    for (uint64_t i = 0; i < bs.burst; ++i) {
      Update u = sync_update(ctl, pick(rng), i == 0 ? arrival : std::nullopt);
      if (!measured) continue;
      t.total += u.latency;
      t.waited += u.waited;
      t.service += u.service;
      t.worst_wait = std::max(t.worst_wait, u.waited);
      if (u.waited > SimDuration{0}) ++t.preempted;
      t.latency_us.push_back(to_us(u.latency));
      t.sync_latency_us.push_back(to_us(u.sync_latency));
      t.sync_total += u.sync_latency;
      t.host_us += u.host_us;
      ++t.n;
    }
    const SimTime burst_end = ctl.busy_until();
    const SimTime idle_end = burst_end + idle;
    if (!bs.idle_work) {
      // The control: the same pause, the drive sitting idle in it.
    } else if (measured && hook) {
      const ModeReport before_idle = ctl.mode_report();
      ctl.idle_until(idle_end);
      hook(before_idle, ctl.mode_report());
    } else {
      ctl.idle_until(idle_end);
    }
    if (measured) t.idle_busy += ctl.busy_until() - burst_end;
    arrival = idle_end;
  }
  return t;
}

// The fields every burst point reports, from its totals: the mean and the
// percentiles of the write and of the write with its flush.
json burst_json(const BurstTotals& t, const BurstSpec& bs, double idle_ms) {
  json j;
  j["idle_ms"] = idle_ms;
  j["burst"] = bs.burst;
  j["bursts"] = bs.bursts;
  j["idle_work"] = bs.idle_work;
  j["writes"] = t.n;
  j["mean_us"] = mean_us(t.total, t.n);
  j["latency_us"] = percentiles_json(t.latency_us);
  // With nvram=0 (and on vld and in place) the flush does the durable work.
  j["sync_mean_us"] = mean_us(t.sync_total, t.n);
  j["sync_latency_us"] = percentiles_json(t.sync_latency_us);
  j["breakdown_us"] = breakdown_json(t.service, t.n);
  j["preempted_writes"] = t.preempted;
  j["preempt_wait_mean_us"] = t.preempted ? to_us(t.waited) / t.preempted : 0.0;
  j["preempt_wait_max_us"] = to_us(t.worst_wait);
  j["host_us_per_write"] = t.n ? t.host_us / static_cast<double>(t.n) : 0.0;  // wall time, this machine
  return j;
}

}  // namespace vld
