// FreeSpaceMap: which physical sectors are free, one bitmap per track.
//
// Eager writing needs to know, for any track and rotational position, where
// the next run of free sectors starts (paper 001, section 2.1). Free space is
// kept at sector granularity: a data block is a run of block_sectors
// consecutive sectors placed at any sector of a track (design notes, section
// 1: waiting for a block boundary costs what formula (9) says), and a map
// sector takes a single sector, often the one right behind the data.
//
// Tracks need not be the same size: on a zoned drive each track has its
// zone's sectors per track (spt below is the track's own).
//
// A run may wrap past the end of a track: sector spt-1 passes under the head
// immediately before sector 0, so a block starting at sector s of track T
// occupies sectors s, s+1, ... mod spt of T, one rotational pass.
//
// Reserved sectors (the system track) are allocated at construction and never
// released.
//
// Thread-safety: not thread-safe; owned by VldDisk under the controller lock.
#ifndef VLD_CORE_VLD_FREE_SPACE_MAP_H_
#define VLD_CORE_VLD_FREE_SPACE_MAP_H_

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/vld/track_bits.h"

namespace vld {

class FreeSpaceMap {
 public:
  // Every track of the same size (a single-zone drive).
  FreeSpaceMap(uint32_t tracks, uint32_t sectors_per_track);
  // Track t has track_sectors[t] sectors.
  explicit FreeSpaceMap(std::vector<uint32_t> track_sectors);

  uint32_t tracks() const { return tracks_; }
  uint32_t sectors_on(uint32_t track) const { return spt_[track]; }

  bool is_free(uint32_t track, uint32_t sector) const {
    return (bits_[index(track, sector)] >> (sector % 64) & 1) == 0;
  }
  // Marks `count` sectors from `sector` (wrapping within the track) used or
  // free. Every sector must be in the opposite state (checked: a double
  // allocation or double free is a bug and throws).
  void allocate(uint32_t track, uint32_t sector, uint32_t count);
  void release(uint32_t track, uint32_t sector, uint32_t count);
  void reserve_track(uint32_t track);  // allocate(track, 0, its sectors), permanently

  uint32_t free_sectors(uint32_t track) const { return free_[track]; }
  // Free sectors on tracks [first, first + count): whole groups of
  // kGroupTracks are read from their kept sums.
  uint64_t free_sectors_in(uint32_t first, uint32_t count) const;
  // Tracks [first, first + count).
  struct TrackRange {
    uint32_t first = 0;
    uint32_t count = 0;
  };
  // The free sectors of a watched set of tracks, kept summed as they
  // change: VldDisk asks for its window's (hundreds of tracks, two ranges
  // where it wraps) after every write. watch() replaces the set and sums
  // it once. Invariant: watched_free_sectors() is the sum of
  // free_sectors_in over the ranges.
  void watch(const std::array<TrackRange, 2>& ranges);
  uint64_t watched_free_sectors() const { return watched_free_; }
  // The longest run of free sectors on the track (wrapping): a search skips
  // tracks that cannot hold a piece. Recomputed on first use after a change.
  uint32_t longest_free_run(uint32_t track) const {
    if (longest_[track] == kStale) longest_[track] = compute_longest(track);
    return longest_[track];
  }
  uint64_t free_sectors() const { return free_total_; }
  bool is_empty(uint32_t track) const { return free_[track] == spt_[track]; }
  uint32_t empty_tracks() const { return empty_tracks_; }
  // Names the set of empty tracks: it changes whenever a track becomes
  // empty or stops being empty, and no two sets of any maps in the process
  // share one (a copy shares its original's, with its set), so a value
  // worked out from the set is still right while the version is the same.
  uint64_t empty_version() const { return empty_version_; }
  // Whether any of tracks [first, first + count) is empty: a search for an
  // empty track passes over a full cylinder a word at a time.
  bool any_empty(uint32_t first, uint32_t count) const;
  // How many of tracks [first, first + count) are empty.
  uint32_t count_empty(uint32_t first, uint32_t count) const;

  // How many runs of `len` sectors fit side by side into the track's free
  // runs (wrapping): the blocks hole-plugging can put there. Cached per
  // track for the last `len` asked (always the block size), recomputed on
  // first use after a change: the stats report sums it over every track
  // once a second, under the controller lock.
  uint32_t holes_for(uint32_t track, uint32_t len) const;

  // The first sector s, in rotational order starting at `from_sector`, such
  // that `len` sectors from s (wrapping) are free; `skipped` is how many
  // sector positions the head passes before s. nullopt if the track has no
  // such run, or none with skipped <= max_skipped (a search that has found
  // a run sooner elsewhere looks no further round). Reads the track's start
  // bitmap for len (below): a few words, whatever the track's free runs.
  struct Run {
    uint32_t sector;
    uint32_t skipped;
  };
  std::optional<Run> first_free_run(uint32_t track, uint32_t from_sector, uint32_t len,
                                    uint32_t max_skipped = UINT32_MAX) const {
    if (len == 0) return std::nullopt;
    const uint32_t spt = spt_[track];
    return first_run_within(track, len, from_sector % spt, std::min(max_skipped, spt - 1) + 1);
  }
  // first_free_run for a search that has worked out its window once for
  // many tracks: the first run that starts within `span` sectors from
  // from_sector (max_skipped = span - 1). Inline, without first_free_run's
  // division, and reading only the words of the starts within the window:
  // the allocator's searches ask this of every track they look at, and
  // mostly learn only that the run lies past the best found so far.
  // REQUIRES: 1 <= len, from_sector < sectors_on(track),
  // 1 <= span <= sectors_on(track) (asserted where the caller works them
  // out, once for many tracks: here they would cost 5% of a write's
  // instructions).
  std::optional<Run> first_run_within(uint32_t track, uint32_t len, uint32_t from_sector,
                                      uint32_t span) const {
    const uint32_t free = free_[track];
    if (free < len) return std::nullopt;  // and so len > spt
    if (free == spt_[track]) return Run{from_sector, 0};
    // Runs of one sector: the free bits themselves (the used bits,
    // inverted; bits at or past spt are never read). Longer: the track's
    // start bitmap for len.
    if (len == 1)
      return first_in_window(&bits_[index(track, 0)], /*invert=*/true, spt_[track], from_sector,
                             span);
    const StartsEntry& e = starts(track, len);
    if (!e.any) return std::nullopt;
    return first_in_window(starts_words(e), /*invert=*/false, spt_[track], from_sector, span);
  }
  // The same, one sector at a time: the reference the fast one is tested
  // against.
  std::optional<Run> first_free_run_slow(uint32_t track, uint32_t from_sector,
                                         uint32_t len) const;

  // The track's start bitmap for len, for a reader that tests its bits
  // itself (CylinderStarts): bit s of words (of their complements if
  // invert) is set iff the len sectors from s (wrapping) are free; no bit
  // at or past the track's sectors is meaningful. Length 1 gives the used
  // bits, inverted. Valid until the map next changes or is asked for
  // another track's starts. REQUIRES: 1 <= len <= free_sectors(track).
  struct StartBits {
    const uint64_t* words;
    bool invert;
  };
  StartBits start_bits(uint32_t track, uint32_t len) const {
    assert(len >= 1 && len <= free_[track]);
    if (len == 1) return StartBits{&bits_[index(track, 0)], true};
    return StartBits{starts_words(starts(track, len)), false};
  }
  // A number that grows whenever the track changes (bumped by every
  // allocate and release).
  uint64_t version(uint32_t track) const { return track_version_[track]; }
  // A number that grows whenever any of tracks [first, first + count)
  // changes (the sum of their versions, each bumped by every change): what
  // was worked out from those tracks still holds while it is the same.
  uint64_t version_of(uint32_t first, uint32_t count) const {
    uint64_t sum = 0;
    for (uint32_t t = first; t < first + count; ++t) sum += track_version_[t];
    return sum;
  }

 private:
  size_t index(uint32_t track, uint32_t sector) const {
    return size_t{track} * words_per_track_ + sector / 64;
  }
  void set(uint32_t track, uint32_t sector, uint32_t count, bool used);
  // set()'s change to the bits: flips `count` sectors from `sector`
  // (wrapping) to `used`, or throws changing nothing if one already is.
  // REQUIRES: the range checks of set() passed.
  void flip(uint32_t track, uint32_t sector, uint32_t count, bool used);
  // Calls f(word index, mask, sector of the word's bit 0) for each word
  // holding sectors [from, from + n) of the track (no wrap), in order.
  template <typename F>
  void for_each_word(uint32_t track, uint32_t from, uint32_t n, F f) const;
  uint32_t next_with(uint32_t track, uint32_t pos, bool used) const;
  // The first start within `span` sectors from from_sector, round the
  // track (track_bits::first_in_window) of words (of their complements if
  // invert), as a Run. REQUIRES: from_sector < spt, 1 <= span <= spt.
  static std::optional<Run> first_in_window(const uint64_t* words, bool invert, uint32_t spt,
                                            uint32_t from_sector, uint32_t span) {
    if (auto hit = track_bits::first_in_window(words, invert, spt, from_sector, span))
      return Run{hit->at, hit->skipped};
    return std::nullopt;
  }

  uint32_t tracks_;
  std::vector<uint32_t> spt_;  // sectors of each track
  uint32_t words_per_track_;   // for the longest track
  std::vector<uint64_t> bits_;  // 1 = used
  std::vector<uint32_t> free_;  // free sectors per track
  static constexpr uint32_t kGroupTracks = 64;
  std::vector<uint64_t> group_free_;  // free sectors of tracks [64 g, 64 g + 64)
  static constexpr uint32_t kStale = UINT32_MAX;
  mutable std::vector<uint32_t> longest_;  // longest free run per track, or kStale
  uint32_t compute_longest(uint32_t track) const;
  mutable std::vector<uint32_t> holes_;    // holes_for(track, holes_len_), or kStale
  mutable uint32_t holes_len_ = 0;
  uint32_t compute_holes(uint32_t track, uint32_t len) const;
  uint64_t free_total_;
  bool watched(uint32_t track) const {  // in a watched range (unsigned: below first wraps)
    return track - watched_[0].first < watched_[0].count ||
           track - watched_[1].first < watched_[1].count;
  }
  std::array<TrackRange, 2> watched_{};
  uint64_t watched_free_ = 0;  // free sectors of the watched_ tracks
  uint32_t empty_tracks_;
  std::vector<uint64_t> empty_bits_;  // bit t: is_empty(t)
  uint64_t empty_version_;
  static uint64_t next_empty_version();
  // Start bitmaps: bit s of a track's bitmap for len is set iff the len
  // sectors from s (wrapping) are free; no bit at or past the track's
  // sectors. Built on first use, kept direct-mapped by track and len parity
  // (a write searches for a block, a map sector and both: lengths 8, 1, 9;
  // length 1 reads the free bits themselves). An entry holds the track's
  // used bits it was built from: it is current while they equal the
  // track's, known at once while the track's version (bumped by every
  // set()) is the one last checked. So the allocator's trial plans, which
  // allocate and release the same sectors, leave it current; and after a
  // change of a few neighbouring sectors it is patched, not rebuilt
  // (patch_starts). Bounded: at most kMaxStartEntries entries, however
  // large the disk.
  struct StartsEntry {
    uint32_t track = 0;
    uint32_t len = 0;  // 0: holds nothing yet
    uint64_t version = 0;
    bool any = false;  // some bit set: the track has a run of len
  };
  static constexpr uint32_t kMaxStartEntries = 16384;
  // The entry for (track, len), built if need be. REQUIRES: 2 <= len <= spt.
  // Inline: a search asks this of every track it looks at, and mostly the
  // track has not changed since.
  const StartsEntry& starts(uint32_t track, uint32_t len) const {
    const size_t i = (size_t{track} * 2 + len % 2) & starts_mask_;
    const StartsEntry& e = starts_[i];
    if (e.version == track_version_[track] && e.track == track && e.len == len) return e;
    return refresh_starts(i, track, len);
  }
  // Entry i made current for (track, len): kept if it already holds them
  // and the track's used bits are the ones it was built from, patched if
  // it holds them and a few neighbouring sectors changed, else rebuilt.
  const StartsEntry& refresh_starts(size_t i, uint32_t track, uint32_t len) const;
  // An entry's bitmap (words_per_track_ words), then the used bits it was
  // built from (as many).
  const uint64_t* starts_words(const StartsEntry& e) const {
    return &starts_words_[size_t(&e - starts_.data()) * 2 * words_per_track_];
  }
  void build_starts(uint32_t track, uint32_t len, uint64_t* out, bool* any) const;
  // An entry for (track, len) built from the used bits built_from, brought
  // up to the track's bits in place when they differ in a few neighbouring
  // sectors: a write's trial plans allocate and release a block and a map
  // sector on the tracks their searches read, and the next search asks
  // for those tracks again. False (words untouched) if the changed
  // sectors lie too far apart for one word: build_starts then.
  // REQUIRES: built_from differs from the track's used bits.
  bool patch_starts(uint32_t track, uint32_t len, const uint64_t* built_from, uint64_t* words,
                    bool* any) const;
  std::vector<uint64_t> track_version_;  // per track, bumped by set()
  mutable std::vector<StartsEntry> starts_;     // a power of two of them
  size_t starts_mask_;                          // starts_.size() - 1
  mutable std::vector<uint64_t> starts_words_;  // 2 words_per_track_ per entry
  mutable std::vector<uint64_t> starts_scratch_;  // build_starts's, for long runs
};

}  // namespace vld

#endif  // VLD_CORE_VLD_FREE_SPACE_MAP_H_
