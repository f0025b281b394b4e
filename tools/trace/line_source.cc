#include "tools/trace/line_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cassert>
#include <cerrno>
#include <cstring>

#include "core/util/error.h"

namespace vld::trace {

namespace {

// zlib's own buffer: gzread reads straight into ours when asked for more
// than this, so it only matters for gzip input.
constexpr unsigned kZlibBufferBytes = 256 << 10;

std::string_view without_cr(const char* start, size_t len) {
  if (len > 0 && start[len - 1] == '\r') --len;
  return std::string_view(start, len);
}

}  // namespace

LineSource::LineSource(const std::string& path)
    : name_(path == "-" ? "stdin" : path), buf_(kBufferBytes) {
  int fd = path == "-" ? dup(STDIN_FILENO) : open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_errno(name_);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    throw_errno(name_);
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    errno = EISDIR;
    throw_errno(name_);
  }
  if (S_ISREG(st.st_mode)) size_bytes_ = static_cast<uint64_t>(st.st_size);
  gzFile gz = gzdopen(fd, "rb");
  if (gz == nullptr) {
    close(fd);
    errno = ENOMEM;
    throw_errno(name_);
  }
  gzbuffer(gz, kZlibBufferBytes);
  gz_ = gz;
}

LineSource::~LineSource() { gzclose(static_cast<gzFile>(gz_)); }

bool LineSource::next_line(std::string_view& line) {
  if (replay_next_ < replay_.size()) {
    line = replay_[replay_next_++];
    ++line_number_;
    return true;
  }
  for (;;) {
    const char* start = buf_.data() + begin_;
    size_t avail = end_ - begin_;
    const void* nl = avail ? std::memchr(start, '\n', avail) : nullptr;
    if (nl != nullptr) {
      size_t len = static_cast<const char*>(nl) - start;
      begin_ += len + 1;
      line = without_cr(start, len);
      break;
    }
    if (eof_) {
      if (avail == 0) return false;
      begin_ = end_;
      line = without_cr(start, avail);
      break;
    }
    refill();
  }
  ++line_number_;
  if (peeking_) record_peek(line);
  return true;
}

void LineSource::refill() {
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buf_.size()) {
    throw Error(name_ + ":" + std::to_string(line_number_ + 1) + ": a line longer than " +
                    std::to_string(kBufferBytes >> 20) + " MiB; expected a text trace",
                EINVAL);
  }
  gzFile gz = static_cast<gzFile>(gz_);
  int n = gzread(gz, buf_.data() + end_, static_cast<unsigned>(buf_.size() - end_));
  if (n < 0) {
    int zerr = 0;
    const char* msg = gzerror(gz, &zerr);
    if (zerr == Z_ERRNO) throw_errno(name_);
    throw Error(name_ + ": " + msg + "; expected a complete gzip stream", EINVAL);
  }
  if (n == 0) eof_ = true;
  end_ += static_cast<size_t>(n);
}

uint64_t LineSource::position_bytes() const {
  z_off_t off = gzoffset(static_cast<gzFile>(gz_));
  return off < 0 ? 0 : static_cast<uint64_t>(off);
}

void LineSource::begin_peek() {
  assert(!peeking_ && line_number_ == 0);
  peeking_ = true;
  peeked_.clear();
}

void LineSource::end_peek() {
  assert(peeking_);
  peeking_ = false;
  line_number_ = 0;
  replay_ = std::move(peeked_);
  peeked_.clear();
  replay_next_ = 0;
}

void LineSource::record_peek(std::string_view line) { peeked_.emplace_back(line); }

}  // namespace vld::trace
