#!/usr/bin/python3
# roundtrip: a file system survives a clean stop and restart of nbdkit.
#
# For each file system (ext4, ext2) and each mode (vld, inplace): a fresh
# 256 MiB image attached with scripts/fuse-attach, mkfs, mount, a tree of
# files of mixed sizes (0 B to 3 MiB, a sparse one, nested directories,
# content derived from a fixed seed), sync, umount, `fuse-attach down`
# (SIGTERM: the drive powers down cleanly), `fuse-attach up` again on the
# same image (a new nbdkit opens it), then:
#   - e2fsck -fn exits 0;
#   - the mounted tree has exactly the files and directories written, each
#     with its size and sha256;
#   - the stats file of the second run (read after its clean stop) says
#     requests.errors == 0, bytes_read > 0 (the files came from the disk),
#     and for vld recovery.clean == true and recovery.method == clean-walk;
#     the first run's stats say requests.errors == 0 as well.
import os
import random
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fslib  # noqa: E402
from fslib import MiB, check, fail, log  # noqa: E402

SEED = 20261122
FILESYSTEMS = ("ext4", "ext2")
MODES = ("vld", "inplace", "lld")


def plan_tree(seed):
    """[(relative path, size, sparse_offset or None)]: fixed sizes at the
    edges that matter (empty, one byte, around a sector and a block), a few
    large files, and seeded random small files in nested directories."""
    rng = random.Random(seed)
    fixed = [0, 1, 511, 512, 513, 4095, 4096, 4097, 8192, 65536, 100 * 1024,
             1 * MiB + 3, 3 * MiB]
    dirs = ["", "a", "a/b", "a/b/c/d", "empty-sibling/x", "z"]
    files = []
    for i, size in enumerate(fixed):
        files.append((os.path.join(dirs[i % len(dirs)], f"fixed-{size}.bin"), size, None))
    for i in range(40):
        d = rng.choice(dirs)
        size = rng.choice([rng.randrange(0, 600), rng.randrange(600, 20000),
                           rng.randrange(20000, 300000)])
        files.append((os.path.join(d, f"r{i:02d}.dat"), size, None))
    # A sparse file: 4097 bytes of data 5 MiB + 123 bytes into the file.
    files.append(("a/b/sparse.img", 4097, 5 * MiB + 123))
    # Only leaf directories need to be named; "empty" stays empty.
    empty_dirs = ["empty", "a/b/c/empty2"]
    return files, empty_dirs


def expected_bytes(path, size, sparse_at):
    data = fslib.content(f"{SEED}:{path}", size)
    return (b"\0" * sparse_at + data) if sparse_at is not None else data


def write_tree(mnt, files, empty_dirs):
    sums = {}
    for d in empty_dirs:
        os.makedirs(os.path.join(mnt, d), exist_ok=True)
    for path, size, sparse_at in files:
        full = os.path.join(mnt, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        data = fslib.content(f"{SEED}:{path}", size)
        with open(full, "wb") as f:
            if sparse_at is not None:
                f.seek(sparse_at)
            f.write(data)
        sums[path] = fslib.sha256(expected_bytes(path, size, sparse_at))
    os.sync()
    return sums


def all_dirs(files, empty_dirs):
    out = set()
    for p in [os.path.dirname(f[0]) for f in files] + list(empty_dirs):
        while p:
            out.add(p)
            p = os.path.dirname(p)
    return out


def verify_tree(mnt, sums, dirs, label):
    got_files, got_dirs = fslib.tree(mnt)
    missing = sorted(set(sums) - got_files)
    extra = sorted(got_files - set(sums))
    check(not missing, f"{label}: {len(missing)} file(s) missing after restart, e.g. {missing[:3]}")
    check(not extra, f"{label}: unexpected file(s) after restart: {extra[:3]}")
    check(got_dirs == dirs, f"{label}: directories differ after restart: "
          f"missing {sorted(dirs - got_dirs)[:3]}, extra {sorted(got_dirs - dirs)[:3]}")
    for path, want in sorted(sums.items()):
        got = fslib.file_sha256(os.path.join(mnt, path))
        check(got == want, f"{label}: {path}: sha256 {got[:16]}... after restart, "
              f"wrote {want[:16]}... (size now {os.path.getsize(os.path.join(mnt, path))})")


def one(ws, fs, mode):
    label = f"{fs}/{mode}"
    image = ws.path(f"{fs}-{mode}.img")
    stats1, stats2 = ws.path(f"{fs}-{mode}.1.json"), ws.path(f"{fs}-{mode}.2.json")
    mnt = ws.path(f"mnt-{fs}-{mode}")
    att = fslib.Attachment(ws, f"st-{fs}-{mode}", image)
    files, empty_dirs = plan_tree(SEED)
    dirs = all_dirs(files, empty_dirs)

    loop = att.up("size=256M", f"mode={mode}", "latency=none", statsfile=stats1)
    fslib.run([f"mkfs.{fs}", "-q", loop], timeout=120, what=f"mkfs.{fs} ({label})")
    ws.mount(loop, mnt, fs)
    sums = write_tree(mnt, files, empty_dirs)
    # Read back through the page cache: a mistake in the test, not the disk.
    for path, want in sums.items():
        check(fslib.file_sha256(os.path.join(mnt, path)) == want,
              f"{label}: {path} reads back wrong before unmount (test bug?)")
    ws.umount(mnt)
    att.down()
    s1 = fslib.read_stats(stats1)
    check(fslib.stat_get(s1, "requests.errors") == 0,
          f"{label}: first run: requests.errors = {s1['requests']['errors']}")
    check(fslib.stat_get(s1, "mode") == mode, f"{label}: first run: stats mode {s1['mode']!r}")
    written = fslib.stat_get(s1, "bytes_written")

    # The same image, a new nbdkit.
    loop = att.up("latency=none", statsfile=stats2)
    fslib.e2fsck(loop, "n", f"after restart ({label})")
    ws.mount(loop, mnt, fs)
    verify_tree(mnt, sums, dirs, label)
    ws.umount(mnt)
    att.down()

    s2 = fslib.read_stats(stats2)
    errors = fslib.stat_get(s2, "requests.errors")
    check(errors == 0, f"{label}: second run: requests.errors = {errors}")
    check(fslib.stat_get(s2, "bytes_read") > 0, f"{label}: second run read nothing from the disk")
    rec = ""
    if mode == "vld":
        clean = fslib.stat_get(s2, "recovery.clean")
        method = fslib.stat_get(s2, "recovery.method")
        check(clean is True, f"{label}: after a clean stop recovery.clean = {clean!r} "
              f"(method {method})")
        check(method == "clean-walk", f"{label}: after a clean stop recovery.method = {method!r}")
        check(fslib.stat_get(s2, "checksum_failures") == 0,
              f"{label}: checksum_failures = {s2['checksum_failures']}")
        rec = (f", recovery {method} clean={clean} "
               f"{s2['recovery']['map_sectors_walked']} map sectors walked")
    total = sum(f[1] for f in files)
    log(f"{label}: {len(sums)} files ({total / MiB:.1f} MiB) in {len(dirs)} dirs verified; "
        f"run 1 wrote {written / MiB:.1f} MiB; run 2 read {s2['bytes_read'] / MiB:.1f} MiB, "
        f"utilization {s2['utilization']:.4f}{rec}")
    os.unlink(image)


def body(ws):
    for fs in FILESYSTEMS:
        for mode in MODES:
            one(ws, fs, mode)


if __name__ == "__main__":
    fslib.main("roundtrip", body, tools=("mkfs.ext4", "mkfs.ext2", "e2fsck"))
