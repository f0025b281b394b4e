#include "core/aru/aru_session.h"

#include <vector>

namespace vld {

namespace {

// The shadow's bound: aru_max=, or the disk's own if that is smaller.
AruShadow make_shadow(DiskController& disk, uint64_t aru_max_bytes) {
  const Superblock& sb = disk.superblock();
  const uint64_t group_blocks = disk.max_group_blocks();
  const uint64_t disk_max = group_blocks > UINT64_MAX / sb.block_bytes
                                ? UINT64_MAX
                                : group_blocks * sb.block_bytes;
  if (disk_max < aru_max_bytes)
    return AruShadow(sb.block_bytes, sb.export_bytes, disk_max, disk.max_group_why());
  return AruShadow(sb.block_bytes, sb.export_bytes, aru_max_bytes);
}

}  // namespace

AruSession::AruSession(DiskController& disk, uint64_t max_bytes)
    : disk_(disk), placer_(disk), shadow_(make_shadow(disk, max_bytes)) {
  if (disk.places_shadow()) shadow_.set_placer(&placer_);
}

AruSession::~AruSession() { abort(); }

std::vector<uint64_t> AruSession::DiskPlacer::place(std::span<const GroupBlock> blocks) {
  std::vector<uint64_t> tokens;
  placed_ = disk_.place_shadow(blocks, arrival_, &tokens);
  return tokens;
}

void AruSession::DiskPlacer::drop(uint64_t token) { disk_.drop_shadow(token); }

RequestTiming AruSession::DiskPlacer::finish(uint64_t bytes) {
  RequestTiming counted = disk_.shadow(bytes, arrival_);
  return placed_ ? *placed_ : counted;
}

AruShadow::ReadBase AruSession::read_base(std::optional<SimTime> arrival) {
  return [this, arrival](uint64_t block, std::span<std::byte> out) {
    disk_.read(block * out.size(), out, arrival);
  };
}

RequestTiming AruSession::read(uint64_t offset, std::span<std::byte> out,
                               std::optional<SimTime> arrival) {
  std::lock_guard lock(mu_);
  RequestTiming t = disk_.read(offset, out, arrival);
  shadow_.overlay(offset, out);
  return t;
}

RequestTiming AruSession::write(uint64_t offset, std::span<const std::byte> data,
                                std::optional<SimTime> arrival) {
  std::lock_guard lock(mu_);
  placer_.begin(arrival);
  shadow_.write(offset, data, read_base(arrival));
  return placer_.finish(data.size());
}

RequestTiming AruSession::zero(uint64_t offset, uint64_t len, std::optional<SimTime> arrival) {
  std::lock_guard lock(mu_);
  placer_.begin(arrival);
  shadow_.zero(offset, len, read_base(arrival));
  return placer_.finish(len);
}

RequestTiming AruSession::trim(uint64_t offset, uint64_t len, std::optional<SimTime> arrival) {
  std::lock_guard lock(mu_);
  placer_.begin(arrival);
  shadow_.trim(offset, len);
  return placer_.finish(len);
}

RequestTiming AruSession::commit(std::optional<SimTime> arrival) {
  std::lock_guard lock(mu_);
  const std::vector<GroupBlock> group = shadow_.group();
  RequestTiming t = disk_.commit_group(group, arrival);  // throws: the ARU stays open
  shadow_.committed();
  return t;
}

void AruSession::abort() {
  std::lock_guard lock(mu_);
  if (shadow_.empty()) return;
  disk_.count_aru_abort(shadow_.blocks());
  shadow_.clear();
}

uint64_t AruSession::shadow_bytes() const {
  std::lock_guard lock(mu_);
  return shadow_.bytes();
}

}  // namespace vld
