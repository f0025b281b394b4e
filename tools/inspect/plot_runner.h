// draw_layout_png: --layout FILE.png, drawn by vld-plot (bench/vldplot,
// Python and matplotlib) from the "layout" section of --json. vld-inspect
// draws nothing itself: text, axes and legend are matplotlib's.
//
// vld-plot is looked for next to the running vld-inspect (the build tree's
// tools/ directory, or the installed bin/), then on PATH. It gets the JSON
// on its standard input (a memfd: no temporary file) and runs as
// `vld-plot layout - -o FILE.png`; what it prints on stderr becomes the
// one-line error if it fails.
//
// Thread-safety: none needed (vld-inspect is single-threaded).
#ifndef VLD_TOOLS_INSPECT_PLOT_RUNNER_H_
#define VLD_TOOLS_INSPECT_PLOT_RUNNER_H_

#include <nlohmann/json.hpp>
#include <string>

namespace vld::inspect {

// The vld-plot to run: next to this executable if there is one there, else
// "vld-plot" (found on PATH when it runs).
std::string find_vld_plot();

// Runs vld-plot to draw layout (layout_json's object) to png_path. Throws
// vld::Error ("--layout PATH: ...") if vld-plot cannot be run or fails.
void draw_layout_png(const nlohmann::json& layout, const std::string& png_path);

}  // namespace vld::inspect

#endif  // VLD_TOOLS_INSPECT_PLOT_RUNNER_H_
