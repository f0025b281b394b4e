#include "core/recovery.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/eager_allocator.h"
#include "core/util/error.h"
#include "core/util/trace.h"
#include "geometry/drive_model.h"

namespace vld {

VldLayout::VldLayout(const Superblock& sb)
    : spt(sb.geometry.sectors_per_track),
      heads(sb.geometry.tracks_per_cylinder),
      cylinders(sb.simulated_cylinders),
      tracks(sb.simulated_cylinders * sb.geometry.tracks_per_cylinder),
      block_sectors(sb.block_bytes / kSectorBytes),
      blocks(sb.export_bytes / sb.block_bytes),
      pieces((sb.export_bytes / sb.block_bytes + kEntriesPerPiece - 1) / kEntriesPerPiece),
      platter_offset(sb.platter_offset) {}

namespace {

// Reads sectors and accounts for what the reads would cost on the drive.
class Reader {
 public:
  Reader(BackingStore& store, const Superblock& sb, bool track_buffer, RecoveryReport& report)
      : store_(store), layout_(sb), drive_(sb.geometry, sb.simulated_cylinders), report_(report) {
    drive_.set_track_buffer(track_buffer);
  }

  SectorBytes sector(uint64_t psn) {
    SectorBytes b;
    store_.read(layout_.byte_offset(psn), std::as_writable_bytes(std::span(b)));
    charge(psn, 1);
    return b;
  }
  std::vector<std::byte> block(uint64_t psn) {
    std::vector<std::byte> out(size_t{layout_.block_sectors} * kSectorBytes);
    std::byte* p = out.data();
    for (const SectorRun& r : extent_runs(extent_at(psn, layout_.block_sectors, layout_.spt), layout_.spt)) {
      store_.read(layout_.byte_offset(r.first_psn), std::span(p, size_t{r.count} * kSectorBytes));
      p += size_t{r.count} * kSectorBytes;
    }
    charge(psn, layout_.block_sectors);
    return out;
  }
  // A whole track, read from wherever the head lands: one revolution.
  std::vector<unsigned char> track(uint32_t t) {
    std::vector<unsigned char> out(size_t{layout_.spt} * kSectorBytes);
    store_.read(layout_.byte_offset(uint64_t{t} * layout_.spt), std::as_writable_bytes(std::span(out)));
    const SectorRun whole{uint64_t{t} * layout_.spt, layout_.spt};
    if (drive_.track_buffer()) {
      now_ = drive_.read(std::span(&whole, 1), now_, /*charge_overhead=*/false).end;
    } else {
      HeadPosition to{t / layout_.heads, t % layout_.heads};
      ServiceBreakdown move = drive_.reposition(drive_.head(), to);
      now_ += move.seek + move.head_switch + drive_.geometry().revolution();
      drive_.set_head(to);
    }
    report_.sectors_read += layout_.spt;
    ++report_.tracks_scanned;
    return out;
  }
  SimDuration elapsed() const { return now_ - kSimEpoch; }

 private:
  void charge(uint64_t psn, uint32_t sectors) {
    ExtentRuns r = extent_runs(extent_at(psn, sectors, layout_.spt), layout_.spt);
    now_ = drive_.read(r.span(), now_, /*charge_overhead=*/false).end;
    report_.sectors_read += sectors;
  }

  BackingStore& store_;
  VldLayout layout_;
  DriveModel drive_;
  SimTime now_{};
  RecoveryReport& report_;
};

struct Found {
  uint32_t psn;
  MapSector m;
};

}  // namespace

RecoveredState recover(BackingStore& store, const Superblock& sb, bool track_buffer) {
  auto wall_start = std::chrono::steady_clock::now();
  const VldLayout L(sb);
  RecoveredState st;
  st.map.assign(L.blocks, MapEntry{});
  st.nodes.assign(L.pieces, LogNode{});
  RecoveryReport& rep = st.report;
  Reader reader(store, sb, track_buffer, rep);

  // The newest valid log record.
  std::optional<LogRecord> rec;
  std::optional<uint32_t> unreadable_slot;  // damaged (or, on a new image, never written)
  for (uint32_t slot = 0; slot < VldLayout::kRecordSlots; ++slot) {
    SectorBytes b = reader.sector(slot);
    auto r = decode_log_record(b.data(), sb.secret);
    if (r && (!rec || r->generation > rec->generation)) rec = r;
    if (!r) unreadable_slot = slot;
  }

  // 1. The tree from the record's root, newest first. A pointer names the
  // piece it leads to, so one to a piece already met (an older version: its
  // children were adopted by the newer one) is dropped unread: the walk reads
  // exactly the live map sectors.
  std::vector<uint64_t> cur_seq(L.pieces, 0);
  std::unordered_map<uint64_t, std::vector<LogPointer>> pointers_of;  // seq -> pointers
  if (rec && rec->has_root) {
    struct Next {
      uint64_t seq;
      uint32_t psn, piece;
      bool operator<(const Next& o) const { return seq < o.seq; }
    };
    std::priority_queue<Next> frontier;
    std::unordered_set<uint64_t> visited;
    frontier.push({rec->root.seq, rec->root.psn, rec->root.piece});
    while (!frontier.empty()) {
      auto [seq, psn, piece] = frontier.top();
      frontier.pop();
      if (piece >= L.pieces || cur_seq[piece] != 0) continue;
      if (!visited.insert(seq).second) continue;
      // Newest first: no newer version of this piece is reachable, so this
      // is its live version, which the record vouches for (nothing the
      // record's tree reaches is recycled before the next record). If it is
      // not there, the image is damaged: refuse, naming it, rather than
      // serve the piece's blocks (and every piece below it) as zeros.
      // (Copies: clang 14 cannot capture structured bindings.)
      auto damaged = [&, seq = seq, psn = psn, piece = piece](const std::string& what) {
        const uint64_t first = uint64_t{piece} * kEntriesPerPiece;
        const uint64_t last = std::min<uint64_t>(first + kEntriesPerPiece, L.blocks) - 1;
        return Error("image damaged: the map sector of piece " + std::to_string(piece) +
                         " (blocks " + std::to_string(first) + ".." + std::to_string(last) +
                         ", seq " + std::to_string(seq) + ") at physical sector " +
                         std::to_string(psn) + " " + what +
                         "; its blocks cannot be located, so the image is not served" +
                         (unreadable_slot
                              ? " (log record slot " + std::to_string(*unreadable_slot) +
                                    " is damaged too: this map is the older record's, and "
                                    "writes since may have reused its sectors)"
                              : std::string()),
                     EIO);
      };
      if (psn < VldLayout::kRecordSlots || psn >= uint64_t{L.tracks} * L.spt)
        throw damaged("is outside the platters");
      SectorBytes b = reader.sector(psn);
      ++rep.map_sectors_walked;
      auto m = decode_map_sector(b.data(), sb.secret);
      if (!m) throw damaged("fails its MAC check");
      if (m->seq != seq || m->piece != piece)
        throw damaged("holds another map sector (piece " + std::to_string(m->piece) + ", seq " +
                      std::to_string(m->seq) + ")");
      st.protected_psns.push_back(psn);
      if (cur_seq[m->piece] != 0) continue;  // an older version: its children were adopted
      cur_seq[m->piece] = m->seq;
      st.nodes[m->piece].psn = psn;
      st.nodes[m->piece].seq = m->seq;
      for (uint32_t i = 0; i < kEntriesPerPiece; ++i) {
        uint64_t block = uint64_t{m->piece} * kEntriesPerPiece + i;
        if (block < L.blocks) st.map[block] = m->entries[i];
      }
      auto& ptrs = pointers_of[m->seq];
      for (uint16_t i = 0; i < m->pointer_count; ++i) {
        ptrs.push_back(m->pointers[i]);
        frontier.push({m->pointers[i].seq, m->pointers[i].psn, m->pointers[i].piece});
      }
    }
  }
  st.record = rec.value_or(LogRecord{});
  st.next_seq = std::max<uint64_t>(st.record.next_seq, 1);

  if (rec && rec->clean) {
    rep.clean = true;
    rep.method = "clean-walk";
  } else {
    // 2. Candidates: map sectors newer than the record, in its window (or
    // anywhere, without a record).
    const uint64_t durable = rec ? rec->durable_seq : 0;
    uint32_t first = rec ? rec->window_first : 0;
    uint32_t count = rec ? std::min(rec->window_cylinders, L.cylinders) : L.cylinders;
    rep.method = rec ? "record+window" : "full-scan";
    std::vector<Found> cands;
    for (uint32_t k = 0; k < count; ++k) {
      uint32_t c = (first + k) % L.cylinders;
      for (uint32_t h = 0; h < L.heads; ++h) {
        uint32_t t = c * L.heads + h;
        if (t == 0) continue;  // the system track holds records, not map sectors
        std::vector<unsigned char> bytes = reader.track(t);
        for (uint32_t s = 0; s < L.spt; ++s) {
          auto m = decode_map_sector(bytes.data() + size_t{s} * kSectorBytes, sb.secret);
          if (!m || m->seq <= durable || m->piece >= L.pieces) continue;
          cands.push_back(Found{t * L.spt + s, *m});
        }
      }
    }
    rep.candidates = cands.size();
    for (const Found& f : cands) st.protected_psns.push_back(f.psn);

    // 3. Groups in seq order.
    std::map<uint64_t, std::vector<const Found*>> groups;
    for (const Found& f : cands) groups[f.m.group_seq].push_back(&f);
    std::vector<uint8_t> accepted_any(L.pieces, 0);
    for (auto& [gseq, members] : groups) {
      std::sort(members.begin(), members.end(),
                [](const Found* a, const Found* b) { return a->m.seq < b->m.seq; });
      // Duplicates of one seq (a stale copy beside a live one cannot both be
      // valid with the same seq unless identical): keep one.
      members.erase(std::unique(members.begin(), members.end(),
                                [](const Found* a, const Found* b) { return a->m.seq == b->m.seq; }),
                    members.end());
      const uint32_t want = members.front()->m.group_count;
      bool ok = members.size() == want;
      const bool tracing = trace::enabled(trace::Channel::kRecovery);
      std::string why;  // for the trace only
      if (!ok && tracing) why = "members missing";
      for (size_t i = 0; ok && i < members.size(); ++i) {
        const MapSector& m = members[i]->m;
        ok = m.seq == gseq + i && m.group_count == want && m.group_seq == gseq;
        if (!ok) {
          if (tracing) why = "members disagree about their group";
          break;
        }
        // The chain: this version must replace the one accepted so far.
        bool trusted_start = !rec && !accepted_any[m.piece] && cur_seq[m.piece] == 0;
        ok = m.prev_seq == cur_seq[m.piece] || trusted_start;
        if (!ok && tracing)
          why = fmt::format("piece {} replaces seq {}, but seq {} is the version accepted",
                            m.piece, m.prev_seq, cur_seq[m.piece]);
        // The data this request wrote must be there, whole.
        for (uint32_t e = 0; ok && e < kEntriesPerPiece; ++e) {
          if (!(m.changed >> e & 1) || !m.entries[e].mapped()) continue;
          uint64_t block = uint64_t{m.piece} * kEntriesPerPiece + e;
          if (block >= L.blocks || m.entries[e].psn() >= uint64_t{L.tracks} * L.spt) {
            ok = false;
            if (tracing) why = fmt::format("block {} maps outside the platters", block);
            break;
          }
          std::vector<std::byte> data = reader.block(m.entries[e].psn());
          ++rep.data_blocks_checked;
          ok = data_checksum(data.data(), data.size(), block) == m.entries[e].checksum;
          if (!ok && tracing)
            why = fmt::format("block {} at psn {} fails its checksum", block,
                              m.entries[e].psn());
        }
      }
      if (!ok) {
        ++rep.groups_rejected;
        VLD_TRACE(kRecovery, 1, "rolled back the request of group seq {} ({} of {} map sectors "
                  "found): {}", gseq, members.size(), want, why);
        continue;
      }
      VLD_TRACE(kRecovery, 2, "accepted group seq {} ({} map sectors)", gseq, want);
      ++rep.groups_accepted;
      for (const Found* f : members) {
        const MapSector& m = f->m;
        cur_seq[m.piece] = m.seq;
        accepted_any[m.piece] = 1;
        st.nodes[m.piece].psn = f->psn;
        st.nodes[m.piece].seq = m.seq;
        for (uint32_t i = 0; i < kEntriesPerPiece; ++i) {
          uint64_t block = uint64_t{m.piece} * kEntriesPerPiece + i;
          if (block < L.blocks) st.map[block] = m.entries[i];
        }
      }
    }
    for (const Found& f : cands) st.next_seq = std::max(st.next_seq, f.m.seq + 1);
    // A new epoch of seqs: map sectors this recovery could not see (a
    // checkpoint an earlier, interrupted recovery wrote outside the window)
    // can never share a seq with anything written from now on.
    st.next_seq += kRecoveryEpochGap;
    // Without candidates the base tree stands as it is; otherwise VldDisk
    // writes a fresh tree (a checkpoint) before serving.
    st.needs_checkpoint = !cands.empty() || !rec;
  }

  if (!st.needs_checkpoint) {
    // Children of live nodes, from their on-disk pointers.
    std::unordered_map<uint64_t, uint32_t> piece_of_seq;
    for (uint32_t p = 0; p < L.pieces; ++p)
      if (st.nodes[p].seq) piece_of_seq[st.nodes[p].seq] = p;
    for (uint32_t p = 0; p < L.pieces; ++p) {
      if (!st.nodes[p].seq) continue;
      for (const LogPointer& ptr : pointers_of[st.nodes[p].seq]) {
        auto it = piece_of_seq.find(ptr.seq);
        if (it != piece_of_seq.end() && st.nodes[it->second].psn == ptr.psn)
          st.nodes[p].children.push_back(ChildRef{it->second, ptr.seq});
      }
    }
    if (st.record.has_root) {
      auto it = piece_of_seq.find(st.record.root.seq);
      if (it != piece_of_seq.end()) st.root = it->second;
    }
  }

  rep.simulated_ms = to_ms(reader.elapsed());
  rep.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                          wall_start)
                    .count();
  return st;
}

}  // namespace vld
