#include "core/lld/pending_log.h"

#include <cassert>

namespace vld {

void PendingLog::kill(uint64_t abs_index) {
  LogEntry& e = entry(abs_index);
  assert(!e.dead);
  e.dead = true;
  e.data.clear();
  e.data.shrink_to_fit();
  --live_entries_;
  if (!e.is_trim()) --live_data_entries_;
}

void PendingLog::push(LogEntry e) {
  const uint64_t index = base_ + entries_.size();
  if (dedup_ && !e.is_trim()) {
    if (auto it = newest_data_.find(e.logical_block); it != newest_data_.end()) kill(it->second);
  } else if (dedup_) {
    // A trim supersedes every buffered block in its range.
    const uint64_t end = uint64_t{e.logical_block} + e.trim_blocks;
    for (auto it = newest_data_.begin(); it != newest_data_.end();) {
      if (it->first >= e.logical_block && it->first < end) {
        kill(it->second);
        it = newest_data_.erase(it);
      } else {
        ++it;
      }
    }
  }
  if (e.is_trim()) {
    trims_.push_back(index);
  } else {
    newest_data_[e.logical_block] = index;
    ++live_data_entries_;
  }
  ++live_entries_;
  entries_.push_back(std::move(e));
}

void PendingLog::drop_dead_front() {
  while (!entries_.empty() && entries_.front().dead) {
    entries_.pop_front();
    ++base_;
  }
  while (!trims_.empty() && trims_.front() < base_) trims_.pop_front();
}

const LogEntry& PendingLog::front() {
  assert(!empty());
  drop_dead_front();
  return entries_.front();
}

void PendingLog::pop_front() {
  assert(!empty());
  drop_dead_front();
  LogEntry& e = entries_.front();
  if (!e.is_trim()) {
    auto it = newest_data_.find(e.logical_block);
    if (it != newest_data_.end() && it->second == base_) newest_data_.erase(it);
    --live_data_entries_;
  }
  --live_entries_;
  entries_.pop_front();
  ++base_;
  drop_dead_front();
}

void PendingLog::truncate(uint64_t mark) {
  if (mark < base_) mark = base_;  // its front part was written already
  if (mark >= end_index()) return;
  while (end_index() > mark) {
    const LogEntry& e = entries_.back();
    if (!e.dead) {
      --live_entries_;
      if (!e.is_trim()) --live_data_entries_;
    }
    entries_.pop_back();
  }
  assert(!dedup_ || empty());
  rebuild_index();
  drop_dead_front();
}

void PendingLog::rebuild_index() {
  // A failure path only: a segment's worth of entries at most.
  newest_data_.clear();
  trims_.clear();
  for (uint64_t i = base_; i < end_index(); ++i) {
    const LogEntry& e = entry(i);
    if (e.dead) continue;
    if (e.is_trim()) trims_.push_back(i);
    else newest_data_[e.logical_block] = i;
  }
}

const LogEntry* PendingLog::newest(uint32_t block) const {
  const LogEntry* found = nullptr;
  uint64_t found_index = 0;
  if (auto it = newest_data_.find(block); it != newest_data_.end()) {
    found = &entry(it->second);
    found_index = it->second;
  }
  for (auto it = trims_.rbegin(); it != trims_.rend(); ++it) {
    if (found && *it < found_index) break;
    if (*it < base_) break;
    const LogEntry& t = entry(*it);
    if (!t.dead && t.covers(block)) return &t;
  }
  return found;
}

}  // namespace vld
