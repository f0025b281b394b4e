// LldOptions: mode=lld's run-time choices (not stored in the image), the
// plugin's and vld-bench's lld parameters. Plain values: LldDisk reads them
// when it opens the image.
//
// Thread-safety: values; copy them freely.
#ifndef VLD_CORE_LLD_LLD_OPTIONS_H_
#define VLD_CORE_LLD_LLD_OPTIONS_H_

#include <cstdint>

#include "core/lld/cleaner_policy.h"

namespace vld {

struct LldOptions {
  // partial= (paper 001 section 4.4: "set to 75%").
  uint32_t partial_percent = 75;
  // cleaner_policy=; greedy is LLD's ("chooses less utilized segments",
  // paper 001 section 5.3).
  CleanerPolicy cleaner_policy = CleanerPolicy::kGreedy;
  // nvram_us=: simulated cost of copying one 4 KiB block into NVRAM (scaled
  // by block size). 20 us: 4 KiB at 200 MB/s, the memory-copy rate of the
  // paper's UltraSPARC-170 class of workstation (docs/lld.md).
  double nvram_us_per_4k = 20.0;
};

}  // namespace vld

#endif  // VLD_CORE_LLD_LLD_OPTIONS_H_
