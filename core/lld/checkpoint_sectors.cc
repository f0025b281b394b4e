#include "core/lld/checkpoint_sectors.h"

#include <algorithm>
#include <bit>
#include <cassert>

#include "core/lld/checkpoint.h"
#include "core/lld/lld_shape.h"

namespace vld {

CheckpointSectors::CheckpointSectors(uint32_t sectors, uint64_t logical_blocks)
    : logical_blocks_(logical_blocks), hashes_(sectors, 0) {
  for (auto& s : stale_) s.assign((sectors + 63) / 64, ~uint64_t{0});
  for (auto& j : journaled_) j.assign((sectors + 63) / 64, 0);
}

void CheckpointSectors::loaded(int picked, std::vector<uint64_t> hashes,
                               std::span<const unsigned char> picked_bytes,
                               std::span<const unsigned char> other) {
  assert(picked == 0 || picked == 1);
  assert(hashes.size() == hashes_.size() && picked_bytes.size() >= hashes_.size() * kLldSectorBytes);
  assert(other.empty() || other.size() == picked_bytes.size());
  hashes_ = std::move(hashes);
  std::fill(stale_[picked].begin(), stale_[picked].end(), 0);
  std::fill(stale_[1 - picked].begin(), stale_[1 - picked].end(), 0);
  for (int slot : {0, 1}) set_journal(slot, 0, {});
  for (uint32_t i = 0; i < hashes_.size(); ++i) {
    const size_t at = size_t{i} * kLldSectorBytes;
    if (other.empty() || !std::equal(other.begin() + at, other.begin() + at + kLldSectorBytes,
                                     picked_bytes.begin() + at))
      stale_[1 - picked][i / 64] |= uint64_t{1} << (i % 64);
  }
}

void CheckpointSectors::set_journal(int slot, uint32_t used, std::span<const uint32_t> journaled) {
  assert(slot == 0 || slot == 1);
  folded(slot);
  appended(slot, journaled, used);
}

void CheckpointSectors::touch(uint64_t sector) {
  assert(sector < hashes_.size());
  for (auto& s : stale_) s[sector / 64] |= uint64_t{1} << (sector % 64);
}

void CheckpointSectors::touch_map(uint64_t block) {
  assert(block < logical_blocks_);
  touch(block * kBlockMapEntryBytes / kLldSectorBytes);
}

void CheckpointSectors::touch_usage(uint64_t segment) {
  const uint64_t at = logical_blocks_ * kBlockMapEntryBytes + segment * kSegmentUsageBytes;
  touch(at / kLldSectorBytes);
  touch((at + kSegmentUsageBytes - 1) / kLldSectorBytes);  // a row may straddle two
}

std::vector<uint32_t> CheckpointSectors::listed(const std::vector<uint64_t>& bits, size_t count) {
  std::vector<uint32_t> out;
  for (size_t w = 0; w < bits.size(); ++w)
    for (uint64_t word = bits[w]; word != 0; word &= word - 1) {
      const uint64_t i = w * 64 + static_cast<uint64_t>(std::countr_zero(word));
      if (i < count) out.push_back(static_cast<uint32_t>(i));
    }
  return out;
}

std::vector<uint32_t> CheckpointSectors::stale(int slot) const {
  return listed(stale_[slot], hashes_.size());
}

std::vector<uint32_t> CheckpointSectors::fold_sectors(int slot) const {
  std::vector<uint64_t> both = stale_[slot];
  for (size_t w = 0; w < both.size(); ++w) both[w] |= journaled_[slot][w];
  return listed(both, hashes_.size());
}

void CheckpointSectors::appended(int slot, std::span<const uint32_t> sectors, uint32_t used) {
  assert(used >= journal_used_[slot]);
  journal_used_[slot] = used;
  for (uint32_t i : sectors) {
    assert(i < hashes_.size());
    journaled_[slot][i / 64] |= uint64_t{1} << (i % 64);
  }
}

void CheckpointSectors::folded(int slot) {
  journal_used_[slot] = 0;
  std::fill(journaled_[slot].begin(), journaled_[slot].end(), 0);
}

void CheckpointSectors::written(int slot) {
  std::fill(stale_[slot].begin(), stale_[slot].end(), 0);
}

}  // namespace vld
