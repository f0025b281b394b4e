#include "tools/bench/qd_bench.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <random>

#include <nlohmann/json.hpp>

#include "core/disk_controller.h"
#include "core/modes/mode_image.h"
#include "core/sched/command_queue.h"
#include "core/store/backing_store.h"
#include "tools/bench/disk_spec.h"
#include "core/util/error.h"
#include "geometry/presets.h"
#include "tools/bench/fill.h"

namespace vld {
namespace {

using json = nlohmann::json;
constexpr uint64_t kBlock = 4096;

DiskMode mode_of(const std::string& name) {
  if (name == "vld") return DiskMode::kVld;
  if (name == "inplace") return DiskMode::kInplace;
  throw Error("--modes: unknown mode '" + name + "'; choose vld or inplace", EINVAL);
}

SchedPolicy policy_of(const std::string& name) {
  if (auto p = parse_sched_policy(name)) return *p;
  throw Error("--policies: unknown policy '" + name + "'; choose fifo or sptf", EINVAL);
}

Superblock plan(const QdBenchSpec& spec, const std::string& mode) {
  FormatOptions format = preset_format(spec.geometry, mode_of(mode), spec.export_bytes);
  apply_span(spec.span, &format);
  return plan_image(format);
}

uint64_t region_blocks(const QdBenchSpec& spec) {
  return std::max<uint64_t>(1, static_cast<uint64_t>(spec.util * double(spec.export_bytes / kBlock)));
}

// The filled image's bytes, closed cleanly.
std::vector<std::byte> filled_image(const QdBenchSpec& spec, const Superblock& sb) {
  auto store = std::make_unique<MemoryBackingStore>(sb.image_bytes());
  format_store(*store, sb);
  MemoryBackingStore* raw = store.get();
  DiskController ctl(make_disk(std::move(store), sb, DiskOptions{}));
  fill_in_order(ctl, region_blocks(spec), bench_payload());
  ctl.close();
  return raw->take_bytes();  // the disk is closed: hand the image on
}

struct Point {
  std::string rw;
  SchedPolicy policy;
  uint32_t qd;
};

struct Outstanding {
  SimTime arrival;
  uint64_t block;
};

struct Result {
  std::vector<double> latency_us;
  SimDuration span{};
  uint64_t reordered = 0;
  json to_json() const {
    std::vector<double> v = latency_us;
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    const size_t n = v.size();
    return {{"requests", n},
            {"iops", span.count() > 0 ? double(n) / (to_us(span) / 1e6) : 0.0},
            {"mean_us", n ? sum / double(n) : 0.0},
            {"p99_us", percentiles(v).p99},
            {"reordered", reordered}};
  }
};

// The closed loop of the header on one copy of the image.
Result run_point(const QdBenchSpec& spec, DiskController& ctl, const Point& p) {
  const bool write = p.rw == "write";
  const uint64_t region = region_blocks(spec);
  std::mt19937_64 rng(spec.seed * 7919 + p.qd);
  std::uniform_int_distribution<uint64_t> pick_block(0, region - 1);
  std::vector<std::byte> buf(kBlock);
  const std::span data(bench_payload().data(), kBlock);
  const SimTime t0 = ctl.busy_until();
  std::vector<Outstanding> queue;
  for (uint32_t i = 0; i < p.qd; ++i) queue.push_back({t0, pick_block(rng)});
  const uint64_t warm = spec.requests / 4;
  Result r;
  SimTime measured_from = t0;
  std::vector<QueuedCommand> cmds;
  for (uint64_t n = 0; n < warm + spec.requests; ++n) {
    // Every outstanding request arrived by the time the drive is free.
    const SimTime at = ctl.busy_until();
    cmds.clear();
    for (size_t i = 0; i < queue.size(); ++i)
      cmds.push_back({i, queue[i].arrival,
                      ctl.positioning_estimate(write, queue[i].block * kBlock, kBlock, at)});
    const size_t i = pick_next(cmds, at, p.policy, std::chrono::milliseconds(spec.aging_ms));
    const Outstanding o = queue[i];
    const RequestTiming t = write ? ctl.write(o.block * kBlock, data, false, o.arrival)
                                  : ctl.read(o.block * kBlock, buf, o.arrival);
    if (n == warm) measured_from = t.start;
    if (n >= warm) {
      r.latency_us.push_back(to_us(t.end - o.arrival));
      if (i != pick_next(cmds, at, SchedPolicy::kFifo)) ++r.reordered;
    }
    queue[i] = Outstanding{t.end, pick_block(rng)};  // the client's next request
  }
  r.span = ctl.busy_until() - measured_from;
  return r;
}

}  // namespace

int cmd_qd(const QdBenchSpec& spec) {
  for (const std::string& mode : spec.modes) {
    const Superblock sb = plan(spec, mode);
    const std::vector<std::byte> image = filled_image(spec, sb);
    for (const std::string& rw : spec.rw) {
      if (rw != "write" && rw != "read")
        throw Error("--rw: unknown '" + rw + "'; choose write or read", EINVAL);
      for (const std::string& policy : spec.policies) {
        for (uint32_t qd : spec.depths) {
          if (qd == 0) throw Error("--depths: a queue depth is at least 1", EINVAL);
          DiskController ctl(make_disk(std::make_unique<MemoryBackingStore>(image), sb, DiskOptions{}));
          const Result r = run_point(spec, ctl, Point{rw, policy_of(policy), qd});
          json j = {{"mode", mode}, {"geometry", spec.geometry}, {"rw", rw},
                    {"policy", policy}, {"qd", qd}, {"util", spec.util},
                    {"aging_ms", spec.aging_ms}, {"seed", spec.seed}};
          add_span_json(sb, &j);
          j.update(r.to_json());
          std::cout << j.dump() << std::endl;
        }
      }
    }
  }
  return 0;
}

}  // namespace vld
