#!/usr/bin/python3
# qemu_tools: qemu's own NBD client (qemu-img, qemu-io from qemu-utils)
# against the plugin in every mode. qemu's client is not libnbd: it
# negotiates structured replies and block status itself, splits requests by
# the sizes the server advertises, and sends write-zeroes with and without
# unmap, FUA writes, vectored and asynchronous writes.
#
# For each mode (vld, inplace, lld, lld with nvram=0), on a fresh 64 MiB
# image, the same steps are applied to the export and to a local raw file
# (the reference, through qemu's file driver):
#   1. qemu-img info says 64 MiB; qemu-img convert -n writes a seeded
#      20 MiB source over it;
#   2. qemu-io: patterned writes, an unaligned 1000-byte write, a vectored
#      write across a block boundary, write-zeroes with and without unmap, a
#      discard overwritten by zeroes, a FUA write, asynchronous writes, a
#      flush; every read-back with -P in the same run must verify;
#   3. qemu-img compare: the export equals the reference byte for byte; and
#      qemu-img map reports the range zeroed with unmap as zero;
#   4. a clean stop (SIGTERM) and a restart on the image: compare again;
#   5. a second qemu-io batch (which qemu-io ends with a flush when it
#      closes), kill -9 of nbdkit, a restart: compare again (what a
#      completed flush covered survives, docs/crash-contract.md clause 2).
import json
import os
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fslib  # noqa: E402
from fslib import MiB, check, fail, log  # noqa: E402

SEED = 20261128
SIZE = 64 * MiB
K = 1024

# Offsets in bytes (qemu-io takes plain numbers).
BATCH1 = [
    f"write -P 0xab {1 * MiB} {64 * K}",
    f"write -z {2 * MiB} {1 * MiB}",
    f"discard {4 * MiB} {1 * MiB}",
    f"write -z {4 * MiB} {1 * MiB}",  # the discarded range's contents are now defined
    f"write -f -P 0xcd {8 * MiB} {4 * K}",  # FUA
    f"write -z -u {12 * MiB} {1 * MiB}",  # may unmap: reads zeros, maps as zero
    "write -P 0x33 100 1000",  # inside the first block, unaligned
    f"writev -P 0x55 {6 * MiB - 512} 512 1024 512",  # across a block boundary
    f"aio_write -P 0x11 {10 * MiB} {64 * K}",
    f"aio_write -P 0x22 {16 * MiB} {128 * K}",
    "aio_flush",
    "flush",
    f"read -P 0xab {1 * MiB} {64 * K}",
    f"read -P 0 {2 * MiB} {1 * MiB}",
    f"read -P 0 {4 * MiB} {1 * MiB}",
    f"read -P 0xcd {8 * MiB} {4 * K}",
    f"read -P 0 {12 * MiB} {1 * MiB}",
    "read -P 0x33 100 1000",
    f"read -P 0x55 {6 * MiB - 512} 2048",
    f"read -P 0x11 {10 * MiB} {64 * K}",
    f"read -P 0x22 {16 * MiB} {128 * K}",
]
BATCH2 = [
    f"write -P 0x66 {20 * MiB - 4 * K} {8 * K}",  # the source's last block and a zero one
    f"write -z {1 * MiB + 4 * K} {8 * K}",
    f"aio_write -P 0x77 {40 * MiB} {256 * K}",
    "aio_flush",
]


class Server:
    """nbdkit with the plugin on a unix socket, in the foreground."""

    def __init__(self, ws, sock, params):
        if os.path.exists(sock):
            os.unlink(sock)
        self.sock = sock
        self.err = open(ws.path("nbdkit.log"), "a")
        self.proc = subprocess.Popen(["nbdkit", "-f", "-U", sock, fslib.PLUGIN, "latency=none"]
                                     + params, stdin=subprocess.DEVNULL,
                                     stdout=self.err, stderr=self.err)
        ws.procs.append(self.proc)
        fslib.wait_until(lambda: os.path.exists(sock) or self.proc.poll() is not None, 30,
                         f"nbdkit to listen on {sock}")
        check(self.proc.poll() is None, f"nbdkit exited at start: {self.tail(ws)}")
        self.uri = f"nbd+unix:///?socket={sock}"

    @staticmethod
    def tail(ws):
        with open(ws.path("nbdkit.log")) as f:
            return " | ".join(f.read().strip().splitlines()[-3:])

    def stop(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        rc = self.proc.wait(timeout=60)
        self.err.close()
        if sig == signal.SIGTERM:
            check(rc == 0, f"nbdkit exited with status {rc} after SIGTERM")


def qemu_io(target, commands, what):
    args = ["qemu-io", "-f", "raw"]
    for c in commands:
        args += ["-c", c]
    p = fslib.run(args + [target], timeout=120, what=f"qemu-io ({what})")
    bad = [l for l in (p.stdout + p.stderr).splitlines()
           if "fail" in l.lower() or "error" in l.lower() or "invalid" in l.lower()]
    check(not bad, f"qemu-io ({what}): {bad[0] if bad else ''}")


def compare(ref, uri, what):
    p = fslib.run(["qemu-img", "compare", "-f", "raw", "-F", "raw", ref, uri], timeout=120,
                  check_rc=False, what=f"qemu-img compare ({what})")
    check(p.returncode == 0, f"{what}: the export differs from the reference: "
          f"{(p.stdout + p.stderr).strip().splitlines()[-1:]}")


def check_zero_mapped(uri, offset, length, what):
    p = fslib.run(["qemu-img", "map", "--output=json", "-f", "raw", uri], timeout=60,
                  what=f"qemu-img map ({what})")
    for e in json.loads(p.stdout):
        if e["start"] < offset + length and offset < e["start"] + e["length"]:
            check(e["zero"], f"{what}: qemu-img map reports [{e['start']}, "
                  f"+{e['length']}) as data, which write -z -u zeroed: {e}")


def run_mode(ws, name, params):
    t0 = time.monotonic()
    image, ref, sock = ws.path(f"{name}.img"), ws.path(f"{name}.ref"), ws.path(f"{name}.sock")
    src = ws.path("source.raw")
    with open(ref, "wb") as f:
        f.write(open(src, "rb").read())
    s = Server(ws, sock, [f"file={image}", f"size={SIZE}"] + params)
    info = json.loads(fslib.run(["qemu-img", "info", "--output=json", s.uri], timeout=60).stdout)
    check(info["virtual-size"] == SIZE, f"{name}: qemu-img info says {info['virtual-size']} bytes")
    fslib.run(["qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", src, s.uri], timeout=120,
              what=f"qemu-img convert ({name})")
    qemu_io(s.uri, BATCH1, f"{name}, export")
    qemu_io(ref, BATCH1, f"{name}, reference")
    compare(ref, s.uri, f"{name}")
    check_zero_mapped(s.uri, 12 * MiB, 1 * MiB, name)
    s.stop()
    s = Server(ws, sock, [f"file={image}"])
    compare(ref, s.uri, f"{name} after a clean restart")
    qemu_io(s.uri, BATCH2, f"{name}, export, second batch")
    qemu_io(ref, BATCH2, f"{name}, reference, second batch")
    s.stop(signal.SIGKILL)
    s = Server(ws, sock, [f"file={image}"])
    compare(ref, s.uri, f"{name} after kill -9 and a restart")
    s.stop()
    log(f"  {name}: convert, qemu-io, compare, map, restart, kill -9: ok "
        f"({time.monotonic() - t0:.1f} s)")


def body(ws):
    fslib.write_seeded(ws.path("source.raw"), 20 * MiB, SIZE, SEED)
    for name in fslib.ALL_MODES:
        run_mode(ws, name, fslib.MODE_PARAMS[name])


if __name__ == "__main__":
    fslib.main("qemu_tools", body, tools=("qemu-img", "qemu-io"))
