// Error: the one exception type of the project. It carries an errno value
// for the NBD reply and a message meant for a person: what was wrong and
// what to do. The plugin catches it at every callback boundary; no
// exception reaches nbdkit.
//
// Outside the exception path there is one convention too: a function that
// checks something returns a std::string `why`, empty when all is well
// (DriveGeometry::check, VldDisk::check_consistency, format_options,
// conflicts_with_image); its caller wraps a non-empty one in an Error when
// it must fail.
#ifndef VLD_CORE_UTIL_ERROR_H_
#define VLD_CORE_UTIL_ERROR_H_

#include <cerrno>
#include <stdexcept>
#include <string>

namespace vld {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, int err = EIO)
      : std::runtime_error(message), errno_(err) {}
  int err() const { return errno_; }

 private:
  int errno_;
};

// Throws Error with strerror(errno) appended, for a failed system call.
[[noreturn]] void throw_errno(const std::string& what);

}  // namespace vld

#endif  // VLD_CORE_UTIL_ERROR_H_
