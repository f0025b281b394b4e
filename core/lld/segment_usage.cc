#include "core/lld/segment_usage.h"

#include <cassert>

namespace vld {

SegmentUsageTable::SegmentUsageTable(uint32_t segment_count, uint32_t capacity_blocks)
    : usage_(segment_count),
      state_(segment_count, SegmentState::kFree),
      capacity_blocks_(capacity_blocks),
      free_count_(segment_count) {
  assert(segment_count > 0 && capacity_blocks > 0);
}

SegmentUsageTable SegmentUsageTable::restore(std::span<const SegmentUsage> usage,
                                             uint32_t capacity_blocks,
                                             std::optional<uint32_t> open_segment) {
  assert(!usage.empty() && (!open_segment.has_value() || *open_segment < usage.size()));
  SegmentUsageTable t(static_cast<uint32_t>(usage.size()), capacity_blocks);
  for (uint32_t s = 0; s < t.segment_count(); ++s) {
    assert(usage[s].live_blocks <= capacity_blocks);
    t.usage_[s] = usage[s];
    t.total_live_blocks_ += usage[s].live_blocks;
    if (open_segment == s) {
      t.state_[s] = SegmentState::kOpen;
    } else if (usage[s].live_blocks > 0) {
      t.state_[s] = SegmentState::kFull;
    } else {
      continue;  // free, as constructed
    }
    --t.free_count_;
  }
  t.open_ = open_segment;
  assert(t.consistent());
  return t;
}

void SegmentUsageTable::open(uint32_t segment) {
  assert(state_.at(segment) == SegmentState::kFree && !open_.has_value());
  assert(usage_[segment].live_blocks == 0);
  state_[segment] = SegmentState::kOpen;
  open_ = segment;
  --free_count_;
}

void SegmentUsageTable::write_block(uint32_t segment, uint64_t seq) {
  SegmentUsage& u = usage_.at(segment);
  assert(state_[segment] == SegmentState::kOpen);
  assert(u.live_blocks < capacity_blocks_ && seq > 0 && seq >= u.last_seq);
  ++u.live_blocks;
  u.last_seq = seq;
  ++total_live_blocks_;
}

void SegmentUsageTable::close(uint32_t segment) {
  assert(state_.at(segment) == SegmentState::kOpen && open_ == segment);
  state_[segment] = SegmentState::kFull;
  open_.reset();
}

void SegmentUsageTable::kill_block(uint32_t segment) {
  SegmentUsage& u = usage_.at(segment);
  assert(state_[segment] != SegmentState::kFree && u.live_blocks > 0);
  --u.live_blocks;
  --total_live_blocks_;
}

void SegmentUsageTable::free_segment(uint32_t segment) {
  assert(state_.at(segment) == SegmentState::kFull && usage_[segment].live_blocks == 0);
  state_[segment] = SegmentState::kFree;
  // In the checkpoint's usage table a free segment is {0, 0}.
  usage_[segment].last_seq = 0;
  ++free_count_;
}

std::optional<uint32_t> SegmentUsageTable::free_at_or_after(uint32_t first) const {
  for (uint32_t s = first; s < segment_count(); ++s) {
    if (state_[s] == SegmentState::kFree) return s;
  }
  return std::nullopt;
}

uint32_t SegmentUsageTable::empty_full_count() const {
  uint32_t n = 0;
  for (uint32_t s = 0; s < segment_count(); ++s) {
    if (state_[s] == SegmentState::kFull && usage_[s].live_blocks == 0) ++n;
  }
  return n;
}

bool SegmentUsageTable::consistent() const {
  uint64_t live = 0;
  uint32_t free = 0;
  uint32_t open = 0;
  for (uint32_t s = 0; s < segment_count(); ++s) {
    if (usage_[s].live_blocks > capacity_blocks_) return false;
    if (state_[s] == SegmentState::kFree) {
      if (usage_[s].live_blocks != 0) return false;
      ++free;
    }
    if (state_[s] == SegmentState::kOpen) {
      if (open_ != s) return false;
      ++open;
    }
    live += usage_[s].live_blocks;
  }
  return open <= 1 && (open == 1) == open_.has_value() && live == total_live_blocks_ &&
         free == free_count_;
}

}  // namespace vld
