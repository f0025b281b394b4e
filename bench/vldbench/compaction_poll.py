"""Wait for the idle-time compactor to finish (bench-largefile, docs/large-file.md):
poll the stats file (rewritten every second) until a rewrite shows no victim
in progress and compactor.steps unchanged over 3 rewrites; the polls as JSON
on stdout.

usage: python3 -m vldbench.compaction_poll STATS LIMIT_S
"""
import json
import os
import sys
import time


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    path, limit = argv[0], float(argv[1])
    t0 = time.monotonic()
    seen, last = [], None
    settled = False
    while time.monotonic() - t0 < limit:
        time.sleep(0.1)
        try:
            st = os.stat(path)
            if (st.st_ino, st.st_mtime_ns) == last:  # written via rename: a new inode
                continue
            s = json.load(open(path))
        except (OSError, ValueError):
            continue
        last = (st.st_ino, st.st_mtime_ns)
        c = s["compactor"]
        seen.append({"t_s": round(time.monotonic() - t0, 2), "steps": c["steps"], "victim": c["victim"],
                     "tracks_compacted": c["tracks_compacted"], "empty_tracks": c["empty_tracks"]})
        if (len(seen) >= 3 and c["victim"] is None
                and seen[-1]["steps"] == seen[-2]["steps"] == seen[-3]["steps"]):
            settled = True
            break
    json.dump({"settled": settled, "wall_s": round(time.monotonic() - t0, 2), "writes": seen},
              sys.stdout, indent=1)


if __name__ == "__main__":
    main()
