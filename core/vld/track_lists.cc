#include "core/vld/track_lists.h"

#include <cassert>

namespace vld {

namespace {
// next_[item] of an item on no track (kNone ends a list).
constexpr uint32_t kDetached = TrackLists::kNone - 1;
}  // namespace

TrackLists::TrackLists(uint32_t tracks, uint64_t items)
    : head_(tracks, kNone), count_(tracks, 0), next_(items, kDetached), prev_(items, kNone) {
  assert(items <= kDetached);  // every id below the two markers
}

void TrackLists::add(uint32_t track, uint32_t item) {
  assert(next_[item] == kDetached);  // on no track yet
  next_[item] = head_[track];
  if (head_[track] != kNone) prev_[head_[track]] = item;
  head_[track] = item;
  ++count_[track];
}

void TrackLists::remove(uint32_t track, uint32_t item) {
  assert(count_[track] > 0 && next_[item] != kDetached);
  const uint32_t before = prev_[item], after = next_[item];
  if (before == kNone) {
    assert(head_[track] == item);
    head_[track] = after;
  } else {
    next_[before] = after;
  }
  if (after != kNone) prev_[after] = before;
  prev_[item] = kNone;
  next_[item] = kDetached;
  --count_[track];
}

void TrackLists::items(uint32_t track, std::vector<uint32_t>* out) const {
  for (uint32_t i = head_[track]; i != kNone; i = next_[i]) out->push_back(i);
}

uint64_t TrackLists::memory_bytes() const {
  return sizeof(uint32_t) *
         (head_.capacity() + count_.capacity() + next_.capacity() + prev_.capacity());
}

std::string TrackLists::check(
    const std::function<std::optional<uint32_t>(uint32_t)>& track_of) const {
  std::vector<uint8_t> seen(next_.size(), 0);
  for (uint32_t t = 0; t < head_.size(); ++t) {
    uint32_t n = 0;
    for (uint32_t i = head_[t], before = kNone; i != kNone; before = i, i = next_[i], ++n) {
      if (i >= next_.size() || seen[i]++) return "track " + std::to_string(t) + ": a broken list";
      if (track_of(i) != t)
        return "item " + std::to_string(i) + " listed on track " + std::to_string(t);
      if (prev_[i] != before)
        return "item " + std::to_string(i) + ": back link wrong";
    }
    if (n != count_[t]) return "track " + std::to_string(t) + ": count is off";
  }
  for (uint32_t i = 0; i < next_.size(); ++i)
    if (!seen[i] && track_of(i)) return "item " + std::to_string(i) + " missing from its track";
  return "";
}

}  // namespace vld
