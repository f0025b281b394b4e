#include "tools/bench/aru_bench.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <random>

#include <nlohmann/json.hpp>

#include "core/aru/aru_session.h"
#include "core/disk_controller.h"
#include "core/modes/mode_image.h"
#include "core/store/backing_store.h"
#include "core/util/error.h"
#include "geometry/presets.h"
#include "tools/bench/fill.h"

namespace vld {
namespace {

using json = nlohmann::json;
constexpr uint64_t kBlock = 4096;

DiskMode mode_of(const std::string& name) {
  if (name == "vld") return DiskMode::kVld;
  if (name == "lld" || name == "lld_nvram0") return DiskMode::kLld;
  if (name == "inplace") return DiskMode::kInplace;
  throw Error("--modes: unknown mode '" + name + "'; choose vld, lld, lld_nvram0 or inplace",
              EINVAL);
}

Superblock plan(const AruBenchSpec& spec, const std::string& mode) {
  FormatOptions f = preset_format(spec.geometry, mode_of(mode), spec.export_bytes);
  f.nvram_bytes = mode == "lld_nvram0" ? 0 : kDefaultNvramBytes;
  return plan_image(f);
}

// Content per (record, block), never all zeros.
std::vector<std::byte> record_data(uint64_t record, uint32_t blocks) {
  std::vector<std::byte> v(blocks * kBlock);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::byte((i * 131 + record * 7) % 251 + 1);
  return v;
}

// A new disk of the mode, its first half written with 1 MiB writes.
std::unique_ptr<DiskController> half_full_disk(const Superblock& sb) {
  auto store = std::make_unique<MemoryBackingStore>(sb.image_bytes());
  format_store(*store, sb);
  auto ctl = std::make_unique<DiskController>(make_disk(std::move(store), sb, DiskOptions{}));
  fill_in_order(*ctl, sb.export_bytes / 2 / kBlock, record_data(0, 256));
  return ctl;
}

struct Totals {
  std::vector<double> latency_us;
  uint64_t physical_writes = 0, syncs = 0;
  json to_json() const {
    std::vector<double> v = latency_us;
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    const size_t n = v.size();
    const Percentiles p = percentiles(v);
    return {{"records", n},
            {"mean_us", n ? sum / n : 0.0},
            {"p50_us", p.p50},
            {"p99_us", p.p99},
            {"physical_blocks_per_record", n ? double(physical_writes) / n : 0.0},
            {"syncs_per_record", n ? double(syncs) / n : 0.0}};
  }
};

// Runs `update` per record (its simulated span), counting the drive's work.
template <typename Update>
Totals measure(DiskController& ctl, const AruBenchSpec& spec, uint32_t r, Update update) {
  // Record slots in the first 3/4 of the export; the journal area after it.
  const uint64_t slots = spec.export_bytes * 3 / 4 / (r * kBlock);
  std::mt19937_64 rng(spec.seed * 1000 + r);
  Totals t;
  const DiskStats before = ctl.stats();
  for (uint64_t i = 0; i < spec.records; ++i) {
    const std::vector<std::byte> data = record_data(i + 1, r);
    const SimTime start = ctl.busy_until();
    const SimTime end = update(rng() % slots * r * kBlock, data, i);
    t.latency_us.push_back(to_us(end - start));
  }
  const DiskStats after = ctl.stats();
  t.physical_writes = after.physical_writes - before.physical_writes;
  t.syncs = after.backing_syncs - before.backing_syncs;
  return t;
}

// (a): the client's redo journal on the default export.
Totals journal_updates(DiskController& ctl, const AruBenchSpec& spec, uint32_t r) {
  const uint64_t journal_off = spec.export_bytes * 3 / 4;
  const uint64_t journal_blocks = spec.export_bytes / 4 / kBlock;
  uint64_t head = 0;  // the journal is circular
  return measure(ctl, spec, r, [&](uint64_t home, const std::vector<std::byte>& data, uint64_t) {
    std::vector<std::byte> entry(kBlock + data.size(), std::byte{0x4a});  // header: where the blocks go
    std::copy(data.begin(), data.end(), entry.begin() + kBlock);
    if (head + r + 1 > journal_blocks) head = 0;
    ctl.write(journal_off + head * kBlock, entry, false, std::nullopt);
    head += r + 1;
    ctl.flush(std::nullopt);  // the journal entry is the commit
    ctl.write(home, data, false, std::nullopt);
    return ctl.flush(std::nullopt).end;  // home durable: the entry may be reused
  });
}

// (b): one ARU per record.
Totals aru_updates(DiskController& ctl, const AruBenchSpec& spec, uint32_t r) {
  AruSession aru(ctl, kDefaultAruMaxBytes);
  return measure(ctl, spec, r, [&](uint64_t home, const std::vector<std::byte>& data, uint64_t) {
    aru.write(home, data, std::nullopt);
    return aru.commit(std::nullopt).end;
  });
}

// Paper 000's empty begin/end: a commit with nothing in the ARU.
double empty_aru_us(DiskController& ctl) {
  AruSession aru(ctl, kDefaultAruMaxBytes);
  const SimTime start = ctl.busy_until();
  return to_us(aru.commit(std::nullopt).end - start);
}

}  // namespace

int cmd_aru(const AruBenchSpec& spec) {
  for (const std::string& mode : spec.modes) {
    const Superblock sb = plan(spec, mode);
    for (uint32_t r : spec.record_blocks) {
      // Each way on its own copy of the same half-full disk.
      auto a = half_full_disk(sb);
      const Totals journal = journal_updates(*a, spec, r);
      auto b = half_full_disk(sb);
      const Totals aru = aru_updates(*b, spec, r);
      json j = {{"mode", mode}, {"geometry", spec.geometry}, {"record_blocks", r},
                {"journal", journal.to_json()}, {"aru", aru.to_json()}};
      j["ratio"] = j["journal"]["mean_us"].get<double>() / j["aru"]["mean_us"].get<double>();
      std::cout << j.dump() << std::endl;
    }
    auto c = half_full_disk(sb);
    std::cout << json{{"mode", mode}, {"geometry", spec.geometry}, {"empty_aru_us", empty_aru_us(*c)}}.dump()
              << std::endl;
  }
  return 0;
}

}  // namespace vld
