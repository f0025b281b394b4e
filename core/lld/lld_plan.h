// mode=lld's sizing rules for a new image: its platters are the cylinders
// the other modes get for the same size, block and spare, plus the whole
// cylinders of its system area (checkpoint slots and NVRAM region:
// lld_system_area_tracks), and never fewer than lld_cylinders_needed.
// plan_image (core/modes/mode_image.h) applies them.
//
// Thread-safety: pure functions.
#ifndef VLD_CORE_LLD_LLD_PLAN_H_
#define VLD_CORE_LLD_LLD_PLAN_H_

#include <cstdint>

#include "core/image.h"
#include "core/image_format.h"

namespace vld {

// The cylinders of an lld image of these options, given `base`, what the
// other modes get. Throws the layout's refusal of segment= or nvram=. A
// result above options.geometry.cylinders is the caller's to refuse.
uint32_t lld_platter_cylinders(const FormatOptions& options, uint32_t base);

// Checks that the layout LldDisk will plan from a superblock of `cylinders`
// exists (its refusals of segment= and nvram= are the errors), and records
// segment= and nvram= in *sb.
void plan_lld(const FormatOptions& options, uint32_t cylinders, Superblock* sb);

}  // namespace vld

#endif  // VLD_CORE_LLD_LLD_PLAN_H_
