#!/usr/bin/python3
# torn_commit: the crash tests' judgement of e2fsck after a torn journal
# commit block (crashlib.TORN_COMMIT_FSCK), on a state built by hand.
#
# ext4 with 1 KiB blocks commits three transactions (a file and a sync
# each) and the image is copied while mounted, so that its journal still
# holds them. In the copy, the last commit block gets other bytes in its
# second 512-byte sector: what a power cut leaves when it keeps one sector
# of a 1 KiB write no flush had completed (mode=inplace's torn cuts in
# crash_powercut_test.py). e2fsck -fy then says the transaction was
# corrupt and drops it. crashlib.fsck_after_crash must accept that when
# the crash may tear a commit and fail the test otherwise; either way
# e2fsck -fn is clean afterwards and the first two files read back whole.
import os
import re
import shutil
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crashlib  # noqa: E402
import fslib  # noqa: E402
from fslib import MiB, check  # noqa: E402

FILE_BYTES = 20 * 1024


def last_commit_block(image):
    """The file-system block of the journal's last commit block."""
    dump = fslib.run(["debugfs", "-R", "logdump", image], what="debugfs logdump").stdout
    commits = re.findall(r"type 2 \(commit block\) at block (\d+)", dump)
    check(commits, f"the journal of {image} holds no commit block: {dump[-200:]}")
    out = fslib.run(["debugfs", "-R", f"bmap <8> {commits[-1]}", image],
                    what="debugfs bmap").stdout.split()
    check(out and out[-1].isdigit(), f"debugfs bmap of journal block {commits[-1]}: {out}")
    return int(out[-1])


def body(ws):
    image = ws.path("fs.img")
    with open(image, "wb") as f:
        f.truncate(64 * MiB)
    fslib.run(["mkfs.ext4", "-q", "-b", "1024", image], what="mkfs.ext4")
    mnt = ws.path("mnt")
    ws.mount(image, mnt, "ext4", options="loop")
    files = {}
    for i in range(3):
        files[f"f{i}"] = os.urandom(FILE_BYTES)
        with open(os.path.join(mnt, f"f{i}"), "wb") as f:
            f.write(files[f"f{i}"])
        os.sync()  # one transaction each
    crash = ws.path("crash.img")
    shutil.copyfile(image, crash)  # the journal not yet checkpointed
    ws.umount(mnt)

    block = last_commit_block(crash)
    with open(crash, "r+b") as f:
        f.seek(block * 1024 + 512)
        f.write(os.urandom(512))

    refused = ws.path("refused.img")
    shutil.copyfile(crash, refused)
    try:
        crashlib.fsck_after_crash(refused, "torn commit, not allowed")
        fslib.fail("fsck_after_crash accepted a torn commit where none may tear")
    except fslib.Fail as e:
        check("was corrupt" in str(e), f"refused for another reason: {e}")

    _, notes = crashlib.fsck_after_crash(crash, "torn commit, allowed", torn_commit=True)
    check(any(crashlib.TORN_COMMIT_FSCK.match(n) for n in notes),
          f"e2fsck did not find the torn commit ({notes}): this test built nothing")
    ws.mount(crash, mnt, "ext4", options="loop,ro")
    for name in ("f0", "f1"):
        with open(os.path.join(mnt, name), "rb") as f:
            check(f.read() == files[name], f"{name}, committed before the torn commit, changed")
    ws.umount(mnt)
    fslib.log(f"torn commit block {block}: {'; '.join(notes[:2])}")


if __name__ == "__main__":
    fslib.main("torn_commit", body, tools=("mkfs.ext4", "e2fsck", "debugfs"))
