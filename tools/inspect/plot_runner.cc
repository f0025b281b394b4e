#include "tools/inspect/plot_runner.h"

#include <spawn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/util/error.h"

extern char** environ;

namespace vld::inspect {
namespace {

// An anonymous file holding text, positioned at its start.
int memfd_with(const std::string& text) {
  const int fd = ::memfd_create("vld-inspect-layout.json", MFD_CLOEXEC);
  if (fd == -1) throw_errno("memfd_create");
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw Error(std::string("writing the layout for vld-plot: ") + std::strerror(err), err);
    }
    done += static_cast<size_t>(n);
  }
  ::lseek(fd, 0, SEEK_SET);
  return fd;
}

// The last non-empty line of text.
std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const size_t nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

struct Child {
  pid_t pid;
  int stderr_fd;  // read end
};

// Starts plot with stdin = json_fd and stderr to a pipe.
Child spawn_plot(const std::string& plot, const std::string& png_path, int json_fd) {
  int err_pipe[2];
  if (::pipe2(err_pipe, O_CLOEXEC) == -1) throw_errno("pipe");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, json_fd, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], STDERR_FILENO);
  std::vector<std::string> args = {plot, "layout", "-", "-o", png_path};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  const int rc = plot.find('/') == std::string::npos
                     ? posix_spawnp(&pid, plot.c_str(), &fa, nullptr, argv.data(), environ)
                     : posix_spawn(&pid, plot.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(err_pipe[0]);
    throw Error("--layout " + png_path + ": cannot run " + plot + " (" + std::strerror(rc) +
                    "); vld-plot draws the picture: install it with vld (cmake --install) or "
                    "put it on PATH",
                rc);
  }
  return {pid, err_pipe[0]};
}

}  // namespace

std::string find_vld_plot() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path beside = self.parent_path() / "vld-plot";
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  return "vld-plot";
}

void draw_layout_png(const nlohmann::json& layout, const std::string& png_path) {
  const int json_fd = memfd_with(layout.dump());
  const std::string plot = find_vld_plot();
  Child child;
  try {
    child = spawn_plot(plot, png_path, json_fd);
  } catch (...) {
    ::close(json_fd);
    throw;
  }
  ::close(json_fd);
  std::string err;
  char buf[4096];
  for (ssize_t n; (n = ::read(child.stderr_fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    err.append(buf, static_cast<size_t>(n));
  }
  ::close(child.stderr_fd);
  int status = 0;
  while (::waitpid(child.pid, &status, 0) == -1 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  const std::string why = WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                            : "signal " + std::to_string(WTERMSIG(status));
  const std::string said = last_line(err);
  throw Error("--layout " + png_path + ": " + plot + " failed (" + why + ")" +
                  (said.empty() ? std::string() : ": " + said),
              EIO);
}

}  // namespace vld::inspect
