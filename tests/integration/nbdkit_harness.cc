#include "tests/integration/nbdkit_harness.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "core/util/checksum.h"

extern char** environ;

namespace vld::test {

namespace fs = std::filesystem;

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/vld-test-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

namespace {

// env: entries added to (or replacing, by name) this process's environment.
pid_t spawn(const std::vector<std::string>& argv, const std::string& errfile,
            const std::vector<std::string>& env = {}) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, errfile.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_addopen(&fa, 2, errfile.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('=') + 1);
    bool replaced = false;
    for (const auto& mine : env) replaced = replaced || (!name.empty() && mine.starts_with(name));
    if (!replaced) envp.push_back(*e);
  }
  envp.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
  return pid;
}


int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

NbdkitServer::NbdkitServer(const TempDir& dir, std::vector<std::string> params,
                           std::vector<std::string> nbdkit_options,
                           std::vector<std::string> env) {
  static int counter = 0;
  std::string tag = std::to_string(counter++);
  socket_ = dir.file("nbd" + tag + ".sock");
  pidfile_ = dir.file("nbdkit" + tag + ".pid");
  errfile_ = dir.file("nbdkit" + tag + ".err");
  std::vector<std::string> argv = {"nbdkit", "-f", "--exit-with-parent", "-U", socket_,
                                   "-P", pidfile_};
  argv.insert(argv.end(), nbdkit_options.begin(), nbdkit_options.end());
  argv.push_back(VLD_PLUGIN_PATH);
  argv.insert(argv.end(), params.begin(), params.end());
  pid_ = spawn(argv, errfile_, env);

  // Wait for the pid file (ready) or for nbdkit to exit (failed), 20 s at most.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (true) {
    struct stat st;
    if (::stat(pidfile_.c_str(), &st) == 0 && st.st_size > 0) return;
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("nbdkit exited with " + std::to_string(exit_code_of(status)) +
                               ": " + slurp(errfile_));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill9();
      throw std::runtime_error("nbdkit did not become ready in 20 s: " + slurp(errfile_));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

NbdkitServer::~NbdkitServer() {
  if (pid_ > 0) stop();
}

NbdHandle NbdkitServer::connect() const {
  NbdHandle h(nbd_create());
  if (!h) throw std::runtime_error(nbd_get_error());
  if (nbd_connect_unix(h.get(), socket_.c_str()) == -1)
    // What the server said is usually why (a plugin that failed to open).
    throw std::runtime_error(std::string("nbd_connect_unix: ") + nbd_get_error() +
                             "\nnbdkit's stderr:\n" + stderr_text());
  return h;
}

int NbdkitServer::stop() {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return exit_code_of(status);
}

void NbdkitServer::kill9() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::string NbdkitServer::stderr_text() const { return slurp(errfile_); }

bool NbdkitServer::stderr_shows(const std::string& text, std::chrono::milliseconds timeout) const {
  return eventually([&] { return stderr_text().find(text) != std::string::npos; }, timeout);
}

bool NbdkitServer::eventually(const std::function<bool()>& holds,
                              std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (holds()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

RunResult run_nbdkit(const std::vector<std::string>& params) {
  TempDir dir;
  std::string errfile = dir.file("err");
  std::vector<std::string> argv = {"nbdkit", "-U", "-", VLD_PLUGIN_PATH};
  argv.insert(argv.end(), params.begin(), params.end());
  argv.push_back("--run");
  argv.push_back("true");
  pid_t pid = spawn(argv, errfile);
  int status = 0;
  waitpid(pid, &status, 0);
  return RunResult{exit_code_of(status), slurp(errfile)};
}

ProgramRun run_program(const TempDir& dir, const std::string& program,
                       const std::vector<std::string>& args) {
  const std::string out = dir.file("program.out"), err = dir.file("program.err");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  std::vector<char*> argv{const_cast<char*>(program.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid;
  const int rc = posix_spawn(&pid, program.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("posix_spawn " + program + ": " + std::strerror(rc));
  int status = 0;
  waitpid(pid, &status, 0);
  return ProgramRun{exit_code_of(status), slurp(out), slurp(err)};
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return nlohmann::json::parse(in);
}

std::string file_fingerprint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "missing";
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return std::to_string(bytes.size()) + ":" + std::to_string(checksum64(bytes.data(), bytes.size()));
}

void check_nbd(int64_t rc, const char* what) {
  if (rc == -1) throw std::runtime_error(std::string(what) + ": " + nbd_get_error());
}

NbdHandle connect_with_meta_context(const NbdkitServer& server, const char* context) {
  NbdHandle h(nbd_create());
  if (!h) throw std::runtime_error(nbd_get_error());
  check_nbd(nbd_add_meta_context(h.get(), context), "nbd_add_meta_context");
  check_nbd(nbd_connect_unix(h.get(), server.socket().c_str()), "nbd_connect_unix");
  return h;
}

std::vector<uint8_t> pattern_bytes(uint64_t offset, size_t len, uint64_t seed) {
  std::vector<uint8_t> out(len);
  for (size_t i = 0; i < len; ++i) {
    uint64_t pos = offset + i;
    // splitmix64 of the 8-byte word index, one byte of it per position.
    uint64_t z = (pos / 8) + seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    uint8_t b = static_cast<uint8_t>(z >> (8 * (pos % 8)));
    out[i] = b == 0 ? 0xa5 : b;
  }
  return out;
}

std::vector<uint8_t> read_bytes(nbd_handle* h, uint64_t offset, size_t len) {
  std::vector<uint8_t> out(len);
  check_nbd(nbd_pread(h, out.data(), len, offset, 0), "nbd_pread");
  return out;
}

void write_bytes(nbd_handle* h, uint64_t offset, const std::vector<uint8_t>& data,
                 uint32_t flags) {
  check_nbd(nbd_pwrite(h, data.data(), data.size(), offset, flags), "nbd_pwrite");
}

std::string first_difference(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want,
                             uint64_t base) {
  if (got.size() != want.size())
    return "size " + std::to_string(got.size()) + " != " + std::to_string(want.size());
  size_t first = got.size(), count = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] == want[i]) continue;
    if (first == got.size()) first = i;
    ++count;
  }
  if (count == 0) return "";
  return std::to_string(count) + " bytes differ, the first at disk offset " +
         std::to_string(base + first) + " (got " + std::to_string(got[first]) + ", want " +
         std::to_string(want[first]) + ")";
}

namespace {
constexpr uint64_t kFragmentBlock = 4096;
}  // namespace

std::vector<std::vector<uint8_t>> fill_and_fragment(nbd_handle* h, uint64_t blocks) {
  constexpr uint64_t bs = kFragmentBlock;
  std::vector<std::vector<uint8_t>> want(blocks);
  for (uint64_t b = 0; b < blocks; b += 64) {
    const uint64_t n = std::min<uint64_t>(64, blocks - b);
    auto data = pattern_bytes(b * bs, n * bs, 1);
    write_bytes(h, b * bs, data);
    for (uint64_t i = 0; i < n; ++i)
      want[b + i].assign(data.begin() + i * bs, data.begin() + (i + 1) * bs);
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 300; ++i) {
    const uint64_t b = rng() % blocks;
    want[b] = pattern_bytes(b * bs, bs, 100 + i);
    write_bytes(h, b * bs, want[b]);
  }
  check_nbd(nbd_flush(h, 0), "nbd_flush");
  return want;
}

std::string contents_difference(nbd_handle* h, const std::vector<std::vector<uint8_t>>& want) {
  constexpr uint64_t bs = kFragmentBlock;
  for (uint64_t b = 0; b < want.size(); b += 64) {
    const uint64_t n = std::min<uint64_t>(64, want.size() - b);
    const std::vector<uint8_t> got = read_bytes(h, b * bs, n * bs);
    std::vector<uint8_t> expect;
    for (uint64_t i = b; i < b + n; ++i) expect.insert(expect.end(), want[i].begin(), want[i].end());
    if (std::string d = first_difference(got, expect, b * bs); !d.empty()) return d;
  }
  return "";
}

}  // namespace vld::test
