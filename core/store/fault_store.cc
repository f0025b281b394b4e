#include "core/store/fault_store.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "core/util/error.h"

namespace vld {

namespace {
const char* op_name(FaultyStore::Op op) {
  switch (op) {
    case FaultyStore::Op::kWrite: return "write";
    case FaultyStore::Op::kSync: return "fdatasync";
    case FaultyStore::Op::kDiscard: return "discard";
  }
  return "?";
}
}  // namespace

FaultyStore::FaultyStore(BackingStore& inner, bool keep_synced_image)
    : inner_(inner), keep_synced_image_(keep_synced_image) {
  snapshot();
}

void FaultyStore::snapshot() {
  if (!keep_synced_image_) return;
  synced_.resize(inner_.size_bytes());
  inner_.read(0, synced_);
}

void FaultyStore::arm(const Fault& f) {
  fault_ = f;
  std::fill(std::begin(calls_), std::end(calls_), 0);
  failures_ = 0;
}

bool FaultyStore::fails(Op op, uint64_t len) {
  if (!fault_ || fault_->op != op) return false;
  if (fault_->only_len && len != fault_->only_len) return false;
  const uint64_t call = calls_[static_cast<int>(op)]++;
  const bool fail = call == fault_->nth || (fault_->sticky && call > fault_->nth);
  if (fail) ++failures_;
  return fail;
}

void FaultyStore::write(uint64_t offset, std::span<const std::byte> data) {
  if (fails(Op::kWrite, data.size())) {
    const uint64_t torn = std::min<uint64_t>(fault_->torn_bytes, data.size());
    if (torn) inner_.write(offset, data.first(torn));
    throw Error(std::string("injected ") + op_name(Op::kWrite) + " fault", fault_->err);
  }
  inner_.write(offset, data);
}

void FaultyStore::discard(uint64_t offset, uint64_t len) {
  if (fails(Op::kDiscard))
    throw Error(std::string("injected ") + op_name(Op::kDiscard) + " fault", fault_->err);
  inner_.discard(offset, len);
}

void FaultyStore::sync() {
  if (fails(Op::kSync)) {
    if (fault_->drop_on_failed_sync) {
      assert(keep_synced_image_);
      inner_.write(0, synced_);
    }
    throw Error(std::string("injected ") + op_name(Op::kSync) + " fault", fault_->err);
  }
  inner_.sync();
  snapshot();
}

}  // namespace vld
