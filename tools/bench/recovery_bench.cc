#include "tools/bench/recovery_bench.h"

#include <iostream>
#include <memory>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/modes/mode_image.h"
#include "core/vld/vld_disk.h"
#include "stats/mode_report_json.h"
#include "tools/bench/scratch_image.h"

namespace vld {
namespace {

VldOptions options_of(const RecoveryBenchSpec& spec) {
  VldOptions o;
  o.checkpoint_every_map_sectors = spec.checkpoint_every;
  o.checkpoint_every_s = spec.checkpoint_s;
  o.window_cylinders = spec.window_cylinders;
  return o;
}

// Opens the image at `path` as nbdkit would (recovering it if need be).
std::unique_ptr<VldDisk> open_disk(const std::string& path, const RecoveryBenchSpec& spec) {
  Superblock sb;
  std::unique_ptr<FileBackingStore> store = open_image(path, &sb);
  return std::make_unique<VldDisk>(std::move(store), sb, options_of(spec));
}

// `n` random 4 KiB writes over the export, each followed by a flush (fio's
// fsync=1), back to back from `t`; returns when the last flush ends.
SimTime write_and_flush(VldDisk& disk, uint64_t export_bytes, uint64_t n, std::mt19937_64& rng,
                        SimTime t) {
  const uint64_t blocks = export_bytes / 4096;
  std::vector<std::byte> data(4096);
  for (uint64_t i = 0; i < n; ++i) {
    fill_random(data, rng);
    t = disk.write(rng() % blocks * 4096, data, /*fua=*/false, t).end;
    t = disk.flush(t).end;
  }
  return t;
}

nlohmann::json crash_phase(const VldStats& before, const VldStats& after, SimDuration took,
                           uint64_t writes) {
  return {{"writes", writes},
          {"mean_write_and_flush_us", writes ? to_us(took) / static_cast<double>(writes) : 0.0},
          {"records_written", after.records_written - before.records_written},
          {"record_ms", to_ms(after.record_time - before.record_time)},
          {"delta_checkpoint_ms", to_ms(after.checkpoint_time - before.checkpoint_time)},
          {"delta_checkpoints", after.delta_checkpoints - before.delta_checkpoints},
          {"checkpoint_map_sectors", after.checkpoint_map_sectors - before.checkpoint_map_sectors},
          {"map_sectors_written", after.map_sectors_written - before.map_sectors_written}};
}

}  // namespace

int cmd_recovery(const RecoveryBenchSpec& spec) {
  const Superblock sb = plan_large_vld(spec.geometry, spec.export_bytes);
  ScratchImage image(spec.dir, "recovery");
  std::mt19937_64 rng(spec.seed);
  {
    VldDisk disk(create_image(image.path, sb), sb, options_of(spec));
    write_and_flush(disk, spec.export_bytes, spec.warm_writes, rng, kSimEpoch);
    disk.close();
  }
  nlohmann::json j{{"experiment", "recovery"},
                   {"geometry", spec.geometry},
                   {"export_bytes", spec.export_bytes},
                   {"cylinders", sb.simulated_cylinders},
                   {"warm_writes", spec.warm_writes},
                   {"checkpoint_every", spec.checkpoint_every},
                   {"checkpoint_s", spec.checkpoint_s},
                   {"window_cylinders", spec.window_cylinders},
                   {"seed", spec.seed}};
  {
    std::unique_ptr<VldDisk> disk = open_disk(image.path, spec);
    j["clean"] = disk->recovery();
    const VldStats before = disk->vld_stats();
    const SimTime end = write_and_flush(*disk, spec.export_bytes, spec.crash_writes, rng, kSimEpoch);
    j["crash_phase"] = crash_phase(before, disk->vld_stats(), end - kSimEpoch, spec.crash_writes);
    // The crash: no close(), so no clean record; the file holds every write.
  }
  std::unique_ptr<VldDisk> disk = open_disk(image.path, spec);
  j["unclean"] = disk->recovery();
  const double clean_ms = j["clean"]["simulated_ms"].get<double>();
  j["unclean_over_clean"] = clean_ms > 0 ? disk->recovery().simulated_ms / clean_ms : 0.0;
  std::cout << j.dump() << std::endl;
  return 0;
}

}  // namespace vld
