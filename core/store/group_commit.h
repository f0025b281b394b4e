// GroupCommit: one backing-store sync for the writes of several requests in
// flight (group commit), as a database's log shares one fsync among the
// transactions that commit while it runs.
//
// A request whose last step is the sync (mode=lld's NVRAM append: its
// records are written, and it is acknowledged once they are durable) takes
// a ticket, the highest seq it wrote, and calls sync_through(ticket) after
// the drive has moved on to the next request. The first caller that finds
// its ticket not yet durable and no sync running leads: it syncs what was
// written when it started (written_through()), and the others wait. Those
// written during that sync are covered by the next one, which one of them
// leads. So with k requests in flight a sync covers up to k - 1 of them.
//
// Invariants: synced <= written; a ticket is durable when synced >= ticket;
// at most one sync runs. A failed sync is final: every ticket not durable
// by then fails too (the disk stops: crash contract clause 7), and the
// failure is handed once to whoever reports it (take_failure).
//
// Thread-safety: thread-safe. wrote() and synced_all() are called by the
// disk, under the lock that serialises requests; sync_through() by the
// requests' threads without it, concurrently with those.
#ifndef VLD_CORE_STORE_GROUP_COMMIT_H_
#define VLD_CORE_STORE_GROUP_COMMIT_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>

#include "core/util/error.h"

namespace vld {

class GroupCommit {
 public:
  // Everything up to `seq` is durable already (what an open found).
  explicit GroupCommit(uint64_t durable_seq = 0) : written_(durable_seq), synced_(durable_seq) {}

  // Records up to seq are written (not yet durable). REQUIRES: seq >= every
  // seq passed before.
  void wrote(uint64_t seq);
  // A sync made under the requests' lock covered everything written so far.
  void synced_all();
  // The highest seq known durable: what a new record may say was synced.
  uint64_t synced() const;

  // Returns once every record up to ticket is durable, leading a sync
  // (sync_file: the backing store's, without the requests' lock) if none
  // runs; the number of syncs this caller made (0 or more). Throws the
  // failed sync's Error, to every caller whose ticket it left not durable.
  uint32_t sync_through(uint64_t ticket, const std::function<void()>& sync_file);
  // The failed sync's error, once (nullopt after, or if none failed).
  std::optional<Error> take_failure();

 private:
  mutable std::mutex mu_;
  std::condition_variable done_;  // a sync ended; guarded by mu_
  uint64_t written_;              // guarded by mu_
  uint64_t synced_;               // guarded by mu_
  bool syncing_ = false;          // guarded by mu_
  std::optional<Error> failed_;   // guarded by mu_; sticky
  bool failure_taken_ = false;    // guarded by mu_
};

}  // namespace vld

#endif  // VLD_CORE_STORE_GROUP_COMMIT_H_
