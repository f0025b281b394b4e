// WriteGather: the writes of one step of a disk (a request's data blocks,
// then its map sectors), collected in the order they are to be made and
// then made with one BackingStore::write_gather per run of consecutive
// ones that lie back to back in the image. A data block and the map
// sector placed right behind it on the platter (paper 001, section 3.2)
// then cost the file system one call, not two, and a request's blocks
// placed in one pass cost one call for all of them.
//
// Invariants: the bytes reach the store in the order added (a run is
// only ever consecutive pieces), so a store that counts or records
// writes (the crash and fault stores, which keep write()'s default
// write_gather) sees exactly what write() of each piece would have made
// it see; pieces are forgotten after every flush, whether it succeeds.
//
// Thread-safety: none; its owner's (a disk, under the controller's lock).
#ifndef VLD_CORE_STORE_WRITE_GATHER_H_
#define VLD_CORE_STORE_WRITE_GATHER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/store/backing_store.h"

namespace vld {

class WriteGather {
 public:
  // REQUIRES: bytes stay valid and unchanged until flush() returns.
  void add(uint64_t offset, std::span<const std::byte> bytes) {
    pieces_.push_back(Piece{offset, bytes});
  }
  size_t size() const { return pieces_.size(); }
  // Forgets the pieces without writing them (a step given up before its
  // flush).
  void clear() { pieces_.clear(); }

  // Writes every piece added, a write_gather per run, and forgets them.
  // *begun: how many pieces (in the order added) a write was begun for, as
  // the store's write_gather tells for the run it fails in: those may have
  // landed, the rest did not.
  void flush(BackingStore& store, size_t* begun);

 private:
  struct Piece {
    uint64_t offset;
    std::span<const std::byte> bytes;
  };
  std::vector<Piece> pieces_;
  std::vector<std::span<const std::byte>> run_;  // flush()'s, kept between calls
};

}  // namespace vld

#endif  // VLD_CORE_STORE_WRITE_GATHER_H_
