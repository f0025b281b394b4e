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
      empty_version_(next_empty_version()),
      track_version_(tracks_, 0),
      starts_(std::min<size_t>(std::bit_ceil(size_t{tracks_} * 2), kMaxStartEntries)),
      starts_mask_(starts_.size() - 1),
      starts_words_(starts_.size() * 2 * words_per_track_, 0) {
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

void FreeSpaceMap::watch(const std::array<TrackRange, 2>& ranges) {
  watched_ = ranges;
  watched_free_ = 0;
  for (const TrackRange& r : ranges) {
    assert(uint64_t{r.first} + r.count <= tracks_);
    watched_free_ += free_sectors_in(r.first, r.count);
  }
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
  flip(track, sector, count, used);
  if (used) {
    free_[track] -= count;
    group_free_[track / kGroupTracks] -= count;
    free_total_ -= count;
    if (watched(track)) watched_free_ -= count;
  } else {
    free_[track] += count;
    group_free_[track / kGroupTracks] += count;
    free_total_ += count;
    if (watched(track)) watched_free_ += count;
  }
  longest_[track] = kStale;
  holes_[track] = kStale;
  ++track_version_[track];
  const bool is_empty_now = free_[track] == spt;
  if (was_empty != is_empty_now) {
    if (is_empty_now) ++empty_tracks_;
    else --empty_tracks_;
    empty_bits_[track / 64] ^= uint64_t{1} << (track % 64);
    empty_version_ = next_empty_version();
  }
}

void FreeSpaceMap::flip(uint32_t track, uint32_t sector, uint32_t count, bool used) {
  // Most calls (a block or a map sector, of the allocator's trial plans
  // too: several a write) neither wrap nor leave one word: one mask,
  // checked, then flipped.
  if (count > 0 && sector + count <= spt_[track] && sector % 64 + count <= 64) {
    const uint64_t mask = (count == 64 ? ~uint64_t{0} : (uint64_t{1} << count) - 1)
                          << (sector % 64);
    uint64_t& word = bits_[index(track, sector)];
    if (((used ? word : ~word) & mask) == 0) {
      word ^= mask;
      return;
    }
  }
  // The sectors as the head meets them: to the end of the track, then on
  // from sector 0, a word at a time.
  const uint32_t to_end = std::min(count, spt_[track] - sector);
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

const FreeSpaceMap::StartsEntry& FreeSpaceMap::refresh_starts(size_t i, uint32_t track,
                                                              uint32_t len) const {
  StartsEntry& e = starts_[i];
  uint64_t* words = &starts_words_[i * 2 * words_per_track_];
  uint64_t* built_from = words + words_per_track_;
  const uint64_t* used = &bits_[index(track, 0)];
  const uint32_t track_words = (spt_[track] + 63) / 64;
  const bool same_run = e.track == track && e.len == len;
  if (!same_run || !std::equal(used, used + track_words, built_from)) {
    if (!same_run || !patch_starts(track, len, built_from, words, &e.any))
      build_starts(track, len, words, &e.any);
    e.track = track;
    e.len = len;
    std::copy(used, used + track_words, built_from);
  }
  e.version = track_version_[track];
  return e;
}

namespace {

// x[i] &= x[i + step] over bit positions, for a bit array of n words
// followed by zeros: each bit then vouches for step more sectors.
// REQUIRES: x holds n + 1 words, x[n] == 0, 0 < step < 64.
inline void and_shifted_short(uint64_t* x, uint32_t n, uint32_t step) {
  for (uint32_t i = 0; i < n; ++i) x[i] &= (x[i] >> step) | (x[i + 1] << (64 - step));
}

// The same for any step. REQUIRES: x holds n words.
void and_shifted(uint64_t* x, uint32_t n, uint32_t step) {
  const uint32_t ws = step / 64, bs = step % 64;
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t lo = i + ws < n ? x[i + ws] : 0;
    const uint64_t hi = i + ws + 1 < n ? x[i + ws + 1] : 0;
    x[i] &= bs == 0 ? lo : (lo >> bs) | (hi << (64 - bs));
  }
}

// Each bit of x (n words, then a zero word) vouched for one free sector,
// the bit's own; after this, for the len sectors from it: doubling the
// sectors each bit vouches for, from 1 to len in about log2(len) passes.
// REQUIRES: x holds n + 1 words, x[n] == 0.
void vouch_for(uint64_t* x, uint32_t n, uint32_t len) {
  for (uint32_t have = 1; have < len;) {
    const uint32_t step = std::min(have, len - have);
    if (step < 64) and_shifted_short(x, n, step);
    else and_shifted(x, n, step);
    have += step;
  }
}

}  // namespace

void FreeSpaceMap::build_starts(uint32_t track, uint32_t len, uint64_t* out, bool* any) const {
  const uint32_t spt = spt_[track];
  const uint32_t track_words = (spt + 63) / 64;
  const uint64_t last_mask = spt % 64 == 0 ? ~uint64_t{0} : (uint64_t{1} << (spt % 64)) - 1;
  // Bit i of x: sector i mod spt is free, for i < spt + len - 1 (the track,
  // then its first len - 1 sectors again: a run may wrap past its end).
  const uint32_t n = (spt + len - 1 + 63) / 64;
  // A block's bitmap fits on the stack (up to 4096 sectors a track).
  constexpr uint32_t kStackWords = 65;
  uint64_t stack[kStackWords];
  if (n + 1 > kStackWords) starts_scratch_.resize(n + 1);
  uint64_t* x = n + 1 > kStackWords ? starts_scratch_.data() : stack;
  std::fill(x, x + n + 1, 0);
  const uint64_t* used = &bits_[index(track, 0)];
  for (uint32_t w = 0; w < track_words; ++w) x[w] = ~used[w];
  x[track_words - 1] &= last_mask;
  for (uint32_t k = 0; k + 1 < len; k += 64) {
    // Sectors [k, k + bits) (all below spt, so not yet overwritten) at bit spt + k.
    const uint32_t bits = std::min(64u, len - 1 - k);
    const uint64_t chunk = x[k / 64] & (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1);
    const uint32_t p = spt + k;
    x[p / 64] |= chunk << (p % 64);
    if (p % 64 != 0 && p % 64 + bits > 64) x[p / 64 + 1] |= chunk >> (64 - p % 64);
  }
  vouch_for(x, n, len);
  x[track_words - 1] &= last_mask;
  uint64_t seen = 0;
  for (uint32_t w = 0; w < track_words; ++w) seen |= out[w] = x[w];
  *any = seen != 0;
}

bool FreeSpaceMap::patch_starts(uint32_t track, uint32_t len, const uint64_t* built_from,
                                uint64_t* words, bool* any) const {
  // The sectors that changed since the entry was built lie in [lo, hi];
  // only the starts whose len sectors meet them can differ: those from
  // lo - (len - 1) to hi, worked out again from the free bits of their
  // sectors (vouch_for, as build_starts does, on one word).
  const uint32_t spt = spt_[track];
  const uint32_t track_words = (spt + 63) / 64;
  const uint64_t* used = &bits_[index(track, 0)];
  uint32_t lo = UINT32_MAX, hi = 0;
  for (uint32_t w = 0; w < track_words; ++w) {
    if (const uint64_t d = used[w] ^ built_from[w]; d != 0) {
      lo = std::min(lo, w * 64 + static_cast<uint32_t>(std::countr_zero(d)));
      hi = w * 64 + 63 - static_cast<uint32_t>(std::countl_zero(d));
    }
  }
  assert(lo <= hi && hi < spt);
  const uint32_t touched = hi - lo + len;       // the starts that may differ
  const uint32_t span = touched + len - 1;      // the sectors they read
  if (span > 64 || span > spt) return false;    // a rebuild costs no more
  const uint32_t first = lo >= len - 1 ? lo - (len - 1) : lo + spt - (len - 1);
  uint64_t x[2] = {~track_bits::cyclic_bits(used, spt, first, span), 0};
  vouch_for(x, 1, len);
  track_bits::set_cyclic_bits(words, spt, first, touched, x[0]);
  uint64_t seen = 0;
  for (uint32_t w = 0; w < track_words; ++w) seen |= words[w];
  *any = seen != 0;
  return true;
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
