#include "core/util/checksum.h"
#include "core/vld/recovery.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "core/vld/eager_allocator.h"
#include "core/vld/log_walk.h"
#include "core/vld/scan_set.h"
#include "core/util/error.h"
#include "core/util/trace.h"
#include "geometry/drive_model.h"

namespace vld {

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
    for (const SectorRun& r : extent_runs(extent_at(psn, layout_.block_sectors, layout_.geometry), layout_.geometry)) {
      store_.read(layout_.byte_offset(r.first_psn), std::span(p, size_t{r.count} * kSectorBytes));
      p += size_t{r.count} * kSectorBytes;
    }
    charge(psn, layout_.block_sectors);
    return out;
  }
  // A whole track, read from wherever the head lands: one revolution.
  std::vector<unsigned char> track(uint32_t t) {
    const SectorRun whole{layout_.track_first_psn(t), layout_.track_sectors(t)};
    std::vector<unsigned char> out(size_t{whole.count} * kSectorBytes);
    store_.read(layout_.byte_offset(whole.first_psn), std::as_writable_bytes(std::span(out)));
    if (drive_.track_buffer()) {
      now_ = drive_.read(std::span(&whole, 1), now_, /*charge_overhead=*/false).end;
    } else {
      HeadPosition to{t / layout_.heads, t % layout_.heads};
      ServiceBreakdown move = drive_.reposition(drive_.head(), to);
      now_ += move.seek + move.head_switch + drive_.geometry().revolution();
      drive_.set_head(to);
    }
    report_.sectors_read += whole.count;
    ++report_.tracks_scanned;
    return out;
  }
  SimDuration elapsed() const { return now_ - kSimEpoch; }

 private:
  void charge(uint64_t psn, uint32_t sectors) {
    ExtentRuns r = extent_runs(extent_at(psn, sectors, layout_.geometry), layout_.geometry);
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

// The authentic map sectors (valid MAC, piece in range) newer than
// after_seq on a track just read.
void map_sectors_on(const std::vector<unsigned char>& track, uint32_t t, const VldLayout& L,
                    const Secret& secret, uint64_t after_seq, std::vector<Found>* out) {
  const uint32_t first = static_cast<uint32_t>(L.track_first_psn(t));
  const uint32_t sectors = static_cast<uint32_t>(track.size() / kSectorBytes);
  for (uint32_t s = 0; s < sectors; ++s) {
    auto m = decode_map_sector(track.data() + size_t{s} * kSectorBytes, secret);
    if (m && m->seq > after_seq && m->piece < L.pieces) out->push_back(Found{first + s, *m});
  }
}

// Whether entry e of m is one its request wrote and mapped: data recovery
// must find whole before it takes the request.
bool wrote_data(const MapSector& m, uint32_t e) {
  return (m.changed >> e & 1) && m.entries[e].mapped();
}

// "piece P (blocks a..b, seq S) at physical sector N": what a damaged map
// sector is called in every message.
std::string piece_at(const VldLayout& L, uint32_t piece, uint64_t seq, uint64_t psn) {
  const uint64_t first = uint64_t{piece} * kEntriesPerPiece;
  const uint64_t last = std::min<uint64_t>(first + kEntriesPerPiece, L.blocks) - 1;
  return fmt::format("the map sector of piece {} (blocks {}..{}, seq {}) at physical sector {}",
                     piece, first, last, seq, psn);
}

// Installs map sector m, found at psn, as its piece's version: the node and
// the map entries of the piece's blocks.
void adopt(RecoveredState& st, const VldLayout& L, uint32_t psn, const MapSector& m) {
  st.nodes[m.piece].psn = psn;
  st.nodes[m.piece].seq = m.seq;
  for (uint32_t e = 0; e < kEntriesPerPiece; ++e) {
    const uint64_t block = uint64_t{m.piece} * kEntriesPerPiece + e;
    if (block < L.blocks) st.map[block] = m.entries[e];
  }
}

// ---- salvage: no record to trust -------------------------------------------------

// Why a root did not give a consistent map.
struct Inconsistency {
  std::string what;
  uint64_t seq = 0;  // of the map sector concerned
};

// The whole disk's map sectors, and the newest root whose tree is whole.
class Salvage {
 public:
  Salvage(Reader& reader, const Superblock& sb, const VldLayout& L, RecoveredState& st)
      : reader_(reader), sb_(sb), L_(L), st_(st) {}

  // Every track but the system track, keeping every authentic map sector.
  void scan(const ScanProgress& progress) {
    for (uint32_t t = 1; t < L_.tracks; ++t) {
      map_sectors_on(reader_.track(t), t, L_, sb_.secret, /*after_seq=*/0, &found_);
      if (progress) progress("scanning the whole disk", t, L_.tracks - 1);
    }
    for (size_t i = 0; i < found_.size(); ++i) {
      by_seq_.emplace(found_[i].m.seq, i);  // one sector per seq: a second is a copy
      vouched_ = std::max(vouched_, found_[i].m.vouched_seq());
      max_seq_ = std::max(max_seq_, found_[i].m.seq);
    }
  }
  uint64_t vouched() const { return vouched_; }
  void vouch(uint64_t seq) { vouched_ = std::max(vouched_, seq); }
  uint64_t max_seq() const { return max_seq_; }
  size_t found() const { return found_.size(); }

  // Tries the roots (last members of groups) newest first, down to the
  // newest vouched one; installs the first whose tree is whole. nullopt
  // on success, else why the oldest root tried failed.
  std::optional<Inconsistency> choose() {
    std::vector<const Found*> roots;
    for (const auto& [seq, i] : by_seq_) {
      const MapSector& m = found_[i].m;
      if (m.seq == m.group_seq + m.group_count - 1 && m.seq >= vouched_) roots.push_back(&found_[i]);
    }
    std::sort(roots.begin(), roots.end(),
              [](const Found* a, const Found* b) { return a->m.seq > b->m.seq; });
    if (roots.size() > kMaxRoots) roots.resize(kMaxRoots);
    if (roots.empty() && vouched_ == 0) return std::nullopt;  // nothing ever written
    std::optional<Inconsistency> last{Inconsistency{"no root of a map written since seq " +
                                                        std::to_string(vouched_) + " was found",
                                                    vouched_}};
    for (const Found* r : roots) {
      ++st_.report.groups_rejected;
      last = try_root(*r);
      if (!last) {
        --st_.report.groups_rejected;
        ++st_.report.groups_accepted;
        VLD_TRACE(kRecovery, 1, "full scan: the tree from seq {} (piece {} at psn {}) is whole",
                  r->m.seq, r->m.piece, r->psn);
        return std::nullopt;
      }
      VLD_TRACE(kRecovery, 1, "full scan: not the tree from seq {}: {}", r->m.seq, last->what);
    }
    return last;
  }

 private:
  // Enough for every request after the last flush of a long unflushed run;
  // a damaged image without hints stops here rather than walk forever.
  static constexpr size_t kMaxRoots = 4096;

  std::optional<Inconsistency> try_root(const Found& root) {
    std::vector<const Found*> versions;
    std::optional<Inconsistency> bad;
    walk_log_tree(LogPointer{root.psn, root.m.seq, root.m.piece}, static_cast<uint32_t>(L_.pieces),
                  [&](const LogWalkStep& at) {
                    auto it = by_seq_.find(at.seq);
                    if (at.piece >= L_.pieces)
                      bad = Inconsistency{"a pointer names piece " + std::to_string(at.piece), at.seq};
                    else if (it == by_seq_.end() || found_[it->second].psn != at.psn ||
                             found_[it->second].m.piece != at.piece)
                      bad = Inconsistency{piece_at(L_, at.piece, at.seq, at.psn) +
                                              " is missing or fails its MAC check",
                                          at.seq};
                    if (bad) return LogWalkVisit{nullptr, /*stop=*/true};
                    versions.push_back(&found_[it->second]);
                    return LogWalkVisit{&found_[it->second].m};
                  });
    if (bad) return bad;
    // Data mapped by versions nothing vouches for may be a crash's lost
    // writes: all of it must be there. Vouched data was durable; damage to
    // it is an I/O error when read, as on any image.
    for (const Found* f : versions) {
      if (f->m.seq <= vouched_) continue;
      for (uint32_t e = 0; e < kEntriesPerPiece; ++e) {
        const uint64_t block = uint64_t{f->m.piece} * kEntriesPerPiece + e;
        const MapEntry& me = f->m.entries[e];
        if (block >= L_.blocks || !me.mapped()) continue;
        if (L_.on_system_track(me.psn()) || me.psn() + L_.block_sectors > L_.platter_sectors())
          return Inconsistency{fmt::format("block {} maps outside the platters", block), f->m.seq};
        if (!data_ok(block, me))
          return Inconsistency{fmt::format("data block {} at physical sector {} fails its checksum",
                                           block, me.psn()),
                               f->m.seq};
      }
    }
    for (const Found* f : versions) {
      adopt(st_, L_, f->psn, f->m);
      st_.protected_psns.push_back(f->psn);
    }
    return std::nullopt;
  }

  bool data_ok(uint64_t block, const MapEntry& e) {
    auto [it, fresh] = checked_.try_emplace(std::tuple(block, e.psn(), e.checksum), false);
    if (fresh) {
      std::vector<std::byte> data = reader_.block(e.psn());
      ++st_.report.data_blocks_checked;
      it->second = data_checksum(data.data(), data.size(), block) == e.checksum;
    }
    return it->second;
  }

  Reader& reader_;
  const Superblock& sb_;
  const VldLayout& L_;
  RecoveredState& st_;
  std::vector<Found> found_;
  std::unordered_map<uint64_t, size_t> by_seq_;
  std::map<std::tuple<uint64_t, uint64_t, uint32_t>, bool> checked_;  // (block, psn, checksum)
  uint64_t vouched_ = 0, max_seq_ = 0;
};


// ---- recovery: one method per step of recovery.h ---------------------------------

// One run of recover(): what the steps read and decided so far.
class Recovery {
 public:
  Recovery(BackingStore& store, const Superblock& sb, bool track_buffer,
           const ScanProgress& progress)
      : sb_(sb), L_(sb), progress_(progress), reader_(store, sb, track_buffer, st_.report) {
    st_.map.assign(L_.blocks, MapEntry{});
    st_.nodes.assign(L_.pieces, LogNode{});
    cur_seq_.assign(L_.pieces, 0);
    track_walked_.assign(L_.tracks, false);
    pointers_of_.assign(L_.pieces, PointerSpan{});
  }

  RecoveredState run() {
    read_records();
    if (!bad_slots_.empty()) {
      salvage_whole_disk();
    } else {
      walk_base_tree();
      st_.record = *rec_;
      st_.next_seq = std::max<uint64_t>(st_.record.next_seq, 1);
      if (rec_->clean) {
        st_.report.clean = true;
        st_.report.method = "clean-walk";
      } else {
        replay_window();
      }
      if (!st_.needs_checkpoint) link_children();
    }
    finish();
    return std::move(st_);
  }

 private:
  // What became of a group of candidates: its size, and why it was rolled
  // back ("" if accepted).
  struct Outcome {
    uint64_t count;
    std::string why;
  };

  // The newest valid log record. VldDisk::format writes both slots and
  // every record after replaces the older one, so a slot without a valid
  // record is damaged.
  void read_records() {
    for (uint32_t slot = 0; slot < VldLayout::kRecordSlots; ++slot) {
      SectorBytes b = reader_.sector(slot);
      auto r = decode_log_record(b.data(), sb_.secret);
      if (r && (!rec_ || r->generation > rec_->generation)) rec_ = r;
      if (!r) bad_slots_.push_back(slot);
    }
  }

  // A damaged slot: the surviving record (if any) may be the older one, and
  // writes since the newer one may lie anywhere: scan the whole disk (the
  // paper's last resort) and take the newest root whose tree is whole. A
  // record that survives still vouches for its durable seq.
  void salvage_whole_disk() {
    RecoveryReport& rep = st_.report;
    rep.method = "full-scan";
    rep.damage = bad_slots_.size() == 2
                     ? "both log record slots (physical sectors 0 and 1) fail their MAC check"
                     : fmt::format("log record slot {0} (physical sector {0}) fails its MAC check",
                                   bad_slots_[0]);
    Salvage salvage(reader_, sb_, L_, st_);
    salvage.scan(progress_);
    if (rec_) salvage.vouch(rec_->durable_seq);
    rep.candidates = salvage.found();
    if (auto bad = salvage.choose()) {
      throw Error("image damaged: " + rep.damage + ", and a scan of the whole disk found no whole map "
                      "holding every write flushed up to seq " +
                      std::to_string(salvage.vouched()) + ": " + bad->what +
                      "; the image is not served",
                  EIO);
    }
    st_.record = rec_.value_or(LogRecord{});
    st_.next_seq = std::max<uint64_t>({st_.record.next_seq, salvage.max_seq() + 1, 1}) +
                   kRecoveryEpochGap;
    st_.needs_checkpoint = true;
  }

  // 1. The tree from the record's root, newest first. A pointer names the
  // piece it leads to, so one to a piece already met (an older version: its
  // children were adopted by the newer one) is dropped unread: the walk reads
  // exactly the live map sectors.
  void walk_base_tree() {
    if (!rec_->has_root) return;
    walk_log_tree(rec_->root, static_cast<uint32_t>(L_.pieces),
                  [&](const LogWalkStep& at) { return visit_base(at); });
  }

  // Newest first: no newer version of this piece is reachable, so this is
  // its live version, which the record vouches for (nothing the record's
  // tree reaches is recycled before the next record). If it is not there,
  // the image is damaged: refuse, naming it, rather than serve the piece's
  // blocks (and every piece below it) as zeros.
  LogWalkVisit visit_base(const LogWalkStep& at) {
    if (at.piece >= L_.pieces) return LogWalkVisit{};
    if (at.psn < VldLayout::kRecordSlots || at.psn >= L_.platter_sectors())
      throw base_damaged(at, "is outside the platters");
    SectorBytes b = reader_.sector(at.psn);
    if (++st_.report.map_sectors_walked % 4096 == 0 && progress_)
      progress_("walking the map", st_.report.map_sectors_walked, L_.pieces);
    walk_at_ = decode_map_sector(b.data(), sb_.secret);
    if (!walk_at_) throw base_damaged(at, "fails its MAC check");
    const MapSector& m = *walk_at_;
    if (m.seq != at.seq || m.piece != at.piece)
      throw base_damaged(at, "holds another map sector (piece " + std::to_string(m.piece) +
                                 ", seq " + std::to_string(m.seq) + ")");
    st_.protected_psns.push_back(at.psn);
    if (const uint32_t t = L_.track_of(at.psn); !track_walked_[t]) {
      track_walked_[t] = true;
      ++st_.report.tracks_walked;
    }
    if (!rec_->clean && m.seq > rec_->checkpoint_seq) ++st_.report.scattered_walked;
    take(at.psn, m);
    return LogWalkVisit{&*walk_at_};
  }

  // Map sector m, at psn, as its piece's version so far (the walk's, or a
  // request's accepted from the window): its entries, and its pointers for
  // link_children.
  void take(uint32_t psn, const MapSector& m) {
    cur_seq_[m.piece] = m.seq;
    adopt(st_, L_, psn, m);
    pointers_of_[m.piece] = PointerSpan{pointer_pool_.size(), m.pointer_count};
    pointer_pool_.insert(pointer_pool_.end(), m.pointers.begin(),
                         m.pointers.begin() + m.pointer_count);
  }

  Error base_damaged(const LogWalkStep& at, const std::string& what) const {
    return Error("image damaged: " + piece_at(L_, at.piece, at.seq, at.psn) + " " + what +
                     "; its blocks cannot be located, so the image is not served",
                 EIO);
  }

  // Steps 2 to 4: what was written since an unclean record.
  void replay_window() {
    st_.report.method = "record+window";
    scan_window();
    accept_groups();
    refuse_lost_flushes();
    for (const Found& f : cands_) st_.next_seq = std::max(st_.next_seq, f.m.seq + 1);
    // A new epoch of seqs: map sectors this recovery could not see (a
    // checkpoint an earlier, interrupted recovery wrote outside the window)
    // can never share a seq with anything written from now on.
    st_.next_seq += kRecoveryEpochGap;
    // The accepted requests extend the record's tree as they extended the
    // one in memory when they were written (each group adopts the children
    // of the versions it replaces, and the root before it), unless one
    // follows a request rolled back or lost whole: its pointers may lead
    // there (found by the crash harness, CompactionMovesKeepEveryWrite).
    // Then VldDisk writes a fresh tree (a full checkpoint) before serving;
    // otherwise just a record.
    st_.needs_checkpoint = accepted_after_a_break();
  }

  uint32_t window_cylinders() const { return std::min(rec_->window_cylinders, L_.cylinders); }

  // 2. Candidates: map sectors newer than the record, in its window: on
  // the cylinders the record's scan set names, and next to every cylinder
  // where one written since the record turns up, until none is added
  // (scan_set.h says why that finds every flushed one; a record without a
  // set names the whole window). The data their requests wrote is checked
  // (step 3) from the tracks the scan reads whole, wherever it lies on one
  // of them: a block never leaves its track (it wraps). Read block by block
  // afterwards, those checks were most of what an unclean open cost (600
  // random reads, 5.7 s of 8.8 on a 1 GiB st19101 image).
  void scan_window() {
    const CylinderWindow w{rec_->window_first, rec_->window_cylinders};
    scan_set_ = rec_->scan_set_narrow
                    ? ScanSet::decode_bits(rec_->scan_set_bits.data(), w, L_.cylinders)
                    : ScanSet::whole(w, L_.cylinders);
    std::set<uint32_t> pending;  // window indices, read lowest first
    for (uint32_t k = 0; k < scan_set_.width(); ++k)
      if (scan_set_.contains_index(k)) pending.insert(k);
    std::vector<bool> done(scan_set_.width(), false);
    while (!pending.empty()) {
      const uint32_t k = *pending.begin();
      pending.erase(pending.begin());
      done[k] = true;
      if (scan_cylinder(scan_set_.cylinder_at(k))) {
        const ScanSet::IndexRange r = scan_set_.neighbourhood(k);
        for (uint32_t n = r.first; n <= r.last; ++n)
          if (!done[n]) pending.insert(n);
      }
      if (progress_) {
        const uint64_t read = std::count(done.begin(), done.end(), true);
        progress_("scanning the window", read * L_.heads, (read + pending.size()) * L_.heads);
      }
    }
    st_.report.candidates = cands_.size();
    protect_candidates();
  }

  // Reads cylinder c's tracks for candidates; whether one of them was
  // written since the record (seqs from its next_seq, before the epoch
  // gap of a recovery's own checkpoint: that one is never needed, and
  // following it would make a second recovery read more than the first).
  bool scan_cylinder(uint32_t c) {
    bool since_record = false;
    for (uint32_t h = 0; h < L_.heads; ++h) {
      const uint32_t t = c * L_.heads + h;
      if (t == 0) continue;  // the system track holds records, not map sectors
      const std::vector<unsigned char> track = reader_.track(t);
      const size_t first_new = cands_.size();
      map_sectors_on(track, t, L_, sb_.secret, rec_->durable_seq, &cands_);
      for (size_t i = first_new; i < cands_.size(); ++i) {
        const uint64_t seq = cands_[i].m.seq;
        if (seq >= rec_->next_seq && seq - rec_->next_seq < kRecoveryEpochGap) since_record = true;
        want_data_of(cands_[i].m);
      }
      check_wanted_on(t, track);
      scanned_tracks_.insert(t);
    }
    return since_record;
  }

  // The data blocks a candidate wrote, noted for checking when the scan
  // reads their track (now, or later in it). Blocks on tracks already
  // read, or never read, are read on their own in step 3.
  void want_data_of(const MapSector& m) {
    for (uint32_t e = 0; e < kEntriesPerPiece; ++e) {
      const MapEntry& me = m.entries[e];
      if (!wrote_data(m, e) || me.psn() >= L_.platter_sectors()) continue;
      const uint32_t t = L_.track_of(me.psn());
      if (scan_set_.index_of(t / L_.heads) && !scanned_tracks_.count(t))
        wanted_[t].push_back(DataKey{static_cast<uint32_t>(me.psn()), uint64_t{m.piece} * kEntriesPerPiece + e});
    }
  }

  // The checksums of the wanted blocks on track t, from its bytes.
  void check_wanted_on(uint32_t t, const std::vector<unsigned char>& track) {
    auto it = wanted_.find(t);
    if (it == wanted_.end()) return;
    std::vector<unsigned char> block(size_t{L_.block_sectors} * kSectorBytes);
    const uint64_t first = L_.track_first_psn(t);
    for (const DataKey& key : it->second) {
      unsigned char* p = block.data();
      for (const SectorRun& r : extent_runs(extent_at(key.psn, L_.block_sectors, L_.geometry), L_.geometry)) {
        const size_t at = size_t{r.first_psn - first} * kSectorBytes;
        p = std::copy_n(track.data() + at, size_t{r.count} * kSectorBytes, p);
      }
      data_sums_[key] = data_checksum(block.data(), block.size(), key.block);
    }
    wanted_.erase(it);
  }

  // What a crash before the next record makes recovery read again
  // (RecoveredState::protected_psns, crash contract clause 4).
  void protect_candidates() {
    for (const Found& f : cands_) {
      st_.protected_psns.push_back(f.psn);
      for (uint32_t e = 0; e < kEntriesPerPiece; ++e) {
        const MapEntry& me = f.m.entries[e];
        if (wrote_data(f.m, e) && !L_.on_system_track(me.psn()) &&
            me.psn() < L_.platter_sectors())
          st_.protected_data_psns.push_back(static_cast<uint32_t>(me.psn()));
      }
    }
  }

  // Whether a request was accepted after a break in the seqs since the
  // record: one rolled back, or one lost whole (its seqs missing: no
  // member found). Its pointers (the root it adopted) may lead there.
  bool accepted_after_a_break() const {
    uint64_t expect = rec_->durable_seq + 1;
    bool broken = false;
    for (const auto& [gseq, o] : outcomes_) {
      if (gseq != expect) broken = true;  // a request before this one lost whole
      if (!o.why.empty()) broken = true;
      else if (broken) return true;
      expect = gseq + o.count;
    }
    return false;
  }

  // 3. Groups in seq order; each accepted whole or rolled back.
  void accept_groups() {
    std::map<uint64_t, std::vector<const Found*>> groups;
    for (const Found& f : cands_) groups[f.m.group_seq].push_back(&f);
    for (auto& [gseq, members] : groups) {
      std::sort(members.begin(), members.end(),
                [](const Found* a, const Found* b) { return a->m.seq < b->m.seq; });
      // Duplicates of one seq (a stale copy beside a live one cannot both be
      // valid with the same seq unless identical): keep one.
      members.erase(std::unique(members.begin(), members.end(),
                                [](const Found* a, const Found* b) { return a->m.seq == b->m.seq; }),
                    members.end());
      const uint32_t want = members.front()->m.group_count;
      std::string why = group_flaw(gseq, members);
      if (!why.empty()) {
        ++st_.report.groups_rejected;
        VLD_TRACE(kRecovery, 1, "rolled back the request of group seq {} ({} of {} map sectors "
                  "found): {}", gseq, members.size(), want, why);
      } else {
        VLD_TRACE(kRecovery, 2, "accepted group seq {} ({} map sectors)", gseq, want);
        ++st_.report.groups_accepted;
        for (const Found* f : members) take(f->psn, f->m);
        newest_root_ = LogPointer{members.back()->psn, members.back()->m.seq, members.back()->m.piece};
      }
      outcomes_[gseq] = Outcome{want, std::move(why)};
    }
  }

  // Why the group starting at gseq cannot be accepted, or "": all its
  // members present, each replacing the version accepted so far for its
  // piece, and all the data it wrote whole.
  std::string group_flaw(uint64_t gseq, const std::vector<const Found*>& members) {
    const uint32_t want = members.front()->m.group_count;
    if (members.size() != want)
      return fmt::format("{} of its {} map sectors are missing", want - members.size(), want);
    for (size_t i = 0; i < members.size(); ++i) {
      const MapSector& m = members[i]->m;
      if (m.seq != gseq + i || m.group_count != want || m.group_seq != gseq)
        return "its map sectors disagree about their group";
      // The chain: this version must replace the one accepted so far.
      if (m.prev_seq != cur_seq_[m.piece])
        return fmt::format("piece {} replaces seq {}, but seq {} is the version accepted",
                           m.piece, m.prev_seq, cur_seq_[m.piece]);
      if (std::string why = data_flaw(m); !why.empty()) return why;
    }
    return "";
  }

  // The data this request wrote must be there, whole: why not, or "".
  std::string data_flaw(const MapSector& m) {
    for (uint32_t e = 0; e < kEntriesPerPiece; ++e) {
      const MapEntry& me = m.entries[e];
      if (!wrote_data(m, e)) continue;
      const uint64_t block = uint64_t{m.piece} * kEntriesPerPiece + e;
      if (block >= L_.blocks || me.psn() >= L_.platter_sectors())
        return fmt::format("block {} maps outside the platters", block);
      ++st_.report.data_blocks_checked;
      if (data_sum(static_cast<uint32_t>(me.psn()), block) != me.checksum)
        return fmt::format("data block {} at physical sector {} fails its checksum", block,
                           me.psn());
    }
    return "";
  }

  // The checksum of the data block at psn as logical block `block`: from
  // the window scan if it read the block's track after the map sector's,
  // else read now.
  uint32_t data_sum(uint32_t psn, uint64_t block) {
    if (auto it = data_sums_.find(DataKey{psn, block}); it != data_sums_.end()) return it->second;
    std::vector<std::byte> data = reader_.block(psn);
    ++st_.report.data_blocks_read;
    return data_checksum(data.data(), data.size(), block);
  }

  // 4. A request rolled back must be one a crash may lose: written after
  // the last completed flush. A later map sector that vouches for it
  // (synced_back) says it was flushed, so it is damaged: refuse, naming
  // it, rather than lose a durable write silently. Nothing written since
  // the record is recycled before the next one, so every seq up to the
  // vouched one is in the window.
  void refuse_lost_flushes() {
    for (const Found& f : cands_)
      if (!voucher_ || f.m.vouched_seq() > voucher_->m.vouched_seq()) voucher_ = &f;
    const uint64_t vouched = voucher_ ? voucher_->m.vouched_seq() : 0;
    uint64_t expect = rec_->durable_seq + 1;
    for (const auto& [gseq, o] : outcomes_) {
      if (expect > vouched) break;
      if (gseq > expect) throw lost_flush(expect, not_in_window(expect));
      if (!o.why.empty())
        throw lost_flush(gseq, fmt::format("the request of map sectors seq {}..{}, written after "
                                           "the last log record, cannot be rebuilt: {}",
                                           gseq, gseq + o.count - 1, o.why));
      expect = gseq + o.count;
    }
    if (expect <= vouched) throw lost_flush(expect, not_in_window(expect));
  }

  std::string not_in_window(uint64_t seq) const {
    return fmt::format("no map sector with seq {} was found in the log window (cylinders {}+{})",
                       seq, rec_->window_first, window_cylinders());
  }

  // REQUIRES: voucher_ set (some candidate vouches for seq).
  Error lost_flush(uint64_t seq, const std::string& what) const {
    return Error(fmt::format("image damaged: {}; map sector seq {} (piece {} at physical "
                             "sector {}) says seq {} was flushed, so this is damage, not a "
                             "lost write, and the image is not served",
                             what, voucher_->m.seq, voucher_->m.piece, voucher_->psn, seq),
                 EIO);
  }

  // Children of live nodes, from their on-disk pointers; and the root.
  // A pointer is live if the version it names is its piece's version now.
  // (Seqs are unique, so this is the piece that holds the seq.)
  void link_children() {
    auto live = [&](const LogPointer& ptr) {
      return ptr.seq != 0 && ptr.piece < L_.pieces && st_.nodes[ptr.piece].seq == ptr.seq &&
             st_.nodes[ptr.piece].psn == ptr.psn;
    };
    for (uint32_t p = 0; p < L_.pieces; ++p) {
      if (!st_.nodes[p].seq) continue;
      const PointerSpan span = pointers_of_[p];
      for (size_t i = span.first; i < span.first + span.count; ++i) {
        const LogPointer& ptr = pointer_pool_[i];
        if (live(ptr)) st_.nodes[p].children.push_back(ChildRef{ptr.piece, ptr.seq});
      }
    }
    // The root: the last map sector of the newest request accepted from
    // the window, else the record's.
    const std::optional<LogPointer> root =
        newest_root_ ? newest_root_
                     : (st_.record.has_root ? std::optional(st_.record.root) : std::nullopt);
    if (root && root->piece < L_.pieces && root->seq != 0 &&
        st_.nodes[root->piece].seq == root->seq)
      st_.root = root->piece;
  }

  void finish() {
    st_.report.simulated_ms = to_ms(reader_.elapsed());
    st_.report.wall_ms = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - wall_start_)
                             .count();
  }

  const std::chrono::steady_clock::time_point wall_start_ = std::chrono::steady_clock::now();
  const Superblock& sb_;
  const VldLayout L_;
  const ScanProgress& progress_;
  RecoveredState st_;  // before reader_, which counts into st_.report
  Reader reader_;
  std::optional<LogRecord> rec_;             // the newest valid record
  std::vector<uint32_t> bad_slots_;          // record slots without one
  std::vector<uint64_t> cur_seq_;            // per piece: the version accepted so far
  std::vector<bool> track_walked_;           // per track: the base walk read a map sector there
  // Per piece, the pointers of the version taken last (link_children's
  // input), as a span of one pool: a container per map sector would be
  // 2.4 MiB of small allocations at a 4 GiB open (docs/scale.md, section 3).
  struct PointerSpan {
    size_t first = 0;
    uint32_t count = 0;
  };
  std::vector<PointerSpan> pointers_of_;
  std::vector<LogPointer> pointer_pool_;
  std::optional<MapSector> walk_at_;         // the sector the base walk is at
  std::vector<Found> cands_;                 // step 2's candidates
  // A data block as a candidate names it: where, and which logical block
  // (the checksum's seed).
  struct DataKey {
    uint32_t psn;
    uint64_t block;
    bool operator<(const DataKey& o) const { return std::tie(psn, block) < std::tie(o.psn, o.block); }
  };
  std::unordered_map<uint32_t, std::vector<DataKey>> wanted_;  // track -> blocks to check there
  std::map<DataKey, uint32_t> data_sums_;    // checksums taken during the window scan
  ScanSet scan_set_ = ScanSet::whole(CylinderWindow{0, 1}, 1);  // step 2's, from the record
  std::unordered_set<uint32_t> scanned_tracks_;  // tracks step 2 has read
  std::map<uint64_t, Outcome> outcomes_;     // group seq -> what became of it
  const Found* voucher_ = nullptr;           // the candidate vouching for the newest seq
  std::optional<LogPointer> newest_root_;    // of the newest group accepted from the window
};

}  // namespace

RecoveredState recover(BackingStore& store, const Superblock& sb, bool track_buffer,
                       const ScanProgress& progress) {
  return Recovery(store, sb, track_buffer, progress).run();
}

}  // namespace vld
