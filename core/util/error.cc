#include "core/util/error.h"

#include <cstring>

namespace vld {

void throw_errno(const std::string& what) {
  int e = errno;
  throw Error(what + ": " + std::strerror(e), e);
}

}  // namespace vld
