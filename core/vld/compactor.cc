#include "core/vld/compactor.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace vld {

std::optional<CompactionPolicy> parse_compaction_policy(std::string_view name) {
  if (name == "random") return CompactionPolicy::kRandom;
  if (name == "fewest-live") return CompactionPolicy::kFewestLive;
  if (name == "cost-benefit") return CompactionPolicy::kCostBenefit;
  return std::nullopt;
}

const char* policy_name(CompactionPolicy p) {
  switch (p) {
    case CompactionPolicy::kRandom: return "random";
    case CompactionPolicy::kFewestLive: return "fewest-live";
    case CompactionPolicy::kCostBenefit: return "cost-benefit";
  }
  return "?";
}

Compactor::Compactor(CompactorOptions options, uint32_t block_sectors)
    : options_(options), block_sectors_(block_sectors), rng_(options.seed) {}

bool Compactor::qualifies(const TrackCensus& t, uint64_t holes_elsewhere) const {
  if (!t.may_be_victim || t.used_sectors == 0) return false;
  if (t.sectors - t.used_sectors < block_sectors_) return false;  // nothing to gain
  if (t.used_sectors > kMaxVictimUse * t.sectors) return false;
  // Its blocks (and a map sector per move, which small holes take) must fit
  // elsewhere; used sectors over-count live blocks, which errs safe.
  const uint64_t blocks = (t.used_sectors + block_sectors_ - 1) / block_sectors_;
  return holes_elsewhere >= blocks + 1;
}

double Compactor::score(const TrackCensus& t, SimTime now) const {
  const double u = static_cast<double>(t.used_sectors) / t.sectors;
  switch (options_.policy) {
    case CompactionPolicy::kRandom: return 0;
    case CompactionPolicy::kFewestLive: return -static_cast<double>(t.used_sectors);
    case CompactionPolicy::kCostBenefit: {
      // LFS (Rosenblum & Ousterhout): benefit / cost = (1 - u) * age / (1 + u).
      const double age_us = to_us(now - t.last_write) + 1.0;
      return (1.0 - u) * age_us / (1.0 + u);
    }
  }
  return 0;
}

std::optional<uint32_t> Compactor::choose(std::span<const TrackCensus> tracks, SimTime now) {
  uint64_t holes = 0;
  for (const TrackCensus& t : tracks) holes += t.block_holes;
  if (options_.policy == CompactionPolicy::kRandom) {
    std::vector<const TrackCensus*> ok;
    for (const TrackCensus& t : tracks)
      if (qualifies(t, holes - t.block_holes)) ok.push_back(&t);
    if (ok.empty()) return std::nullopt;
    std::uniform_int_distribution<size_t> pick(0, ok.size() - 1);
    return ok[pick(rng_)]->track;
  }
  // One pass: the census is every track of the window, at every idle step.
  const TrackCensus* best = nullptr;
  double best_score = 0;
  for (const TrackCensus& t : tracks) {
    if (!qualifies(t, holes - t.block_holes)) continue;
    const double sc = score(t, now);
    if (!best || sc > best_score) {  // ties: the first (lowest track in region order)
      best = &t;
      best_score = sc;
    }
  }
  if (!best) return std::nullopt;
  return best->track;
}

void StepCosts::observe(SimDuration d) {
  seen_.push_back(d);
  if (seen_.size() > kHistory) seen_.pop_front();
}

SimDuration StepCosts::mean() const {
  if (seen_.empty()) return prior_;
  return std::accumulate(seen_.begin(), seen_.end(), SimDuration{0}) /
         static_cast<int64_t>(seen_.size());
}

SimDuration StepCosts::max() const {
  if (seen_.empty()) return prior_;
  return *std::max_element(seen_.begin(), seen_.end());
}

CompactionCosts CompactionCosts::from_drive(SimDuration revolution, SimDuration full_seek) {
  CompactionCosts c;
  c.read_track = StepCosts(full_seek + revolution);
  c.move = StepCosts(full_seek + 2 * revolution);
  c.record = StepCosts(full_seek + revolution);
  c.repack = StepCosts(2 * full_seek + 3 * revolution);
  c.client_write = StepCosts(full_seek + 2 * revolution);
  return c;
}

SimDuration CompactionCosts::move_mean() const {
  if (move.empty() && !client_write.empty()) return client_write.mean();
  return move.mean();
}

SimDuration CompactionCosts::move_max() const {
  if (move.empty() && !client_write.empty()) return client_write.max();
  return move.max();
}

SimDuration CompactionCosts::whole_track(size_t moves, bool read_done) const {
  SimDuration t = record.max();
  if (!read_done) t += read_track.max();
  if (moves > 0) t += static_cast<int64_t>(moves) * move_mean() + (move_max() - move_mean());
  return t;
}

}  // namespace vld
