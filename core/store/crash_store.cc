#include "core/store/crash_store.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "core/util/error.h"

namespace vld {

namespace {

std::vector<std::byte> read_all(BackingStore& from) {
  std::vector<std::byte> bytes(from.size_bytes());
  from.read(0, bytes);
  return bytes;
}

// Number of granules of size g that [offset, offset+len) touches.
uint64_t piece_count(uint64_t offset, uint64_t len, uint64_t g) {
  if (len == 0) return 0;
  return (offset + len - 1) / g - offset / g + 1;
}

}  // namespace

RecordingStore::RecordingStore(std::vector<std::byte> base)
    : base_(std::move(base)), live_(base_) {}

RecordingStore::RecordingStore(BackingStore& from) : RecordingStore(read_all(from)) {}

void RecordingStore::check_range(uint64_t offset, uint64_t len) const {
  if (offset > live_.size() || len > live_.size() - offset)
    throw Error("recording store: access beyond the end", EIO);
}

void RecordingStore::check_point(size_t after_event) const {
  if (after_event > log_.size())
    throw Error("recording store: crash point " + std::to_string(after_event) +
                    " is past the last event (" + std::to_string(log_.size()) + ")",
                EINVAL);
}

void RecordingStore::read(uint64_t offset, std::span<std::byte> out) {
  check_range(offset, out.size());
  if (!out.empty()) std::memcpy(out.data(), live_.data() + offset, out.size());
}

void RecordingStore::write(uint64_t offset, std::span<const std::byte> data) {
  check_range(offset, data.size());
  Event e{Event::Kind::kWrite, offset, data.size(), {data.begin(), data.end()}};
  log_.push_back(std::move(e));
  if (!data.empty()) std::memcpy(live_.data() + offset, data.data(), data.size());
}

void RecordingStore::discard(uint64_t offset, uint64_t len) {
  check_range(offset, len);
  log_.push_back(Event{Event::Kind::kDiscard, offset, len, {}});
  if (len > 0) std::memset(live_.data() + offset, 0, len);
}

void RecordingStore::sync() {
  sync_at_.push_back(log_.size());
  log_.push_back(Event{Event::Kind::kSync, 0, 0, {}});
}

void RecordingStore::for_each_data_range(uint64_t offset, uint64_t len,
                                         const std::function<void(uint64_t, uint64_t)>& fn) {
  check_range(offset, len);
  if (len > 0) fn(offset, len);  // no holes in memory: conservative
}

size_t RecordingStore::synced_prefix(size_t after_event) const {
  check_point(after_event);
  // The last sync at a log index < after_event.
  auto it = std::lower_bound(sync_at_.begin(), sync_at_.end(), after_event);
  if (it == sync_at_.begin()) return 0;
  return *std::prev(it) + 1;
}

void RecordingStore::for_each_pending_unit(
    size_t after_event, Granularity g,
    const std::function<void(size_t, uint64_t, uint64_t, size_t, const std::byte*)>& fn) const {
  const uint64_t gb = unit_bytes(g);
  size_t k = 0;
  for (size_t i = synced_prefix(after_event); i < after_event; ++i) {
    const Event& e = log_[i];
    if (e.kind == Event::Kind::kSync) continue;  // none: synced_prefix is past the last
    const uint64_t end = e.offset + e.len;
    for (uint64_t pos = e.offset; pos < end;) {
      const uint64_t next = std::min(end, (pos / gb + 1) * gb);
      const std::byte* src =
          e.kind == Event::Kind::kWrite ? e.data.data() + (pos - e.offset) : nullptr;
      fn(k++, pos, next - pos, i, src);
      pos = next;
    }
  }
}

size_t RecordingStore::pending_unit_count(size_t after_event, Granularity g) const {
  const uint64_t gb = unit_bytes(g);
  size_t n = 0;
  for (size_t i = synced_prefix(after_event); i < after_event; ++i) {
    const Event& e = log_[i];
    if (e.kind != Event::Kind::kSync) n += piece_count(e.offset, e.len, gb);
  }
  return n;
}

std::vector<RecordingStore::Unit> RecordingStore::pending_units(size_t after_event,
                                                                Granularity g) const {
  std::vector<Unit> units;
  units.reserve(pending_unit_count(after_event, g));
  for_each_pending_unit(after_event, g,
                        [&](size_t, uint64_t offset, uint64_t len, size_t event,
                            const std::byte* src) {
                          Unit u{offset, len, event, std::vector<std::byte>(len)};
                          if (src != nullptr) std::memcpy(u.bytes.data(), src, len);
                          units.push_back(std::move(u));
                        });
  return units;
}

std::vector<std::byte> RecordingStore::materialize(size_t after_event,
                                                   const std::vector<bool>& survives,
                                                   Granularity g) const {
  const size_t n = pending_unit_count(after_event, g);  // checks after_event
  if (survives.size() != n)
    throw Error("recording store: " + std::to_string(survives.size()) +
                    " survival flags for " + std::to_string(n) + " pending units at crash point " +
                    std::to_string(after_event),
                EINVAL);

  std::vector<std::byte> image = base_;
  const size_t synced = synced_prefix(after_event);
  for (size_t i = 0; i < synced; ++i) {
    const Event& e = log_[i];
    if (e.len == 0) continue;
    if (e.kind == Event::Kind::kWrite)
      std::memcpy(image.data() + e.offset, e.data.data(), e.len);
    else if (e.kind == Event::Kind::kDiscard)
      std::memset(image.data() + e.offset, 0, e.len);
  }
  for_each_pending_unit(after_event, g,
                        [&](size_t k, uint64_t offset, uint64_t len, size_t,
                            const std::byte* src) {
                          if (!survives[k]) return;
                          if (src != nullptr)
                            std::memcpy(image.data() + offset, src, len);
                          else
                            std::memset(image.data() + offset, 0, len);
                        });
  return image;
}

std::unique_ptr<MemoryBackingStore> as_store(const std::vector<std::byte>& image) {
  auto store = std::make_unique<MemoryBackingStore>(image.size());
  if (!image.empty()) store->write(0, image);
  return store;
}

}  // namespace vld
