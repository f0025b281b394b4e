// The disk modes the integration tests run on, as gtest parameters:
//   "vld"         mode=vld, the virtual log disk (the plugin's default);
//   "inplace"     mode=inplace, the update-in-place disk;
//   "lld"         mode=lld with its default NVRAM write buffer (nvram=6100000):
//                 every write is appended to the NVRAM region and synced
//                 before its reply, so every acknowledged write is durable;
//   "lld_nvram0"  mode=lld with nvram=0: writes wait in the open segment's
//                 memory copy until it fills, a flush or a FUA write.
// mode_params() gives the plugin parameters that create such an image; an
// image remembers them, so a reopen needs none.
#ifndef VLD_TESTS_INTEGRATION_MODES_H_
#define VLD_TESTS_INTEGRATION_MODES_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vld::test {

inline std::vector<std::string> mode_params(const std::string& mode) {
  if (mode == "lld_nvram0") return {"mode=lld", "nvram=0"};
  return {"mode=" + mode};
}
// The stats file's "mode" for it.
inline std::string mode_stat_name(const std::string& mode) {
  return mode == "lld_nvram0" ? "lld" : mode;
}
inline bool is_lld(const std::string& mode) { return mode == "lld" || mode == "lld_nvram0"; }
// Every acknowledged write is on stable storage before its reply, flush or not.
inline bool acks_are_durable(const std::string& mode) { return mode == "lld"; }

// params followed by the mode's.
inline std::vector<std::string> with_mode(std::vector<std::string> params, const std::string& mode) {
  for (std::string& p : mode_params(mode)) params.push_back(std::move(p));
  return params;
}

inline std::string ModeName(const ::testing::TestParamInfo<const char*>& info) {
  return info.param;
}

inline constexpr const char* kAllModes[] = {"vld", "inplace", "lld", "lld_nvram0"};

}  // namespace vld::test

#endif  // VLD_TESTS_INTEGRATION_MODES_H_
