// vld-inspect: an offline look inside a vld image, and fsck for it. The
// command line; the work is in the files beside this one:
//
//   open_image      opening read-only (an image a server holds is refused)
//   inspection      what the image holds (tree_walk: the log tree, read
//                   independently of recover(); sector_bitmap, progress)
//   report          the report, text or --json
//   check           --check, the consistency check (fsck)
//   layout_grid     the platters aggregated to a grid for --json's "layout"
//                   (sector_classes: what each sector holds, per mode)
//   plot_runner     --layout: vld-plot (Python, matplotlib) draws the grid
//
//   vld-inspect IMAGE               what the image holds: geometry, sizes, mode,
//                                   clean or not, utilization, the map and the
//                                   virtual log, free space, the log record's
//                                   window, and what recovery would read to
//                                   open it
//   vld-inspect --check IMAGE       a full consistency check (fsck): every map
//                                   sector authenticates, every mapping is on
//                                   the platters, no physical sector is claimed
//                                   twice, the free map agrees with what an
//                                   opened disk computes, every data block
//                                   matches its checksum
//   --json                          one JSON object on stdout instead of text;
//                                   its "layout" section is the platters as a
//                                   grid of cells, with the title, axes, scale
//                                   and legend a picture needs
//   --layout FILE.png               that picture, drawn by vld-plot: cylinders
//                                   across, heads (split by angle) down, each
//                                   cell coloured by what most of its sectors
//                                   hold; the scale line goes to stdout
//
// Why: the image is the drive's platters, and what is on them (where the log
// tail is, how full each track is, whether a crash left anything behind)
// otherwise shows only through a running server's statistics. vld-inspect
// answers offline, and --check is the crash contract's clause 5 -- no
// physical block mapped twice, the free map agrees -- checked on a real
// image, together with every checksum the format keeps.
//
// Read-only by construction (open_image.h); what an opened disk would
// compute comes from a VldDisk on an OverlayStore, whose writes stay in
// memory (check.h).
//
// Exit codes, as fsck(8) (exit_codes.h): 0 no errors, 4 errors left
// uncorrected, 8 operational error, 16 usage error. An operational error is
// a vld::Error (or any other exception) caught here: one line on stderr.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <exception>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/util/error.h"
#include "tools/inspect/check.h"
#include "tools/inspect/exit_codes.h"
#include "tools/inspect/inspection.h"
#include "tools/inspect/layout_grid.h"
#include "tools/inspect/open_image.h"
#include "tools/inspect/plot_runner.h"
#include "tools/inspect/report.h"

namespace vld::inspect {
namespace {

struct Args {
  std::string image;
  bool check = false;
  bool json = false;
  std::string layout;
};

// Refuses a --layout path that is the image itself (writing the PNG would
// destroy it), or in a directory that is missing or not writable -- before
// the inspection, which can take minutes on a large image.
void check_layout_path(const std::string& layout_path, const OpenedImage& img) {
  struct stat st;
  if (::stat(layout_path.c_str(), &st) == 0 && st.st_dev == img.st.st_dev &&
      st.st_ino == img.st.st_ino)
    throw Error("--layout " + layout_path + " is the image itself; give another path for the PNG",
                EINVAL);
  const std::string dir = std::filesystem::path(layout_path).parent_path().string();
  if (::access(dir.empty() ? "." : dir.c_str(), W_OK) != 0)
    throw Error("--layout " + layout_path + ": cannot create it (" + std::strerror(errno) + ")",
                errno);
}

int run(const Args& args) {
  OpenedImage img = open_read_only(args.image);
  if (!args.layout.empty()) check_layout_path(args.layout, img);
  Inspection in(img);
  std::optional<Findings> findings;
  try {
    inspect(in);
    if (args.check) findings = check(in);
  } catch (const Error& e) {
    // A failed read of the image: say which image.
    throw Error(args.image + ": " + e.what(), e.err());
  }
  std::optional<nlohmann::json> layout;
  if (args.json || !args.layout.empty()) layout = layout_json(in, build_layout_grid(in));
  if (!args.layout.empty()) {
    draw_layout_png(*layout, args.layout);
    (*layout)["path"] = args.layout;
  }

  if (args.json) {
    nlohmann::json j = report_json(in);
    j["layout"] = std::move(*layout);
    if (findings) j["check"] = check_json(*findings);
    std::cout << json_text(j) << "\n";
  } else {
    if (findings)
      print_check(in, *findings, std::cout);
    else
      print_report(in, std::cout);
    if (!args.layout.empty())
      std::cout << "layout: " << args.layout << ": " << (*layout)["scale"]["text"].get<std::string>()
                << "\n";
  }
  std::cout.flush();
  if (!std::cout) throw Error("cannot write the report to standard output");
  return findings && findings->error_count ? kExitUncorrected : kExitClean;
}

}  // namespace
}  // namespace vld::inspect

int main(int argc, char** argv) {
  using namespace vld::inspect;
  CLI::App app{"vld-inspect: what an image of the vld plugin holds (any mode), and an offline consistency check (fsck). "
               "Reads only: the image is opened read-only and never modified.",
               "vld-inspect"};
  app.footer(
      "Exit status (as fsck): 0 no errors, 4 --check found errors (left uncorrected), "
      "8 operational error (cannot open, not an image of the vld plugin, in use by a server, vld-plot "
      "cannot draw the PNG), 16 usage error.");
  app.set_version_flag("--version", "vld-inspect " VLD_VERSION);
  Args args;
  app.add_option("IMAGE", args.image, "the image (the file= of nbdkit-vld-plugin)")
      ->required();
  app.add_flag("--check", args.check,
               "full consistency check: map sector MACs, mappings in range, no sector claimed "
               "twice, the free map, every data checksum");
  app.add_flag("--json", args.json,
               "print one JSON object on stdout instead of text (its \"layout\" section: the "
               "platters as a grid, what --layout draws)");
  app.add_option("--layout", args.layout,
                 "write a picture of the platters to FILE (drawn by vld-plot, which must be "
                 "installed beside vld-inspect or on PATH): cylinders across, heads down, each "
                 "cell coloured by what most of its sectors hold, with title, axes and legend")
      ->type_name("FILE.png");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::cerr << "vld-inspect: " << what << "; see vld-inspect --help\n";
    return kExitUsage;
  }
  try {
    return run(args);
  } catch (const vld::Error& e) {  // its message says what it is about
    std::cerr << "vld-inspect: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "vld-inspect: " << args.image << ": " << e.what() << "\n";
  }
  return kExitOperational;
}
