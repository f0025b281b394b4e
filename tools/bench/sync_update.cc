#include "tools/bench/sync_update.h"

#include <chrono>
#include <span>

#include "tools/bench/fill.h"

namespace vld {

// One synchronous 4 KiB update (write, then flush, as fio --fsync=1 sends).
Update sync_update(DiskController& ctl, uint64_t block, std::optional<SimTime> arrival) {
  const auto& data = bench_payload();
  auto w0 = std::chrono::steady_clock::now();
  RequestTiming w = ctl.write(block * 4096, std::span(data.data(), 4096), false, arrival);
  auto w1 = std::chrono::steady_clock::now();
  const RequestTiming f = ctl.flush(std::nullopt);
  Update u;
  u.waited = w.queued;
  u.latency = w.end - w.start + w.queued;
  u.sync_latency = f.end - w.start + w.queued;
  u.service = w.service;
  u.host_us = std::chrono::duration<double, std::micro>(w1 - w0).count();
  return u;
}

}  // namespace vld
