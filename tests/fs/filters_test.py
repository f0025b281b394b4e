#!/usr/bin/python3
# filters: nbdkit's own filters stacked on the plugin, in every mode.
#
# Users put filters in front of any plugin (a cache, a copy-on-write layer,
# request splitting, FUA emulation); each relies on what the plugin
# advertises (block sizes, FUA, flush, zero, extents, multi-conn) and
# calls it in its own patterns. For each mode (vld, inplace, lld, lld with
# nvram=0) and each filter configuration below, on a fresh 32 MiB image:
# nbdcopy --flush writes a seeded 24 MiB source (the rest zeros) through
# the filter, a second nbdcopy reads the export back through the same
# filter, and the bytes must be the source's. Then the server stops
# cleanly (SIGTERM), and, except behind cow (whose writes stay in its
# overlay by design), a plain server on the image must read the same
# bytes: what the filter wrote reached the plugin and the platters.
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fslib  # noqa: E402
from fslib import MiB, check, log  # noqa: E402

SEED = 20261128
SIZE = 32 * MiB
# (filter, its parameters); parameters go after the plugin's.
FILTERS = (
    ("cow", []),
    ("cache", ["cache=writeback"]),
    ("blocksize", ["minblock=4096", "maxdata=65536"]),
    ("fua", ["fuamode=emulate"]),
    ("multi-conn", ["multi-conn-mode=emulate"]),
    ("noextents", []),
    ("nozero", ["zeromode=emulate"]),
)


def nbdkit_run(ws, filt, params, command):
    """nbdkit -U - [--filter] PLUGIN params --run command; fails on a nonzero exit."""
    args = ["nbdkit", "-U", "-"] + ([f"--filter={filt}"] if filt else []) + [fslib.PLUGIN]
    args += params + ["latency=none", "--run", command]
    what = f"nbdkit{' --filter=' + filt if filt else ''} ({' '.join(params)})"
    return fslib.run(args, timeout=120, what=what)


def same_bytes(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(MiB), fb.read(MiB)
            if x != y:
                return False
            if not x:
                return True


def run_config(ws, mode, mode_params, filt, filt_params):
    image, back = ws.path("disk.img"), ws.path("back.raw")
    src = ws.path("source.raw")
    for p in (image, back):
        if os.path.exists(p):
            os.unlink(p)
    copy_in = f'nbdcopy --flush {src} "$uri" && nbdcopy "$uri" {back}'
    nbdkit_run(ws, filt, [f"file={image}", f"size={SIZE}"] + mode_params + filt_params, copy_in)
    what = f"{mode} behind --filter={filt} {' '.join(filt_params)}".rstrip()
    check(same_bytes(src, back), f"{what}: read back through the filter differs from what was written")
    if filt == "cow":
        return
    os.unlink(back)
    nbdkit_run(ws, None, [f"file={image}"], f'nbdcopy "$uri" {back}')
    check(same_bytes(src, back), f"{what}: a plain server on the image reads other bytes")


def body(ws):
    fslib.write_seeded(ws.path("source.raw"), 24 * MiB, SIZE, SEED)
    for mode in fslib.ALL_MODES:
        mode_params = fslib.MODE_PARAMS[mode]
        t0 = time.monotonic()
        for filt, filt_params in FILTERS:
            run_config(ws, mode, mode_params, filt, filt_params)
        log(f"  {mode}: {len(FILTERS)} filters, written and read back: ok "
            f"({time.monotonic() - t0:.1f} s)")


if __name__ == "__main__":
    fslib.main("filters", body, tools=("nbdcopy",))
