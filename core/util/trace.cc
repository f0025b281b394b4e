#include "core/util/trace.h"

namespace vld::trace {

namespace {
std::atomic<Sink> g_sink{nullptr};
}  // namespace

namespace detail {
std::array<std::atomic<int>, kChannels> g_levels{};

void write(Channel c, std::string_view line) {
  if (Sink s = g_sink.load(std::memory_order_acquire)) s(c, line);
}
}  // namespace detail

const char* channel_name(Channel c) {
  switch (c) {
    case Channel::kAllocator: return "allocator";
    case Channel::kLog: return "log";
    case Channel::kCompactor: return "compactor";
    case Channel::kRecovery: return "recovery";
  }
  return "?";
}

void set_sink(Sink sink) { g_sink.store(sink, std::memory_order_release); }

void set_level(Channel c, int level) {
  detail::g_levels[static_cast<size_t>(c)].store(level, std::memory_order_relaxed);
}

}  // namespace vld::trace
