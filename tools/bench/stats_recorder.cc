#include "tools/bench/stats_recorder.h"

#include <cassert>
#include <chrono>

#include "core/util/error.h"
#include "stats/stats_json.h"

namespace vld {

StatsRecorder& stats_recorder() {
  static StatsRecorder recorder;
  return recorder;
}

void StatsRecorder::configure(std::string command, std::string path, double interval_s) {
  command_ = std::move(command);
  path_ = std::move(path);
  interval_s_ = interval_s;
}

std::string StatsRecorder::path_of(const std::string& path, uint64_t k) {
  if (k <= 1) return path;
  const size_t slash = path.rfind('/');
  const size_t dot = path.rfind('.');
  const bool has_ext = dot != std::string::npos && dot > 0 &&
                       (slash == std::string::npos || dot > slash + 1);
  if (!has_ext) return path + "." + std::to_string(k);
  return path.substr(0, dot) + "." + std::to_string(k) + path.substr(dot);
}

void StatsRecorder::watch(DiskController& ctl, std::string label) {
  if (path_.empty()) return;
  assert(current_.empty());
  label_ = std::move(label);
  current_ = path_of(path_, ++disks_);
  if (interval_s_ <= 0) return;
  const std::string series = current_ + ".jsonl";
  start_series_file(series, "--stats: " + series);
  const auto every = std::chrono::duration_cast<SimDuration>(
      std::chrono::duration<double>(interval_s_));
  if (every <= SimDuration{0}) throw Error("--stats-interval: too short", EINVAL);
  ctl.set_interval_observer(ctl.busy_until(), every, [series](const IntervalStats& i) {
    append_jsonl(series, interval_to_json(i, std::nullopt));
  });
}

namespace {

// The host's time of the open's recovery ("recovery": {"wall_ms"}, in the
// file and in an lld report's) is the one value of a stats object that is
// not simulated: null, so that a bench's file is a function of its
// arguments, byte for byte.
void null_host_times(nlohmann::json& j) {
  for (nlohmann::json* r : {&j, j.contains("lld") ? &j["lld"] : nullptr})
    if (r && r->contains("recovery")) (*r)["recovery"]["wall_ms"] = nullptr;
}

}  // namespace

void StatsRecorder::finish(DiskController& ctl) {
  if (current_.empty()) return;
  if (interval_s_ > 0)
    append_jsonl(current_ + ".jsonl", interval_to_json(ctl.take_interval(std::nullopt), std::nullopt));
  nlohmann::json j = stats_to_json(ctl, LatencyMode::kNone);
  null_host_times(j);
  j["bench"] = {{"command", command_}, {"label", label_}, {"disk", disks_}};
  write_stats_file(current_, j);
  current_.clear();
}

}  // namespace vld
