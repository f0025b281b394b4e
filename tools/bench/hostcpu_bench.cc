#include "tools/bench/hostcpu_bench.h"

#include <cerrno>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <random>

#include "core/util/error.h"
#include "stats/stats_json.h"
#include "tools/bench/stats_recorder.h"
#include "tools/bench/sync_update.h"
#include "tools/bench/update_picker.h"

namespace vld {
namespace {

using json = nlohmann::json;

// A prepared disk of `mode` and its superblock.
struct Prepared {
  Superblock sb;
  std::unique_ptr<DiskController> ctl;
};

Prepared prepare(const DiskSpec& spec, const LldSpec& ls, const std::string& mode) {
  if (mode == "lld") {
    const Superblock sb = plan_lld(spec, ls);
    json warm;
    const std::vector<std::byte> image = prepared_lld_image(spec, ls, sb, &warm);
    return {sb, open_copy(sb, image, lld_options(ls))};
  }
  const Superblock sb = plan(spec, mode == "vld" ? DiskMode::kVld : DiskMode::kInplace);
  DiskOptions options;
  apply_spec(spec, options.vld);
  const std::vector<std::byte> image = prepared_image(spec, sb, options);
  return {sb, open_copy(sb, image, options)};
}

// The mode's prepared disk, `writes` updates timed by phase.
json measure(const DiskSpec& spec, const LldSpec& ls, const std::string& mode, uint64_t writes) {
  Prepared p = prepare(spec, ls, mode);
  stats_recorder().watch(*p.ctl, "mode=" + mode);
  std::mt19937_64 rng(spec.seed);
  UpdatePicker pick(region_blocks(p.sb, spec.util), spec.hot_cold);
  host_phases::reset();
  host_phases::enable(true);
  for (uint64_t i = 0; i < writes; ++i) sync_update(*p.ctl, pick(rng), std::nullopt);
  host_phases::enable(false);
  const HostPhaseTotals t = host_phases::snapshot();
  stats_recorder().finish(*p.ctl);
  json j;
  j["experiment"] = "hostcpu";
  j["mode"] = mode;
  j["disk"] = disk_json(spec, p.sb);
  j["writes"] = t.writes;
  json per_write = host_phases_json(t).at("per_write");
  j["host_us_per_write"] = per_write.at("total");
  per_write.erase("total");
  j["phases_us_per_write"] = per_write;
  return j;
}

// The table's columns after the mode: the phases in their order, then other.
std::vector<std::string> phase_columns() {
  std::vector<std::string> names;
  for (size_t i = 0; i < kHostPhaseCount; ++i)
    names.push_back(host_phase_name(static_cast<HostPhase>(i)));
  names.push_back("other");
  return names;
}

// One row of the table: the mode, then each phase, other and the total.
void print_row(const json& j) {
  std::fprintf(stderr, "%-8s", j.at("mode").get<std::string>().c_str());
  for (const std::string& name : phase_columns())
    std::fprintf(stderr, " %9.2f", j.at("phases_us_per_write").at(name).get<double>());
  std::fprintf(stderr, " %9.2f\n", j.at("host_us_per_write").get<double>());
}

}  // namespace

int cmd_hostcpu(const DiskSpec& spec, const LldSpec& ls, const HostCpuSpec& hs) {
  if (hs.modes.empty()) throw Error("--modes: name at least one of vld, lld, inplace", EINVAL);
  for (const std::string& mode : hs.modes)  // before any output
    if (mode != "vld" && mode != "lld" && mode != "inplace")
      throw Error("--modes: unknown mode '" + mode + "'; use vld, lld or inplace", EINVAL);
  std::vector<json> rows;
  for (const std::string& mode : hs.modes) {
    rows.push_back(measure(spec, ls, mode, hs.writes));
    std::cout << rows.back().dump() << std::endl;
  }
  std::fprintf(stderr, "host us per write (write + flush), by phase:\n%-8s", "mode");
  for (const std::string& name : phase_columns()) std::fprintf(stderr, " %9s", name.c_str());
  std::fprintf(stderr, " %9s\n", "total");
  for (const json& j : rows) print_row(j);
  return 0;
}

}  // namespace vld
