#include "core/aru/aru_shadow.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <string>
#include <utility>

#include "core/util/error.h"

namespace vld {

AruShadow::AruShadow(uint32_t block_bytes, uint64_t export_bytes, uint64_t max_bytes,
                     std::string max_why)
    : block_bytes_(block_bytes),
      export_bytes_(export_bytes),
      max_bytes_(max_bytes),
      max_why_(std::move(max_why)) {
  assert(block_bytes > 0 && export_bytes % block_bytes == 0);
}

void AruShadow::check_range(uint64_t offset, uint64_t len) const {
  if (offset > export_bytes_ || len > export_bytes_ - offset)
    throw Error("request [" + std::to_string(offset) + ", +" + std::to_string(len) +
                    ") is beyond the end of the disk (" + std::to_string(export_bytes_) +
                    " bytes)",
                EINVAL);
}

void AruShadow::check_room(uint64_t first, uint64_t last) const {
  uint64_t added = 0;
  for (uint64_t b = first; b <= last; ++b) added += blocks_.count(b) ? 0 : 1;
  const uint64_t after = bytes() + added * block_bytes_;
  if (after <= max_bytes_) return;
  if (!max_why_.empty())
    throw Error("this atomic recovery unit would hold " + std::to_string(after) +
                    " bytes, more than " + max_why_ + " can commit at once (" +
                    std::to_string(max_bytes_) + " bytes): commit it (flush) first",
                ENOSPC);
  throw Error("this atomic recovery unit would hold " + std::to_string(after) +
                  " bytes, more than aru_max=" + std::to_string(max_bytes_) +
                  ": commit it (flush) first, or serve with a larger aru_max=",
              ENOSPC);
}

void AruShadow::write(uint64_t offset, std::span<const std::byte> data,
                      const ReadBase& read_base) {
  change(offset, data.size(), data.data(), read_base);
}

void AruShadow::zero(uint64_t offset, uint64_t len, const ReadBase& read_base) {
  change(offset, len, nullptr, read_base);
}

void AruShadow::change(uint64_t offset, uint64_t len, const std::byte* data,
                       const ReadBase& read_base) {
  check_range(offset, len);
  if (len == 0) return;
  check_room(offset / block_bytes_, (offset + len - 1) / block_bytes_);
  install(changed_blocks(offset, len, data, read_base));
}

std::map<uint64_t, AruShadow::Block> AruShadow::changed_blocks(uint64_t offset, uint64_t len,
                                                               const std::byte* data,
                                                               const ReadBase& read_base) const {
  const uint64_t bs = block_bytes_;
  std::map<uint64_t, Block> next;
  for (uint64_t b = offset / bs; b <= (offset + len - 1) / bs; ++b) {
    const uint64_t lo = std::max(offset, b * bs), hi = std::min(offset + len, (b + 1) * bs);
    Block& block = next[b];
    if (hi - lo == bs && !data) continue;  // a whole block zeroed: a hole
    const auto held = blocks_.find(b);
    if (hi - lo < bs && held == blocks_.end()) {  // partial, not the ARU's yet: committed data
      block.bytes.resize(bs);
      read_base(b, block.bytes);
    } else if (hi - lo < bs && !held->second.bytes.empty()) {
      block.bytes = held->second.bytes;
    } else {
      block.bytes.assign(bs, std::byte{0});  // written whole, or a hole written in part
    }
    if (data)
      std::memcpy(block.bytes.data() + (lo - b * bs), data + (lo - offset), hi - lo);
    else
      std::memset(block.bytes.data() + (lo - b * bs), 0, hi - lo);
  }
  return next;
}

void AruShadow::install(std::map<uint64_t, Block> next) {
  if (placer_) {
    std::vector<GroupBlock> to_place;
    for (const auto& [b, block] : next)
      if (!block.bytes.empty()) to_place.push_back(GroupBlock{b, block.bytes.data()});
    if (!to_place.empty()) {
      const std::vector<uint64_t> tokens = placer_->place(to_place);  // throws: nothing changed
      assert(tokens.size() == to_place.size());
      for (size_t i = 0; i < to_place.size(); ++i) next[to_place[i].block].token = tokens[i];
    }
  }
  for (auto& [b, block] : next) {
    Block& old = blocks_[b];
    drop(old);
    old = std::move(block);
  }
}

void AruShadow::drop(Block& b) {
  if (b.token) placer_->drop(b.token);
  b.token = 0;
}

void AruShadow::clear() {
  for (auto& [b, block] : blocks_) drop(block);
  blocks_.clear();
}

void AruShadow::trim(uint64_t offset, uint64_t len) {
  check_range(offset, len);
  uint64_t first = 0, end = 0;
  whole_blocks(offset, len, block_bytes_, &first, &end);
  if (first == end) return;
  check_room(first, end - 1);
  std::map<uint64_t, Block> holes;
  for (uint64_t b = first; b < end; ++b) holes[b];
  install(std::move(holes));
}

void AruShadow::overlay(uint64_t offset, std::span<std::byte> out) const {
  overlay_blocks(blocks_, block_bytes_, offset, out,
                 [](const Block& b) -> const std::vector<std::byte>& { return b.bytes; });
}

std::vector<GroupBlock> AruShadow::group() const {
  std::vector<GroupBlock> g;
  g.reserve(blocks_.size());
  for (const auto& [b, block] : blocks_)
    g.push_back(GroupBlock{b, block.bytes.empty() ? nullptr : block.bytes.data(), block.token});
  return g;
}

}  // namespace vld
