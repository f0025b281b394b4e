"""The guest-less half of bench-kernel-fsync: on a mounted file system, K
random 4 KiB pwrite+fsync pairs into a FILE_MIB file, with the block
layer's counts (/sys/block/LOOP/stat) around the loop alone; JSON to OUT,
and one line key=value on stdout.

usage: python3 -m vldbench.fsync_loop PATH LOOPDEV K FILE_MIB SEED OUT GAP_MS
"""
import json
import os
import random
import sys
import time


def block_counts(stat_path):
    """reads, writes, KiB written, discards, flushes of a block device."""
    with open(stat_path) as f:
        fields = [int(x) for x in f.read().split()]
    return {"reads": fields[0], "writes": fields[4], "write_kib": fields[6] // 2,
            "discards": fields[11], "flushes": fields[15]}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    path, loop, k, mib, seed, out = argv[0], argv[1], int(argv[2]), int(argv[3]), int(argv[4]), argv[5]
    gap = float(argv[6]) / 1000
    blocks = mib * 256
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    zero = bytes(1 << 20)
    for i in range(mib):
        os.pwrite(fd, zero, i << 20)
    os.fsync(fd)
    os.sync()
    rng = random.Random(seed)
    offsets = [rng.randrange(blocks) for _ in range(k)]
    blk = os.urandom(4096)
    stat = "/sys/block/%s/stat" % os.path.basename(loop)
    counts = lambda: block_counts(stat)
    before, t = counts(), time.monotonic()
    for off in offsets:
        if gap:
            time.sleep(gap)
        os.pwrite(fd, blk, off * 4096)
        os.fsync(fd)
    secs, after = time.monotonic() - t, counts()
    os.close(fd)
    r = {"n": k, "file_mib": mib, "seed": seed, "fs": "mkfs", "gap_ms": argv[6], "secs": round(secs, 3)}
    r.update({key: after[key] - before[key] for key in before})
    json.dump(r, open(out, "w"), indent=1)
    print(" ".join("%s=%s" % kv for kv in r.items()))


if __name__ == "__main__":
    main()
