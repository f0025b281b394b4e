// LineSource: the lines of a trace file, standard input ("-") or either of
// them gzip-compressed, read through one large buffer so that a line costs
// a memchr and no allocation.
//
// Every input goes through zlib's gz* functions: gzread reads a gzip
// stream (first two bytes 1f 8b) as its decompressed text and anything
// else as it is ("transparent" reading, zlib.h at gzread), so standard
// input may be compressed too and nothing is read twice.
//
// Invariants: a line is returned without its end of line ("\n" or
// "\r\n"); a last line without one is still a line; line numbers count
// from 1 and are those of the file, peeked lines included. Memory is the
// buffer (kBufferBytes) plus the lines of a peek, whatever the file's
// length.
//
// Thread-safety: one thread.
#ifndef VLD_TOOLS_TRACE_LINE_SOURCE_H_
#define VLD_TOOLS_TRACE_LINE_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vld::trace {

class LineSource {
 public:
  // A line longer than this is an error: no trace has one, and a binary
  // file given as a trace stops here instead of filling memory.
  static constexpr size_t kBufferBytes = 1 << 20;

  // Opens `path`, "-" for standard input. Throws Error ("PATH: No such
  // file or directory", from the system's message) if it cannot.
  explicit LineSource(const std::string& path);
  ~LineSource();
  LineSource(const LineSource&) = delete;
  LineSource& operator=(const LineSource&) = delete;

  // The next line, valid until the next call; false at the end.
  bool next_line(std::string_view& line);
  // The number of the line last returned (0 before the first).
  uint64_t line_number() const { return line_number_; }
  // The file's name for messages: the path, or "stdin".
  const std::string& name() const { return name_; }

  // Bytes of the file as stored consumed so far, and its size (0 when
  // unknown: a pipe).
  uint64_t position_bytes() const;
  uint64_t size_bytes() const { return size_bytes_; }

  // Lines read between begin_peek() and end_peek() are returned again,
  // with their numbers, after end_peek(): format detection looks ahead.
  // REQUIRES: no line read yet (one peek, at the start).
  void begin_peek();
  void end_peek();

 private:
  // Moves the unread bytes to the buffer's start and reads more; sets
  // eof_ at the end of the input. Throws Error on a read error or a line
  // that does not fit.
  void refill();
  void record_peek(std::string_view line);

  std::string name_;
  void* gz_ = nullptr;  // gzFile, kept out of this header
  uint64_t size_bytes_ = 0;
  std::vector<char> buf_;
  size_t begin_ = 0;  // first unread byte
  size_t end_ = 0;    // one past the last byte read
  bool eof_ = false;
  uint64_t line_number_ = 0;
  bool peeking_ = false;
  std::vector<std::string> peeked_;  // lines read while peeking
  std::vector<std::string> replay_;  // peeked lines to return again (kept: a few)
  size_t replay_next_ = 0;
};

}  // namespace vld::trace

#endif  // VLD_TOOLS_TRACE_LINE_SOURCE_H_
