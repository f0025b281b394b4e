#include "core/free_space_map.h"

#include <algorithm>
#include <bit>
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

uint32_t FreeSpaceMap::next_with(uint32_t track, uint32_t pos, bool used) const {
  // The first sector at or after pos whose bit is `used`, or spt_.
  const uint64_t* w = &bits_[index(track, 0)];
  while (pos < spt_) {
    uint64_t word = used ? w[pos / 64] : ~w[pos / 64];
    word &= ~uint64_t{0} << (pos % 64);  // ignore bits before pos
    if (word != 0) {
      uint32_t found = (pos / 64) * 64 + static_cast<uint32_t>(std::countr_zero(word));
      return std::min(found, spt_);
    }
    pos = (pos / 64 + 1) * 64;
  }
  return spt_;
}

std::optional<FreeSpaceMap::Run> FreeSpaceMap::first_free_run(uint32_t track,
                                                              uint32_t from_sector,
                                                              uint32_t len) const {
  if (len == 0 || len > spt_ || free_[track] < len) return std::nullopt;
  from_sector %= spt_;
  if (free_[track] == spt_) return Run{from_sector, 0};
  // The track's free runs, found a word at a time (a track at 80% has a
  // handful); a run that ends at the last sector continues at sector 0.
  std::optional<Run> best;
  auto consider = [&](uint32_t start, uint32_t length) {
    if (length < len) return;
    // Where, going round from from_sector, a run of len can first start in
    // [start, start + length) (positions mod spt_).
    uint32_t off = (from_sector + spt_ - start) % spt_;  // from_sector's offset in the run
    uint32_t skipped;
    uint32_t at;
    if (off + len <= length) {  // the head is in the run with room to spare
      skipped = 0;
      at = from_sector;
    } else {
      skipped = (start + spt_ - from_sector) % spt_;
      at = start;
    }
    if (!best || skipped < best->skipped) best = Run{at, skipped};
  };
  uint32_t first_start = next_with(track, 0, false);
  uint32_t first_end = next_with(track, first_start, true);
  uint32_t pos = first_end;
  bool wraps = first_start == 0;
  while (pos < spt_) {
    uint32_t start = next_with(track, pos, false);
    if (start >= spt_) break;
    uint32_t end = next_with(track, start, true);
    if (end == spt_ && wraps) {
      consider(start, end - start + first_end);  // joins the run at sector 0
      wraps = false;
      first_end = 0;  // already counted
      break;
    }
    consider(start, end - start);
    pos = end;
  }
  if (first_end > first_start) consider(first_start, first_end - first_start);
  return best;
}

std::optional<FreeSpaceMap::Run> FreeSpaceMap::first_free_run_slow(uint32_t track,
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
