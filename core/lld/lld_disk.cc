#include "core/lld/lld_disk.h"

#include "core/util/error.h"

namespace vld {

// A placeholder while the disk is built: opening fails cleanly.
class LldDisk::Impl {};

LldDisk::LldDisk(std::unique_ptr<BackingStore>, const Superblock&, LldOptions, bool) {
  throw Error("mode=lld is not built yet", ENOTSUP);
}
LldDisk::~LldDisk() = default;
void LldDisk::format(BackingStore&, const Superblock&) {}
const Superblock& LldDisk::superblock() const { throw Error("mode=lld", ENOTSUP); }
const DriveModel& LldDisk::drive() const { throw Error("mode=lld", ENOTSUP); }
void LldDisk::set_track_buffer(bool) {}
Completion LldDisk::read(uint64_t, std::span<std::byte>, SimTime) { return {}; }
Completion LldDisk::write(uint64_t, std::span<const std::byte>, bool, SimTime) { return {}; }
Completion LldDisk::flush(SimTime) { return {}; }
Completion LldDisk::trim(uint64_t, uint64_t, bool, SimTime) { return {}; }
Completion LldDisk::zero(uint64_t, uint64_t, ZeroFlags, SimTime) { return {}; }
void LldDisk::extents(uint64_t, uint64_t, const ExtentFn&) {}
std::optional<Completion> LldDisk::idle_step(SimTime) { return std::nullopt; }
uint64_t LldDisk::live_blocks() const { return 0; }
void LldDisk::close() {}
ModeReport LldDisk::mode_report() const { return {}; }
std::string LldDisk::check_consistency() const { return ""; }
LldReport LldDisk::report() const { return {}; }

}  // namespace vld
