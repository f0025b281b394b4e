// vld-bench aru: atomic record updates, a client's own redo journal against
// an ARU (paper 004's comparison of WriteAtomic with a journal on a plain
// disk, paper 000's ARU micro-benchmarks), in every disk mode.
//
// A client updates records of R blocks (R = 1, 4, 16, 64), each record
// atomically, at random record slots of a disk half full:
//   journal  on the default export, its own redo journal: the R blocks and
//            a header block written to a journal area (one request), flush,
//            then the R blocks at home, flush (the ordering a journal needs);
//   aru      on an ARU: the R blocks at home, then the flush that commits.
// Reported per mode and R: the simulated latency per record (mean, p50,
// p99), the disk's physical blocks written and syncs per record, and the
// ratio journal / aru; and per mode the cost of an empty ARU's commit (a
// flush on an open ARU with nothing in it), the begin/end pair of paper 000.
//
// In-process (DiskController over a MemoryBackingStore) and on simulated
// time only, so each line is a deterministic function of the arguments.
//
// Thread-safety: single-threaded.
#ifndef VLD_TOOLS_BENCH_ARU_BENCH_H_
#define VLD_TOOLS_BENCH_ARU_BENCH_H_

#include <cstdint>
#include <string>
#include <vector>

namespace vld {

struct AruBenchSpec {
  std::string geometry = "st19101";
  uint64_t export_bytes = 256ull << 20;
  std::vector<std::string> modes = {"vld", "lld", "inplace"};  // lld: with its default NVRAM
  std::vector<uint32_t> record_blocks = {1, 4, 16, 64};
  uint64_t records = 1000;  // per point
  uint64_t seed = 1;
};

// Prints one JSON object per line: {"mode", "record_blocks", "journal":
// {...}, "aru": {...}, "ratio"} per point, then {"mode", "empty_aru_us"}.
int cmd_aru(const AruBenchSpec& spec);

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_ARU_BENCH_H_
