#include "core/vld/track_slots.h"

namespace vld {

TrackSlots::TrackSlots(uint32_t tracks, uint32_t block_sectors,
                       const std::function<uint32_t(uint32_t)>& sectors_of)
    : block_sectors_(block_sectors), first_slot_(uint64_t{tracks} + 1), count_(tracks, 0) {
  assert(block_sectors >= 1);
  uint64_t slots = 0;
  for (uint32_t t = 0; t < tracks; ++t) {
    first_slot_[t] = static_cast<uint32_t>(slots);
    slots += (uint64_t{sectors_of(t)} + block_sectors - 1) / block_sectors;
    assert(slots < kNone);  // fewer slots than sectors, and sectors are 32-bit
  }
  first_slot_[tracks] = static_cast<uint32_t>(slots);
  slots_.assign(slots, kNone);
}

void TrackSlots::items(uint32_t track, std::vector<uint32_t>* out) const {
  for (uint32_t i = first_slot_[track]; i < first_slot_[track + 1]; ++i)
    if (slots_[i] != kNone) out->push_back(slots_[i]);
}

uint64_t TrackSlots::memory_bytes() const {
  return sizeof(uint32_t) * (first_slot_.capacity() + count_.capacity() + slots_.capacity());
}

std::string TrackSlots::check(uint64_t blocks,
                              const std::function<std::optional<Where>(uint32_t)>& where) const {
  const uint32_t tracks = static_cast<uint32_t>(count_.size());
  std::vector<uint8_t> seen(blocks, 0);
  for (uint32_t t = 0; t < tracks; ++t) {
    uint32_t n = 0;
    for (uint32_t i = first_slot_[t]; i < first_slot_[t + 1]; ++i) {
      const uint32_t b = slots_[i];
      if (b == kNone) continue;
      ++n;
      if (b >= blocks || seen[b]++) return "track " + std::to_string(t) + ": a block twice";
      const std::optional<Where> w = where(b);
      if (!w || w->track != t || first_slot_[t] + w->sector / block_sectors_ != i)
        return "block " + std::to_string(b) + " in a slot of track " + std::to_string(t) +
               " where it does not start";
    }
    if (n != count_[t]) return "track " + std::to_string(t) + ": count is off";
  }
  for (uint32_t b = 0; b < blocks; ++b)
    if (!seen[b] && where(b)) return "block " + std::to_string(b) + " missing from its track";
  return "";
}

}  // namespace vld
