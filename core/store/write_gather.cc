#include "core/store/write_gather.h"

namespace vld {

void WriteGather::flush(BackingStore& store, size_t* begun) {
  *begun = 0;
  struct Forget {  // on success and on a throw alike
    std::vector<Piece>& pieces;
    ~Forget() { pieces.clear(); }
  } forget{pieces_};
  for (size_t i = 0; i < pieces_.size();) {
    const uint64_t start = pieces_[i].offset;
    uint64_t end = start;
    run_.clear();
    for (; i < pieces_.size() && pieces_[i].offset == end; ++i) {
      run_.push_back(pieces_[i].bytes);
      end += pieces_[i].bytes.size();
    }
    size_t in_run = 0;
    try {
      store.write_gather(start, run_, &in_run);
    } catch (...) {
      *begun += in_run;
      throw;
    }
    *begun = i;
  }
}

}  // namespace vld
