#include "core/vld/scan_set.h"

#include <algorithm>
#include <cassert>

namespace vld {

ScanSet::ScanSet(const CylinderWindow& window, uint32_t disk_cylinders, bool whole)
    : window_(window),
      disk_cylinders_(disk_cylinders),
      width_(std::min(window.count, disk_cylinders)),
      whole_(whole) {
  assert(disk_cylinders > 0);
  if (!whole_) in_.assign(width_, false);
}

ScanSet ScanSet::whole(const CylinderWindow& window, uint32_t disk_cylinders) {
  return ScanSet(window, disk_cylinders, true);
}

bool ScanSet::narrow_allowed(const CylinderWindow& window, uint32_t disk_cylinders) {
  return std::min(window.count, disk_cylinders) <= kMaxCylinders;
}

ScanSet ScanSet::none(const CylinderWindow& window, uint32_t disk_cylinders) {
  assert(narrow_allowed(window, disk_cylinders));
  return ScanSet(window, disk_cylinders, false);
}

std::optional<uint32_t> ScanSet::index_of(uint32_t cylinder) const {
  if (cylinder >= disk_cylinders_) return std::nullopt;
  const uint32_t first = window_.first % disk_cylinders_;
  const uint32_t k = (cylinder + disk_cylinders_ - first) % disk_cylinders_;
  if (k >= width_) return std::nullopt;
  return k;
}

bool ScanSet::contains(uint32_t cylinder) const {
  const std::optional<uint32_t> k = index_of(cylinder);
  return k && contains_index(*k);
}

void ScanSet::add(uint32_t cylinder) {
  if (whole_) return;
  if (const std::optional<uint32_t> k = index_of(cylinder)) in_[*k] = true;
}

ScanSet::IndexRange ScanSet::neighbourhood(uint32_t index) const {
  assert(index < width_);
  return IndexRange{index > 0 ? index - 1 : 0, index + 1 < width_ ? index + 1 : index};
}

void ScanSet::add_neighbourhood(uint32_t cylinder) {
  if (whole_) return;
  const std::optional<uint32_t> k = index_of(cylinder);
  if (!k) return;
  const IndexRange r = neighbourhood(*k);
  for (uint32_t n = r.first; n <= r.last; ++n) in_[n] = true;
}

uint32_t ScanSet::count() const {
  return whole_ ? width_ : static_cast<uint32_t>(std::count(in_.begin(), in_.end(), true));
}

void ScanSet::encode_bits(unsigned char* bits) const {
  assert(!whole_ && width_ <= kMaxCylinders);
  std::fill(bits, bits + kMaxCylinders / 8, 0);
  for (uint32_t k = 0; k < width_; ++k)
    if (in_[k]) bits[k / 8] |= static_cast<unsigned char>(1u << (k % 8));
}

ScanSet ScanSet::decode_bits(const unsigned char* bits, const CylinderWindow& window,
                             uint32_t disk_cylinders) {
  if (!narrow_allowed(window, disk_cylinders)) return whole(window, disk_cylinders);
  ScanSet s = none(window, disk_cylinders);
  for (uint32_t k = 0; k < s.width_; ++k) s.in_[k] = (bits[k / 8] >> (k % 8)) & 1;
  return s;
}

}  // namespace vld
