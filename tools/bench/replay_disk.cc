#include "tools/bench/replay_disk.h"

#include <fcntl.h>
#include <unistd.h>

#include <random>

#include "core/image.h"
#include "core/modes/mode_image.h"
#include "core/store/backing_store.h"
#include "core/util/error.h"
#include "tools/bench/disk_spec.h"
#include "tools/bench/fill.h"
#include "tools/bench/sync_update.h"
#include "tools/bench/update_picker.h"

namespace vld {
namespace {

using json = nlohmann::json;

DiskMode mode_of(const std::string& name) {
  if (name == "vld") return DiskMode::kVld;
  if (name == "lld") return DiskMode::kLld;
  if (name == "inplace") return DiskMode::kInplace;
  throw Error("--mode " + name + ": unknown; choose vld, inplace or lld (--nvram 0 for lld "
              "without NVRAM)", EINVAL);
}

// The whole file, read with pread: the image is never opened for writing.
std::vector<std::byte> read_image_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_errno("--image " + path);
  std::vector<std::byte> bytes(static_cast<size_t>(::lseek(fd, 0, SEEK_END)));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n <= 0) {
      ::close(fd);
      if (n == 0) throw Error("--image " + path + ": shorter than its size; is it being written?", EIO);
      throw_errno("--image " + path);
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return bytes;
}

ReplayDisk open_image_copy(const ReplaySpec& spec) {
  std::vector<std::byte> bytes = read_image_file(spec.image);
  auto store = std::make_unique<MemoryBackingStore>(std::move(bytes));
  const Superblock sb = read_superblock(*store, spec.image);
  ReplayDisk d;  // the plugin's defaults, as a server of the image would open it
  d.ctl = std::make_unique<DiskController>(make_disk(std::move(store), sb, DiskOptions{}));
  d.disk = {{"image", spec.image},
            {"mode", mode_name(sb.mode)},
            {"geometry", sb.geometry.name},
            {"export_bytes", sb.export_bytes},
            {"nvram_bytes", sb.nvram_bytes}};
  return d;
}

// A new image of the spec, aged to spec.disk.util (the header's warm-up).
std::vector<std::byte> aged_image(const ReplaySpec& spec, const Superblock& sb) {
  auto store = std::make_unique<MemoryBackingStore>(sb.image_bytes());
  format_store(*store, sb);
  MemoryBackingStore* raw = store.get();
  DiskOptions no_idle_work;  // nothing runs idle steps here: no grants
  apply_spec(spec.disk, no_idle_work.vld);
  DiskController ctl(make_disk(std::move(store), sb, no_idle_work));
  const uint64_t region = region_blocks(sb, spec.disk.util);
  if (region > 0) {
    fill_in_order(ctl, region, std::span(bench_payload()));
    std::mt19937_64 rng(spec.disk.seed ^ 0x5eed);
    UpdatePicker pick(region, spec.disk.hot_cold);
    for (uint64_t i = 0; i < region / 2; ++i) sync_update(ctl, pick(rng), std::nullopt);
  }
  ctl.close();
  return raw->take_bytes();  // the disk is closed: hand the image on
}

ReplayDisk open_new_disk(const ReplaySpec& spec) {
  const DiskMode mode = mode_of(spec.mode);
  FormatOptions format = disk_format(spec.disk, mode);
  if (mode == DiskMode::kLld) format.nvram_bytes = spec.nvram_bytes;
  const Superblock sb = plan_image(format);
  DiskOptions options;
  apply_spec(spec.disk, options.vld);
  ReplayDisk d;
  d.ctl = open_copy(sb, aged_image(spec, sb), options);
  d.disk = disk_json(spec.disk, sb);
  d.disk["mode"] = spec.mode;
  d.disk["nvram_bytes"] = sb.nvram_bytes;
  d.disk["spare_percent"] = spec.disk.spare_percent;
  d.disk["region_blocks"] = region_blocks(sb, spec.disk.util);
  return d;
}

}  // namespace

ReplayDisk open_replay_disk(const ReplaySpec& spec) {
  return spec.image.empty() ? open_new_disk(spec) : open_image_copy(spec);
}

}  // namespace vld
