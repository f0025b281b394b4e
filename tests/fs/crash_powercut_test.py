#!/usr/bin/python3
# crash_powercut: like crash_cycles, but each crash is a power cut as the
# crash contract models it (docs/crash-contract.md, core/store/crash_store.h):
# what nbdkit wrote to the image before its last completed fdatasync
# survives; of what it wrote after, a seeded random subset of 4 KiB units
# (in one cycle of six, 512-byte units: the harness's torn mode).
#
# The plugin offers no way to swap its backing store for the crash
# harness's recording store (core/store/crash_store.h) from outside, so the record
# is taken one layer down, at the image file: nbdkit runs with
# powercut_shim.so preloaded (compiled here from powercut_shim.c), which logs
# the old and new bytes of every pwrite and hole punch of the image since
# the last completed fdatasync. The test arms the shim after a seeded number
# of acknowledged ops; the next fdatasync that finds at least a seeded
# number of writes pending kills nbdkit before it syncs (the power fails
# with completed but unflushed writes in the drive). After `fuse-attach
# kill` tears the rest down, the test rolls the logged writes back in
# reverse order (the image as of the last fdatasync) and replays a subset of
# their units in order, each surviving with the cycle's probability
# (CUTS: 0 = only synced data survives).
#
# Images of six cycles each: ext4 with 1 KiB blocks (mkfs.ext4 -b 1024 on
# a loop device of 512-byte sectors, VLD_LOOP_SECTOR_BYTES=512: ext4 writes
# parts of the disk's 4 KiB blocks) and with 4 KiB blocks (fuse-attach's
# default loop device, whose sectors are the disk's block); both on
# mode=vld, one each on mode=lld with its NVRAM (1 KiB) and with nvram=0
# (4 KiB).
# Everything else is crash_cycles (crashlib.run_cycles): recovery.clean
# false (vld: method record+window), e2fsck -fy only replays, e2fsck -fn
# clean, every acknowledged op exactly in the file system, the in-flight op
# before or after, errors 0 (vld: checksum failures 0) at the end. And the
# cuts must have bitten: some units dropped, and (vld) recovery rejected
# some group (a request whose map sector survived without all its data) in
# some cycle.
#
# mode=lld syncs after fewer writes than vld: with NVRAM each request is one
# NVRAM append and a sync (a cut there tears a request that was never
# acknowledged, which replay must drop whole), and only a drain of the NVRAM
# into segments leaves many writes pending; with nvram=0 a flush writes the
# open segment's memory copy and syncs. Its cuts wait for at most 4 pending
# writes, which come often enough.
#
# mode=inplace, the baseline, writes the client's blocks where they belong
# and syncs at a flush: a cut keeps any subset of what it wrote since, as a
# real disk's write cache might, and ext4's journal must cope, as it does on
# a real disk. It runs the 1 KiB-block image; a journal commit is a few
# writes and a flush, so its cuts too wait for at most 4 pending writes. Its
# requests are not atomic, so the torn cycle may tear the commit block of a
# transaction no flush had completed: e2fsck then says the transaction was
# corrupt and drops it, as it does after a real disk tears a 1 KiB block
# at a 512-byte sector (crashlib.TORN_COMMIT_FSCK).
#
# Environment: VLD_FS_SEED (default 9157; vld's images use SEED and SEED+1,
# lld's SEED+2, lld with nvram=0's SEED+4, inplace's SEED+6), VLD_FS_MODES
# (default all: vld,lld,lld-nvram0,inplace).
import os
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crashlib  # noqa: E402
import fslib  # noqa: E402
from fslib import MiB, check  # noqa: E402

SEED = int(os.environ.get("VLD_FS_SEED", "9157"))
# (unit bytes, survival probability) per cycle
CUTS = ((4096, 0.0), (4096, 0.5), (4096, 0.25), (512, 0.5), (4096, 0.75), (4096, 0.1))
PENDING_AT_CUT = (1, 2, 4, 8, 16, 32)  # seeded: writes pending at the sync that never happens
PENDING_AT_CUT_FEW = (1, 2, 4)  # lld and inplace: fewer writes between syncs
# (name, mkfs.ext4 options, fuse-attach's environment): one image of 1 KiB
# blocks (ext4 writes partial vld blocks, which vld merges), one of 4 KiB.
IMAGES = (("b1024", ("-b", "1024"), {"VLD_LOOP_SECTOR_BYTES": "512"}),
          ("b4096", ("-b", "4096"), {}))
# (name, the plugin parameters that create the image, the IMAGES it runs):
# lld runs one image a variant, to keep the test's time down: with NVRAM the
# 1 KiB-block one (ext4 writes parts of its blocks, which the NVRAM
# buffers whole), with nvram=0 the 4 KiB one.
MODES = (("vld", ("mode=vld",), IMAGES), ("lld", ("mode=lld",), IMAGES[:1]),
         ("lld-nvram0", ("mode=lld", "nvram=0"), IMAGES[1:]), ("inplace", ("mode=inplace",), IMAGES[:1]))


def read_log(path):
    """[(offset, old, new)] of the complete records in the shim's log."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return []
    recs, pos = [], 0
    while pos + 24 <= len(data):
        magic, kind, off, ln = struct.unpack_from("<4sIQQ", data, pos)
        check(magic == b"VPCW" and kind in (1, 2),
              f"power-cut log {path} is corrupt at byte {pos}")
        need = 24 + ln * (2 if kind == 1 else 1)
        if pos + need > len(data):
            break  # cut short by the SIGKILL: its write was not issued yet
        old = data[pos + 24:pos + 24 + ln]
        new = data[pos + 24 + ln:pos + need] if kind == 1 else bytes(ln)
        recs.append((off, old, new))
        pos += need
    return recs


def power_cut(image, logpath, rng, unit, p):
    recs = read_log(logpath)
    kept = dropped = 0
    with open(image, "r+b") as f:
        for off, old, _ in reversed(recs):  # back to the last completed fdatasync
            f.seek(off)
            f.write(old)
        for off, _, new in recs:            # then a subset of the units, in order
            a, end = off, off + len(new)
            while a < end:
                b = min((a // unit + 1) * unit, end)
                if rng.random() < p:
                    f.seek(a)
                    f.write(new[a - off:b - off])
                    kept += 1
                else:
                    dropped += 1
                a = b
    os.unlink(logpath)
    return len(recs), sum(len(r[2]) for r in recs), kept, dropped


def one_mode(ws, shim, mode_name, mode, images, seed):
    """The power-cut cycles on the images of one mode; returns (units
    dropped, groups recovery rejected)."""
    pending_at_cut = PENDING_AT_CUT if mode_name == "vld" else PENDING_AT_CUT_FEW
    dropped = rejected = 0
    for k, (name, mkfs_args, loop_env) in enumerate(images):
        tag = name if mode_name == "vld" else f"{mode_name}-{name}"
        image = ws.path(f"{tag}.img")
        logpath = ws.path(f"{tag}.powercut.log")
        arm = ws.path(f"{tag}.powercut.arm")
        env = {"LD_PRELOAD": shim, "VLD_PC_IMAGE": image, "VLD_PC_LOG": logpath,
               "VLD_PC_ARM": arm, **loop_env}
        cuts = []

        def trigger(cycle, rng, att, w):
            # Arm the shim: nbdkit dies at the next sync of the image that
            # finds at least n writes pending, i.e. with completed,
            # acknowledged, not yet flushed writes.
            n = rng.choice(pending_at_cut)
            with open(os.path.join(att.dir, "nbdkit.pid")) as f:
                pid = int(f.read())
            with open(arm, "w") as f:
                f.write(f"{n}\n")
            fslib.wait_until(lambda: not fslib.pid_running(pid), 30,
                             f"cycle {cycle}: nbdkit to cut the power at a sync with >= {n} "
                             f"writes pending")
            os.unlink(arm)
            return f"power cut at a sync with >= {n} writes pending"

        def after_crash(cycle, rng):
            unit, p = CUTS[cycle % len(CUTS)]
            check(os.path.exists(logpath), f"cycle {cycle}: the shim wrote no log "
                  f"(was it preloaded into nbdkit?)")
            n, nbytes, kept, drop = power_cut(image, logpath, rng, unit, p)
            cuts.append(drop)
            return (f"power cut: {n} writes ({nbytes / MiB:.2f} MiB) after the last fdatasync, "
                    f"{kept} {unit}-byte units kept, {drop} dropped (survival {p})")

        def torn_commit(cycle, fs_block_bytes):
            # Only mode=inplace may tear a request (crash-contract.md: it
            # does not keep clause 3), and only a cut in units smaller than
            # the file system's block tears one of its blocks.
            return mode_name == "inplace" and CUTS[cycle % len(CUTS)][0] < fs_block_bytes

        totals = crashlib.run_cycles(ws, f"crash_powercut[{tag}]", seed + k, len(CUTS),
                                     up_env=env, after_crash=after_crash, trigger=trigger,
                                     image=image, mkfs_args=mkfs_args, mode=mode,
                                     torn_commit=torn_commit)
        dropped += sum(cuts)
        rejected += totals["groups_rejected"]
        os.unlink(image)
    return dropped, rejected


def build_shim(shim):
    """Compiles powercut_shim.c into the library `shim` (a path)."""
    fslib.run(["cc", "-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o", shim,
               os.path.join(fslib.HERE, "powercut_shim.c"), "-ldl", "-lpthread"],
              what="cc powercut_shim.c")


def body(ws):
    shim = ws.path("powercut_shim.so")
    build_shim(shim)
    only = os.environ.get("VLD_FS_MODES")  # e.g. "lld,lld-nvram0"
    for i, (mode_name, mode, images) in enumerate(MODES):
        if only and mode_name not in only.split(","):
            continue
        dropped, rejected = one_mode(ws, shim, mode_name, mode, images, SEED + 2 * i)
        # The point of this test over crash_cycles: writes were taken back.
        check(dropped > 0, f"{mode_name}: no power cut dropped anything: the shim recorded no "
              f"write after an fdatasync, so this test exercised nothing beyond SIGKILL")
        if mode_name == "vld":
            check(rejected > 0, f"power cuts dropped {dropped} units but recovery rejected no "
                  f"group in {len(images) * len(CUTS)} cycles")


if __name__ == "__main__":
    fslib.main("crash_powercut", body, tools=("mkfs.ext4", "e2fsck", "cc"))
