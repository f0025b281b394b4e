// Test harness: the real plugin, loaded by a real nbdkit, driven by libnbd.
//
// NbdkitServer starts `nbdkit -f --exit-with-parent -U SOCK -P PIDFILE
// PLUGIN params...` and waits for the pid file, which nbdkit writes only once
// the socket accepts connections: readiness is a condition, never a sleep.
// stop() sends SIGTERM (nbdkit closes connections and runs the plugin's
// cleanup: a clean power-down); kill9() is the unclean stop.
//
// run_nbdkit() runs nbdkit to completion with `--run true`, for the tests
// of bad parameters that must fail at start-up.
#ifndef VLD_TESTS_INTEGRATION_NBDKIT_HARNESS_H_
#define VLD_TESTS_INTEGRATION_NBDKIT_HARNESS_H_

#include <libnbd.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace vld::test {

// A fresh directory under $TMPDIR, removed with its contents.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct NbdCloser {
  void operator()(nbd_handle* h) const { nbd_close(h); }
};
using NbdHandle = std::unique_ptr<nbd_handle, NbdCloser>;

class NbdkitServer {
 public:
  // params: plugin parameters, e.g. {"file=/tmp/x/disk.img", "size=64M"};
  // nbdkit_options go before the plugin, e.g. {"-v", "-D", "vld.log=1"};
  // env: NAME=value entries added to the test's environment for nbdkit
  // (say, LD_PRELOAD of a fault shim).
  // Throws std::runtime_error with nbdkit's stderr if it does not start.
  NbdkitServer(const TempDir& dir, std::vector<std::string> params,
               std::vector<std::string> nbdkit_options = {},
               std::vector<std::string> env = {});
  ~NbdkitServer();

  const std::string& socket() const { return socket_; }
  // A connected handle; fails the test (throws) on error.
  NbdHandle connect() const;
  // Clean stop; returns nbdkit's exit status (0 expected).
  int stop();
  // Unclean stop (SIGKILL); returns once the process is gone.
  void kill9();
  std::string stderr_text() const;
  // Whether nbdkit's stderr holds `text` within `timeout`, looking every
  // 10 ms: for what nbdkit does after the client has gone (a connection's
  // close callback runs in its own thread, after the client's disconnect
  // returned), which a clean stop right away would race with.
  bool stderr_shows(const std::string& text, std::chrono::milliseconds timeout) const;
  // Whether `holds` becomes true within `timeout`, asking every 10 ms: the
  // same wait for what nbdkit shows elsewhere (the stats file).
  static bool eventually(const std::function<bool()>& holds, std::chrono::milliseconds timeout);

 private:
  std::string socket_, pidfile_, errfile_;
  pid_t pid_ = -1;
};

struct RunResult {
  int exit_code = -1;
  std::string stderr_text;
};
// Runs `nbdkit -U - PLUGIN params... --run true` and waits for it.
RunResult run_nbdkit(const std::vector<std::string>& params);

// A program's run: its exit code (128 + the signal if killed), stdout, stderr.
struct ProgramRun {
  int exit_code = -1;
  std::string out, err;
};
// Runs `program` with args, stdout and stderr to files in dir (not a
// terminal), and waits for it.
ProgramRun run_program(const TempDir& dir, const std::string& program,
                       const std::vector<std::string>& args);

// The statsfile as JSON (the plugin writes it atomically).
nlohmann::json read_json(const std::string& path);
// SHA-like fingerprint of a file's bytes (XXH3-64 is plenty to detect change).
std::string file_fingerprint(const std::string& path);

// Throws std::runtime_error carrying nbd_get_error() if rc == -1.
void check_nbd(int64_t rc, const char* what);

// A handle that requests the meta context (e.g. "base:allocation") and then
// connects to the server's socket; throws on error.
NbdHandle connect_with_meta_context(const NbdkitServer& server, const char* context);

// Deterministic bytes for offset..offset+len under a seed: no two 8-byte
// words of a disk are alike, and no byte pattern is all zeros.
std::vector<uint8_t> pattern_bytes(uint64_t offset, size_t len, uint64_t seed);

// A file's bytes ("" if it cannot be read).
std::string slurp(const std::string& path);

// nbd_pread / nbd_pwrite into / from a vector; throw on error.
std::vector<uint8_t> read_bytes(nbd_handle* h, uint64_t offset, size_t len);
void write_bytes(nbd_handle* h, uint64_t offset, const std::vector<uint8_t>& data,
                 uint32_t flags = 0);

// "" if got == want, else where they first differ (base: disk offset of
// element 0) and how many bytes differ, for failure messages.
std::string first_difference(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want,
                             uint64_t base = 0);

// Writes `blocks` 4 KiB blocks from block 0 (64 a request), then 300
// seeded random single-block updates, and flushes: tracks left partly
// dead for idle-time work. Returns what each block should hold; throws on
// error.
std::vector<std::vector<uint8_t>> fill_and_fragment(nbd_handle* h, uint64_t blocks);
// "" if block b reads want[b] for every b (64 blocks a read), else
// first_difference's account of the first run that does not.
std::string contents_difference(nbd_handle* h, const std::vector<std::vector<uint8_t>>& want);

}  // namespace vld::test

#endif  // VLD_TESTS_INTEGRATION_NBDKIT_HARNESS_H_
