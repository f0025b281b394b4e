#!/usr/bin/python3
# trim: TRIM from a real file system reaches the plugin and frees physical
# blocks, and live data survives it.
#
# Cases: ext4 on mode=vld with fstrim, on mode=inplace with fstrim, and on
# mode=vld mounted -o discard (online discard at journal commit); and the
# same on mode=lld with its NVRAM (fstrim and discard) and with nvram=0
# (fstrim). Each:
#   run 1: fresh 256 MiB image, mkfs.ext4, mount, write 40 MiB of files to
#          delete and 2 MiB to keep, sync, fstrim (so that the baseline is
#          "live = what the file system uses"), umount, clean stop;
#          utilization U1 from the stats file written at exit.
#   run 2: attach again, mount; (fstrim cases: one fstrim first, which
#          re-trims all free space since ext4 forgets per mount what it
#          trimmed, so that the second reports only the groups the deletion
#          touched), delete the 40 MiB, sync (ext4 frees blocks only once the
#          journal commits), fstrim -v, which must report at least the
#          deleted bytes (discard case: wait until the loop device has
#          completed discards covering the deleted files and then none for
#          0.5 s: ext4 sends online discards from a work queue and drops
#          those still queued at umount); umount, clean stop; U2 from the
#          stats.
#   asserts: requests.trim > 0 and requests.errors == 0 in run 2, and the
#          drop in live blocks, (U1 - U2) * platter_bytes / block_bytes,
#          equals the deleted files' blocks within 2% + 64 blocks (journal
#          and metadata blocks written in run 2 are the slack);
#          (mode=lld with NVRAM counts as live only blocks in segments, and
#          a clean stop leaves the NVRAM's writes and trims there: U1 and U2
#          are then the utilization the next run's server reports as it
#          starts, having replayed and drained the NVRAM, before the mount)
#   run 3: attach again, e2fsck -fn clean, the kept files read back exactly.
import os
import re
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fslib  # noqa: E402
from fslib import MODE_PARAMS, MiB, check, log  # noqa: E402

SEED = 4242
CASES = (("vld", "fstrim"), ("inplace", "fstrim"), ("vld", "discard"), ("lld", "fstrim"),
         ("lld-nvram0", "fstrim"), ("lld", "discard"))
DELETE = [(f"del/d{i:02d}.bin", 4 * MiB - 4096 * (i % 3) + (17 if i % 2 else 0)) for i in range(10)]
KEEP = [(f"keep/k{i}.bin", s) for i, s in enumerate([1, 4096, 12345, 1 * MiB, 1 * MiB - 1])]


def write_files(mnt, files):
    for path, size in files:
        full = os.path.join(mnt, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(fslib.content(f"{SEED}:{path}", size))


def fstrim(mnt, label):
    p = fslib.run(["fstrim", "-v", mnt], timeout=120, what=f"fstrim ({label})")
    m = re.search(r"\((\d+) bytes\) trimmed", p.stdout)
    check(m is not None, f"{label}: fstrim -v printed no byte count: {p.stdout.strip()!r}")
    return int(m.group(1))


def discarded_sectors(loop):
    """Sectors the block device has completed discards for (/sys/block/X/stat)."""
    with open(f"/sys/block/{os.path.basename(loop)}/stat") as f:
        return int(f.read().split()[13])


def wait_quiet(value, quiet, timeout, what):
    """Waits until value() has not changed for quiet seconds."""
    last, since = value(), time.monotonic()
    deadline = since + timeout
    while time.monotonic() - since < quiet:
        check(time.monotonic() < deadline, f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)
        now = value()
        if now != last:
            last, since = now, time.monotonic()


def blocks(size, bs):
    return (size + bs - 1) // bs


def utilization_at_start(statsfile, label):
    """The utilization the server's first stats file reports (written as it
    starts, after recovery)."""
    fslib.wait_until(lambda: os.path.exists(statsfile), 20, f"{label}: the stats file {statsfile}")
    return fslib.stat_get(fslib.read_stats(statsfile), "utilization")


def wait_for_online_discards(loop, mnt, d0, label):
    """ext4 issues online discards from a work queue after the commit, and
    discards still queued at umount can be dropped: wait until the loop
    device has completed discards covering at least the deleted files (in
    ext4 blocks), which it does only after the plugin replied."""
    fs_bs = os.statvfs(mnt).f_bsize
    need = sum(blocks(s, fs_bs) * fs_bs for _, s in DELETE) // 512
    fslib.wait_until(lambda: discarded_sectors(loop) - d0 >= need, 30,
                     f"{label}: the loop device to complete {need} sectors of discards "
                     f"(online discard after deleting the files)")
    # ext4 discards more than the files' blocks (about 1.7x here), so
    # reaching `need` does not mean the queue is empty: the deleted files'
    # last 2-10 MiB were sometimes still queued, and dropped at umount. Wait
    # until no discard has completed for half a second.
    wait_quiet(lambda: discarded_sectors(loop), 0.5, 30,
               f"{label}: the loop device's discards to stop")


def check_kept_files(ws, loop, mnt, label):
    """After the trims, the file system checks clean and holds exactly the
    kept files, byte for byte."""
    fslib.e2fsck(loop, "n", f"after trim ({label})")
    ws.mount(loop, mnt, "ext4")
    files, _ = fslib.tree(mnt)
    want = {p for p, _ in KEEP}
    check(files == want, f"{label}: after trim the files are {sorted(files)[:4]}..., "
          f"expected exactly {sorted(want)}")
    for path, size in KEEP:
        check(fslib.read_file(os.path.join(mnt, path)) == fslib.content(f"{SEED}:{path}", size),
              f"{label}: kept file {path} changed after trim")
    ws.umount(mnt)


def one(ws, mode, how):
    label = f"{mode}/{how}"
    image = ws.path(f"{mode}-{how}.img")
    mnt = ws.path(f"mnt-{mode}-{how}")
    st = [ws.path(f"{mode}-{how}.{i}.json") for i in (1, 2, 3)]
    att = fslib.Attachment(ws, f"st-{mode}-{how}", image)

    # Run 1: fill.
    nvram = mode == "lld"  # the NVRAM holds blocks the utilization does not count
    loop = att.up("size=256M", *MODE_PARAMS[mode], "latency=none", statsfile=st[0])
    fslib.run(["mkfs.ext4", "-q", loop], timeout=120, what=f"mkfs.ext4 ({label})")
    ws.mount(loop, mnt, "ext4")
    write_files(mnt, DELETE + KEEP)
    os.sync()
    fstrim(mnt, label)
    ws.umount(mnt)
    att.down()
    s1 = fslib.read_stats(st[0])
    bs = fslib.stat_get(s1, "geometry.block_bytes")
    platter = fslib.stat_get(s1, "geometry.platter_bytes")
    phys_blocks = platter / bs
    u1 = fslib.stat_get(s1, "utilization")
    u1_at_stop = u1
    deleted_bytes = sum(blocks(s, bs) * bs for _, s in DELETE)
    deleted_blocks = deleted_bytes // bs

    # Run 2: delete and trim.
    loop = att.up("latency=none", statsfile=st[1])
    if nvram:
        u1 = utilization_at_start(st[1], label)
    check(u1 * phys_blocks >= deleted_blocks,
          f"{label}: after writing {deleted_bytes / MiB:.1f} MiB only {u1 * phys_blocks:.0f} "
          f"blocks are live (utilization {u1:.4f})")
    ws.mount(loop, mnt, "ext4", "discard" if how == "discard" else None)
    if how == "fstrim":
        fstrim(mnt, label)
    d0 = discarded_sectors(loop)
    for path, _ in DELETE:
        os.unlink(os.path.join(mnt, path))
    os.sync()
    if how == "discard":
        wait_for_online_discards(loop, mnt, d0, label)
    reported = None
    if how == "fstrim":
        reported = fstrim(mnt, label)
        check(reported >= deleted_bytes,
              f"{label}: fstrim -v reported {reported} bytes trimmed after deleting "
              f"{deleted_bytes} bytes")
    ws.umount(mnt)
    att.down()
    s2 = fslib.read_stats(st[1])
    trims = fslib.stat_get(s2, "requests.trim")
    check(trims > 0, f"{label}: no TRIM request reached the plugin (requests.trim = 0)")
    check(fslib.stat_get(s2, "requests.errors") == 0,
          f"{label}: run 2 requests.errors = {s2['requests']['errors']}")
    u2 = fslib.stat_get(s2, "utilization")
    u2_at_stop = u2

    # Run 3: what was kept is intact.
    loop = att.up("latency=none", statsfile=st[2])
    if nvram:
        u2 = utilization_at_start(st[2], label)
    drop = (u1 - u2) * phys_blocks
    slack = 0.02 * deleted_blocks + 64
    check(abs(drop - deleted_blocks) <= slack,
          f"{label}: live blocks dropped by {drop:.0f} ({u1:.4f} -> {u2:.4f} of {phys_blocks:.0f}),"
          f" deleted files held {deleted_blocks} blocks (tolerance {slack:.0f})")
    check_kept_files(ws, loop, mnt, label)
    att.down()
    s3 = fslib.read_stats(st[2])
    log(f"{label}: deleted {deleted_bytes / MiB:.1f} MiB = {deleted_blocks} blocks; "
        f"utilization {u1:.4f} -> {u2:.4f} (live blocks {u1 * phys_blocks:.0f} -> "
        f"{u2 * phys_blocks:.0f}, drop {drop:.0f}, of {phys_blocks:.0f} physical); "
        f"{trims} TRIM requests"
        + (f"; fstrim reported {reported / MiB:.1f} MiB" if reported is not None else "")
        + (f" (at the stops, NVRAM not yet drained: {u1_at_stop:.4f} -> {u2_at_stop:.4f})"
           if nvram else "")
        + f"; kept files intact, utilization {s3['utilization']:.4f} after restart")
    os.unlink(image)


def body(ws):
    for mode, how in CASES:
        one(ws, mode, how)


if __name__ == "__main__":
    fslib.main("trim", body, tools=("mkfs.ext4", "e2fsck", "fstrim"))
