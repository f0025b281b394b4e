#include "params/nbdkit_values.h"

#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace vld {

namespace {

// The C locale's blanks, which strtoimax and strtoull skip (nbdkit runs in
// the C locale).
bool is_blank(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// A size suffix's multiplier, or 0 if `c` is none.
uint64_t suffix_scale(char c) {
  switch (c) {
    case 'b': case 'B': return 1;
    case 's': case 'S': return 512;
    case 'k': case 'K': return uint64_t{1} << 10;
    case 'm': case 'M': return uint64_t{1} << 20;
    case 'g': case 'G': return uint64_t{1} << 30;
    case 't': case 'T': return uint64_t{1} << 40;
    case 'p': case 'P': return uint64_t{1} << 50;
    case 'e': case 'E': return uint64_t{1} << 60;
    default: return 0;
  }
}

bool equals_ignoring_case(const std::string& text, const char* word) {
  return strcasecmp(text.c_str(), word) == 0;
}

}  // namespace

// In the order nbdkit 1.32 tests: no digits, negative, out of range,
// unknown or longer suffix, overflow once scaled.
CheckedValue check_size(const std::string& text) {
  const char* str = text.c_str();
  char* end = nullptr;
  errno = 0;
  const intmax_t n = strtoimax(str, &end, 10);
  if (end == str) return {ValueCheck::kMalformed};
  if (n < 0) return {ValueCheck::kNegative};
  if (errno != 0) return {ValueCheck::kTooLarge};
  uint64_t scale = 1;
  if (*end != '\0') {
    scale = suffix_scale(*end);
    if (scale == 0 || end[1] != '\0') return {ValueCheck::kMalformed};
  }
  if (kMaxNbdkitSize / scale < static_cast<uint64_t>(n)) return {ValueCheck::kTooLarge};
  return {ValueCheck::kOk, static_cast<uint64_t>(n) * scale};
}

CheckedValue check_uint64(const std::string& text) {
  const char* str = text.c_str();
  while (is_blank(*str)) ++str;
  if (*str == '-') return {ValueCheck::kNegative};
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = strtoull(str, &end, 0);
  if (errno == ERANGE) return {ValueCheck::kTooLarge};
  if (errno != 0 || end == str || *end != '\0') return {ValueCheck::kMalformed};
  return {ValueCheck::kOk, n};
}

std::optional<bool> check_bool(const std::string& text) {
  if (text == "1") return true;
  if (text == "0") return false;
  for (const char* word : {"true", "t", "yes", "y", "on"})
    if (equals_ignoring_case(text, word)) return true;
  for (const char* word : {"false", "f", "no", "n", "off"})
    if (equals_ignoring_case(text, word)) return false;
  return std::nullopt;
}

const ValueParsers& builtin_parsers() {
  static const ValueParsers parsers = {
      [](const char* str) -> int64_t {
        const CheckedValue c = check_size(str);
        return c.check == ValueCheck::kOk ? static_cast<int64_t>(c.value) : -1;
      },
      [](const char* str) -> int {
        const std::optional<bool> b = check_bool(str);
        return b ? int{*b} : -1;
      },
      [](const char*, const char* str, uint64_t* r) -> int {
        const CheckedValue c = check_uint64(str);
        if (c.check != ValueCheck::kOk) return -1;
        if (r) *r = c.value;
        return 0;
      },
  };
  return parsers;
}

}  // namespace vld
