// Trace: optional debug lines from core/, one per event, by channel.
//
// core/ knows nothing of nbdkit: the host installs a sink and sets a level
// per channel. The plugin maps nbdkit's debug flags onto the channels
// (-D vld.allocator=1 -> kAllocator at level 1) and its sink calls
// nbdkit_debug; a tool could print to stderr. Every channel starts at level
// 0 (off).
//
// Cost when off: VLD_TRACE reads one relaxed atomic and evaluates none of
// its arguments, so trace points may sit on the request path.
//
//   VLD_TRACE(kLog, 1, "record {} written", generation);
//
// Thread-safety: set_sink and set_level may be called at any time; the sink
// itself must be safe to call from any thread (core calls it under the
// DiskController lock, or while opening a disk).
#ifndef VLD_CORE_UTIL_TRACE_H_
#define VLD_CORE_UTIL_TRACE_H_

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <string_view>

namespace vld::trace {

enum class Channel : unsigned {
  kAllocator,  // where each piece of a vld command went, and its locate time
  kLog,        // log records and checkpoints (2: every map sector group too)
  kCompactor,  // victims chosen, tracks emptied or given up
  kRecovery,   // what opening an image found and did
};
inline constexpr size_t kChannels = 4;

// "allocator", "log", "compactor", "recovery": the debug flag names.
const char* channel_name(Channel c);

// Receives one line (no newline) per event.
using Sink = void (*)(Channel channel, std::string_view line);
// nullptr (the default): lines are dropped.
void set_sink(Sink sink);
void set_level(Channel c, int level);

namespace detail {
extern std::array<std::atomic<int>, kChannels> g_levels;
void write(Channel c, std::string_view line);
}  // namespace detail

inline bool enabled(Channel c, int level = 1) {
  return detail::g_levels[static_cast<size_t>(c)].load(std::memory_order_relaxed) >= level;
}

template <typename... Args>
void emit(Channel c, fmt::format_string<Args...> format, Args&&... args) {
  detail::write(c, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace vld::trace

// VLD_TRACE(kChannel, level, "format", args...): formats and emits only if
// the channel is at `level` or above.
#define VLD_TRACE(channel, level, ...)                                       \
  do {                                                                       \
    if (::vld::trace::enabled(::vld::trace::Channel::channel, (level)))      \
      ::vld::trace::emit(::vld::trace::Channel::channel, __VA_ARGS__);       \
  } while (0)

#endif  // VLD_CORE_UTIL_TRACE_H_
