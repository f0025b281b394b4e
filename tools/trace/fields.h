// Fields of a trace line and the numbers in them, read in place: the
// readers' inner loop allocates nothing and uses std::from_chars, which
// accepts exactly the digits (no '+', no spaces, no locale; a '-' only
// for a signed type).
//
// A field that is wrong throws BadLine, whose `what` is the message's
// "what was wrong; expected what" part; the reader adds "FILE:LINE: " or,
// with skip_bad, counts the line and goes on.
//
// Thread-safety: functions of their arguments.
#ifndef VLD_TOOLS_TRACE_FIELDS_H_
#define VLD_TOOLS_TRACE_FIELDS_H_

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace vld::trace {

struct BadLine {
  std::string what;
};

inline bool is_blank(char c) { return c == ' ' || c == '\t'; }

inline std::string_view skip_blanks(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_blank(s[i])) ++i;
  return s.substr(i);
}

// The next blank-separated field of `rest`, removed from it with the
// blanks before it; empty when none is left.
inline std::string_view next_field(std::string_view& rest) {
  rest = skip_blanks(rest);
  size_t i = 0;
  while (i < rest.size() && !is_blank(rest[i])) ++i;
  std::string_view field = rest.substr(0, i);
  rest = rest.substr(i);
  return field;
}

// A line with nothing but blanks, or a '#' comment (vld's own: no tool
// writes them, and they let a hand-written trace explain itself).
inline bool is_blank_or_comment(std::string_view line) {
  std::string_view s = skip_blanks(line);
  return s.empty() || s[0] == '#';
}

// The field quoted for a message, cut short if long.
inline std::string quoted(std::string_view field) {
  constexpr size_t kMax = 40;
  if (field.size() > kMax) return "'" + std::string(field.substr(0, kMax)) + "...'";
  return "'" + std::string(field) + "'";
}

// The whole of `s` as a number in `base`, or false. An unsigned T takes
// digits only; a signed one also a leading '-'.
template <typename T>
bool parse_number(std::string_view s, T& out, int base = 10) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && end == s.data() + s.size();
}

// The whole of `s` as an unsigned decimal number; throws BadLine naming
// `what` the number is ("the offset in bytes") otherwise.
inline uint64_t need_u64(std::string_view s, const char* what) {
  uint64_t v;
  if (!parse_number(s, v)) {
    throw BadLine{quoted(s) + " is not a number; expected " + what + " (a decimal integer)"};
  }
  return v;
}

// A field that must be there: throws BadLine "missing WHAT; expected SHAPE".
inline std::string_view need_field(std::string_view& rest, const char* what,
                                   const char* shape) {
  std::string_view f = next_field(rest);
  if (f.empty()) throw BadLine{std::string("missing ") + what + "; expected " + shape};
  return f;
}

// Nothing may follow the last field.
inline void need_end(std::string_view rest, const char* after) {
  std::string_view extra = next_field(rest);
  if (!extra.empty()) {
    throw BadLine{"unexpected " + quoted(extra) + " after " + after +
                  "; expected the end of the line"};
  }
}

}  // namespace vld::trace

#endif  // VLD_TOOLS_TRACE_FIELDS_H_
