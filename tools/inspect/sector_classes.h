// Sector classes: what each physical sector of an inspected image holds, as
// the layout picture colours it, one set of classes per disk mode:
//
//   vld      free, data, map sector, log record (track 0, the system track:
//            the record slots, psn 0 and 1, and the rest reserved for them)
//   inplace  free (a hole in the backing file), data, ARU journal area (the
//            platters past the export, core/inplace/redo_journal.h)
//   lld      free segment, live data, dead or summary (a full segment's
//            other sectors), open segment (not live), checkpoint slot,
//            NVRAM records, NVRAM free, unused (system-area padding and the
//            tail after the last segment); "unknown" when the image does not
//            open
//
// The superblock is not among them: it lies in the file before the
// platters (docs/format.md), not on a track.
//
// A background class (free, free segment, unused) colours a cell of the
// picture only when the cell holds nothing else (layout_grid.h).
//
// Thread-safety: the classifier reads the Inspection it was made from,
// which must outlive it and not change.
#ifndef VLD_TOOLS_INSPECT_SECTOR_CLASSES_H_
#define VLD_TOOLS_INSPECT_SECTOR_CLASSES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tools/inspect/inspection.h"

namespace vld::inspect {

struct SectorClass {
  std::string name;         // the legend's text
  std::string colour;       // "#rrggbb"
  bool background = false;  // loses a cell to any other class present
  std::string description;  // one sentence for the docs and the JSON
};

// A mode's classes (in legend order) and the function that classifies the
// sectors of one track: out[s] is the class index of sector s, for s below
// the track's sectors (VldLayout::track_sectors; out holds at least as many).
struct TrackClassifier {
  std::vector<SectorClass> classes;
  std::function<void(uint32_t track, std::vector<uint8_t>& out)> classify;
};

// REQUIRES: inspect(in) done.
TrackClassifier classifier_for(const Inspection& in);

}  // namespace vld::inspect

#endif  // VLD_TOOLS_INSPECT_SECTOR_CLASSES_H_
