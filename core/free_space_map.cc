#include "core/free_space_map.h"

#include <string>

#include "core/util/error.h"

namespace vld {

FreeSpaceMap::FreeSpaceMap(uint32_t tracks, uint32_t sectors_per_track)
    : tracks_(tracks),
      spt_(sectors_per_track),
      words_per_track_((sectors_per_track + 63) / 64),
      bits_(size_t{tracks} * words_per_track_, 0),
      free_(tracks, sectors_per_track),
      free_total_(uint64_t{tracks} * sectors_per_track),
      empty_tracks_(tracks) {}

void FreeSpaceMap::set(uint32_t track, uint32_t sector, uint32_t count, bool used) {
  if (track >= tracks_ || sector >= spt_ || count > spt_)
    throw Error("free space map: track " + std::to_string(track) + " sector " +
                    std::to_string(sector) + " count " + std::to_string(count) + " out of range",
                EIO);
  const bool was_empty = free_[track] == spt_;
  // Check every sector before changing any: a refused call changes nothing.
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t s = (sector + i) % spt_;
    if (!is_free(track, s) == used)
      throw Error("free space map: sector " + std::to_string(s) + " of track " +
                      std::to_string(track) + (used ? " allocated twice" : " freed twice"),
                  EIO);
  }
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t s = (sector + i) % spt_;
    bits_[index(track, s)] ^= uint64_t{1} << (s % 64);
  }
  if (used) {
    free_[track] -= count;
    free_total_ -= count;
  } else {
    free_[track] += count;
    free_total_ += count;
  }
  const bool is_empty_now = free_[track] == spt_;
  if (was_empty && !is_empty_now) --empty_tracks_;
  if (!was_empty && is_empty_now) ++empty_tracks_;
}

void FreeSpaceMap::allocate(uint32_t track, uint32_t sector, uint32_t count) {
  set(track, sector, count, true);
}
void FreeSpaceMap::release(uint32_t track, uint32_t sector, uint32_t count) {
  set(track, sector, count, false);
}
void FreeSpaceMap::reserve_track(uint32_t track) { set(track, 0, spt_, true); }

std::optional<FreeSpaceMap::Run> FreeSpaceMap::first_free_run(uint32_t track,
                                                              uint32_t from_sector,
                                                              uint32_t len) const {
  if (len == 0 || len > spt_ || free_[track] < len) return std::nullopt;
  if (free_[track] == spt_) return Run{from_sector % spt_, 0};
  // Walk one revolution plus the run length, counting consecutive free
  // sectors; the run starting at the first position whose count reaches len
  // wins.
  uint32_t streak = 0;
  for (uint32_t i = 0; i < spt_ + len - 1; ++i) {
    uint32_t s = (from_sector + i) % spt_;
    if (is_free(track, s)) {
      if (++streak == len) {
        uint32_t skipped = i + 1 - len;
        if (skipped >= spt_) return std::nullopt;
        return Run{(from_sector + skipped) % spt_, skipped};
      }
    } else {
      streak = 0;
    }
  }
  return std::nullopt;
}

}  // namespace vld
