// nbdkit-vld-plugin: a simulated disk drive served over NBD.
//
// Thin glue, one callback per job, in the manner of nbdkit's file plugin:
// the drive model, the disks and their durability live in core/ and
// geometry/; this file parses parameters, maps NBD requests and flags onto a
// DiskController, paces replies (plugin/pacer.h), writes the stats file, and
// turns every C++ exception into nbdkit_error + errno. No exception crosses
// into nbdkit.
//
// Thread model: NBDKIT_THREAD_MODEL_PARALLEL. All connections share one
// DiskController, whose mutex serialises requests exactly as the drive's
// single actuator would; the pacing sleep happens outside that mutex, so a
// request that arrives while another is being served or paced queues behind
// it in simulated time rather than in nbdkit. With sched=sptf and
// latency=sleep the controller keeps such requests in a queue until the
// drive is free in wall time and then chooses among them (its Clock is the
// Pacer's, PacerClock). Because every connection
// reaches the same disk and the same backing file, a flush on any connection
// (fdatasync of that file) covers completed writes from all of them, which
// is what makes can_multi_conn true.
//
// Debug flags (nbdkit -v -D vld.FLAG=N, documented in nbdkit-vld-plugin(1)):
// nbdkit sets the exported ints vld_debug_FLAG below after loading the
// plugin; get_ready turns them into levels of core's trace channels
// (core/util/trace.h), whose sink is nbdkit_debug.
//
// Logging is nbdkit's alone: errors through nbdkit_error, everything else
// through nbdkit_debug, directly or as a trace channel's line (why there is
// no logging library: nbdkit-vld-plugin(1), "Logging").
#define NBDKIT_API_VERSION 2
#include <malloc.h>
#include <nbdkit-plugin.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "core/aru/aru_session.h"
#include "core/disk_controller.h"
#include "core/modes/mode_image.h"
#include "core/modes/mode_report.h"
#include "core/store/overlay_store.h"
#include "core/util/error.h"
#include "core/util/host_phases.h"
#include "core/util/trace.h"
#include "geometry/presets.h"
#include "plugin/idle_worker.h"
#include "plugin/open_progress.h"
#include "plugin/options.h"
#include "plugin/pacer.h"
#include "stats/stats_json.h"

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

#ifndef VLD_VERSION
#define VLD_VERSION "0"
#endif

// Debug flags: nbdkit finds them by name (dlsym), hence C linkage.
extern "C" {
// -D vld.allocator=1: where each piece of a vld command went, its locate time.
NBDKIT_DLL_PUBLIC int vld_debug_allocator = 0;
// -D vld.log=1: log records and checkpoints; 2: every map sector group too.
NBDKIT_DLL_PUBLIC int vld_debug_log = 0;
// -D vld.compactor=1: victims chosen, tracks emptied or given up.
NBDKIT_DLL_PUBLIC int vld_debug_compactor = 0;
// -D vld.recovery=1: what opening the image found and did; 2: each group accepted.
NBDKIT_DLL_PUBLIC int vld_debug_recovery = 0;
// -D vld.aru=1: each atomic recovery unit opened, committed or aborted.
NBDKIT_DLL_PUBLIC int vld_debug_aru = 0;
// -D vld.requests=1: each request of the default export with its simulated
// start and service time, in the order the drive served them (the lines
// vld-bench replay --requests writes, docs/replay.md).
NBDKIT_DLL_PUBLIC int vld_debug_requests = 0;
}

namespace {

using namespace vld;

// The largest request we ever advertise (block_size maximum) and serve as
// one unit; a small vld or lld disk advertises less, what its spare takes
// whole (Disk::max_atomic_write_bytes).
constexpr uint32_t kMaxRequestBytes = 32 * 1024 * 1024;

PluginOptions g_options;
std::unique_ptr<DiskController> g_controller;
// An existing image's lock, from get_ready on: shared while it is served
// read-only, exclusive once a writable connection reopened it.
std::unique_ptr<ImageLock> g_image_lock;
// Why the image takes no more writes in this process ("" while it does):
// every writable open shares it, so that a failed fdatasync, in a request
// or in a recovery at a writable connection, stops the image until nbdkit
// restarts (docs/crash-contract.md, "When the backing file fails").
// Guarded by the controller, which serialises every use of the disk.
const FailStopStore::StopReason g_stopped_why = std::make_shared<std::string>();
std::unique_ptr<Pacer> g_pacer;

// Rewrites the stats file once a second until destroyed, and once more,
// after its thread has stopped, so that two writes never race on the
// temporary file. With stats_interval=N (N > 0) it also appends the time
// series: one line to PATH.jsonl (emptied at start) every N seconds of wall
// time, and a last one for the partial interval at the end.
class StatsWriter {
 public:
  using Clock = std::chrono::steady_clock;

  StatsWriter(std::string path, uint32_t interval_s)
      : path_(std::move(path)), series_(path_ + ".jsonl"), interval_(interval_s) {
    if (interval_.count() > 0) {
      start_series_file(series_, "statsfile=" + path_ + ": cannot create " + series_);
      interval_wall_ = std::chrono::system_clock::now();
      g_controller->start_intervals(sim_now());
    }
    thread_ = std::thread([this] { run(); });
  }
  ~StatsWriter() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    if (interval_.count() > 0) append_interval();  // the last, partial interval
    write_now();  // the final state, e.g. after a clean close
  }

 private:
  static SimTime sim_now() {
    // latency=none: the drive's own clock (when it is next free).
    return g_pacer->arrival().value_or(g_controller->busy_until());
  }

  // A failure is reported once, not every second until it ends; the
  // serving goes on (the statistics are not the data).
  void write_now() {
    try {
      nlohmann::json stats = stats_to_json(*g_controller, g_options.latency);
      if (g_options.profile_phases) stats["host_phases_us"] = host_phases_json(host_phases::snapshot());
      write_stats_file(path_, stats);
      last_error_.clear();
    } catch (const std::exception& e) {
      if (last_error_ != e.what()) nbdkit_error("vld: %s", e.what());
      last_error_ = e.what();
    }
  }

  // Ends the current interval now and appends its line.
  void append_interval() {
    auto unix_s = [](std::chrono::system_clock::time_point t) {
      return std::chrono::duration<double>(t.time_since_epoch()).count();
    };
    try {
      const auto wall = std::chrono::system_clock::now();
      const IntervalStats i = g_controller->take_interval(sim_now());
      append_jsonl(series_, interval_to_json(i, WallSpan{unix_s(interval_wall_), unix_s(wall)}));
      interval_wall_ = wall;
    } catch (const std::exception& e) {
      nbdkit_error("vld: %s", e.what());
    }
  }

  void run() {
    std::unique_lock lock(mu_);
    Clock::time_point next_file = Clock::now(), next_interval = Clock::now() + interval_;
    while (!stop_) {
      lock.unlock();
      if (Clock::now() >= next_file) {
        write_now();
        next_file = Clock::now() + std::chrono::seconds(1);
      }
      if (interval_.count() > 0 && Clock::now() >= next_interval) {
        append_interval();
        next_interval = std::max(next_interval + interval_, Clock::now());
      }
      lock.lock();
      const auto wake = interval_.count() > 0 ? std::min(next_file, next_interval) : next_file;
      cv_.wait_until(lock, wake, [this] { return stop_; });
    }
  }
  std::string path_;
  std::string series_;             // path_ + ".jsonl"
  std::chrono::seconds interval_;  // stats_interval=; 0: no series
  std::chrono::system_clock::time_point interval_wall_;  // the current interval's start
  std::string last_error_;  // the stats file's last failure reported ("" after a success)
  std::mutex mu_;               // guards stop_ only
  std::condition_variable cv_;  // signalled when stop_ is set
  bool stop_ = false;
  std::thread thread_;
};
std::unique_ptr<StatsWriter> g_stats_writer;
// latency=sleep, and mode=vld with compactor=on or mode=lld (its cleaner).
std::unique_ptr<IdleWorker> g_idle_worker;

// Runs fn, turning exceptions into an nbdkit error and errno. An Error whose
// errno is quiet_errno is an expected answer (a fast zero that would be
// slow), reported through errno alone.
template <typename Fn>
int guarded(Fn&& fn, int quiet_errno = 0) {
  try {
    fn();
    return 0;
  } catch (const Error& e) {
    if (e.err() != quiet_errno) nbdkit_error("vld: %s", e.what());
    nbdkit_set_error(e.err());
  } catch (const std::bad_alloc&) {
    nbdkit_error("vld: out of memory");
    nbdkit_set_error(ENOMEM);
  } catch (const std::exception& e) {
    nbdkit_error("vld: %s", e.what());
    nbdkit_set_error(EIO);
  } catch (...) {
    nbdkit_error("vld: unexpected internal error");
    nbdkit_set_error(EIO);
  }
  return -1;
}

void trace_to_nbdkit(trace::Channel c, std::string_view line) {
  nbdkit_debug("%s: %.*s", trace::channel_name(c), static_cast<int>(line.size()), line.data());
}

// Debug flags -> trace levels. nbdkit has set the flags by the time any
// callback after load runs.
void apply_debug_flags() {
  trace::set_level(trace::Channel::kAllocator, vld_debug_allocator);
  trace::set_level(trace::Channel::kLog, vld_debug_log);
  trace::set_level(trace::Channel::kCompactor, vld_debug_compactor);
  trace::set_level(trace::Channel::kRecovery, vld_debug_recovery);
  trace::set_sink(vld_debug_allocator || vld_debug_log || vld_debug_compactor ||
                          vld_debug_recovery
                      ? trace_to_nbdkit
                      : nullptr);
}

void vld_unload() {
  g_stats_writer.reset();
  g_controller.reset();
  g_image_lock.reset();
}

int vld_config(const char* key, const char* value) {
  std::string k(key), v(value);
  // nbdkit changes directory to / when it daemonizes: keep paths absolute
  // ("" is left to set_option, which says which parameter needs a path).
  if ((k == "file" || k == "statsfile") && *value) {
    char* abs = nbdkit_absolute_path(value);
    if (!abs) return -1;
    v = abs;
    free(abs);
  }
  // Sizes, booleans and numbers are read as every nbdkit plugin reads them.
  static const ValueParsers kNbdkitParsers = {nbdkit_parse_size, nbdkit_parse_bool,
                                              nbdkit_parse_uint64_t};
  std::string why = set_option(&g_options, k, v, kNbdkitParsers);
  if (!why.empty()) {
    nbdkit_error("vld: %s", why.c_str());
    return -1;
  }
  return 0;
}

int vld_config_complete() {
  if (g_options.file.empty()) {
    nbdkit_error("vld: file= is required: the backing image to serve or create");
    return -1;
  }
  // The stats file is rewritten through PATH.tmp every second after the
  // fork, and the series appended to PATH.jsonl: a directory that is
  // missing or not writable, a PATH.jsonl that cannot be written, or any of
  // the three being the image itself, a device or a directory (which the
  // writer would destroy or replace), is found now, before the image is
  // touched and before nbdkit forks, not in the log after it (where --run's
  // command would wait for a server gone).
  if (!g_options.statsfile.empty())
    return guarded([] {
      check_stats_paths(g_options.statsfile, g_options.file, g_options.stats_interval_s > 0);
      check_stats_file_writable(g_options.statsfile);
      if (g_options.stats_interval_s > 0) check_series_file_writable(g_options.statsfile);
    });
  return 0;
}

// A new image is created for writing. An existing one is opened read-only
// first (O_RDONLY, a shared lock, recovery in memory on an OverlayStore):
// a server started with -r, or behind a filter that makes every connection
// read-only, never writes a byte of it (crash contract clause 8). The first
// writable connection reopens it for writing (vld_open).
// Memory freed in the middle of glibc's heap stays the process's: the read-
// only disk make_writable just closed, and recovery's working set once a
// disk is open. Hand it back, or the server carries it for as long as it
// runs (a 4 GiB disk: 6.5 MiB more after the first writable connection;
// docs/scale.md). A few milliseconds, once per open.
void give_back_freed_memory() { malloc_trim(0); }

// served: the superblock of the image being served, if any. The image is
// unlocked between the read-only open and the writable one, so another may
// have taken its place; it is refused before its recovery writes a byte
// (DiskController::make_writable checks the disk it gets too).
std::unique_ptr<Disk> open_disk(bool readonly, Superblock* sb,
                                const Superblock* served = nullptr) {
  give_back_freed_memory();
  const std::string& path = g_options.file;
  if (!g_image_lock) g_image_lock = std::make_unique<ImageLock>(path);
  if (!readonly) g_image_lock->make_exclusive();
  std::unique_ptr<FileBackingStore> store = open_image_locked_by(path, readonly, *g_image_lock, sb);
  if (served && !same_image(*sb, *served)) throw Error(std::string(kImageReplaced), EIO);
  if (std::string why = conflicts_with_image(g_options, *sb); !why.empty()) throw Error(why, EINVAL);
  std::unique_ptr<Disk> disk;
  OpenProgress progress(path);  // lines on stderr once the open takes a second
  DiskOptions options = g_options.disk;
  options.vld.open_progress = progress.callback();
  if (readonly) {
    disk = make_disk(std::make_unique<OverlayStore>(std::move(store)), *sb, options);
  } else {
    auto fail_stop = std::make_unique<FailStopStore>(std::move(store), g_stopped_why);
    fail_stop->check();  // a sync failed before: no new recovery on the same page cache
    disk = make_disk(std::move(fail_stop), *sb, options);
  }
  give_back_freed_memory();
  return disk;
}

// Damage recovery worked around is news for the operator, -v or not.
void report_recovered_damage() {
  const ModeReport report = g_controller->mode_report();
  if (report.lld && !report.lld->recovery.damage.empty())
    nbdkit_error("vld: %s: image damaged: %s; recovered exactly; check it with vld-inspect "
                 "--check when it is not being served",
                 g_options.file.c_str(), report.lld->recovery.damage.c_str());
  const std::optional<RecoveryReport>& r = report.recovery;
  if (r && !r->damage.empty())
    nbdkit_error("vld: %s: image damaged: %s; recovered by scanning the whole disk (%llu "
                 "tracks, %.1f s here, %.0f ms simulated)%s; check it with vld-inspect --check "
                 "when it is not being served",
                 g_options.file.c_str(), r->damage.c_str(),
                 static_cast<unsigned long long>(r->tracks_scanned), r->wall_ms / 1e3,
                 r->simulated_ms,
                 g_controller->read_only() ? " in memory (read-only)"
                                           : " and rewrote both log record slots");
}

// Opens or creates the image before nbdkit forks into the background, so
// every problem with it is reported on the terminal and as the exit status.
int vld_get_ready() {
  apply_debug_flags();
  return guarded([] {
    const std::string& path = g_options.file;
    struct stat st;
    Superblock sb;
    if (::stat(path.c_str(), &st) == 0) {
      g_controller = std::make_unique<DiskController>(open_disk(/*readonly=*/true, &sb),
                                                      /*read_only=*/true);
      nbdkit_debug("vld: opened %s read-only until a writable connection: %s mode, %llu bytes, %s",
                   path.c_str(), mode_name(sb.mode),
                   static_cast<unsigned long long>(sb.export_bytes), sb.geometry.name.c_str());
    } else {
      if (errno != ENOENT) throw_errno("file=" + path);
      FormatOptions fo;
      if (std::string why = format_options(g_options, &fo); !why.empty())
        throw Error(why, EINVAL);
      sb = plan_image(fo);  // refuses a plan that cannot hold its export
      std::unique_ptr<FileBackingStore> store = create_image(path, sb);
      nbdkit_debug("vld: created %s: %s mode, %llu bytes on %u cylinders of a %s", path.c_str(),
                   mode_name(sb.mode), static_cast<unsigned long long>(sb.export_bytes),
                   sb.simulated_cylinders, sb.geometry.name.c_str());
      g_controller =
          std::make_unique<DiskController>(make_disk(std::move(store), sb, g_options.disk));
    }
    // NVRAM appends of requests in flight share a sync (mode=lld).
    g_controller->set_group_commit(true);
    report_recovered_damage();
  });
}

// Whether the disk has idle-time work for an IdleWorker: mode=vld's
// compactor (unless compactor=off), mode=lld's cleaner and NVRAM drain.
bool has_idle_work() {
  switch (g_controller->superblock().mode) {
    case DiskMode::kVld: return g_options.disk.vld.compactor.enabled;
    case DiskMode::kLld: return true;
    case DiskMode::kInplace: return false;
  }
  return false;
}

int vld_after_fork() {
  g_pacer = std::make_unique<Pacer>(g_options.latency);
  // Command queueing needs arrival times: latency=none serves in lock order.
  if (g_options.latency == LatencyMode::kSleep)
    g_controller->set_scheduler(g_options.sched, std::chrono::milliseconds(g_options.sched_aging_ms),
                                std::make_shared<PacerClock>(*g_pacer));
  if (g_options.latency == LatencyMode::kSleep && has_idle_work())
    g_idle_worker = std::make_unique<IdleWorker>(
        *g_controller, *g_pacer, std::chrono::milliseconds(g_options.compactor_quiet_ms),
        [](const std::string& line) { nbdkit_error("vld: %s", line.c_str()); });
  host_phases::enable(g_options.profile_phases && !g_options.statsfile.empty());
  if (!g_options.statsfile.empty())
    return guarded([] { g_stats_writer =
          std::make_unique<StatsWriter>(g_options.statsfile, g_options.stats_interval_s);
    });
  return 0;
}

// Every connection has closed: the drive powers down cleanly, then the
// stats writer stops and writes the final statistics.
void vld_cleanup() {
  g_idle_worker.reset();  // before the drive powers down
  guarded([] {
    if (g_controller) g_controller->close();
  });
  g_stats_writer.reset();
}

void vld_dump_plugin() {
  std::printf("vld_version=%s\n", VLD_VERSION);
  std::printf("vld_modes=vld,inplace,lld\n");
  std::string presets;
  for (const auto& n : preset_names()) presets += (presets.empty() ? "" : ",") + n;
  std::printf("vld_geometries=%s\n", presets.c_str());
  std::printf("vld_fua=native\nvld_flush=yes\nvld_trim=yes\nvld_zero=yes\nvld_fast_zero=yes\n");
  std::printf("vld_extents=yes\nvld_multi_conn=yes\nvld_rotational=yes\n");  // default export
  // The most any disk advertises; a small vld or lld disk advertises less.
  std::printf("vld_max_request_bytes=%u\n", kMaxRequestBytes);
  std::printf("vld_exports=,aru\nvld_aru_max_bytes=%llu\n",
              static_cast<unsigned long long>(g_options.aru_max_bytes));
}

// The export a client names: "" (and any name but these) is the disk as it
// is; "aru" or "aru:LABEL" gives the connection an atomic recovery unit
// (core/aru/aru_session.h, docs/aru.md), the label only telling clients'
// ARUs apart in the debug log.
bool is_aru_export(std::string_view name) {
  return name == "aru" || name.substr(0, 4) == "aru:";
}

// A name that looks meant for an ARU but is not one ("ARU", "aru2",
// "Aru:x"): served as the plain disk it would silently lose the atomicity
// its client asked for, so it is refused instead.
bool misspelt_aru_export(std::string_view name) {
  if (name.size() < 3 || is_aru_export(name)) return false;
  auto lower = [](char ch) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  };
  return lower(name[0]) == 'a' && lower(name[1]) == 'r' && lower(name[2]) == 'u';
}

int vld_list_exports(int readonly, int, struct nbdkit_exports* exports) {
  if (nbdkit_add_export(exports, "", "the disk") == -1) return -1;
  if (readonly) return 0;  // an ARU needs a writable connection
  return nbdkit_add_export(exports, "aru",
                           "the disk, each connection's writes committed atomically at its flush");
}

const char* vld_default_export(int, int) { return ""; }

// One client connection: on an aru export, its open ARU (null otherwise),
// the export name it was opened with (for -D vld.aru=1), and whether it
// may write.
struct Connection {
  std::unique_ptr<AruSession> aru;
  std::string export_name;
  bool writable = false;  // what can_write answers: false on -r, or when served read-only instead
  ~Connection() {
    if (aru && vld_debug_aru && aru->shadow_bytes() > 0)
      nbdkit_debug("aru: export %s: closed without a flush: %llu bytes of shadow blocks dropped",
                   export_name.c_str(), static_cast<unsigned long long>(aru->shadow_bytes()));
  }
};

AruSession* aru_of(void* handle) { return static_cast<Connection*>(handle)->aru.get(); }

// Whether an image that cannot be opened for writing is served read-only
// instead, as nbdkit's file plugin does with a file it cannot open
// read-write: another process holds it (EBUSY), or the file or its file
// system is not writable. Any other failure refuses the connection.
bool serve_read_only_instead(int err) {
  return err == EBUSY || err == EACCES || err == EPERM || err == EROFS;
}

// Makes the first writable connection's disk writable (see vld_open): 0
// if it is, 1 if it stays read-only (serve_read_only_instead, logged),
// -1 on error.
int make_disk_writable() {
  int stays_read_only = 0;
  const int made = guarded([&] {
    Superblock sb;
    const Superblock served = g_controller->superblock();
    auto open_writable = [&] {
      try {
        return open_disk(/*readonly=*/false, &sb, &served);
      } catch (const Error& e) {
        // Recovery's writes are crash-safe: a failure among them loses
        // nothing. (Asked here, under the controller's lock, which guards
        // g_stopped_why.) Another image in its place was never recovered.
        // A lock held by a reader says what to do itself.
        if (!g_stopped_why->empty() || std::string_view(e.what()) == kImageReplaced ||
            e.err() == EBUSY)
          throw;
        if (e.err() == EACCES || e.err() == EPERM || e.err() == EROFS)
          throw Error(std::string(e.what()) + "; make it writable, or serve it with nbdkit -r",
                      e.err());
        throw Error(std::string(e.what()) +
                        "; nothing acknowledged is lost: fix the backing file (or free space "
                        "where it lives) and connect again; nbdkit -r serves it read-only "
                        "meanwhile",
                    e.err());
      }
    };
    try {
      g_controller->make_writable(open_writable,
                                  [&] { return open_disk(/*readonly=*/true, &sb); });
    } catch (const Error& e) {
      const std::string why = "cannot open file=" + g_options.file + " for writing: " + e.what();
      if (g_stopped_why->empty() && serve_read_only_instead(e.err())) {
        nbdkit_error("vld: %s; this connection is served read-only", why.c_str());
        stays_read_only = 1;
        return;
      }
      throw Error(why, e.err());
    }
    report_recovered_damage();
  });
  return made == -1 ? -1 : stays_read_only;
}

// The first writable connection reopens a read-only image for writing:
// the real recovery (its checkpoint and record) happens then, and the idle
// work the drive had time for since the open.
void* vld_open(int readonly) {
  const char* export_name = nbdkit_export_name();
  const std::string_view name = export_name ? export_name : "";
  const bool aru = is_aru_export(name);
  if (misspelt_aru_export(name)) {
    nbdkit_error("vld: export %s: no such export; an atomic recovery unit is export \"aru\" or "
                 "\"aru:LABEL\" (lower case), the plain disk \"\"",
                 std::string(name).c_str());
    errno = ENOENT;
    return nullptr;
  }
  bool writable = !readonly;
  if (writable && g_controller->read_only()) {
    // The idle time the read-only disk could not use is caught up on
    // before this connection's first request (IdleWorker::make_writable).
    const int made = g_idle_worker ? g_idle_worker->make_writable(make_disk_writable)
                                   : make_disk_writable();
    if (made == -1) return nullptr;
    writable = made == 0;
  }
  if (aru && !writable) {
    // NBD carries no text with a refused export: the client reads "no
    // export named", and the reason is in the server's log.
    nbdkit_error("vld: export %s is not served: an atomic recovery unit commits writes and this "
                 "server serves the disk read-only (%s); the plain disk is export \"\"",
                 std::string(name).c_str(),
                 readonly ? "nbdkit -r, or a filter that makes connections read-only"
                          : "see the line above");
    errno = EROFS;
    return nullptr;
  }
  auto* c = new (std::nothrow) Connection;
  if (!c) return nullptr;
  c->writable = writable;
  if (aru && guarded([&] { c->aru = std::make_unique<AruSession>(*g_controller,
                                                                 g_options.aru_max_bytes); }) == -1) {
    delete c;
    return nullptr;
  }
  c->export_name = name;
  if (aru && vld_debug_aru) nbdkit_debug("aru: export %s: opened", c->export_name.c_str());
  return c;
}
// Closing with an ARU open aborts it: its writes never reached the disk.
void vld_close(void* handle) { delete static_cast<Connection*>(handle); }

int64_t vld_get_size(void*) { return static_cast<int64_t>(g_controller->superblock().export_bytes); }

int vld_block_size(void*, uint32_t* minimum, uint32_t* preferred, uint32_t* maximum) {
  *minimum = kSectorBytes;                          // the drive addresses sectors
  *preferred = g_controller->superblock().block_bytes;  // no read-modify-write
  // No more than the disk writes all or nothing (clause 3): a small
  // mode=lld disk with little spare takes less. Never below a block.
  const uint64_t atomic = g_controller->max_atomic_write_bytes();
  *maximum = static_cast<uint32_t>(std::clamp<uint64_t>(atomic, *preferred, kMaxRequestBytes));
  return 0;
}

int vld_is_rotational(void*) { return 1; }
int vld_can_write(void* handle) { return static_cast<Connection*>(handle)->writable ? 1 : 0; }
int vld_can_flush(void*) { return 1; }
int vld_can_fua(void*) { return NBDKIT_FUA_NATIVE; }  // one fdatasync, no extra flush
int vld_can_trim(void*) { return 1; }
int vld_can_zero(void*) { return 1; }
int vld_can_fast_zero(void*) { return 1; }  // we know when zeroing is only a command
// An ARU's shadow blocks are not the disk's extents: nbdkit then reports
// all data, which is always true.
int vld_can_extents(void* handle) { return aru_of(handle) ? 0 : 1; }
// See the thread model above. An ARU connection's flush commits only its own
// ARU (and makes the disk's completed writes durable), but its writes are
// invisible to other connections until then: not multi-conn consistent.
int vld_can_multi_conn(void* handle) { return aru_of(handle) ? 0 : 1; }
// The one-track read-ahead buffer is replaced by the next read of another
// track: a prefetch would be gone before it helped.
int vld_can_cache(void*) { return NBDKIT_CACHE_NONE; }

// -D vld.requests=1: one line per request. Simulated times in integer
// nanoseconds, so that a replay can be compared with them exactly.
void debug_request(const char* op, uint64_t offset, uint64_t len, bool fua,
                   const RequestTiming& t) {
  if (!vld_debug_requests) return;
  nbdkit_debug("request: %s offset=%" PRIu64 " len=%" PRIu64 " fua=%d start_ns=%" PRId64
               " service_ns=%" PRId64,
               op, offset, len, fua ? 1 : 0,
               static_cast<int64_t>(t.start.time_since_epoch().count()),
               static_cast<int64_t>((t.end - t.start).count()));
}

// On an aru connection each request goes to its ARU (AruSession): FUA is
// accepted and not taken (the ARU becomes durable whole, at its flush), and
// the flush is the commit.
int vld_pread(void* handle, void* buf, uint32_t count, uint64_t offset, uint32_t) {
  return guarded([&] {
    const std::span out{static_cast<std::byte*>(buf), count};
    AruSession* aru = aru_of(handle);
    auto t = aru ? aru->read(offset, out, g_pacer->arrival())
                 : g_controller->read(offset, out, g_pacer->arrival());
    if (!aru) debug_request("read", offset, count, false, t);
    g_pacer->wait_until(t.end);
  });
}

int vld_pwrite(void* handle, const void* buf, uint32_t count, uint64_t offset, uint32_t flags) {
  return guarded([&] {
    const std::span data{static_cast<const std::byte*>(buf), count};
    AruSession* aru = aru_of(handle);
    auto t = aru ? aru->write(offset, data, g_pacer->arrival())
                 : g_controller->write(offset, data, flags & NBDKIT_FLAG_FUA, g_pacer->arrival());
    if (!aru) debug_request("write", offset, count, flags & NBDKIT_FLAG_FUA, t);
    g_pacer->wait_until(t.end);
  });
}

int vld_flush(void* handle, uint32_t) {
  return guarded([&] {
    AruSession* aru = aru_of(handle);
    const uint64_t bytes = aru && vld_debug_aru ? aru->shadow_bytes() : 0;
    auto t = aru ? aru->commit(g_pacer->arrival()) : g_controller->flush(g_pacer->arrival());
    if (aru && vld_debug_aru)
      nbdkit_debug("aru: export %s: committed %llu bytes of shadow blocks in %.0f us (simulated)",
                   static_cast<Connection*>(handle)->export_name.c_str(),
                   static_cast<unsigned long long>(bytes), to_us(t.end - t.start));
    if (!aru) debug_request("flush", 0, 0, false, t);
    g_pacer->wait_until(t.end);
  });
}

int vld_trim(void* handle, uint32_t count, uint64_t offset, uint32_t flags) {
  return guarded([&] {
    AruSession* aru = aru_of(handle);
    auto t = aru ? aru->trim(offset, count, g_pacer->arrival())
                 : g_controller->trim(offset, count, flags & NBDKIT_FLAG_FUA, g_pacer->arrival());
    if (!aru) debug_request("trim", offset, count, flags & NBDKIT_FLAG_FUA, t);
    g_pacer->wait_until(t.end);
  });
}

int vld_zero(void* handle, uint32_t count, uint64_t offset, uint32_t flags) {
  return guarded([&] {
    ZeroFlags z{(flags & NBDKIT_FLAG_MAY_TRIM) != 0, (flags & NBDKIT_FLAG_FUA) != 0,
                (flags & NBDKIT_FLAG_FAST_ZERO) != 0};
    AruSession* aru = aru_of(handle);
    auto t = aru ? aru->zero(offset, count, g_pacer->arrival())  // memory only: always fast
                 : g_controller->zero(offset, count, z, g_pacer->arrival());
    if (!aru) debug_request("zero", offset, count, z.fua, t);
    g_pacer->wait_until(t.end);
  }, /*quiet_errno=*/(flags & NBDKIT_FLAG_FAST_ZERO) ? ENOTSUP : 0);
}

int vld_extents(void*, uint32_t count, uint64_t offset, uint32_t, struct nbdkit_extents* ext) {
  return guarded([&] {
    g_controller->extents(offset, count, [&](uint64_t off, uint64_t len, ExtentType type) {
      uint32_t t = type == ExtentType::kHole ? NBDKIT_EXTENT_HOLE | NBDKIT_EXTENT_ZERO : 0;
      if (nbdkit_add_extent(ext, off, len, t) == -1) throw Error("nbdkit_add_extent failed", errno);
    });
  });
}

struct nbdkit_plugin make_plugin() {
  struct nbdkit_plugin p = {};
  p.name = "vld";
  p.longname = "vld: a virtual-log disk on a simulated drive";
  p.version = VLD_VERSION;
  p.description =
      "Serves a simulated disk drive (update-in-place, virtual log or log-structured).";
  p.unload = vld_unload;
  p.config = vld_config;
  p.config_complete = vld_config_complete;
  p.config_help = config_help();
  p.magic_config_key = "file";
  p.get_ready = vld_get_ready;
  p.after_fork = vld_after_fork;
  p.cleanup = vld_cleanup;
  p.dump_plugin = vld_dump_plugin;
  p.list_exports = vld_list_exports;
  p.default_export = vld_default_export;
  p.open = vld_open;
  p.close = vld_close;
  p.get_size = vld_get_size;
  p.block_size = vld_block_size;
  p.is_rotational = vld_is_rotational;
  p.can_write = vld_can_write;
  p.can_flush = vld_can_flush;
  p.can_fua = vld_can_fua;
  p.can_trim = vld_can_trim;
  p.can_zero = vld_can_zero;
  p.can_fast_zero = vld_can_fast_zero;
  p.can_extents = vld_can_extents;
  p.can_multi_conn = vld_can_multi_conn;
  p.can_cache = vld_can_cache;
  p.pread = vld_pread;
  p.pwrite = vld_pwrite;
  p.flush = vld_flush;
  p.trim = vld_trim;
  p.zero = vld_zero;
  p.extents = vld_extents;
  p.errno_is_preserved = 0;
  return p;
}

struct nbdkit_plugin plugin = make_plugin();

}  // namespace

NBDKIT_REGISTER_PLUGIN(plugin)
