#include "core/store/group_commit.h"

#include <algorithm>
#include <cassert>

namespace vld {

void GroupCommit::wrote(uint64_t seq) {
  std::lock_guard lock(mu_);
  assert(seq >= written_);
  written_ = seq;
}

void GroupCommit::synced_all() {
  std::lock_guard lock(mu_);
  synced_ = std::max(synced_, written_);
  done_.notify_all();
}

uint64_t GroupCommit::synced() const {
  std::lock_guard lock(mu_);
  return synced_;
}

uint32_t GroupCommit::sync_through(uint64_t ticket, const std::function<void()>& sync_file) {
  std::unique_lock lock(mu_);
  assert(ticket <= written_);
  uint32_t syncs = 0;
  while (synced_ < ticket) {
    if (failed_) throw *failed_;
    if (syncing_) {
      done_.wait(lock);
      continue;
    }
    // Lead: sync what is written now; what is written meanwhile waits for
    // the next sync.
    syncing_ = true;
    const uint64_t target = written_;
    lock.unlock();
    std::optional<Error> error;
    try {
      sync_file();
    } catch (const Error& e) {
      error = e;
    }
    lock.lock();
    syncing_ = false;
    ++syncs;
    if (error && !failed_) failed_ = error;
    if (!error) synced_ = std::max(synced_, target);
    done_.notify_all();
  }
  return syncs;
}

std::optional<Error> GroupCommit::take_failure() {
  std::lock_guard lock(mu_);
  if (!failed_ || failure_taken_) return std::nullopt;
  failure_taken_ = true;
  return failed_;
}

}  // namespace vld
