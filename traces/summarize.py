#!/usr/bin/env python3
"""One Markdown table row per trace of nbdkit's log filter (plain or
gzip-compressed): its requests by kind, the bytes they moved, and its span
from the first request to the last reply. traces/README.md's table is its
output.

usage: summarize.py TRACE...
"""
import datetime
import gzip
import os
import re
import sys

REQUEST = re.compile(r"^(\S+ \S+) connection=\d+ (Read|Write|Flush|Trim|Zero|Extents|Cache) id=\d+"
                     r"(?: offset=0x[0-9a-f]+ count=(0x[0-9a-f]+))?(?: fua=(\d))?")
REPLY = re.compile(r"^(\S+ \S+) connection=\d+ \.\.\.\w+ id=\d+ return=")


def when(stamp):
    return datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S.%f")


def summarize(path):
    opener = gzip.open if path.endswith(".gz") else open
    counts, moved, fua = {}, {"Read": 0, "Write": 0}, 0
    first = last = None
    with opener(path, "rt") as f:
        for line in f:
            m = REQUEST.match(line)
            if m:
                stamp, kind, count, flag = m.groups()
                counts[kind] = counts.get(kind, 0) + 1
                if kind in moved and count:
                    moved[kind] += int(count, 16)
                fua += flag == "1"
                first = first or when(stamp)
                continue
            m = REPLY.match(line)
            if m:
                last = when(m.group(1))
    span = (last - first).total_seconds() if first and last else 0.0
    c = lambda k: counts.get(k, 0)
    mib = lambda b: b / (1 << 20)
    return (f"| {os.path.basename(path)} | {os.path.getsize(path) / 1024:.0f} KiB "
            f"| {sum(counts.values())} | {c('Read')} | {c('Write')} ({fua} FUA) | {c('Flush')} "
            f"| {c('Trim')} | {c('Zero')} | {mib(moved['Read']):.1f} | {mib(moved['Write']):.1f} "
            f"| {span:.1f} |")


def main(paths):
    if not paths:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    print("| trace | size | requests | reads | writes | flushes | trims | zeroes "
          "| MiB read | MiB written | span s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for p in paths:
        try:
            print(summarize(p))
        except (OSError, ValueError) as e:
            print(f"summarize: {p}: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
