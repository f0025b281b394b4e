// PendingLog: mode=lld's entries on their way into segments, in log order:
// with NVRAM, the write buffer (every entry is also in the NVRAM region);
// without, the open segment's memory copy (entries not yet written).
//
// An entry is one client block (data) or one trim of a range of blocks, or
// a block the cleaner moves. With dedup (the NVRAM buffer) a newer entry
// for a block kills the older one, so a drain writes each block once, as
// the paper's buffer cache does. Without dedup (nvram=0) every entry is
// written in order: an older version of a block is still part of the
// request that wrote it, and dropping it could let a crash keep half of
// that request (docs/crash-contract.md clause 3).
//
// Invariants: entries are in push order; newest(b) is the last live entry
// that covers b; a dead entry is never newest and is skipped by front().
//
// Thread-safety: thread-compatible; the disk serialises access.
#ifndef VLD_CORE_LLD_PENDING_LOG_H_
#define VLD_CORE_LLD_PENDING_LOG_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

namespace vld {

struct LogEntry {
  uint32_t logical_block = 0;
  uint32_t trim_blocks = 0;  // > 0: a trim of [logical_block, logical_block + trim_blocks)
  uint64_t version = 0;
  uint32_t checksum = 0;     // data entries: data_checksum(data, logical_block)
  std::vector<unsigned char> data;  // data entries: the block's bytes
  bool ends_request = true;  // the last entry of its client request (with NVRAM: every entry)
  bool dead = false;         // superseded (dedup only)

  bool is_trim() const { return trim_blocks > 0; }
  bool covers(uint32_t block) const {
    return block >= logical_block && block - logical_block < (is_trim() ? trim_blocks : 1);
  }
};

class PendingLog {
 public:
  explicit PendingLog(bool dedup) : dedup_(dedup) {}

  bool empty() const { return live_entries_ == 0; }
  size_t live_entries() const { return live_entries_; }
  size_t live_data_entries() const { return live_data_entries_; }

  // Appends e; with dedup, kills older entries of the blocks it covers.
  void push(LogEntry e);
  // The first live entry. REQUIRES: !empty().
  const LogEntry& front();
  // Calls fn(entry) on live entries from the front until it returns false.
  // fn must not push or pop.
  template <typename Fn>
  void for_each_live(Fn fn) const {
    for (const LogEntry& e : entries_)
      if (!e.dead && !fn(e)) return;
  }
  // Drops the first live entry. REQUIRES: !empty().
  void pop_front();
  // The newest live entry covering block, or nullptr.
  const LogEntry* newest(uint32_t block) const;

  // The absolute index the next push gets: a mark for truncate().
  uint64_t end_index() const { return base_ + entries_.size(); }
  // Drops every entry pushed at or after mark that is still here (a failed
  // request's, taken back out). REQUIRES: no entry from mark on killed one
  // before it: true without dedup, or when nothing before mark is live.
  void truncate(uint64_t mark);

 private:
  void kill(uint64_t abs_index);
  void drop_dead_front();
  void rebuild_index();  // newest_data_ and trims_ from entries_
  LogEntry& entry(uint64_t abs_index) { return entries_[abs_index - base_]; }
  const LogEntry& entry(uint64_t abs_index) const { return entries_[abs_index - base_]; }

  const bool dedup_;
  std::deque<LogEntry> entries_;
  uint64_t base_ = 0;  // absolute index of entries_[0]
  std::unordered_map<uint32_t, uint64_t> newest_data_;  // block -> absolute index
  std::deque<uint64_t> trims_;                          // absolute indices, ascending
  size_t live_entries_ = 0;
  size_t live_data_entries_ = 0;
};

}  // namespace vld

#endif  // VLD_CORE_LLD_PENDING_LOG_H_
