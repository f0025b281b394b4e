#include "core/inplace/inplace_disk.h"

#include <algorithm>
#include <cassert>
#include <vector>

#include "core/util/error.h"

namespace vld {

InplaceDisk::InplaceDisk(std::unique_ptr<BackingStore> store, const Superblock& sb)
    : store_(FailStopStore::wrap(std::move(store))),
      sb_(sb),
      drive_(sb.geometry, sb.simulated_cylinders),
      live_((sb.export_bytes / sb.block_bytes + 63) / 64, 0) {
  rebuild_live_map();
}

SectorRun InplaceDisk::covering_run(uint64_t offset, uint64_t len) {
  uint64_t first = offset / kSectorBytes;
  uint64_t end = (offset + len + kSectorBytes - 1) / kSectorBytes;
  return SectorRun{first, static_cast<uint32_t>(end - first)};
}

uint64_t InplaceDisk::blocks_covering(uint64_t offset, uint64_t len) const {
  if (len == 0) return 0;
  return (offset + len - 1) / sb_.block_bytes - offset / sb_.block_bytes + 1;
}

void InplaceDisk::set_live(uint64_t first, uint64_t end, bool live) {
  for (uint64_t b = first; b < end; ++b) {
    uint64_t& word = live_[b / 64];
    uint64_t bit = uint64_t{1} << (b % 64);
    if (((word & bit) != 0) == live) continue;
    word ^= bit;
    live_blocks_ += live ? 1 : -1;
  }
}

void InplaceDisk::rebuild_live_map() {
  const uint64_t bs = sb_.block_bytes;
  store_->for_each_data_range(sb_.platter_offset, sb_.export_bytes, [&](uint64_t off, uint64_t len) {
    uint64_t rel = off - sb_.platter_offset;
    set_live(rel / bs, (rel + len + bs - 1) / bs, true);
  });
}

Completion InplaceDisk::read(uint64_t offset, std::span<std::byte> out, SimTime start) {
  assert(offset + out.size() <= sb_.export_bytes);  // the controller checked the range
  store_->read(sb_.platter_offset + offset, out);
  SectorRun run = covering_run(offset, out.size());
  Access a = drive_.read(std::span(&run, 1), start);
  return Completion{a.end, a.breakdown, 0, blocks_covering(offset, out.size())};
}

Completion InplaceDisk::write(uint64_t offset, std::span<const std::byte> data, bool fua,
                              SimTime start) {
  assert(offset + data.size() <= sb_.export_bytes);  // the controller checked the range
  store_->check();
  // Bytes map one to one, so a write that is not sector-aligned needs no
  // read-modify-write in the backing file; the drive still pays for whole
  // sectors.
  // Live first: a write that fails part way may have changed the blocks,
  // and extents() must never call data a hole.
  const uint64_t bs = sb_.block_bytes;
  set_live(offset / bs, (offset + data.size() + bs - 1) / bs, true);
  store_->write(sb_.platter_offset + offset, data);
  if (fua) store_->sync();
  SectorRun run = covering_run(offset, data.size());
  Access a = drive_.access(std::span(&run, 1), start);
  return Completion{a.end, a.breakdown, blocks_covering(offset, data.size()), 0, fua ? 1u : 0u};
}

Completion InplaceDisk::commit_group(std::span<const GroupBlock>, SimTime) {
  throw Error("mode=inplace has no atomic recovery units yet", ENOTSUP);
}

Completion InplaceDisk::flush(SimTime start) {
  store_->check();
  store_->sync();
  Access a = drive_.command_only(start);
  return Completion{a.end, a.breakdown, 0, 0, 1};
}

Completion InplaceDisk::trim(uint64_t offset, uint64_t len, bool fua, SimTime start) {
  store_->check();
  uint64_t first, end;
  whole_blocks(offset, len, block_bytes(), &first, &end);
  if (end > first) {
    const uint64_t bs = sb_.block_bytes;
    store_->discard(sb_.platter_offset + first * bs, (end - first) * bs);
    set_live(first, end, false);
  }
  if (fua) store_->sync();
  Access a = drive_.command_only(start);
  return Completion{a.end, a.breakdown, 0, 0, fua ? 1u : 0u};
}

void InplaceDisk::write_zeros(uint64_t offset, uint64_t len) {
  static const std::vector<std::byte> zeros(1 << 20);
  while (len > 0) {
    uint64_t n = std::min<uint64_t>(len, zeros.size());
    store_->write(sb_.platter_offset + offset, std::span(zeros.data(), n));
    offset += n;
    len -= n;
  }
}

Completion InplaceDisk::zero(uint64_t offset, uint64_t len, ZeroFlags flags, SimTime start) {
  store_->check();
  const uint64_t bs = sb_.block_bytes;
  uint64_t first, end;
  whole_blocks(offset, len, block_bytes(), &first, &end);
  const bool aligned = first * bs == offset && end * bs == offset + len;
  if (flags.fast && !(flags.may_trim && aligned))
    throw Error("zeroing here means writing the media, which is not fast", ENOTSUP);

  if (!flags.may_trim) {
    // The client wants allocated zeros: an ordinary write of zeros.
    set_live(offset / bs, (offset + len + bs - 1) / bs, true);
    write_zeros(offset, len);
    if (flags.fua) store_->sync();
    SectorRun run = covering_run(offset, len);
    Access a = drive_.access(std::span(&run, 1), start);
    return Completion{a.end, a.breakdown, blocks_covering(offset, len), 0, flags.fua ? 1u : 0u};
  }

  // Deallocate the whole blocks; write zeros into the partial edges.
  std::vector<SectorRun> edges;
  uint64_t written = 0;
  auto zero_edge = [&](uint64_t from, uint64_t to) {
    if (to <= from) return;
    write_zeros(from, to - from);
    set_live(from / bs, (to + bs - 1) / bs, true);
    edges.push_back(covering_run(from, to - from));
    written += blocks_covering(from, to - from);
  };
  if (end > first) {
    zero_edge(offset, first * bs);
    store_->discard(sb_.platter_offset + first * bs, (end - first) * bs);
    set_live(first, end, false);
    zero_edge(end * bs, offset + len);
  } else {
    zero_edge(offset, offset + len);  // inside one block
  }
  if (flags.fua) store_->sync();
  Access a = edges.empty() ? drive_.command_only(start) : drive_.access(edges, start);
  return Completion{a.end, a.breakdown, written, 0, flags.fua ? 1u : 0u};
}

void InplaceDisk::extents(uint64_t offset, uint64_t len, const ExtentFn& fn) {
  emit_block_extents(offset, len, sb_.block_bytes, [this](uint64_t b) { return is_live(b); }, fn);
}

void InplaceDisk::close() { store_->sync(); }

}  // namespace vld
