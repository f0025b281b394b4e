// mode=vld's sizing rule for a new image: every block of the export must be
// writable however the writes fragment the platters. plan_image
// (core/modes/mode_image.h) refuses a plan that breaks it; vld-inspect
// reports it for an image at hand.
//
// Thread-safety: pure functions.
#ifndef VLD_CORE_VLD_VLD_PLAN_H_
#define VLD_CORE_VLD_VLD_PLAN_H_

#include <cstdint>

#include "core/image.h"
#include "core/image_format.h"

namespace vld {

// The most blocks the platters are sure to hold whatever order the writes
// come in: floor((the track's sectors - 1) / block sectors) on every track
// but the system and reserve tracks (a block beside at least one map
// sector; the reserve counted as the track holding the most), less room
// for two versions of every map sector. Writes strand the few
// sectors the head passes during each command's overhead; repacking
// (VldDisk::repack) recovers them up to this.
uint64_t vld_block_capacity(const Superblock& sb);

// Throws (EINVAL, naming the smallest spare= that is enough) unless every
// block of a vld export can be written: vld_block_capacity() covers it.
// Does nothing for the other modes.
void check_vld_fillable(const FormatOptions& options, const Superblock& sb);

}  // namespace vld

#endif  // VLD_CORE_VLD_VLD_PLAN_H_
