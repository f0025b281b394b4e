#!/usr/bin/python3
"""fs.kernel_nbd_test: the real Linux kernel NBD client against the plugin.

For mode=vld, mode=inplace, and mode=lld with its NVRAM (nvram= default) and
with nvram=0 ("lld-nvram0"), on a fresh 256 MiB image on /dev/shm:

  boot 1  nbdkit (unix socket, latency=none, statsfile) and
          `scripts/kernel-nbd --job mkfs-write` (nbd.ko + nbd-client in a
          qemu guest: mkfs.ext4, files written and fsynced, umount);
          nbdkit stopped with SIGTERM (a clean power-down, final stats file)
  boot 2  nbdkit started again on the same image, `--job verify` (mount -o ro,
          sha256sums and contents, e2fsck -fn), nbdkit stopped

and asserts, from each boot's statistics file:

  boot 1  requests.errors == 0; the kernel client sent FUA writes
          (requests.write_fua > 0) and flushes (requests.flush > 0); and each
          was honoured with exactly one fdatasync of the backing image:
            inplace  backing_syncs == write_fua + flush
            vld      backing_syncs == write_fua + flush + 2 * R
          where R is the log records written while serving requests (window
          moves; each syncs before and after itself), i.e.
          vld.log_records_written minus the one written at the clean close
          (not a request, so not in backing_syncs; core/vld/vld_disk.cc
          write_record, disk_controller.cc); the "open" record is written
          before the first write, so it is. mode=lld: a range, up to one
          sync per request (with NVRAM, requests in flight share one: group
          commit) plus 2 per NVRAM drain and checkpoint (the stats do not
          say which of those the close made).
          (Trims and zeroes with FUA would also sync; the kernel sends none,
          and the relation would fail loudly if it did.)
  boot 2  verify ok; requests.errors == 0, requests.write == 0 (a read-only
          mount and e2fsck -n write nothing), the same backing_syncs relation,
          and the session wrote no log record (vld), no checkpoint and no
          drain (lld);
          vld and lld: recovery.clean is true (boot 1's power-down was
          clean), and vld's method is clean-walk; and the image kept its
          mode.

Then, per mode, the crashes (boots 3 and 4, twice): a fresh image, the guest job
fsync-files (numbered files one after another, each written, fsynced, its
directory fsynced, then the line "fsynced N" on the console), kill -9 of
nbdkit once the console shows N >= 40, qemu stopped; a new nbdkit on the
image and the job verify-files with vld.ff_n=N: mount (ext4 replays its
journal), files 1..N whole, e2fsck -fn clean; requests.errors == 0 and,
but for inplace, recovery.clean is false. The FUA writes and flushes of
the kernel client are what make those files durable. The second time the
crash is a power cut instead (tests/fs/crash_powercut_test.py's shim and
model): nbdkit dies at the next fdatasync after N >= 40, before it syncs;
the writes since the last completed fdatasync are rolled back and a seeded
half of their 512-byte units replayed (torn); the cut must have dropped
some.

Needs root, qemu-system-x86_64 (TCG is enough), busybox-static, nbd-client,
e2fsprogs, cpio, nbdkit; the first run fetches Debian's cloud kernel with
apt-get download (scripts/kernel-nbd). About 50 s per mode on a 2-vCPU VM
(four boots of the first kind, two of the crash kind each).
Environment (set by ctest): VLD_PLUGIN, VLD_SOURCE_DIR.
"""
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

SRC = os.environ.get("VLD_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
PLUGIN = os.environ.get("VLD_PLUGIN") or os.path.join(SRC, "build", "plugin", "nbdkit-vld-plugin.so")
KERNEL_NBD = os.path.join(SRC, "scripts", "kernel-nbd")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import crash_powercut_test as powercut  # noqa: E402  (its shim and power_cut)
from fslib import MODE_PARAMS, ALL_MODES as MODES  # noqa: E402
SIZE = "256M"
BOOT_TIMEOUT = 150  # seconds, per boot (a boot takes 5-15 s here)

failures = []
children = []  # Popen objects still running: stopped on any exit


def log(msg):
    print(msg, flush=True)


def check(cond, what):
    """Record a failed assertion (and go on, so one run reports them all)."""
    if cond:
        log("  ok: " + what)
    else:
        log("  FAIL: " + what)
        failures.append(what)
    return cond


class Fatal(Exception):
    pass


class Nbdkit:
    """nbdkit in the foreground of a child process, on a unix socket."""

    def __init__(self, tmp, name, params, env=None):
        self.sock = os.path.join(tmp, name + ".sock")
        self.pidfile = os.path.join(tmp, name + ".pid")
        self.logfile = os.path.join(tmp, name + ".nbdkit.log")
        for f in (self.sock, self.pidfile):
            if os.path.exists(f):
                os.unlink(f)  # nbdkit leaves its socket behind
        self.err = open(self.logfile, "w")
        self.proc = subprocess.Popen(
            ["nbdkit", "-f", "--exit-with-parent", "-U", self.sock, "-P", self.pidfile,
             PLUGIN] + params,
            stdin=subprocess.DEVNULL, stdout=self.err, stderr=self.err,
            env=dict(os.environ, **(env or {})))
        children.append(self.proc)
        deadline = time.monotonic() + 30
        # nbdkit writes its pid file once it listens.
        while not (os.path.exists(self.pidfile) and os.path.getsize(self.pidfile) > 0):
            if self.proc.poll() is not None:
                raise Fatal("nbdkit %s exited with status %d at start: %s"
                            % (" ".join(params), self.proc.returncode, self.log_tail()))
            if time.monotonic() > deadline:
                raise Fatal("nbdkit did not listen within 30 s: " + self.log_tail())
            time.sleep(0.05)

    def log_tail(self):
        self.err.flush()
        with open(self.logfile) as f:
            return " | ".join(f.read().strip().splitlines()[-5:])

    def stop(self):
        """SIGTERM and wait: a clean close; the stats file is final after it."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise Fatal("nbdkit did not exit within 60 s of SIGTERM")
        finally:
            children.remove(self.proc)
            self.err.close()
        if rc != 0:
            raise Fatal("nbdkit exited with status %d: %s" % (rc, self.log_tail()))

    def kill9(self):
        """The crash: SIGKILL, no power-down."""
        self.proc.kill()
        self.reap()

    def reap(self, timeout=None):
        """Waits for nbdkit to exit (it was killed, or kills itself)."""
        self.proc.wait(timeout=timeout)
        children.remove(self.proc)
        self.err.close()


def start_guest(sock, job, guest_log, append=None):
    """scripts/kernel-nbd --job JOB in a process group of its own (qemu's)."""
    env = dict(os.environ)
    if append:
        env["VLD_VM_APPEND"] = append
    p = subprocess.Popen([KERNEL_NBD, "--socket", sock, "--job", job, "--log", guest_log,
                          "--timeout", str(BOOT_TIMEOUT)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True, env=env)
    children.append(p)
    return p


def boot(tmp, sock, job, name, append=None):
    """scripts/kernel-nbd --job JOB: returns (ok, wall seconds, its output)."""
    guest_log = os.path.join(tmp, name + ".console.log")
    t0 = time.monotonic()
    p = start_guest(sock, job, guest_log, append)
    try:
        out, _ = p.communicate(timeout=BOOT_TIMEOUT + 60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
    children.remove(p)
    secs = time.monotonic() - t0
    for line in out.strip().splitlines():
        log("    | " + line)
    ok = p.returncode == 0 and (" %s ok:" % job) in out
    if not ok and os.path.exists(guest_log):
        with open(guest_log, errors="replace") as f:
            tail = f.read().splitlines()[-40:]
        log("    guest console (last 40 lines):")
        for line in tail:
            log("    # " + line)
    return ok, secs


def read_stats(path):
    with open(path) as f:
        return json.load(f)




def stat_mode(mode):
    """The stats file's "mode" of a mode's image."""
    return "lld" if mode.startswith("lld") else mode


def syncs_relation(mode, st):
    """(least, most expected backing_syncs, how they are made up) for a boot's
    final stats. The clean close's own syncs are not a request's, so not in
    backing_syncs; mode=lld's stats do not say which of its drains and
    checkpoints the close made, so for it the relation is a range."""
    r = st["requests"]
    if mode == "inplace":
        n = r["write_fua"] + r["flush"]
        return n, n, "write_fua %d + flush %d" % (r["write_fua"], r["flush"])
    if mode.startswith("lld"):
        lld = st["lld"]
        own = 2 * lld["nvram_drains"] + 2 * lld["checkpoints"]
        if mode == "lld":
            # Group commit: requests in flight share a sync, so at most one
            # each (and at least one if any was served).
            n = r["write"] + r["trim"] + r["zero"]
            return (min(n, 1), n + own,
                    "at most one per write %d + trim %d + zero %d (group commit), "
                    "+ up to 2 x %d NVRAM drains + 2 x %d checkpoints"
                    % (r["write"], r["trim"], r["zero"], lld["nvram_drains"], lld["checkpoints"]))
        n = r["write_fua"] + r["flush"]
        return (n, n + own, "write_fua %d + flush %d (+ up to 2 x %d checkpoints)"
                % (r["write_fua"], r["flush"], lld["checkpoints"]))
    # The "open" record (written before the first write) and records during
    # requests are in backing_syncs; the clean close's is not, and a session
    # that wrote nothing writes neither.
    records = max(st["vld"]["log_records_written"] - 1, 0)
    n = r["write_fua"] + r["flush"] + 2 * records
    return n, n, ("write_fua %d + flush %d + 2 x %d records during requests"
                  % (r["write_fua"], r["flush"], records))


def check_syncs(mode, boot, st, what):
    least, most, parts = syncs_relation(mode, st)
    if least == most:
        check(st["backing_syncs"] == least, "%s boot %d: %sbacking_syncs %d == %s = %d"
              % (mode, boot, what, st["backing_syncs"], parts, least))
    else:
        check(least <= st["backing_syncs"] <= most, "%s boot %d: %s%d <= backing_syncs %d <= %d: %s"
              % (mode, boot, what, least, st["backing_syncs"], most, parts))


def run_mode(tmp, mode):
    img = os.path.join(tmp, mode + ".img")
    times = {}
    log("== mode=%s: %s image %s" % (mode, SIZE, img))

    # Boot 1: mkfs-write on a fresh image.
    stats1 = os.path.join(tmp, mode + ".boot1.json")
    srv = Nbdkit(tmp, mode, ["file=" + img, "size=" + SIZE] + MODE_PARAMS[mode] +
                 ["latency=none", "statsfile=" + stats1])
    ok, times["boot1"] = boot(tmp, srv.sock, "mkfs-write", mode + ".boot1")
    srv.stop()
    if not check(ok, "%s boot 1: kernel-nbd --job mkfs-write ok" % mode):
        return
    st = read_stats(stats1)
    r = st["requests"]
    extra = ""
    if mode == "vld":
        extra = ", vld.log_records_written %d" % st["vld"]["log_records_written"]
    elif "lld" in st:
        extra = ", lld: %s" % json.dumps({k: st["lld"][k] for k in (
            "nvram_records_written", "nvram_drains", "checkpoints", "segment_writes",
            "partial_writes", "nvram_buffered_blocks")}, sort_keys=True)
    log("  boot 1 stats: requests %s, backing_syncs %d%s"
        % (json.dumps(r, sort_keys=True), st["backing_syncs"], extra))
    check(st["mode"] == stat_mode(mode), "%s boot 1: the image is mode=%s (got %s)"
          % (mode, stat_mode(mode), st["mode"]))
    check(r["errors"] == 0, "%s boot 1: requests.errors == 0 (got %d)" % (mode, r["errors"]))
    check(r["write_fua"] > 0, "%s boot 1: the kernel client sent FUA writes (write_fua %d > 0)"
          % (mode, r["write_fua"]))
    check(r["flush"] > 0, "%s boot 1: the kernel client sent flushes (flush %d > 0)" % (mode, r["flush"]))
    check(r["write"] > r["write_fua"], "%s boot 1: and plain writes (write %d > write_fua %d)"
          % (mode, r["write"], r["write_fua"]))
    # The job writes 33 files, 5336 KiB, on top of mkfs.
    check(st["bytes_written"] >= 5336 * 1024, "%s boot 1: bytes_written %d >= the files' 5336 KiB"
          % (mode, st["bytes_written"]))
    if mode == "vld":
        check(st["vld"]["log_records_written"] >= 2,
              "vld boot 1: log_records_written %d >= 2 (open and close)" % st["vld"]["log_records_written"])
    check_syncs(mode, 1, st, "FUA honoured: ")

    # Boot 2: verify on the same image, served afresh.
    stats2 = os.path.join(tmp, mode + ".boot2.json")
    srv = Nbdkit(tmp, mode, ["file=" + img] + MODE_PARAMS[mode] +
                 ["latency=none", "statsfile=" + stats2])
    ok, times["boot2"] = boot(tmp, srv.sock, "verify", mode + ".boot2")
    srv.stop()
    check(ok, "%s boot 2: kernel-nbd --job verify ok (files, sums, e2fsck -fn)" % mode)
    st2 = read_stats(stats2)
    r2 = st2["requests"]
    log("  boot 2 stats: requests %s, backing_syncs %d" % (json.dumps(r2, sort_keys=True), st2["backing_syncs"]))
    check(st2["mode"] == stat_mode(mode), "%s boot 2: the image is still mode=%s (got %s)"
          % (mode, stat_mode(mode), st2["mode"]))
    check(r2["errors"] == 0, "%s boot 2: requests.errors == 0 (got %d)" % (mode, r2["errors"]))
    check(r2["read"] > 0, "%s boot 2: the guest read the disk (read %d > 0)" % (mode, r2["read"]))
    check(r2["write"] == 0, "%s boot 2: a read-only verify writes nothing (write %d == 0)" % (mode, r2["write"]))
    check_syncs(mode, 2, st2, "")
    # A session that only reads leaves the image as the clean stop left it.
    if mode == "vld":
        check(st2["vld"]["log_records_written"] == 0, "vld boot 2: a read-only session writes no "
              "log record (got %d)" % st2["vld"]["log_records_written"])
    elif mode.startswith("lld"):
        check(st2["lld"]["checkpoints"] == 0 and st2["lld"]["nvram_drains"] == 0,
              "%s boot 2: a read-only session writes no checkpoint and drains nothing (got %d, %d)"
              % (mode, st2["lld"]["checkpoints"], st2["lld"]["nvram_drains"]))
    rec = st2["recovery"]
    if mode != "inplace":  # inplace cannot tell a clean power-down: clean is null
        check(rec["clean"] is True, "%s boot 2: recovery.clean is true (got %r)"
              % (mode, rec["clean"]))
    if mode == "vld":
        check(rec["method"] == "clean-walk",
              "vld boot 2: recovery.method is clean-walk (got %r)" % rec["method"])
    log("  %s: boot 1 %.1f s, boot 2 %.1f s" % (mode, times["boot1"], times["boot2"]))


CRASH_AFTER = 40  # files the guest has fsynced when nbdkit is killed
POWER_CUT_SEED = 20261128  # + the mode's index: which logged units survive
FSYNCED = re.compile(r"vld-guest: fsynced (\d+)$")


def fsynced_so_far(guest_log):
    """The last N of a complete "fsynced N" line in the console log, or 0."""
    try:
        with open(guest_log, errors="replace") as f:
            lines = f.read().split("\n")[:-1]  # the last one may be half written
    except FileNotFoundError:
        return 0
    ns = [int(m.group(1)) for m in map(FSYNCED.search, lines) if m]
    return max(ns, default=0)


class PowerCut:
    """The power cut of tests/fs/crash_powercut_test.py for one image:
    nbdkit runs with powercut_shim.so preloaded, which logs the image's
    writes since the last completed fdatasync and, once armed, kills nbdkit
    at the next fdatasync (before it syncs); then the logged writes are
    rolled back and a seeded subset of their 512-byte units replayed."""

    def __init__(self, shim, img, seed):
        self.img, self.seed = img, seed
        self.logpath, self.arm = img + ".powercut.log", img + ".powercut.arm"
        self.env = {"LD_PRELOAD": shim, "VLD_PC_IMAGE": img, "VLD_PC_LOG": self.logpath,
                    "VLD_PC_ARM": self.arm}

    def trigger(self, srv):
        with open(self.arm, "w") as f:
            f.write("1\n")  # at the next sync that finds a write pending
        try:
            srv.reap(timeout=60)
        except subprocess.TimeoutExpired:
            raise Fatal("nbdkit did not reach a sync within 60 s of arming the power cut")
        os.unlink(self.arm)

    def apply(self):
        """(writes after the last fdatasync, 512-byte units dropped)."""
        n, _, _, dropped = powercut.power_cut(self.img, self.logpath, random.Random(self.seed),
                                              512, 0.5)
        return n, dropped


def crash_mode(tmp, mode, cut=None):
    """Boots 3 and 4: kill -9 of nbdkit (or, with cut, a power cut) while
    the guest fsyncs files, then a new nbdkit and a guest that finds every
    file it saw fsynced."""
    what = "a power cut" if cut else "kill -9"
    img = os.path.join(tmp, mode + (".cut.img" if cut else ".crash.img"))
    log("== mode=%s: %s under fsync-files, %s image %s" % (mode, what, SIZE, img))
    if cut:
        cut = PowerCut(cut, img, POWER_CUT_SEED + MODES.index(mode))
    srv = Nbdkit(tmp, mode, ["file=" + img, "size=" + SIZE] + MODE_PARAMS[mode] + ["latency=none"],
                 env=cut.env if cut else None)
    guest_log = img + ".boot3.console.log"  # one per variant: the wait below reads it
    guest = start_guest(srv.sock, "fsync-files", guest_log)
    t0 = time.monotonic()
    while (fsynced_so_far(guest_log) < CRASH_AFTER and guest.poll() is None
           and time.monotonic() - t0 < BOOT_TIMEOUT):
        time.sleep(0.05)
    if cut:
        cut.trigger(srv)
    else:
        srv.kill9()
    os.killpg(guest.pid, signal.SIGKILL)  # its guest waits on a dead server
    guest.wait()
    children.remove(guest)
    # A file's line comes after its fsync returned, which needed the dead
    # server's reply: every line in the log is of a file fsynced before.
    seen = fsynced_so_far(guest_log)
    if not check(seen >= CRASH_AFTER, "%s boot 3: the guest fsynced %d files before %s (want >= %d)"
                 % (mode, seen, what, CRASH_AFTER)):
        return
    how = ""
    if cut:
        n, dropped = cut.apply()
        check(dropped > 0, "%s boot 3: the power cut took back some of the %d writes after the last "
              "fdatasync (dropped %d units)" % (mode, n, dropped))
        how = ", %d writes after the last fdatasync, %d units dropped" % (n, dropped)
    verify_after_crash(tmp, mode, img, seen, "%s after %d fsynced files%s" % (what, seen, how))


def verify_after_crash(tmp, mode, img, seen, what):
    stats = os.path.join(tmp, mode + ".boot4.json")
    srv = Nbdkit(tmp, mode, ["file=" + img, "latency=none", "statsfile=" + stats])
    ok, secs = boot(tmp, srv.sock, "verify-files", mode + ".boot4", append="vld.ff_n=%d" % seen)
    srv.stop()
    check(ok, "%s boot 4: after %s, every fsynced file is whole, e2fsck -fn clean" % (mode, what))
    st = read_stats(stats)
    check(st["requests"]["errors"] == 0, "%s boot 4: requests.errors == 0 (got %d)"
          % (mode, st["requests"]["errors"]))
    if mode != "inplace":  # inplace cannot tell a crash with no ARU in flight: clean is null
        rec = st["recovery"]
        check(rec["clean"] is False, "%s boot 4: the open recovered from a crash (recovery.clean %r)"
              % (mode, rec["clean"]))
    os.unlink(img)


def main():
    if os.geteuid() != 0:
        raise Fatal("needs root (the guest's tools are copied from this host; nbdkit locks)")
    for path, what in ((PLUGIN, "the plugin (VLD_PLUGIN)"), (KERNEL_NBD, "scripts/kernel-nbd")):
        if not os.path.exists(path):
            raise Fatal("%s not found at %s" % (what, path))
    parent = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="vld-kernel-nbd.", dir=parent) as tmp:
        try:
            shim = os.path.join(tmp, "powercut_shim.so")
            powercut.build_shim(shim)
            for mode in MODES:
                run_mode(tmp, mode)
                crash_mode(tmp, mode)
                crash_mode(tmp, mode, cut=shim)
        finally:
            stop_children()  # before the images go
    log("== total %.1f s" % (time.monotonic() - t0))
    if failures:
        log("%d assertion(s) failed:" % len(failures))
        for f in failures:
            log("  - " + f)
        return 1
    log("all assertions hold")
    return 0


def stop_children():
    """Kill whatever still runs: nbdkit, kernel-nbd's process group (qemu)."""
    for p in list(children):
        try:
            if p.args and p.args[0] == KERNEL_NBD:
                os.killpg(p.pid, signal.SIGKILL)
            else:
                p.kill()
            p.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            pass
        children.remove(p)


def on_signal(signum, _frame):
    raise Fatal("killed by signal %d" % signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        rc = main()
    except Fatal as e:
        log("FATAL: %s" % e)
        rc = 1
    finally:
        stop_children()
    sys.exit(rc)
