#include "core/vld/free_space_map.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cassert>
#include <numeric>
#include <string>
#include <utility>

#include "core/util/error.h"

namespace vld {

FreeSpaceMap::FreeSpaceMap(uint32_t tracks, uint32_t sectors_per_track)
    : FreeSpaceMap(std::vector<uint32_t>(tracks, sectors_per_track)) {}

FreeSpaceMap::FreeSpaceMap(std::vector<uint32_t> track_sectors)
    : tracks_(static_cast<uint32_t>(track_sectors.size())),
      spt_(std::move(track_sectors)),
      words_per_track_((*std::max_element(spt_.begin(), spt_.end()) + 63) / 64),
      bits_(size_t{tracks_} * words_per_track_, 0),
      free_(spt_),
      group_free_((size_t{tracks_} + kGroupTracks - 1) / kGroupTracks, 0),
      longest_(spt_),
      holes_(tracks_, kStale),
      free_total_(std::accumulate(spt_.begin(), spt_.end(), uint64_t{0})),
      empty_tracks_(tracks_),
      empty_bits_((size_t{tracks_} + 63) / 64, ~uint64_t{0}),
      empty_version_(next_empty_version()) {
  assert(!spt_.empty());
  for (uint32_t t = 0; t < tracks_; ++t) group_free_[t / kGroupTracks] += spt_[t];
}

uint64_t FreeSpaceMap::free_sectors_in(uint32_t first, uint32_t count) const {
  const uint32_t end = first + count;
  assert(end <= tracks_);
  uint64_t n = 0;
  uint32_t t = first;
  for (; t < end && t % kGroupTracks != 0; ++t) n += free_[t];
  for (; end - t >= kGroupTracks; t += kGroupTracks) n += group_free_[t / kGroupTracks];
  for (; t < end; ++t) n += free_[t];
  return n;
}

namespace {

// Set bits of words[] at bit positions [first, end).
inline uint32_t count_bits_portable(const uint64_t* words, uint32_t first, uint32_t end) {
  uint32_t n = 0;
  for (uint32_t t = first; t < end;) {
    const uint32_t in_word = std::min(64 - t % 64, end - t);
    const uint64_t mask = in_word == 64 ? ~uint64_t{0} : ((uint64_t{1} << in_word) - 1);
    n += static_cast<uint32_t>(std::popcount((words[t / 64] >> (t % 64)) & mask));
    t += in_word;
  }
  return n;
}

// Every write asks how many empty tracks its window holds (count_empty,
// via EagerAllocator::usable_empty_tracks). The portable build does not
// assume x86's POPCNT instruction, so std::popcount calls libgcc per word;
// a copy compiled for POPCNT runs on CPUs that have it, asked once. (Not
// an ifunc, target_clones': ThreadSanitizer builds crash resolving one.)
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
__attribute__((target("popcnt"))) uint32_t count_bits_popcnt(const uint64_t* words,
                                                             uint32_t first, uint32_t end) {
  return count_bits_portable(words, first, end);
}

bool cpu_has_popcnt() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("popcnt") != 0;
  }();
  return has;
}

uint32_t count_bits(const uint64_t* words, uint32_t first, uint32_t end) {
  return cpu_has_popcnt() ? count_bits_popcnt(words, first, end)
                          : count_bits_portable(words, first, end);
}
#else
uint32_t count_bits(const uint64_t* words, uint32_t first, uint32_t end) {
  return count_bits_portable(words, first, end);
}
#endif

}  // namespace

// Every search's inner step (first_free_run, compute_longest): inline, a
// call per run found costs as much as the word it reads.
inline uint32_t FreeSpaceMap::next_with(uint32_t track, uint32_t pos, bool used) const {
  const uint32_t spt = spt_[track];
  // The first sector at or after pos whose bit is `used`, or spt.
  const uint64_t* w = &bits_[index(track, 0)];
  while (pos < spt) {
    uint64_t word = used ? w[pos / 64] : ~w[pos / 64];
    word &= ~uint64_t{0} << (pos % 64);  // ignore bits before pos
    if (word != 0) {
      uint32_t found = (pos / 64) * 64 + static_cast<uint32_t>(std::countr_zero(word));
      return std::min(found, spt);
    }
    pos = (pos / 64 + 1) * 64;
  }
  return spt;
}

uint64_t FreeSpaceMap::next_empty_version() {
  // Process-wide: disks of other threads have maps of their own.
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

bool FreeSpaceMap::any_empty(uint32_t first, uint32_t count) const {
  return count_empty(first, count) > 0;
}

uint32_t FreeSpaceMap::count_empty(uint32_t first, uint32_t count) const {
  return count_bits(empty_bits_.data(), first, std::min(first + count, tracks_));
}

template <typename F>
void FreeSpaceMap::for_each_word(uint32_t track, uint32_t from, uint32_t n, F f) const {
  for (uint32_t s = from, end = from + n; s < end;) {
    const uint32_t bit = s % 64;
    const uint32_t k = std::min(64 - bit, end - s);
    const uint64_t ones = k == 64 ? ~uint64_t{0} : (uint64_t{1} << k) - 1;
    f(index(track, s), ones << bit, s - bit);
    s += k;
  }
}

void FreeSpaceMap::set(uint32_t track, uint32_t sector, uint32_t count, bool used) {
  if (track >= tracks_ || sector >= spt_[track] || count > spt_[track])
    throw Error("free space map: track " + std::to_string(track) + " sector " +
                    std::to_string(sector) + " count " + std::to_string(count) + " out of range",
                EIO);
  const uint32_t spt = spt_[track];
  const bool was_empty = free_[track] == spt;
  // The sectors as the head meets them: to the end of the track, then on
  // from sector 0. A word at a time: the allocator's trial plans allocate
  // and release several times a write.
  const uint32_t to_end = std::min(count, spt - sector);
  const std::array<std::pair<uint32_t, uint32_t>, 2> runs{
      {{sector, to_end}, {0, count - to_end}}};
  // Check every sector before changing any: a refused call changes nothing.
  for (const auto& [from, n] : runs)
    for_each_word(track, from, n, [&](size_t i, uint64_t mask, uint32_t bit0) {
      if (const uint64_t wrong = (used ? bits_[i] : ~bits_[i]) & mask; wrong != 0) {
        const uint32_t s = bit0 + static_cast<uint32_t>(std::countr_zero(wrong));
        throw Error("free space map: sector " + std::to_string(s) + " of track " +
                        std::to_string(track) + (used ? " allocated twice" : " freed twice"),
                    EIO);
      }
    });
  for (const auto& [from, n] : runs)
    for_each_word(track, from, n,
                  [&](size_t i, uint64_t mask, uint32_t) { bits_[i] ^= mask; });
  if (used) {
    free_[track] -= count;
    group_free_[track / kGroupTracks] -= count;
    free_total_ -= count;
  } else {
    free_[track] += count;
    group_free_[track / kGroupTracks] += count;
    free_total_ += count;
  }
  longest_[track] = kStale;
  holes_[track] = kStale;
  const bool is_empty_now = free_[track] == spt;
  if (was_empty != is_empty_now) {
    if (is_empty_now) ++empty_tracks_;
    else --empty_tracks_;
    empty_bits_[track / 64] ^= uint64_t{1} << (track % 64);
    empty_version_ = next_empty_version();
  }
}

void FreeSpaceMap::allocate(uint32_t track, uint32_t sector, uint32_t count) {
  set(track, sector, count, true);
}
void FreeSpaceMap::release(uint32_t track, uint32_t sector, uint32_t count) {
  set(track, sector, count, false);
}
void FreeSpaceMap::reserve_track(uint32_t track) { set(track, 0, spt_[track], true); }

uint32_t FreeSpaceMap::compute_longest(uint32_t track) const {
  const uint32_t spt = spt_[track];
  if (free_[track] == spt) return spt;
  if (free_[track] == 0) return 0;
  uint32_t longest = 0;
  uint32_t first_start = next_with(track, 0, false);
  uint32_t first_end = next_with(track, first_start, true);
  uint32_t last_end = first_end;
  uint32_t pos = first_end;
  uint32_t last_len = 0;
  longest = first_end - first_start;
  while (pos < spt) {
    uint32_t start = next_with(track, pos, false);
    if (start >= spt) break;
    uint32_t end = next_with(track, start, true);
    last_len = end - start;
    last_end = end;
    longest = std::max(longest, last_len);
    pos = end;
  }
  // A run ending at the last sector continues at sector 0.
  if (first_start == 0 && last_end == spt && last_len > 0)
    longest = std::max(longest, last_len + first_end);
  return longest;
}

std::optional<FreeSpaceMap::Run> FreeSpaceMap::first_free_run(uint32_t track,
                                                              uint32_t from_sector,
                                                              uint32_t len,
                                                              uint32_t max_skipped) const {
  const uint32_t spt = spt_[track];
  if (len == 0 || len > spt || longest_free_run(track) < len) return std::nullopt;
  if (from_sector >= spt) from_sector %= spt;  // searches pass a sector of the track: no division
  if (free_[track] == spt) return Run{from_sector, 0};
  // Free sectors from p onwards, going round past the end of the track
  // (never more than a whole track).
  auto run_from = [&](uint32_t p) {
    uint32_t end = next_with(track, p, true);
    uint32_t n = end - p;
    if (end == spt) n += std::min(next_with(track, 0, true), p);  // continues at sector 0
    return n;
  };
  // The head may already be over a run with room to spare.
  if (is_free(track, from_sector) && run_from(from_sector) >= len) return Run{from_sector, 0};
  // Otherwise the first run, in rotational order from the head, that starts
  // after from_sector and is long enough: search to the end of the track,
  // then from sector 0 back up to the head.
  uint32_t pos = next_with(track, from_sector, true);  // past the run under the head
  for (int lap = 0; lap < 2; ++lap) {
    const uint32_t limit = lap == 0 ? spt : from_sector + 1;
    while (pos < limit) {
      uint32_t start = next_with(track, pos, false);
      if (start >= limit) break;
      const uint32_t skipped =
          start >= from_sector ? start - from_sector : start + spt - from_sector;
      if (skipped > max_skipped) return std::nullopt;  // later runs are later still
      if (run_from(start) >= len) return Run{start, skipped};
      pos = next_with(track, start, true);
    }
    pos = 0;
  }
  return std::nullopt;
}

std::optional<FreeSpaceMap::Run> FreeSpaceMap::first_free_run_slow(uint32_t track,
                                                                   uint32_t from_sector,
                                                                   uint32_t len) const {
  const uint32_t spt = spt_[track];
  if (len == 0 || len > spt || free_[track] < len) return std::nullopt;
  if (free_[track] == spt) return Run{from_sector % spt, 0};
  // Walk one revolution plus the run length, counting consecutive free
  // sectors; the run starting at the first position whose count reaches len
  // wins.
  uint32_t streak = 0;
  for (uint32_t i = 0; i < spt + len - 1; ++i) {
    uint32_t s = (from_sector + i) % spt;
    if (is_free(track, s)) {
      if (++streak == len) {
        uint32_t skipped = i + 1 - len;
        if (skipped >= spt) return std::nullopt;
        return Run{(from_sector + skipped) % spt, skipped};
      }
    } else {
      streak = 0;
    }
  }
  return std::nullopt;
}

uint32_t FreeSpaceMap::holes_for(uint32_t track, uint32_t len) const {
  if (len != holes_len_) {
    std::fill(holes_.begin(), holes_.end(), kStale);
    holes_len_ = len;
  }
  if (holes_[track] == kStale) holes_[track] = compute_holes(track, len);
  return holes_[track];
}

uint32_t FreeSpaceMap::compute_holes(uint32_t track, uint32_t len) const {
  const uint32_t spt = spt_[track];
  if (free_[track] == spt) return spt / len;
  if (free_[track] < len) return 0;
  // Free runs in sector order, a word at a time (next_with). A run that
  // ends at the last sector continues at sector 0, as in compute_longest:
  // the compactor's census asks this of every track of the window at each
  // idle step, so it must not walk sector by sector.
  uint32_t holes = 0, first_len = 0, last_len = 0;
  const uint32_t first_start = next_with(track, 0, false);
  for (uint32_t pos = first_start; pos < spt;) {
    const uint32_t end = next_with(track, pos, true);
    const uint32_t n = end - pos;
    if (pos == first_start) first_len = n;
    holes += n / len;
    last_len = end == spt ? n : 0;
    pos = next_with(track, end, false);
  }
  if (first_start == 0 && last_len > 0)  // two runs that are one (the whole track is free above)
    holes += (first_len + last_len) / len - first_len / len - last_len / len;
  return holes;
}

}  // namespace vld
