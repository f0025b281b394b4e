#!/usr/bin/python3
# crash_cycles: ext4 on mode=vld, on mode=lld with its NVRAM and with
# nvram=0, and on mode=inplace survives repeated SIGKILLs of nbdkit in the
# middle of an fsync-heavy workload, with every acknowledged fsync kept.
#
# CYCLES cycles on one 256 MiB image per mode (crashlib.run_cycles). Each:
#   - fuse-attach up; after the first, nbdkit recovers from the crash: the
#     stats file must say recovery.clean = false (vld: method record+window;
#     inplace: null, as it cannot tell a crash with no ARU in flight);
#   - mkfs.ext4 in the first cycle; afterwards e2fsck -fy (exit 0 or 1, and it
#     may report only what a crash of journalled ext4 leaves: the journal
#     replay, orphans, the superblock's free counts; crashlib.BENIGN_FSCK),
#     then e2fsck -fn must exit 0;
#   - mount and check the file system against the previous cycle's journal
#     (crashlib.verify): every acknowledged create (fsync of file and
#     directory), atomic replace, rename, unlink and mkdir exactly, with
#     content; the one op in flight at the crash in its before or after
#     state (a rename never both or neither; a file not yet fsynced absent or
#     a prefix of its data and zeros, never foreign or stale data); nothing
#     else, and lost+found empty;
#   - a workload process runs seeded ops (crashlib.gen_ops); after a seeded
#     number of acknowledged ops, a seeded moment into the next op,
#     `fuse-attach kill` (SIGKILL nbdkit, then lazy umount, losetup -d,
#     fusermount3 -u -z). The workload sees EIO and stops; the test waits
#     until the loop device has let go of the dead export.
# A last attach recovers and checks the last cycle, then stops cleanly: its
# stats must show requests.errors == 0 and checksum_failures == 0 (null for
# inplace, which keeps no checksums).
#
# On this path fsync is: ext4 journal commit (preflush, FUA emulated by the
# block layer) -> loop device flush -> vfs_fsync of the FUSE file -> nbdfuse
# -> NBD flush (no FUA): the plugin's flush promise keeps acknowledged data.
# SIGKILL leaves every completed pwrite of nbdkit in the image (tmpfs keeps
# the page cache), so this exercises recovery after a process crash;
# crash_powercut_test.py also takes unsynced writes back out.
#
# mode=lld with NVRAM makes every write durable before its reply (an NVRAM
# append and fdatasync), so a SIGKILL costs it nothing acknowledged; with
# nvram=0 the flush writes the open segment's memory copy out (the
# partial-segment rule) and roll-forward from the checkpoint recovers it.
#
# Environment: VLD_FS_SEED (default 7031), VLD_FS_CYCLES (default 8, per mode),
# VLD_FS_MODES (default all: vld,lld,lld-nvram0,inplace).
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crashlib  # noqa: E402
import fslib  # noqa: E402

SEED = int(os.environ.get("VLD_FS_SEED", "7031"))
CYCLES = int(os.environ.get("VLD_FS_CYCLES", "8"))


# (name, the plugin parameters that create the image)
MODES = (("vld", ("mode=vld",)), ("lld", ("mode=lld",)), ("lld-nvram0", ("mode=lld", "nvram=0")),
         ("inplace", ("mode=inplace",)))


def body(ws):
    only = os.environ.get("VLD_FS_MODES")  # e.g. "lld,lld-nvram0"
    for name, params in MODES:
        if only and name not in only.split(","):
            continue
        image = ws.path("crash.img" if name == "vld" else f"crash-{name}.img")
        crashlib.run_cycles(ws, f"crash_cycles[{name}]", SEED, CYCLES, image=image, mode=params)
        os.unlink(image)


if __name__ == "__main__":
    fslib.main("crash_cycles", body, tools=("mkfs.ext4", "e2fsck"))
