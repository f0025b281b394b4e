#include "tools/bench/fill_bench.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/modes/mode_report.h"
#include "core/store/backing_store.h"
#include "tools/bench/breakdown_json.h"
#include "tools/bench/fill.h"
#include "tools/bench/stats_recorder.h"

namespace vld {

using json = nlohmann::json;

int cmd_fill(const DiskSpec& spec, const FillSpec& fs) {
  for (DiskMode mode : {DiskMode::kVld, DiskMode::kInplace}) {
    const Superblock sb = plan(spec, mode);
    auto store = std::make_unique<MemoryBackingStore>(sb.image_bytes());
    format_store(*store, sb);
    DiskOptions options;
    apply_spec(spec, options.vld);
    DiskController ctl(make_disk(std::move(store), sb, options));
    stats_recorder().watch(ctl, std::string("mode=") + mode_name(mode));
    const uint64_t blocks = sb.export_bytes / 4096;
    std::vector<uint64_t> order(blocks);
    for (uint64_t b = 0; b < blocks; ++b) order[b] = b;
    if (fs.shuffled) std::shuffle(order.begin(), order.end(), std::mt19937_64(spec.seed));
    const auto& data = bench_payload();
    uint64_t done = 0, repacks_before = 0;
    double repack_ms_before = 0;
    for (uint32_t point = 1; point <= fs.points; ++point) {
      const uint64_t until = blocks * point / fs.points;
      SimDuration total{};
      std::vector<double> lat;
      for (; done < until; ++done) {
        RequestTiming w = ctl.write(order[done] * 4096, std::span(data.data(), 4096), false,
                                    std::nullopt);
        total += w.end - w.start;
        lat.push_back(to_us(w.end - w.start));
        if (fs.flush_every && (done + 1) % fs.flush_every == 0) ctl.flush(std::nullopt);
      }
      if (lat.empty()) continue;
      const Percentiles p = percentiles(lat);
      json j;
      j["experiment"] = "fill";
      j["disk"] = disk_json(spec, sb);
      j["mode"] = mode_name(mode);
      j["order"] = fs.shuffled ? "random" : "sequential";
      j["flush_every"] = fs.flush_every;
      j["written_pct"] = 100.0 * static_cast<double>(done) / static_cast<double>(blocks);
      // In place every export block counts as live: report what was written.
      j["utilization"] = mode == DiskMode::kVld ? ctl.utilization()
                                                : static_cast<double>(done) /
                                                      static_cast<double>(sb.physical_blocks());
      j["writes"] = lat.size();
      j["mean_us"] = mean_us(total, lat.size());
      j["p99_us"] = p.p99;
      j["max_us"] = p.max;
      if (mode == DiskMode::kVld) {
        const VldReport x = *ctl.mode_report().vld;
        const uint64_t repacks = x.stats.repacks;
        const double repack_ms = x.repack_ms();
        j["repacks"] = repacks - repacks_before;
        j["repack_ms"] = repack_ms - repack_ms_before;
        j["empty_tracks"] = x.empty_tracks;
        repacks_before = repacks;
        repack_ms_before = repack_ms;
      }
      std::cout << j.dump() << std::endl;
    }
    stats_recorder().finish(ctl);
  }
  return 0;
}

}  // namespace vld
