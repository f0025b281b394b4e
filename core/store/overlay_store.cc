#include "core/store/overlay_store.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace vld {

void OverlayStore::read(uint64_t offset, std::span<std::byte> out) {
  base_.read(offset, out);
  if (sectors_.empty()) return;
  for (uint64_t s = offset / kSectorBytes; s * kSectorBytes < offset + out.size(); ++s) {
    auto it = sectors_.find(s);
    if (it == sectors_.end()) continue;
    const uint64_t from = std::max(offset, s * kSectorBytes);
    const uint64_t to = std::min<uint64_t>(offset + out.size(), (s + 1) * kSectorBytes);
    std::memcpy(out.data() + (from - offset), it->second.data() + (from - s * kSectorBytes),
                to - from);
  }
}

void OverlayStore::write(uint64_t offset, std::span<const std::byte> data) {
  for (uint64_t s = offset / kSectorBytes; s * kSectorBytes < offset + data.size(); ++s) {
    auto [it, fresh] = sectors_.try_emplace(s);
    if (fresh) base_.read(s * kSectorBytes, std::span(it->second));
    const uint64_t from = std::max(offset, s * kSectorBytes);
    const uint64_t to = std::min<uint64_t>(offset + data.size(), (s + 1) * kSectorBytes);
    std::memcpy(it->second.data() + (from - s * kSectorBytes), data.data() + (from - offset),
                to - from);
  }
}

void OverlayStore::discard(uint64_t offset, uint64_t len) {
  static const std::vector<std::byte> zeros(kSectorBytes);
  for (uint64_t done = 0; done < len;) {
    const uint64_t n = std::min<uint64_t>(len - done, kSectorBytes - (offset + done) % kSectorBytes);
    write(offset + done, std::span(zeros.data(), n));
    done += n;
  }
}

}  // namespace vld
