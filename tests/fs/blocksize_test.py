#!/usr/bin/python3
# blocksize: the README's flow gives each disk a file system whose blocks
# are at least the disk's block, so the file system never writes part of one.
#
# A disk that maps whole blocks (mode=vld, mode=lld; block=4096 by default)
# reads the rest of a block before writing part of it (read-modify-write),
# and mkfs.ext4 on a disk under 512 MiB picks 1 KiB blocks if the device
# says its sectors are 512 bytes. scripts/fuse-attach gives the loop device
# the export's preferred block size (the image's block=) as its logical
# sector size, so mkfs.ext4 with its defaults picks blocks of at least that.
#
# For each image below, a fresh 256 MiB one: `fuse-attach up` (no
# VLD_LOOP_SECTOR_BYTES), then
#   - the loop device's logical sector size is min(block=, 4096);
#   - mkfs.ext4 with its defaults makes blocks of exactly the disk's block
#     (4096 by default; 1024 for block=1K, which mke2fs's "small" type picks);
#   - a SQLite database's synchronous commits (journal_mode=DELETE,
#     synchronous=FULL, 100 transactions of one 100-3,000 byte row) and the
#     unmount make, for vld, no read-modify-write at all (vld.rmw_reads 0 in
#     the stats after the clean stop, mkfs included), and no request fails.
# docs/benchmarks.md (the SQLite section) has what the reads cost when
# ext4's blocks are smaller than the disk's: vld slower than in place.
import os
import random
import sqlite3
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fslib  # noqa: E402
from fslib import check, log  # noqa: E402

SEED = 20261206
TRANSACTIONS = 100
# (label, the plugin parameters that create the image, the disk's block)
IMAGES = (("vld", ("mode=vld",), 4096), ("vld-1k", ("mode=vld", "block=1K"), 1024),
          ("inplace", ("mode=inplace",), 4096), ("lld", ("mode=lld",), 4096))


def sqlite_commits(path, n, seed):
    """N transactions of one seeded row each, every commit synchronous."""
    rng = random.Random(seed)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode=DELETE")
    con.execute("PRAGMA synchronous=FULL")
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)")
    for _ in range(n):
        con.execute("BEGIN")
        con.execute("INSERT INTO t (v) VALUES (?)", (rng.randbytes(rng.randint(100, 3000)),))
        con.execute("COMMIT")
    rows = con.execute("SELECT count(*) FROM t").fetchone()[0]
    con.close()
    check(rows == n, f"the database holds {rows} rows after {n} commits")


def one(ws, label, params, disk_block):
    image, stats = ws.path(f"{label}.img"), ws.path(f"{label}.stats.json")
    mnt = ws.path(f"mnt-{label}")
    att = fslib.Attachment(ws, f"st-{label}", image)
    loop = att.up("size=256M", *params, "latency=none", statsfile=stats)
    sector = int(fslib.run(["blockdev", "--getss", loop], what="blockdev --getss").stdout)
    check(sector == min(disk_block, 4096),
          f"{label}: the loop device has {sector}-byte sectors, the disk {disk_block}-byte blocks")
    fslib.run(["mkfs.ext4", "-q", loop], timeout=120, what=f"mkfs.ext4 ({label})")
    ws.mount(loop, mnt, "ext4")
    fs_block = os.statvfs(mnt).f_bsize
    check(fs_block == disk_block,
          f"{label}: mkfs.ext4 made {fs_block}-byte blocks on a disk of {disk_block}-byte blocks")
    sqlite_commits(os.path.join(mnt, "db.sqlite"), TRANSACTIONS, SEED)
    ws.umount(mnt)
    att.down()
    s = fslib.read_stats(stats)
    check(fslib.stat_get(s, "requests.errors") == 0,
          f"{label}: requests.errors = {s['requests']['errors']}")
    note = ""
    if "vld" in s:
        rmw = fslib.stat_get(s, "vld.rmw_reads")
        check(rmw == 0, f"{label}: ext4 of {fs_block}-byte blocks made vld read {rmw} blocks "
              f"before writing parts of them")
        note = f", vld.rmw_reads {rmw}"
    log(f"{label}: loop sectors {sector}, ext4 blocks {fs_block}, {s['requests']['write']} "
        f"writes, {s['requests']['flush']} flushes{note}")
    os.unlink(image)


def body(ws):
    for label, params, disk_block in IMAGES:
        one(ws, label, params, disk_block)


if __name__ == "__main__":
    fslib.main("blocksize", body, tools=("mkfs.ext4", "blockdev"))
