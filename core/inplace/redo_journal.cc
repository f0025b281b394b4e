#include "core/inplace/redo_journal.h"

#include <algorithm>
#include <cstring>

#include "core/util/coding.h"
#include "core/util/mac.h"

namespace vld {
namespace {

constexpr char kMagic[8] = {'V', 'L', 'D', 'R', 'E', 'D', 'O', '1'};
constexpr size_t kMacAt = 32;
constexpr uint64_t kZeroFlag = uint64_t{1} << 63;

unsigned char* u8(std::byte* p) { return reinterpret_cast<unsigned char*>(p); }

void put_header(std::byte* p, RedoJournal::State state, uint32_t blocks, uint64_t seq,
                uint64_t data_blocks) {
  std::memcpy(p, kMagic, sizeof kMagic);
  encode_fixed32(u8(p + 8), static_cast<uint32_t>(state));
  encode_fixed32(u8(p + 12), blocks);
  encode_fixed64(u8(p + 16), seq);
  encode_fixed64(u8(p + 24), data_blocks);
}

}  // namespace

RedoJournal::RedoJournal(const Superblock& sb) : sb_(sb) {
  const uint64_t bs = sb.block_bytes;
  offset_ = (sb.export_bytes + bs - 1) / bs * bs;
  capacity_ = sb.platter_bytes() > offset_ ? sb.platter_bytes() - offset_ : 0;
}

uint64_t RedoJournal::descriptor_bytes(uint64_t blocks) const {
  const uint64_t raw = kHeaderBytes + kEntryBytes * blocks;
  return (raw + kSectorBytes - 1) / kSectorBytes * kSectorBytes;
}

uint64_t RedoJournal::record_bytes(uint64_t blocks, uint64_t data_blocks) const {
  return descriptor_bytes(blocks) + data_blocks * sb_.block_bytes;
}

std::vector<std::byte> RedoJournal::encode(std::span<const GroupBlock> group, uint64_t seq) const {
  const uint64_t k = static_cast<uint64_t>(
      std::count_if(group.begin(), group.end(), [](const GroupBlock& g) { return g.data; }));
  std::vector<std::byte> out(record_bytes(group.size(), k));
  put_header(out.data(), State::kCommitted, static_cast<uint32_t>(group.size()), seq, k);
  std::byte* entry = out.data() + kHeaderBytes;
  std::byte* data = out.data() + descriptor_bytes(group.size());
  for (const GroupBlock& g : group) {
    encode_fixed64(u8(entry), g.block | (g.data ? 0 : kZeroFlag));
    entry += kEntryBytes;
    if (!g.data) continue;
    std::memcpy(data, g.data, sb_.block_bytes);
    data += sb_.block_bytes;
  }
  // The MAC covers the whole record, taken with its own field still zero.
  const Mac mac = mac_of(u8(out.data()), out.size(), sb_.secret);
  std::memcpy(out.data() + kMacAt, mac.data(), kMacBytes);
  return out;
}

std::array<std::byte, kSectorBytes> RedoJournal::void_sector(uint64_t seq) const {
  std::array<std::byte, kSectorBytes> s{};
  put_header(s.data(), State::kVoid, 0, seq, 0);
  return s;
}

bool RedoJournal::plausible(const Header& h) const {
  return h.state == State::kCommitted && h.blocks > 0 && h.data_blocks <= h.blocks &&
         h.blocks <= capacity_ / kEntryBytes && record_bytes(h.blocks, h.data_blocks) <= capacity_;
}

std::optional<RedoJournal::Record> RedoJournal::read(BackingStore& store, uint64_t* last_seq,
                                                     uint64_t* bytes_read) const {
  *last_seq = 0;
  uint64_t ignored = 0;
  uint64_t& read_bytes = bytes_read ? *bytes_read : ignored;
  read_bytes = 0;
  if (capacity_ < kSectorBytes) return std::nullopt;
  std::array<std::byte, kSectorBytes> first;
  store.read(sb_.platter_offset + offset_, first);
  read_bytes = kSectorBytes;
  if (std::memcmp(first.data(), kMagic, sizeof kMagic) != 0) return std::nullopt;  // never used
  Header h{static_cast<State>(decode_fixed32(u8(first.data() + 8))),
           decode_fixed32(u8(first.data() + 12)), decode_fixed64(u8(first.data() + 16)),
           decode_fixed64(u8(first.data() + 24))};
  *last_seq = h.seq;
  if (!plausible(h)) return std::nullopt;  // void, or a header a crash cut
  std::vector<std::byte> bytes(record_bytes(h.blocks, h.data_blocks));
  store.read(sb_.platter_offset + offset_, bytes);
  read_bytes = bytes.size();  // the whole record, its header included
  return decode(bytes, h);
}

// The record in `bytes` if its MAC matches and its entries are a group
// commit_group could have been given; nullopt (a commit a crash cut) if not.
std::optional<RedoJournal::Record> RedoJournal::decode(std::vector<std::byte>& bytes,
                                                       const Header& h) const {
  unsigned char stored[kMacBytes];
  std::memcpy(stored, bytes.data() + kMacAt, kMacBytes);
  std::memset(bytes.data() + kMacAt, 0, kMacBytes);
  if (!mac_matches(u8(bytes.data()), bytes.size(), stored, sb_.secret)) return std::nullopt;
  Record r;
  r.seq = h.seq;
  const uint64_t export_blocks = sb_.export_bytes / sb_.block_bytes;
  uint64_t data_blocks = 0;
  for (uint32_t i = 0; i < h.blocks; ++i) {
    const uint64_t e = decode_fixed64(u8(bytes.data() + kHeaderBytes + i * kEntryBytes));
    const uint64_t b = e & ~kZeroFlag;
    if (b >= export_blocks || (!r.blocks.empty() && b <= r.blocks.back())) return std::nullopt;
    r.blocks.push_back(b);
    r.zero.push_back((e & kZeroFlag) != 0);
    data_blocks += (e & kZeroFlag) ? 0 : 1;
  }
  if (data_blocks != h.data_blocks) return std::nullopt;
  const auto data = bytes.begin() + static_cast<ptrdiff_t>(descriptor_bytes(h.blocks));
  r.data.assign(data, bytes.end());
  return r;
}

}  // namespace vld
