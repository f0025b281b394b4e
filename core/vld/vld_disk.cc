#include "core/vld/vld_disk_impl.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "core/util/checksum.h"
#include "core/util/error.h"
#include "core/util/host_phases.h"
#include "core/util/trace.h"

namespace vld {

namespace {
// Zeros for the largest block size (64 KiB), for zero() with NO_HOLE.
const std::byte* zero_block() {
  static const std::vector<std::byte> zeros(65536);
  return zeros.data();
}
}  // namespace

VldDisk::Impl::Impl(std::unique_ptr<BackingStore> store, const Superblock& sb, VldOptions options,
                 bool track_buffer)
    : Impl(recover_image(std::move(store), sb, options, track_buffer), sb, options,
              track_buffer) {}

VldDisk::Impl::Recovered VldDisk::Impl::recover_image(std::unique_ptr<BackingStore> store,
                                          const Superblock& sb, const VldOptions& options,
                                          bool track_buffer) {
  Recovered r{FailStopStore::wrap(std::move(store)), {}};
  r.state = recover(*r.store, sb, track_buffer, options.open_progress);
  return r;
}

VldDisk::Impl::Impl(Recovered recovered, const Superblock& sb, VldOptions options, bool track_buffer)
    : store_(std::move(recovered.store)),
      sb_(sb),
      layout_(sb),
      options_(options),
      drive_(sb.geometry, sb.simulated_cylinders),
      free_(layout_.track_sizes()),
      alloc_(drive_, free_, AllocatorPolicy{options.fill_fraction, true, options.one_way_seeks}),
      log_(static_cast<uint32_t>(layout_.pieces), layout_.tracks, layout_.geometry),
      blocks_on_(layout_.tracks, layout_.block_sectors,
                 [this](uint32_t t) { return free_.sectors_on(t); }),
      compactor_(options.compactor, layout_.block_sectors),
      track_written_(layout_.tracks),
      scattered_(layout_.pieces, 0),
      shadow_on_track_(layout_.tracks, 0) {
  // psns are 32-bit (MapEntry, LogNode): read_superblock refuses more.
  assert(layout_.platter_sectors() <= kMaxPlatterSectors);
  if (options_.window_cylinders == 0) options_.window_cylinders = kDefaultWindowCylinders;
  options_.window_cylinders = std::min(options_.window_cylinders, layout_.cylinders);
  drive_.set_track_buffer(track_buffer);
  compactor_.costs() = CompactionCosts::from_drive(
      sb.geometry.revolution(), sb.geometry.seek.time(sb.geometry.cylinders - 1));
  RecoveredState& st = recovered.state;
  options_.open_progress = nullptr;  // the caller's, for the open only
  install(st);
  recovery_ = st.report;
  if (trace::enabled(trace::Channel::kRecovery)) trace_recovery(st);
}

void VldDisk::Impl::format(BackingStore& store, const Superblock& sb) {
  VldLayout L(sb);
  LogRecord r;
  r.clean = true;
  r.durable_seq = 0;
  r.next_seq = 1;
  // Both slots: an image always holds two valid records, so a slot that
  // does not is damaged (recovery then trusts neither: see recovery.h).
  for (r.generation = 0; r.generation < VldLayout::kRecordSlots; ++r.generation) {
    SectorBytes b = encode_log_record(r, sb.secret);
    store.write(L.byte_offset(r.generation % VldLayout::kRecordSlots), std::as_bytes(std::span(b)));
  }
  store.sync();
}

Extent VldDisk::Impl::extent_of(const MapEntry& e) const {
  return extent_at(e.psn(), layout_.block_sectors, layout_.geometry);
}

void VldDisk::Impl::store_write(const Extent& e, const void* bytes) {
  HostPhaseTimer phase_timer(HostPhase::kStoreIo);
  const auto* p = static_cast<const std::byte*>(bytes);
  for (const SectorRun& r : extent_runs(e, layout_.geometry)) {
    const size_t n = size_t{r.count} * kSectorBytes;
    store_->write(layout_.byte_offset(r.first_psn), std::span(p, n));
    p += n;
  }
}

void VldDisk::Impl::gather_extent(const Extent& e, const void* bytes) {
  const auto* p = static_cast<const std::byte*>(bytes);
  for (const SectorRun& r : extent_runs(e, layout_.geometry)) {
    const size_t n = size_t{r.count} * kSectorBytes;
    gather_.add(layout_.byte_offset(r.first_psn), std::span(p, n));
    p += n;
  }
}

void VldDisk::Impl::store_read(const Extent& e, void* bytes) {
  auto* p = static_cast<std::byte*>(bytes);
  for (const SectorRun& r : extent_runs(e, layout_.geometry)) {
    const size_t n = size_t{r.count} * kSectorBytes;
    store_->read(layout_.byte_offset(r.first_psn), std::span(p, n));
    p += n;
  }
}

CylinderWindow VldDisk::Impl::window_at(uint32_t cylinder) const {
  return CylinderWindow{cylinder % layout_.cylinders, options_.window_cylinders};
}

// ---- opening --------------------------------------------------------------

void VldDisk::Impl::install(RecoveredState& st) {
  free_.reserve_track(0);  // the system track: log records
  // Moved, not copied: at 1 TiB a copy would be 2 GiB more at the open-time
  // peak (docs/scale.md, section 3).
  map_ = std::move(st.map);
  assert(map_.size() == layout_.blocks);
  live_blocks_ = 0;
  const uint64_t platter_sectors = layout_.platter_sectors();
  for (uint64_t b = 0; b < map_.size(); ++b) {
    if (!map_[b].mapped()) continue;
    if (map_[b].psn() >= platter_sectors || layout_.on_system_track(map_[b].psn()))
      throw Error("image damaged: block " + std::to_string(b) + " maps outside the platters", EIO);
    Extent e = extent_of(map_[b]);
    free_.allocate(e.track, e.sector, e.sectors);  // throws if mapped twice
    blocks_on_.add(e.track, e.sector, static_cast<uint32_t>(b));
    ++live_blocks_;
  }
  record_ = st.record;
  drive_.set_head(HeadPosition{record_.head_cylinder % layout_.cylinders,
                               record_.head % layout_.heads});
  if (st.needs_checkpoint || !install_tree(st)) {
    write_checkpoint(st);
    return;
  }
  // A clean record follows the close's full checkpoint: nothing is
  // scattered. Otherwise what the requests since the last checkpoint
  // wrote is (records before checkpoint_seq existed say 0: everything).
  const uint64_t checkpointed = record_.clean ? record_.durable_seq : record_.checkpoint_seq;
  for (uint32_t p = 0; p < layout_.pieces; ++p)
    if (st.nodes[p].seq > checkpointed) note_scattered_piece(p);
  checkpoint_seq_ = checkpointed;
  choose_reserve();
  if (record_.clean && st.report.groups_accepted == 0) {
    set_window(window_at(drive_.head().cylinder));  // the "open" record waits (leave_clean)
    window_free_at_open_ = window_free_sectors();
    return;
  }
  // After a crash a record takes in what recovery accepted from the window
  // before serving: nothing is written before it, so a crash until it is
  // durable recovers the same.
  ServiceClock clock{kSimEpoch, {}, true, 0, 0};
  write_record(false, clock, window_at(drive_.head().cylinder), "open");
  st.report.simulated_ms += to_ms(clock.now - kSimEpoch);
}

void VldDisk::Impl::leave_clean(ServiceClock& clock) {
  if (record_.clean) write_record(false, clock, std::nullopt, "open");
}

bool VldDisk::Impl::install_tree(RecoveredState& st) {
  for (uint32_t p = 0; p < layout_.pieces; ++p) {
    LogNode& n = st.nodes[p];
    if (n.seq) log_.set_node(p, n.psn, n.seq, std::move(n.children));  // not needed after
  }
  log_.set_root(st.root);
  log_.set_next_seq(st.next_seq);
  if (std::string why = log_.check(); !why.empty()) {
    // The record's tree alone must be whole; one that recovery extended by
    // the requests since the record may not be (a request rolled back
    // before one accepted: the later one's pointers lead to it), and a
    // fresh tree replaces it.
    if (st.report.groups_accepted == 0)
      throw Error("image damaged: the virtual log tree is broken (" + why + ")", EIO);
    VLD_TRACE(kRecovery, 1, "the tree extended by the requests since the record is not whole "
              "({}): writing a fresh one", why);
    for (uint32_t p = 0; p < layout_.pieces; ++p) log_.set_node(p, 0, 0, {});
    log_.set_root(std::nullopt);
    return false;
  }
  for (uint32_t p = 0; p < layout_.pieces; ++p) {
    const LogNode& n = st.nodes[p];
    if (n.seq) {
      const Extent e = sector_at(n.psn);
      free_.allocate(e.track, e.sector, 1);
    }
  }
  return true;
}

void VldDisk::Impl::write_checkpoint(RecoveredState& st) {
  // Keep every sector that recovery from the current record reads (map
  // sectors, and the data of every request since the record) until the new
  // record is durable: a crash in between recovers the same way, however
  // often it happens (crash contract clause 4).
  std::vector<Extent> kept;  // one sector each
  auto keep = [&](uint32_t track, uint32_t sector) {
    if (free_.is_free(track, sector)) {
      free_.allocate(track, sector, 1);
      kept.push_back(Extent{track, sector, 1});
    }
  };
  for (uint32_t psn : st.protected_psns) {
    const Extent e = sector_at(psn);
    keep(e.track, e.sector);
  }
  for (uint32_t psn : st.protected_data_psns) {
    const Extent e = extent_at(psn, layout_.block_sectors, layout_.geometry);
    const uint32_t spt = free_.sectors_on(e.track);
    for (uint32_t i = 0, s = e.sector; i < e.sectors; ++i, s = s + 1 == spt ? 0 : s + 1)
      keep(e.track, s);
  }
  for (uint32_t p = 0; p < layout_.pieces; ++p)
    if (st.nodes[p].seq) log_.set_node(p, st.nodes[p].psn, st.nodes[p].seq, {});
  log_.set_next_seq(st.next_seq);
  ServiceClock clock{kSimEpoch, {}, true, 0, 0};
  choose_reserve();
  checkpoint(clock, /*retire_old=*/false);
  write_record(false, clock, window_at(drive_.head().cylinder), "recovered");
  // After a full scan one slot may still hold a damaged record: a second
  // record replaces it, so the next open trusts the records again.
  if (st.report.method == "full-scan") write_record(false, clock, std::nullopt, "both slots whole");
  for (const Extent& e : kept) free_.release(e.track, e.sector, 1);
  st.report.simulated_ms += to_ms(clock.now - kSimEpoch);
}

void VldDisk::Impl::checkpoint(ServiceClock& clock, bool retire_old) {
  std::vector<uint32_t> pieces;
  for (uint32_t p = 0; p < layout_.pieces; ++p)
    if (log_.node(p).seq) pieces.push_back(p);
  const size_t n = pieces.size();
  if (n == 0) {
    log_.set_root(std::nullopt);
    return;
  }
  // A fresh tree: node j's children are nodes j*P+1 .. j*P+P, and node 0,
  // the root, has the highest seq. Written in the order j = 0, 1, ... and
  // walked newest first, it is read in the order it was laid down. One
  // group: a crash part way leaves the previous state to be recovered.
  const uint64_t g = log_.next_seq();
  auto seq_of = [&](size_t j) { return g + n - 1 - j; };
  std::vector<uint32_t> sizes(n, 1);
  auto ext = alloc_.place(sizes, drive_.head(), clock.now, CylinderWindow{0, layout_.cylinders});
  if (!ext) throw Error("no room on the platters to write a map checkpoint", ENOSPC);
  std::vector<uint32_t> psn(n);
  for (size_t j = 0; j < n; ++j) psn[j] = static_cast<uint32_t>(alloc_.psn((*ext)[j]));
  for (size_t j = 0; j < n; ++j) {
    const uint32_t piece = pieces[j];
    MapSector m;
    m.piece = piece;
    m.seq = seq_of(j);
    m.prev_seq = log_.node(piece).seq;
    m.group_seq = g;
    m.group_count = static_cast<uint32_t>(n);
    m.synced_back = MapSector::synced_back_for(m.seq, synced_seq_);
    for (uint32_t i = 0; i < kEntriesPerPiece; ++i) {
      uint64_t b = uint64_t{piece} * kEntriesPerPiece + i;
      if (b < layout_.blocks) m.entries[i] = map_[b];
    }
    std::vector<ChildRef> children;
    for (size_t c = j * kMaxPointers + 1; c <= j * kMaxPointers + kMaxPointers && c < n; ++c) {
      m.pointers[m.pointer_count++] = LogPointer{psn[c], seq_of(c), pieces[c]};
      children.push_back(ChildRef{pieces[c], seq_of(c)});
    }
    SectorBytes bytes = encode_map_sector(m, sb_.secret);
    store_write((*ext)[j], bytes.data());
    if (retire_old) retired_map_.push_back(log_.node(piece).psn);
    log_.set_node(piece, psn[j], seq_of(j), std::move(children));
  }
  const SimTime written_from = clock.now;
  charge(*ext, clock);
  stats_.map_sectors_written += n;
  ++stats_.checkpoints;
  VLD_TRACE(kLog, 1, "checkpoint {}: {} map sectors as one group, seq {}-{}, root piece {} at {}; "
            "{:.1f} us", stats_.checkpoints, n, g, g + n - 1, pieces[0], where((*ext)[0]),
            to_us(clock.now - written_from));
  log_.set_root(pieces[0]);
  log_.set_next_seq(g + n);
  reset_scattered(g + n - 1, clock.now);
  if (std::string why = log_.check(); !why.empty())
    throw Error("map checkpoint: the new tree is broken (" + why + ") (bug)", EIO);
}

// ---- log records ----------------------------------------------------------

void VldDisk::Impl::write_record(bool clean, ServiceClock& clock,
                           std::optional<CylinderWindow> next_window, const char* why,
                           RecordKind kind, std::span<const uint32_t> resume_cylinders) {
  HostPhaseTimer phase_timer(HostPhase::kMap);
  store_->sync();  // everything the record vouches for is durable first
  synced_seq_ = log_.next_seq() - 1;
  LogRecord r = record_;
  r.clean = clean;
  r.generation = record_.generation + 1;
  r.next_seq = log_.next_seq();
  r.durable_seq = r.next_seq - 1;
  r.has_root = log_.root().has_value();
  r.root = r.has_root ? LogPointer{log_.node(*log_.root()).psn, log_.node(*log_.root()).seq,
                                   *log_.root()}
                      : LogPointer{};
  CylinderWindow w = next_window.value_or(window_);
  r.window_first = w.first;
  r.window_cylinders = w.count;
  if (kind != RecordKind::kWidening)
    widening_credits_ = std::min(widening_credits_ + 1, kMostWideningCredits);
  // Narrow only after calm intervals (scan_set.h): where the writes jump
  // about, or the compactor moves blocks, a narrow set would cost a record
  // per jump.
  calm_intervals_ = interval_calm_ ? calm_intervals_ + 1 : 0;
  ScanSet calm_set = record_scan_set(w, resume_cylinders);
  ScanSet next_set = calm_intervals_ >= kCalmIntervalsBeforeNarrow
                         ? calm_set
                         : ScanSet::whole(w, layout_.cylinders);
  r.scan_set_narrow = !next_set.is_whole();
  if (r.scan_set_narrow) next_set.encode_bits(r.scan_set_bits.data());
  r.head_cylinder = drive_.head().cylinder;
  r.head = drive_.head().head;
  r.checkpoint_seq = checkpoint_seq_;
  SectorBytes bytes = encode_log_record(r, sb_.secret);
  const uint64_t slot = r.generation % VldLayout::kRecordSlots;
  store_->write(layout_.byte_offset(slot), std::as_bytes(std::span(bytes)));
  store_->sync();
  clock.syncs += 2;
  record_ = r;
  if (r.scan_set_narrow) ++stats_.narrow_records;

  // The drive's own trip to the system track.
  SimTime before = clock.now;
  const Extent slot_sector{0, static_cast<uint32_t>(slot), 1};
  charge(std::span(&slot_sector, 1), clock);
  stats_.record_time += clock.now - before;
  ++stats_.records_written;
  VLD_TRACE(kLog, 1,
            "record {} ({}): {}, slot {}, durable seq {}, next seq {}, root {}, window "
            "cylinders {}+{}, scan set {} cylinders, head {}/{}; frees {} data blocks and {} map "
            "sectors; {:.1f} us",
            r.generation, why, r.clean ? "clean" : "in use", slot, r.durable_seq, r.next_seq,
            r.has_root ? fmt::format("piece {} seq {} at psn {}", r.root.piece, r.root.seq,
                                     r.root.psn)
                       : std::string("none"),
            r.window_first, r.window_cylinders, next_set.count(), r.head_cylinder, r.head,
            pending_data_.size(),
            retired_map_.size(), to_us(clock.now - before));

  // Now nothing needs what was replaced before the record.
  for (const Extent& e : pending_data_) free_.release(e.track, e.sector, e.sectors);
  pending_data_.clear();
  for (uint32_t psn : retired_map_) release_sector(psn);
  retired_map_.clear();
  if (next_reserve_) {  // the last repack's victim, empty now
    alloc_.set_excluded_track(std::nullopt);
    alloc_.set_reserved_track(next_reserve_);
    next_reserve_.reset();
  }
  // A window moved to (even onto the same cylinders) starts a new measure
  // of how spent it is; a record that keeps it (compaction) does not.
  set_window(w);
  if (next_window) window_free_at_open_ = window_free_sectors();
  scan_set_ = std::move(next_set);
  calm_set_ = std::move(calm_set);
  interval_calm_ = true;
}

ScanSet VldDisk::Impl::record_scan_set(const CylinderWindow& w,
                                       std::span<const uint32_t> resume_cylinders) const {
  if (!ScanSet::narrow_allowed(w, layout_.cylinders))
    return ScanSet::whole(w, layout_.cylinders);
  ScanSet s = ScanSet::none(w, layout_.cylinders);
  add_resume_point(s, drive_.head().cylinder);
  for (uint32_t c : resume_cylinders) add_resume_point(s, c);
  return s;
}

void VldDisk::Impl::add_resume_point(ScanSet& s, uint32_t cylinder) const {
  s.add_neighbourhood(cylinder);
  // Eager writing also jumps to the nearest empty track to fill it (paper
  // 001, section 2.3): the nearest on either side. (A jump further, or to a
  // track emptied since, widens the set first.)
  const std::optional<uint32_t> k = s.index_of(cylinder);
  if (!k) return;
  for (int step : {-1, 1}) {
    for (int64_t i = int64_t{*k} + step; i >= 0 && i < int64_t{s.width()}; i += step) {
      const CylinderWindow c{s.cylinder_at(static_cast<uint32_t>(i)), 1};
      if (alloc_.usable_empty_tracks(c) > 0) {
        s.add(c.first);
        break;
      }
    }
  }
}

void VldDisk::Impl::note_map_sectors_written(std::span<const Extent> map_sectors, bool move) {
  // Compaction and repacks move blocks all over the window.
  if (move) interval_calm_ = false;
  for (const Extent& e : map_sectors)
    if (!calm_set_.contains(e.track / layout_.heads)) interval_calm_ = false;
  // Written: the next map sectors may lie next to these.
  for (const Extent& e : map_sectors) {
    scan_set_.add_neighbourhood(e.track / layout_.heads);
    calm_set_.add_neighbourhood(e.track / layout_.heads);
  }
}

std::optional<uint32_t> VldDisk::Impl::beyond_scan_set(std::span<const Extent> ext,
                                                       size_t data_pieces) const {
  if (scan_set_.is_whole()) return std::nullopt;  // the window, where every placement lies
  for (size_t i = data_pieces; i < ext.size(); ++i)
    if (!scan_set_.contains(ext[i].track / layout_.heads)) return ext[i].track / layout_.heads;
  return std::nullopt;
}

bool VldDisk::Impl::place_in_scan_set(std::vector<uint32_t>& sizes, size_t data_pieces,
                                      ServiceClock& clock, PlaceMode mode,
                                      std::vector<size_t>* order, std::vector<Extent>* ext) {
  if (!alloc_.place_into(ext, sizes, drive_.head(), clock.now, window_, order, mode)) return false;
  const std::optional<uint32_t> beyond = beyond_scan_set(*ext, data_pieces);
  if (!beyond) return true;
  // Recovery could not reach that map sector from the record: a record
  // naming a set around the placement goes first, where the writes resume.
  // The placement stands (its sectors stay allocated, and lie in the
  // window); the drive reaches it from the system track. Widenings more
  // often than the credits allow say the writes jump about: that record
  // names the whole window, and narrowing waits for more calm intervals.
  std::vector<uint32_t> resume;  // the placement's map sectors' cylinders, if narrow
  if (widening_credits_ < kWideningCost) {
    interval_calm_ = false;
  } else {
    widening_credits_ -= kWideningCost;
    for (size_t i = data_pieces; i < ext->size(); ++i)
      resume.push_back((*ext)[i].track / layout_.heads);
  }
  VLD_TRACE(kLog, 1,
            "a map sector beyond the scan set ({} cylinders): cylinder {}, head at cylinder {}, "
            "seq {} ({} since the record)",
            scan_set_.count(), *beyond, drive_.head().cylinder,
            log_.next_seq(), log_.next_seq() - record_.next_seq);
  try {
    write_record(false, clock, std::nullopt, "a map sector beyond the scan set",
                 RecordKind::kWidening, resume);
  } catch (const Error&) {
    for (const Extent& e : *ext) free_.release(e.track, e.sector, e.sectors);
    throw;
  }
  ++stats_.scan_set_widenings;
  assert(!beyond_scan_set(*ext, data_pieces));
  return true;
}

CylinderWindow VldDisk::Impl::roomiest_window_around(uint32_t cylinder) const {
  // The compactor leaves empty tracks on both sides of the head (its sweep,
  // vld_disk_compaction.cc): a window that merely starts at the head can
  // leave half of them behind it while taking in cylinders the writes have
  // just filled (Table 2 over 5,000 writes, docs/benchmarks.md section 11).
  // Empty tracks only, and not the reserve (always empty, and no write's):
  // weighing free sectors, or the reserve, made the steady state 8% slower.
  if (free_.empty_tracks() <= 1) return window_at(cylinder);
  return roomiest_window(free_, layout_.heads, layout_.cylinders, options_.window_cylinders,
                         cylinder, [this](uint32_t t) { return alloc_.usable(t); });
}

std::optional<CylinderWindow> VldDisk::Impl::window_with_empty_tracks() const {
  // Without an empty track every write takes the greedy search's nearest
  // run, about 0.5 ms more than filling an empty track (docs/benchmarks.md
  // section 11); a record costs ~5 ms once. After compaction the empty
  // tracks lie on both sides of the head, and a window that still has
  // most of its free space (not spent) can have used up its own: Table 2,
  // seed 3, placed 752 pieces greedily with 45 empty tracks left around.
  if (!options_.move_dry_window || alloc_.usable_empty_tracks(window_) > 0) return std::nullopt;
  const uint32_t head = drive_.head().cylinder, width = options_.window_cylinders;
  if (width >= layout_.cylinders) return std::nullopt;  // the window is the disk
  // Every window around the head lies in these 2 * width - 1 cylinders:
  // none with an empty track there means none to move to (one popcount).
  const CylinderWindow around{(head + layout_.cylinders - (width - 1)) % layout_.cylinders,
                              2 * width - 1};
  if (alloc_.usable_empty_tracks(around) == 0) return std::nullopt;
  const CylinderWindow next = roomiest_window_around(head);
  if (next == window_ || alloc_.usable_empty_tracks(next) == 0) return std::nullopt;
  return next;
}

void VldDisk::Impl::set_window(const CylinderWindow& w) {
  window_ = w;
  free_.watch(window_.track_ranges(layout_.cylinders, layout_.heads));
}

uint64_t VldDisk::Impl::window_free_sectors() const {
  // Asked after every write: kept by the free-space map as it changes
  // (checked against a sum over the window in check_consistency).
  return free_.watched_free_sectors();
}

VldDisk::Impl::ServiceClock VldDisk::Impl::begin(SimTime start) const {
  ServiceClock clock{start + drive_.geometry().controller_overhead, {}, true, 0, 0};
  clock.breakdown.overhead = drive_.geometry().controller_overhead;
  return clock;
}

void VldDisk::Impl::sync(ServiceClock& clock) {
  { HostPhaseTimer io_timer(HostPhase::kStoreIo); store_->sync(); }
  synced_seq_ = log_.next_seq() - 1;
  ++clock.syncs;
}

bool VldDisk::Impl::durably_unmapped(uint64_t block) const {
  return !map_[block].mapped() && log_.node(piece_of(block)).seq <= synced_seq_;
}

void VldDisk::Impl::maybe_write_record(ServiceClock& clock) {
  bool too_many_retired = retired_map_.size() >= options_.retired_limit;
  const uint64_t window_free = window_free_sectors();
  // A window used up to half its free space makes eager writing slow: move on.
  bool window_spent = static_cast<double>(window_free) <
                      options_.window_move_fraction * static_cast<double>(window_free_at_open_);
  // After a request too big for the window was placed anywhere, come back.
  bool window_widened = window_.count > options_.window_cylinders;
  bool move = too_many_retired || window_spent || window_widened;
  const char* why = too_many_retired ? "retired map sectors"
                    : window_spent   ? "window spent"
                    : window_widened ? "window back to its width"
                                     : "scattered map sectors";
  std::optional<CylinderWindow> next =
      move ? std::optional(roomiest_window_around(drive_.head().cylinder)) : std::nullopt;
  if (!move) {
    next = window_with_empty_tracks();
    move = next.has_value();
    if (move) {
      why = "no empty track left in the window";
      ++stats_.dry_window_moves;
    }
  }
  // A delta checkpoint goes a group per request (begin_delta says why);
  // the record follows its last.
  if (checkpoint_due(clock.now)) begin_delta();
  const bool checkpoint = delta_.active && advance_delta(clock, PlaceMode::kEager, 1);
  if (move || checkpoint) write_record(false, clock, next, why);
}

// ---- requests -------------------------------------------------------------

std::span<const SectorRun> VldDisk::Impl::runs_of(std::span<const Extent> extents) {
  runs_.clear();
  for (const Extent& e : extents)
    for (const SectorRun& r : extent_runs(e, drive_.geometry())) runs_.push_back(r);
  return runs_;
}

void VldDisk::Impl::charge(std::span<const Extent> extents, ServiceClock& clock) {
  Access a = drive_.access(runs_of(extents), clock.now, /*charge_overhead=*/false);
  clock.now = a.end;
  clock.breakdown += a.breakdown;
}

void VldDisk::Impl::charge_read(std::span<const SectorRun> runs, ServiceClock& clock) {
  Access a = drive_.read(runs, clock.now, /*charge_overhead=*/false);
  clock.now = a.end;
  clock.breakdown += a.breakdown;
}

void VldDisk::Impl::read_track(uint32_t track, ServiceClock& clock) {
  const SectorRun whole{layout_.track_first_psn(track), layout_.track_sectors(track)};
  charge_read(std::span(&whole, 1), clock);
}

Completion VldDisk::Impl::finish(ServiceClock& clock) const {
  Completion c;
  c.end = clock.now;
  c.service = clock.breakdown;
  c.physical_blocks_written = clock.blocks_written;
  c.syncs = clock.syncs;
  return c;
}

void VldDisk::Impl::read_block(uint64_t block, std::byte* out, ServiceClock& clock) {
  const MapEntry& e = map_[block];
  Extent ext = extent_of(e);
  store_read(ext, out);
  charge_read(runs_of(std::span(&ext, 1)), clock);
  if (data_checksum(out, sb_.block_bytes, block) != e.checksum) {
    ++stats_.checksum_failures;
    throw Error("data block " + std::to_string(block) + " (offset " +
                    std::to_string(block * sb_.block_bytes) +
                    ") failed its checksum: the image is damaged there",
                EIO);
  }
}

std::vector<std::byte>& VldDisk::Impl::current_contents(uint64_t block, size_t* used,
                                                        ServiceClock& clock) {
  if (*used == rmw_blocks_.size()) rmw_blocks_.emplace_back(sb_.block_bytes);
  std::vector<std::byte>& m = rmw_blocks_[(*used)++];
  if (map_[block].mapped()) {
    read_block(block, m.data(), clock);
    ++stats_.rmw_reads;
  } else {
    std::fill(m.begin(), m.end(), std::byte{0});
  }
  return m;
}

VldDisk::Impl::ScratchLease::ScratchLease(Impl& d) : depth_(d.apply_depth_) {
  if (depth_ == d.apply_scratch_.size()) d.apply_scratch_.push_back(std::make_unique<ApplyScratch>());
  s_ = d.apply_scratch_[depth_++].get();
}

void VldDisk::Impl::set_map(uint64_t block, const MapEntry& e) {
  MapEntry& entry = map_[block];
  if (entry.mapped()) {
    const Extent old = extent_of(entry);
    blocks_on_.remove(old.track, old.sector, static_cast<uint32_t>(block));
  }
  entry = e;
  if (e.mapped()) {
    const Extent now = extent_of(e);
    blocks_on_.add(now.track, now.sector, static_cast<uint32_t>(block));
  }
}

void VldDisk::Impl::release_data(const MapEntry& e) {
  if (e.mapped()) pending_data_.push_back(extent_of(e));
}

bool VldDisk::Impl::apply(std::span<const Update> updates, std::span<const uint32_t> rewrite_pieces,
                    bool fua, ServiceClock& clock, PlaceMode mode, bool checkpoint) {
  const bool move = mode != PlaceMode::kEager;  // a compaction move or a repack
  leave_clean(clock);
  const ScratchLease lease(*this);
  ApplyScratch& s = *lease;
  if (!place_group(updates, rewrite_pieces, clock, mode, s)) return false;  // only a move gives up
  const Placement& placed = s.placed;
  const std::vector<PlannedNode>& group = placed.group;
  const std::vector<Extent>& ext = placed.extents;
  const size_t data_pieces = placed.data_pieces;
  // One extent per data piece, then one per map sector, the last the root.
  assert(!group.empty() && ext.size() == data_pieces + group.size());
  assert(group.front().seq == log_.next_seq());  // a group continues the log's seqs

  write_group(updates, s, clock);
  const std::vector<uint32_t>& member_psns = s.member_psns;
  note_map_sectors_written(std::span(ext).subspan(data_pieces), move);
  for (const auto& [block, before] : s.replaced) {
    release_data(before);
    if (before.mapped()) --live_blocks_;
    if (map_[block].mapped()) ++live_blocks_;
  }
  for (size_t i = 0; i < group.size(); ++i)
    if (group[i].relay) ++stats_.relays;

  // The drive: one pass over data and map sectors, in the order the head
  // meets them; what the map sectors added to the data alone.
  SimTime data_only_end = clock.now;
  if (data_pieces > 0) {
    data_only_end = drive_.estimate(runs_of(std::span(ext.data(), data_pieces)), clock.now,
                                    Transfer::kWrite, false).end;
  }
  std::vector<Extent>& in_time = s.in_time;
  in_time.clear();
  for (size_t i : placed.order) in_time.push_back(ext[i]);
  if (!move)
    for (size_t k = 0; k < data_pieces; ++k) track_written_[ext[k].track] = clock.now;
  const ServiceBreakdown before = clock.breakdown;
  charge(in_time, clock);
  if (trace::enabled(trace::Channel::kAllocator))
    trace_placement(updates, group, ext, data_pieces, move, before, clock, placed.alloc_before);
  if (trace::enabled(trace::Channel::kLog, 2)) trace_group(group, member_psns);
  if (clock.now > data_only_end) stats_.map_time += clock.now - data_only_end;
  ++stats_.map_updates;
  stats_.map_sectors_written += group.size();
  stats_.data_blocks_written += data_pieces;
  if (!move) stats_.client_blocks_written += data_pieces;
  clock.blocks_written += data_pieces;

  log_.commit(group, member_psns, &retired_map_);
  if (!checkpoint) note_scattered(group);
  if (fua) sync(clock);
  // A compaction move leaves records to the end of its track (end_victim).
  if (!move && !checkpoint) {
    unsettle_compaction();
    record_after_request(clock);
  }
  return true;
}

void VldDisk::Impl::write_group(std::span<const Update> updates, ApplyScratch& s,
                                ServiceClock& clock) {
  const Placement& placed = s.placed;
  const std::vector<PlannedNode>& group = placed.group;
  const std::vector<Extent>& ext = placed.extents;
  // Write everything before changing any state: a write that fails leaves
  // the disk as if the request had not been made (crash contract clause 7).
  s.replaced.clear();
  s.member_psns.resize(group.size());
  for (size_t i = 0; i < group.size(); ++i)
    s.member_psns[i] = static_cast<uint32_t>(alloc_.psn(ext[placed.data_pieces + i]));
  // Data first, then the map sectors, each run of them that lies back to
  // back in the image in one write (WriteGather).
  size_t data_writes = 0, begun = 0;
  try {
    write_data(updates, ext, s.replaced);
    data_writes = gather_.size();
    write_map_sectors(updates, group, ext, placed.data_pieces, s.member_psns);
    HostPhaseTimer io_timer(HostPhase::kStoreIo);
    gather_.flush(*store_, &begun);
  } catch (const Error&) {
    gather_.clear();
    for (auto it = s.replaced.rbegin(); it != s.replaced.rend(); ++it)
      set_map(it->first, it->second);
    // Map sectors whose write was begun: a failed write may still have landed.
    abandon_group(placed, begun > data_writes ? begun - data_writes : 0, clock);
    throw;
  }
}

void VldDisk::Impl::record_after_request(ServiceClock& clock) {
  // The request is committed: all it wrote is in the log, which recovery
  // scans from the current record (and synced, with FUA). The record it
  // made due shortens that scan and frees what it replaced; if it fails,
  // the request still stands (crash contract clause 7: a failed request
  // would have to read old), the record stays due, and the next request
  // reports the error before it changes anything.
  try {
    maybe_write_record(clock);
  } catch (const Error& e) {
    store_->defer("writing the log record after an earlier request (which stands)", e);
  }
}

bool VldDisk::Impl::allocate(std::vector<uint32_t>& sizes, size_t data_pieces,
                             const std::function<void()>& replan, ServiceClock& clock,
                             PlaceMode mode, std::vector<size_t>* order,
                             std::vector<Extent>* ext) {
  bool placed = place_in_scan_set(sizes, data_pieces, clock, mode, order, ext);
  if (!placed && mode != PlaceMode::kEager) return false;
  // (Freed map sectors alone rarely make a run that holds a block.)
  const bool fits_somewhere = could_fit_anywhere(sizes);
  if (!placed && (fits_somewhere || !pending_data_.empty() || data_pieces == 0)) {
    // The window is full: move it to the head (freeing what waited for a
    // record) and try again.
    write_record(false, clock, window_at(drive_.head().cylinder), "window full");
    placed = place_in_scan_set(sizes, data_pieces, clock, PlaceMode::kEager, order, ext);
  }
  if (!placed && could_fit_anywhere(sizes)) {  // anywhere at all
    write_record(false, clock, CylinderWindow{drive_.head().cylinder, layout_.cylinders},
                 "window full: the whole disk");
    placed = place_in_scan_set(sizes, data_pieces, clock, PlaceMode::kEager, order, ext);
  }
  // Free space left only in runs too short for a block: make some longer.
  // Each repack leaves a run that holds a block; bounded all the same.
  for (uint32_t repacks = 0;
       !placed && data_pieces > 0 && repacks < layout_.tracks && repack(clock); ++repacks) {
    replan();
    placed = place_in_scan_set(sizes, data_pieces, clock, PlaceMode::kEager, order, ext);
  }
  if (!placed)
    throw Error(fmt::format("no free space left on the simulated platters for a {}-block "
                            "write ({} of {} physical blocks hold live data)",
                            data_pieces, live_blocks_, sb_.physical_blocks()),
                ENOSPC);
  return true;
}

bool VldDisk::Impl::place_group(std::span<const Update> updates,
                                std::span<const uint32_t> rewrite_pieces, ServiceClock& clock,
                                PlaceMode mode, ApplyScratch& s) {
  HostPhaseTimer phase_timer(HostPhase::kAllocator);
  touched_pieces(rewrite_pieces, updates, [](const Update& u) { return u.block; }, &s.pieces);
  Placement& p = s.placed;
  s.sizes.clear();
  for (const Update& u : updates)
    if (u.data && !u.placed) s.sizes.push_back(layout_.block_sectors);
  p.data_pieces = s.sizes.size();
  // The group depends on the log's state, which a repack changes. (Two
  // pointers: small enough for std::function to hold without allocating.)
  auto plan_group = [this, &s] {
    log_.plan(s.pieces, &s.placed.group);
    s.sizes.resize(s.placed.data_pieces);
    s.sizes.insert(s.sizes.end(), s.placed.group.size(), 1);
  };
  plan_group();

  p.alloc_before = alloc_.stats();
  return allocate(s.sizes, p.data_pieces, plan_group, clock, mode, &p.order,
                  &p.extents);  // false: only a move gives up
}

void VldDisk::Impl::write_data(std::span<const Update> updates, std::span<const Extent> ext,
                         std::vector<std::pair<uint64_t, MapEntry>>& replaced) {
  size_t k = 0;
  for (const Update& u : updates) {
    MapEntry e{};
    if (u.placed) {
      e = *u.placed;  // written by place_shadow
    } else if (u.data) {
      const Extent& x = ext[k++];
      gather_extent(x, u.data);
      e = MapEntry{static_cast<uint32_t>(alloc_.psn(x) + 1),
                   u.checksum ? *u.checksum : data_checksum(u.data, sb_.block_bytes, u.block)};
    }
    replaced.emplace_back(u.block, map_[u.block]);
    set_map(u.block, e);
  }
}

void VldDisk::Impl::write_map_sectors(std::span<const Update> updates,
                                std::span<const PlannedNode> group, std::span<const Extent> ext,
                                size_t data_pieces, std::span<const uint32_t> member_psns) {
  HostPhaseTimer phase_timer(HostPhase::kMap);
  map_bytes_.resize(group.size());  // before gathering: no reallocation under gather_
  for (size_t i = 0; i < group.size(); ++i) {
    MapSector m;
    m.piece = group[i].piece;
    m.seq = group[i].seq;
    m.prev_seq = group[i].prev_seq;
    m.group_seq = group.front().seq;
    m.group_count = static_cast<uint32_t>(group.size());
    m.synced_back = MapSector::synced_back_for(m.seq, synced_seq_);
    if (!group[i].relay)  // the entries this request changed (a relay changes none)
      for (const Update& u : updates)
        if (piece_of(u.block) == m.piece) m.changed |= uint64_t{1} << (u.block % kEntriesPerPiece);
    for (uint32_t j = 0; j < kEntriesPerPiece; ++j) {
      uint64_t b = uint64_t{m.piece} * kEntriesPerPiece + j;
      if (b < layout_.blocks) m.entries[j] = map_[b];
    }
    m.pointer_count = static_cast<uint16_t>(log_.pointers(group, i, member_psns, m.pointers));
    map_bytes_[i] = encode_map_sector(m, sb_.secret);
    gather_extent(ext[data_pieces + i], map_bytes_[i].data());
  }
}

void VldDisk::Impl::abandon_group(const Placement& placed, size_t map_sectors_written,
                            ServiceClock& clock) {
  if (map_sectors_written > 0) {
    // Some of its map sectors may be on the platter, perhaps all of them:
    // recovery would take the request, and then reject every later one
    // that replaces the same pieces. Its seqs are never used again, and a
    // record whose durable seq covers them puts the group behind
    // recovery's horizon (it scans only newer seqs). If that fails too,
    // nothing more may be written: stop the disk. (With no map sector
    // written, the seqs are simply used by the next request: a gap in the
    // seqs would read as a lost flushed write to recovery.)
    log_.set_next_seq(placed.group.back().seq + 1);
    try {
      write_record(false, clock, std::nullopt, "a failed request's map sectors voided");
    } catch (const Error& e) {
      // Nothing more is written: the sectors are freed in memory only.
      store_->stop(std::string("a log record voiding a failed request could not be written (") +
                   e.what() + ")");
    }
  }
  for (const Extent& e : placed.extents) free_.release(e.track, e.sector, e.sectors);
}

void VldDisk::Impl::trace_group(std::span<const PlannedNode> group,
                          std::span<const uint32_t> member_psns) const {
  if (group.empty()) return;
  std::string members;
  for (size_t i = 0; i < group.size(); ++i)
    members += fmt::format("{}piece {}{} (replaces seq {}) at psn {}", i ? ", " : "",
                           group[i].piece, group[i].relay ? " relay" : "", group[i].prev_seq,
                           member_psns[i]);
  trace::emit(trace::Channel::kLog, "group seq {}-{}: {}", group.front().seq,
              group.front().seq + group.size() - 1, members);
}

uint64_t VldDisk::Impl::max_atomic_write_bytes() const {
  // A third of what the platters hold beyond the export however
  // fragmented. Measured, not derived: on full disks aged by random
  // one-block overwrites, the largest write that found room (allocate's
  // repacks included) was 42-90% of that (a binary search, 5 shapes of
  // 1 MiB to 64 MiB, 2 seeds each; docs/crash-contract.md, clause 3). A
  // group needs all its new copies placed while every old copy is live,
  // and repacking one track at a time onto the reserve does not turn all
  // the crumbs into runs before it runs out of empty tracks. Pinned by
  // VldAtomicWrites.*.
  const uint64_t capacity = layout_.block_capacity();
  const uint64_t beyond = capacity > layout_.blocks ? capacity - layout_.blocks : 0;
  return std::max<uint64_t>(beyond / 3, 1) * sb_.block_bytes;
}

bool VldDisk::Impl::could_fit_anywhere(std::span<const uint32_t> sizes) const {
  if (sizes.empty()) return true;
  const uint32_t largest = *std::max_element(sizes.begin(), sizes.end());
  for (uint32_t t = 1; t < layout_.tracks; ++t)
    if (alloc_.usable(t) && free_.longest_free_run(t) >= largest) return true;
  return false;
}

void VldDisk::Impl::live_on(uint32_t track, std::vector<uint64_t>* blocks,
                      std::vector<uint32_t>* pieces) const {
  // Ascending, as the whole-map scan this replaced found them: the order
  // of the moves, and so the simulated times, stay what they were.
  std::vector<uint32_t> on;
  blocks_on_.items(track, &on);
  std::sort(on.begin(), on.end());
  blocks->insert(blocks->end(), on.begin(), on.end());
  const size_t first_piece = pieces->size();
  log_.pieces_on(track, pieces);
  std::sort(pieces->begin() + first_piece, pieces->end());
}

// ---- client requests ------------------------------------------------------

Completion VldDisk::Impl::read(uint64_t offset, std::span<std::byte> out, SimTime start) {
  const uint64_t bs = sb_.block_bytes;
  ServiceClock clock = begin(start);
  if (out.empty()) return finish(clock);
  const uint64_t first = offset / bs, last = (offset + out.size() - 1) / bs;
  // The drive reads the mapped blocks in one sweep from where the head is.
  std::vector<uint64_t> order;
  for (uint64_t b = first; b <= last; ++b)
    if (map_[b].mapped()) order.push_back(b);
  const HeadPosition h = drive_.head();
  auto key = [&](uint64_t b) {
    uint64_t psn = map_[b].psn();
    uint32_t track = layout_.track_of(psn);
    uint32_t c = track / layout_.heads;
    uint32_t d = (c + layout_.cylinders - h.cylinder) % layout_.cylinders;
    return std::tuple(d, track % layout_.heads, psn);  // psn: in sector order within the track
  };
  std::sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) { return key(a) < key(b); });
  std::vector<std::byte> buf(bs);
  std::vector<uint8_t> done(last - first + 1, 0);
  for (uint64_t b : order) {
    read_block(b, buf.data(), clock);
    uint64_t lo = std::max(offset, b * bs), hi = std::min(offset + out.size(), (b + 1) * bs);
    std::copy(buf.begin() + (lo - b * bs), buf.begin() + (hi - b * bs), out.begin() + (lo - offset));
    done[b - first] = 1;
  }
  for (uint64_t b = first; b <= last; ++b) {
    if (done[b - first]) continue;
    uint64_t lo = std::max(offset, b * bs), hi = std::min(offset + out.size(), (b + 1) * bs);
    std::fill(out.begin() + (lo - offset), out.begin() + (hi - offset), std::byte{0});
  }
  Completion c = finish(clock);
  c.physical_blocks_read = order.size();
  return c;
}

SimDuration VldDisk::Impl::positioning_estimate(bool write, uint64_t offset, uint64_t len,
                                          SimTime start) const {
  if (write || len == 0) return SimDuration{0};
  const uint64_t bs = sb_.block_bytes;
  for (uint64_t b = offset / bs; b <= (offset + len - 1) / bs; ++b) {
    if (!map_[b].mapped()) continue;
    const Extent ext = extent_of(map_[b]);
    const std::vector<SectorRun> runs = alloc_.runs(std::span(&ext, 1));
    return drive_.estimate(runs, start, Transfer::kRead).breakdown.locate();
  }
  return SimDuration{0};  // all holes: read as zeros, no media access
}

Completion VldDisk::Impl::write(uint64_t offset, std::span<const std::byte> data, bool fua,
                                SimTime start, BlockChecksums sums) {
  store_->check();
  const uint64_t bs = sb_.block_bytes;
  ServiceClock clock = begin(start);
  if (data.empty()) return finish(clock);
  const uint64_t first = offset / bs, last = (offset + data.size() - 1) / bs;
  std::vector<Update>& updates = request_updates_;
  updates.clear();
  size_t merged = 0;  // rmw_blocks_ taken: read-modify-write of partial blocks
  for (uint64_t b = first; b <= last; ++b) {
    uint64_t lo = std::max(offset, b * bs), hi = std::min(offset + data.size(), (b + 1) * bs);
    if (hi - lo == bs) {
      updates.push_back(Update{b, data.data() + (lo - offset), nullptr, sums.of(b)});
      continue;
    }
    std::vector<std::byte>& m = current_contents(b, &merged, clock);
    std::copy(data.begin() + (lo - offset), data.begin() + (hi - offset), m.begin() + (lo - b * bs));
    updates.push_back(Update{b, m.data()});
  }
  apply(updates, {}, fua, clock);
  // A one-block write is placed as a compaction move is (a data block and
  // its map sector, eagerly): until the compactor has moved anything, its
  // cost is the moves' best guess (CompactionCosts::move_mean).
  if (updates.size() == 1 && merged == 0)
    compactor_.costs().client_write.observe(clock.breakdown.locate() + clock.breakdown.transfer);
  return finish(clock);
}

Completion VldDisk::Impl::flush(SimTime start) {
  store_->check();
  ServiceClock clock = begin(start);
  sync(clock);
  return finish(clock);
}

Completion VldDisk::Impl::trim(uint64_t offset, uint64_t len, bool fua, SimTime start) {
  store_->check();
  const uint64_t bs = sb_.block_bytes;
  ServiceClock clock = begin(start);
  std::vector<Update>& updates = request_updates_;
  updates.clear();
  // Whole blocks only: trim is advisory, partial blocks keep their data.
  // Blocks already unmapped are unmapped again: that they are unmapped may
  // not be durable yet (an earlier trim still in flight), and this request
  // must not read back half done if a crash loses that trim (the chain of
  // versions ties the two together). Unless it is durable: then no crash
  // can map them again, and rewriting their map pieces would be pure cost
  // (mkfs discards the whole device: on a fresh 1 GiB disk that was every
  // piece, 8192 map sectors).
  for (uint64_t b = (offset + bs - 1) / bs; (b + 1) * bs <= offset + len; ++b)
    if (!durably_unmapped(b)) updates.push_back(Update{b, nullptr});
  if (updates.empty()) {
    if (fua) sync(clock);
    return finish(clock);
  }
  apply(updates, {}, fua, clock);
  return finish(clock);
}

Completion VldDisk::Impl::zero(uint64_t offset, uint64_t len, ZeroFlags flags, SimTime start) {
  store_->check();
  const uint64_t bs = sb_.block_bytes;
  ServiceClock clock = begin(start);
  if (len == 0) return finish(clock);
  const uint64_t first = offset / bs, last = (offset + len - 1) / bs;
  // Decide first, so that a fast zero that would write data does nothing.
  bool writes_data = false;
  for (uint64_t b = first; b <= last; ++b) {
    bool whole = b * bs >= offset && (b + 1) * bs <= offset + len;
    if (whole ? !flags.may_trim : map_[b].mapped()) writes_data = true;
  }
  // (Unmapping costs only map sectors: a fast zero may do it.)
  if (flags.fast && writes_data)
    throw Error("zeroing here means writing data blocks, which is not fast", ENOTSUP);

  std::vector<Update>& updates = request_updates_;
  updates.clear();
  size_t merged = 0;  // rmw_blocks_ taken
  const std::byte* zeros = zero_block();
  for (uint64_t b = first; b <= last; ++b) {
    bool whole = b * bs >= offset && (b + 1) * bs <= offset + len;
    if (whole) {
      // Unmapped blocks are unmapped again, as in trim() (and skipped, as
      // there, when that is durable).
      if (flags.may_trim && durably_unmapped(b)) continue;
      updates.push_back(Update{b, flags.may_trim ? nullptr : zeros});  // NO_HOLE: allocated zeros
      continue;
    }
    if (!map_[b].mapped()) {  // reads as zeros already; say so again, as in trim()
      if (!durably_unmapped(b)) updates.push_back(Update{b, nullptr});
      continue;
    }
    std::vector<std::byte>& m = current_contents(b, &merged, clock);
    uint64_t lo = std::max(offset, b * bs), hi = std::min(offset + len, (b + 1) * bs);
    std::fill(m.begin() + (lo - b * bs), m.begin() + (hi - b * bs), std::byte{0});
    updates.push_back(Update{b, m.data()});
  }
  if (updates.empty()) {
    if (flags.fua) sync(clock);
    return finish(clock);
  }
  apply(updates, {}, flags.fua, clock);
  return finish(clock);
}

// An ARU's blocks were placed as they were written (place_shadow), or, if
// a placement failed, come with their data now; here they are mapped like
// one write request: the map sectors of every piece they change as one
// group, whose closed seq range is the commit (paper 004's cyclic commit,
// map_sector.h). Recovery takes the group whole or not at all, checking
// each block's data against its entry's checksum, and the sync makes it
// durable.
Completion VldDisk::Impl::commit_group(std::span<const GroupBlock> blocks, SimTime start) {
  store_->check();
  assert(!blocks.empty());
  ServiceClock clock = begin(start);
  std::vector<Update>& updates = request_updates_;
  updates.clear();
  for (const GroupBlock& g : blocks) {
    const MapEntry* placed = nullptr;
    if (g.shadow_token) {
      const auto it = shadow_.find(g.shadow_token);
      assert(it != shadow_.end() && it->second.block == g.block);
      placed = &it->second.entry;
    }
    updates.push_back(Update{g.block, g.data, placed});
  }
  apply(updates, {}, /*fua=*/true, clock);  // throws: the placed copies stay the ARU's
  for (const GroupBlock& g : blocks) {
    if (!g.shadow_token) continue;
    const auto it = shadow_.find(g.shadow_token);
    --shadow_on_track_[extent_of(it->second.entry).track];  // mapped now
    shadow_.erase(it);
  }
  return finish(clock);
}

// One command: the blocks by eager writing, as a write request's data but
// with no map sector (their entries wait for the commit's group). Nothing
// points to them, so recovery after a crash simply finds their sectors free.
Completion VldDisk::Impl::place_shadow(std::span<const GroupBlock> blocks, SimTime start,
                                 std::vector<uint64_t>* tokens) {
  store_->check();
  ServiceClock clock = begin(start);
  std::vector<uint32_t> sizes(blocks.size(), layout_.block_sectors);
  std::vector<size_t> order;
  std::vector<Extent> ext;
  allocate(sizes, sizes.size(), [] {}, clock, PlaceMode::kEager, &order, &ext);  // kEager: or throws
  try {
    for (size_t i = 0; i < blocks.size(); ++i) {
      assert(blocks[i].data);
      store_write(ext[i], blocks[i].data);
    }
  } catch (const Error&) {
    for (const Extent& e : ext) free_.release(e.track, e.sector, e.sectors);  // nothing else changed
    throw;
  }
  tokens->clear();
  for (size_t i = 0; i < blocks.size(); ++i) {
    const MapEntry e{static_cast<uint32_t>(alloc_.psn(ext[i]) + 1),
                     data_checksum(blocks[i].data, sb_.block_bytes, blocks[i].block)};
    tokens->push_back(e.psn_plus_one);
    shadow_.emplace(e.psn_plus_one, ShadowCopy{blocks[i].block, e});
    ++shadow_on_track_[ext[i].track];
    track_written_[ext[i].track] = clock.now;
  }
  std::vector<Extent> in_time;
  for (size_t i : order) in_time.push_back(ext[i]);
  charge(in_time, clock);
  stats_.data_blocks_written += blocks.size();
  stats_.client_blocks_written += blocks.size();
  clock.blocks_written += blocks.size();
  unsettle_compaction();
  record_after_request(clock);
  return finish(clock);
}

// Freed at the next record, as a replaced block is: simplest to reason
// about, though nothing durable ever pointed to it.
void VldDisk::Impl::drop_shadow(uint64_t token) {
  const auto it = shadow_.find(token);
  assert(it != shadow_.end());
  --shadow_on_track_[extent_of(it->second.entry).track];
  release_data(it->second.entry);
  shadow_.erase(it);
}

void VldDisk::Impl::extents(uint64_t offset, uint64_t len, const ExtentFn& fn) {
  emit_block_extents(offset, len, sb_.block_bytes, [this](uint64_t b) { return map_[b].mapped(); },
                     fn);
}

// The drive's power-down sequence: the map, rewritten as a fresh tree laid
// down in one sweep (so the next open reads it at media speed instead of a
// seek per map sector), then the tail in a clean record.
void VldDisk::Impl::close() {
  if (record_.clean) return;  // nothing written since the clean open
  ServiceClock clock{kSimEpoch, {}, true, 0, 0};
  checkpoint(clock, /*retire_old=*/true);
  write_record(true, clock, window_, "clean close");
}

// ---- VldDisk: the contract (vld_disk.h) over Impl ---------------------------

VldDisk::VldDisk(std::unique_ptr<BackingStore> store, const Superblock& sb, VldOptions options,
                 bool track_buffer)
    : impl_(std::make_unique<Impl>(std::move(store), sb, std::move(options), track_buffer)) {}
VldDisk::~VldDisk() = default;

void VldDisk::format(BackingStore& store, const Superblock& sb) { Impl::format(store, sb); }
const Superblock& VldDisk::superblock() const { return impl_->superblock(); }
const DriveModel& VldDisk::drive() const { return impl_->drive(); }
void VldDisk::set_track_buffer(bool on) { impl_->set_track_buffer(on); }
Completion VldDisk::read(uint64_t offset, std::span<std::byte> out, SimTime start) {
  return impl_->read(offset, out, start);
}
SimDuration VldDisk::positioning_estimate(bool write, uint64_t offset, uint64_t len,
                                          SimTime start) const {
  return impl_->positioning_estimate(write, offset, len, start);
}
Completion VldDisk::write(uint64_t offset, std::span<const std::byte> data, bool fua,
                          SimTime start) {
  return impl_->write(offset, data, fua, start, {});
}
Completion VldDisk::write_with_checksums(uint64_t offset, std::span<const std::byte> data,
                                         bool fua, SimTime start, BlockChecksums sums) {
  return impl_->write(offset, data, fua, start, sums);
}
Completion VldDisk::flush(SimTime start) { return impl_->flush(start); }
Completion VldDisk::trim(uint64_t offset, uint64_t len, bool fua, SimTime start) {
  return impl_->trim(offset, len, fua, start);
}
Completion VldDisk::zero(uint64_t offset, uint64_t len, ZeroFlags flags, SimTime start) {
  return impl_->zero(offset, len, flags, start);
}
void VldDisk::extents(uint64_t offset, uint64_t len, const ExtentFn& fn) {
  impl_->extents(offset, len, fn);
}
Completion VldDisk::commit_group(std::span<const GroupBlock> blocks, SimTime start) {
  return impl_->commit_group(blocks, start);
}
Completion VldDisk::place_shadow(std::span<const GroupBlock> blocks, SimTime start,
                                 std::vector<uint64_t>* tokens) {
  return impl_->place_shadow(blocks, start, tokens);
}
void VldDisk::drop_shadow(uint64_t token) { impl_->drop_shadow(token); }
std::optional<Completion> VldDisk::idle_step(SimTime start, SimTime idle_ends) {
  return impl_->idle_step(start, idle_ends);
}
uint64_t VldDisk::live_blocks() const { return impl_->live_blocks(); }
uint64_t VldDisk::max_atomic_write_bytes() const { return impl_->max_atomic_write_bytes(); }
void VldDisk::close() { impl_->close(); }
VldReport VldDisk::report() const { return impl_->report(); }
CompactorReport VldDisk::compactor_report() const { return impl_->compactor_report(); }
const RecoveryReport& VldDisk::recovery() const { return impl_->recovery(); }
const std::vector<MapEntry>& VldDisk::map() const { return impl_->map(); }
const VldStats& VldDisk::vld_stats() const { return impl_->vld_stats(); }
const EagerAllocator& VldDisk::allocator() const { return impl_->allocator(); }
const FreeSpaceMap& VldDisk::free_space() const { return impl_->free_space(); }
const Compactor& VldDisk::compactor() const { return impl_->compactor(); }
const VirtualLog& VldDisk::virtual_log() const { return impl_->virtual_log(); }
uint64_t VldDisk::track_lists_bytes() const { return impl_->track_lists_bytes(); }
std::optional<uint32_t> VldDisk::compaction_victim() const { return impl_->compaction_victim(); }
void VldDisk::live_on(uint32_t track, std::vector<uint64_t>* blocks,
                      std::vector<uint32_t>* pieces) const {
  impl_->live_on(track, blocks, pieces);
}
bool VldDisk::repack_now(SimTime start) { return impl_->repack_now(start); }
std::string VldDisk::check_consistency() const { return impl_->check_consistency(); }

}  // namespace vld
