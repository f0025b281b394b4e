// AruShadow: the shadow state of one atomic recovery unit (paper 000,
// section 4: "ARUs"; docs/aru.md), the blocks an open ARU has changed.
//
// An ARU's writes, zeroes and trims change nothing on the disk until its
// commit (Disk::commit_group): they change whole blocks here, in memory.
// Reads on the ARU's own connection see them (paper 000's option 3: the
// ARU's reads see its own writes), reads elsewhere see only committed data.
// Dropping the shadow is the abort.
//
// With a Placer (a disk that places an ARU's blocks as they are written,
// Disk::places_shadow: mode=vld), every block the ARU holds with data is
// also written to the platters when it changes, mapped by nothing, and its
// token goes into the commit; a block changed again gets a new copy and its
// old one is dropped, and so is every copy at an abort (clear()). Without
// one, the ARU took no sector: there is nothing to free.
//
// Invariants:
//   - every entry is a whole block inside the export: either its new
//     contents (block_bytes bytes) or empty, meaning zeros (a hole);
//   - bytes() = entries x block_bytes <= max_bytes (aru_max=): every block
//     the ARU changes counts, zeroes and trims included;
//   - with a Placer, every entry with data has a token (its placed copy),
//     holes none;
//   - a request that fails (out of range, past max_bytes, a failed read of
//     committed data, a failed placement) changes nothing.
//
// A partial block is merged with the block's committed contents when the
// ARU first changes it (read_base): after that, commits by other
// connections to the rest of that block are not seen, and this ARU's commit
// overwrites them (no isolation between ARUs, as in paper 000: the last
// committer wins, per block).
//
// Thread-safety: not thread-safe; AruSession serialises its use.
#ifndef VLD_CORE_ARU_ARU_SHADOW_H_
#define VLD_CORE_ARU_ARU_SHADOW_H_

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <span>
#include <vector>

#include "core/disk.h"

namespace vld {

class AruShadow {
 public:
  // Reads block `block`'s committed contents into out (block_bytes bytes).
  using ReadBase = std::function<void(uint64_t block, std::span<std::byte> out)>;

  // Where a placing disk writes the ARU's blocks: place() returns one token
  // per block (each with data) or throws, having placed nothing; drop()
  // gives a token back.
  class Placer {
   public:
    virtual ~Placer() = default;
    virtual std::vector<uint64_t> place(std::span<const GroupBlock> blocks) = 0;
    virtual void drop(uint64_t token) = 0;
  };

  // max_why names the bound in ENOSPC's message ("" : aru_max=).
  AruShadow(uint32_t block_bytes, uint64_t export_bytes, uint64_t max_bytes,
            std::string max_why = "");
  ~AruShadow() { clear(); }
  AruShadow(AruShadow&&) = default;
  AruShadow& operator=(AruShadow&&) = delete;

  // Places every later change through `placer` (nullptr: none).
  // REQUIRES: empty(); placer outlives this shadow.
  void set_placer(Placer* placer) {
    assert(empty());
    placer_ = placer;
  }

  // Each throws Error (EINVAL: outside the export; ENOSPC: past max_bytes)
  // before changing anything.
  void write(uint64_t offset, std::span<const std::byte> data, const ReadBase& read_base);
  void zero(uint64_t offset, uint64_t len, const ReadBase& read_base);
  // Whole blocks only read as zeros afterwards: trim is advisory, and the
  // parts of partial blocks at its edges keep their data (as in every mode).
  void trim(uint64_t offset, uint64_t len);

  // out holds committed data for [offset, offset + out.size()): replaces
  // the bytes of every shadow block in it.
  void overlay(uint64_t offset, std::span<std::byte> out) const;

  // The blocks to commit, sorted, with their tokens; their data points
  // into this shadow and stays valid until the next change or clear().
  std::vector<GroupBlock> group() const;
  size_t blocks() const { return blocks_.size(); }
  uint64_t bytes() const { return blocks_.size() * uint64_t{block_bytes_}; }
  uint64_t max_bytes() const { return max_bytes_; }
  bool empty() const { return blocks_.empty(); }
  // The abort: every placed copy is dropped, and the shadow emptied.
  void clear();
  // The commit went through: its placed copies are the disk's now.
  void committed() { blocks_.clear(); }

 private:
  struct Block {
    std::vector<std::byte> bytes;  // empty: zeros
    uint64_t token = 0;            // its placed copy (Placer), or 0
  };
  void check_range(uint64_t offset, uint64_t len) const;
  // Throws ENOSPC unless the blocks [first, last] not yet held fit.
  void check_room(uint64_t first, uint64_t last) const;
  // Writes data (nullptr: zeros) over [offset, offset + len).
  void change(uint64_t offset, uint64_t len, const std::byte* data, const ReadBase& read_base);
  // The blocks [first, last] as the change leaves them, before it is made:
  // the ARU's blocks, else committed data read for partial blocks.
  std::map<uint64_t, Block> changed_blocks(uint64_t offset, uint64_t len, const std::byte* data,
                                           const ReadBase& read_base) const;
  // Places next's blocks with data (if there is a Placer), then makes them
  // the ARU's, dropping the copies they replace.
  void install(std::map<uint64_t, Block> next);
  void drop(Block& b);

  uint32_t block_bytes_;
  uint64_t export_bytes_;
  uint64_t max_bytes_;
  std::string max_why_;
  Placer* placer_ = nullptr;
  std::map<uint64_t, Block> blocks_;
};

}  // namespace vld

#endif  // VLD_CORE_ARU_ARU_SHADOW_H_
