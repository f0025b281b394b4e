"""Small helpers the bench-* scripts need between runs (so that no Python is
written inside a script).

usage: python3 -m vldbench.cli compaction-line POLL_JSON STATS_JSON
           bench-largefile's progress line after its compaction run (no newline)
       python3 -m vldbench.cli kv-json OUT_JSON "n=10 secs=1.5 fs=ext4 ..."
           bench-kernel-fsync: the guest's key=value line as JSON (numbers as
           numbers; the value of fs stays a string)
"""
import argparse
import json

from .common import load_json
from .largefile import compaction_line


def kv_json(line):
    """'n=10 secs=1.5 fs=ext4' -> {"n": 10, "secs": 1.5, "fs": "ext4"}."""
    kv = dict(w.split("=", 1) for w in line.split())
    return {k: (v if k == "fs" else float(v) if "." in v else int(v)) for k, v in kv.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="vldbench.cli")
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compaction-line")
    c.add_argument("poll")
    c.add_argument("stats")
    k = sub.add_parser("kv-json")
    k.add_argument("out")
    k.add_argument("line")
    a = ap.parse_args(argv)
    if a.cmd == "compaction-line":
        print(compaction_line(load_json(a.poll), load_json(a.stats)), end="")
    else:
        with open(a.out, "w") as f:
            json.dump(kv_json(a.line), f, indent=1)


if __name__ == "__main__":
    main()
