// An spdlog sink that forwards to nbdkit's logging, so `-v` and `-f` behave
// as nbdkit users expect: errors go through nbdkit_error (always shown, to
// syslog when nbdkit runs in the background), everything else through
// nbdkit_debug (shown with -v).
//
// Thread-safety: spdlog's base_sink<std::mutex> serialises sink calls.
#ifndef VLD_PLUGIN_NBDKIT_SINK_H_
#define VLD_PLUGIN_NBDKIT_SINK_H_

#include <spdlog/sinks/base_sink.h>

#include <mutex>
#include <string>

#include <nbdkit-plugin.h>

namespace vld {

class NbdkitSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::string text(msg.payload.data(), msg.payload.size());
    if (msg.level >= spdlog::level::err) nbdkit_error("%s", text.c_str());
    else nbdkit_debug("%s", text.c_str());
  }
  void flush_() override {}
};

}  // namespace vld

#endif  // VLD_PLUGIN_NBDKIT_SINK_H_
