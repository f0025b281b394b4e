// How nbdkit reads a parameter's value, and what it would say of one it
// refuses, without nbdkit.
//
// Every size, boolean and whole number of `nbdkit vld ...` is read by
// nbdkit's own parsers (nbdkit-plugin(3), "PARSING COMMAND LINE
// PARAMETERS"), so vld takes what every other plugin takes: size=131072s,
// track_buffer=yes, window=0x20. ValueParsers carries them in: the plugin
// fills it with nbdkit_parse_size, nbdkit_parse_bool and
// nbdkit_parse_uint64_t; this library, built without nbdkit so that tests
// can reach it, has builtin_parsers() for tests and tools.
//
// nbdkit's parsers print their own error (nbdkit_error) when they refuse a
// value, which says neither the parameter nor what it accepts. So that a
// bad value gives one line that does, set_option() first checks the text
// with the check_* functions below, which make the same C library calls as
// nbdkit 1.32's parsers (strtoimax base 10; strtoull base 0) and so accept
// exactly the same texts, and it calls the parser only on text the check
// accepts. The check classifies; the parser's result is the value. If an
// nbdkit ever refused what the check accepts, the value is still refused,
// with nbdkit's line and then vld's.
//
// Thread-safety: plain functions of their arguments.
#ifndef VLD_PARAMS_NBDKIT_VALUES_H_
#define VLD_PARAMS_NBDKIT_VALUES_H_

#include <cstdint>
#include <optional>
#include <string>

namespace vld {

// nbdkit's parsers, with nbdkit-common.h's signatures: on success a value
// (>= 0 for sizes, 0 or 1 for booleans) or 0 with *r set; on failure -1,
// after nbdkit_error.
struct ValueParsers {
  int64_t (*parse_size)(const char* str);
  int (*parse_bool)(const char* str);
  int (*parse_uint64_t)(const char* what, const char* str, uint64_t* r);
};

// Parsers that accept and read what nbdkit 1.32's do (by the checks below)
// and print nothing.
const ValueParsers& builtin_parsers();

enum class ValueCheck {
  kOk,
  kMalformed,  // not of the form at all
  kNegative,   // a '-' sign (nbdkit refuses negative sizes and unsigned numbers)
  kTooLarge,   // of the form, but beyond what the type holds
};

struct CheckedValue {
  ValueCheck check = ValueCheck::kMalformed;
  uint64_t value = 0;  // when kOk
};

// nbdkit_parse_size: optional leading blanks and sign (a '-' is refused,
// but "-0" is 0), decimal digits, and at most one suffix: b (bytes), s
// (512-byte sectors), k, m, g, t, p, e (powers of 1024), any case. At most
// INT64_MAX bytes.
inline constexpr uint64_t kMaxNbdkitSize = INT64_MAX;
CheckedValue check_size(const std::string& text);

// nbdkit_parse_uint64_t: optional leading blanks and '+', then decimal,
// 0x hexadecimal or 0 octal (strtoull base 0), nothing after. Up to
// UINT64_MAX; any '-' is refused, even "-0".
CheckedValue check_uint64(const std::string& text);

// nbdkit_parse_bool: 1, true, t, yes, y, on; 0, false, f, no, n, off; the
// words in any case.
std::optional<bool> check_bool(const std::string& text);

}  // namespace vld

#endif  // VLD_PARAMS_NBDKIT_VALUES_H_
