# fslib: shared helpers for the file-system tests in tests/fs/ (not a test
# itself: ctest runs only *_test.py and *_test.sh).
#
# Every test runs inside fslib.main(name, body): body(ws) gets a Workspace, a
# fresh directory under /dev/shm that holds images, state directories of
# scripts/fuse-attach and mount points. Whatever happens (a failed assertion,
# an exception, SIGTERM/SIGINT/SIGHUP), Workspace.cleanup() stops the
# workload processes the test registered, unmounts what is mounted under the
# workspace, tears every attachment down (fuse-attach down, or kill if that
# fails) and removes the directory. A test that was SIGKILLed (a ctest
# timeout) cannot clean up after itself: the next test sweeps workspaces
# whose owner process is gone (sweep_stale), and only those.
#
# A failure ends the test with one line on stderr,
#   FAIL <test>: <what was wrong>
# and exit status 1; success prints "PASS <test> (<seconds> s)".
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("VLD_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
BUILD_DIR = os.environ.get("VLD_BUILD_DIR") or os.path.join(SOURCE_DIR, "build")
PLUGIN = os.environ.get("VLD_PLUGIN") or os.path.join(BUILD_DIR, "plugin", "nbdkit-vld-plugin.so")
FUSE_ATTACH = os.path.join(SOURCE_DIR, "scripts", "fuse-attach")
WS_PREFIX = "vld-fs-"
WS_PARENT = "/dev/shm"
MiB = 1024 * 1024
# The plugin parameters that create an image of each mode, in the order the
# tests that run every mode take them.
MODE_PARAMS = {"vld": ["mode=vld"], "inplace": ["mode=inplace"], "lld": ["mode=lld"],
               "lld-nvram0": ["mode=lld", "nvram=0"]}
ALL_MODES = tuple(MODE_PARAMS)


class Fail(Exception):
    """An assertion of the test failed; the message is the one-line reason."""


class Interrupted(BaseException):
    """A signal asked us to stop; raised so that finally blocks run."""


def fail(msg):
    raise Fail(msg)


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def log(msg):
    print(msg, flush=True)


def _last_line(text):
    lines = [l for l in (text or "").strip().splitlines() if l.strip()]
    return lines[-1].strip() if lines else ""


def run(cmd, timeout=120, check_rc=True, ok=(0,), env=None, what=None):
    """Runs cmd (a list) and returns the CompletedProcess (text output).
    Fails with a one-line message if it times out or (check_rc) exits with a
    status not in ok."""
    what = what or " ".join(os.path.basename(c) if i == 0 else c for i, c in enumerate(cmd[:3]))
    e = dict(os.environ)
    e["VLD_PLUGIN"] = PLUGIN
    if env:
        e.update(env)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        fail(f"{what}: timed out after {timeout} s")
    if check_rc and p.returncode not in ok:
        why = _last_line(p.stderr) or _last_line(p.stdout)
        fail(f"{what}: exit status {p.returncode}: {why}")
    return p


def wait_until(cond, timeout, what, interval=0.02):
    """Polls cond() until it is true; fails naming `what` after timeout s."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def pid_running(pid):
    """True while pid exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def mounts_under(path):
    """Mount points at or below path, deepest first (from /proc/self/mountinfo)."""
    path = os.path.realpath(path)
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = line.split()[4].encode().decode("unicode_escape")
            if mp == path or mp.startswith(path + "/"):
                out.append(mp)
    return sorted(out, key=len, reverse=True)


def loop_backing(loop):
    """The backing file of a loop device, or None if it is not attached."""
    try:
        with open(f"/sys/block/{os.path.basename(loop)}/loop/backing_file") as f:
            return f.read().strip()
    except OSError:
        return None


# ---------------------------------------------------------------- content

def content(key, size):
    """Deterministic bytes for a file: the same key and size give the same
    bytes in every run."""
    return random.Random(key).randbytes(size)


def write_seeded(path, data_bytes, total_bytes, seed):
    """A file of data_bytes seeded random bytes, then zeros up to total_bytes:
    a source image whose tail a copy must write as zeros."""
    with open(path, "wb") as f:
        f.write(random.Random(seed).randbytes(data_bytes))
        f.truncate(total_bytes)


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def file_sha256(path):
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while True:
                b = f.read(1 << 20)
                if not b:
                    break
                h.update(b)
    except OSError as e:
        fail(f"reading {path}: {e.strerror} (errno {e.errno})")
    return h.hexdigest()


def read_file(path):
    """The file's bytes; an I/O error fails the test naming the file."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        fail(f"reading {path}: {e.strerror} (errno {e.errno})")


def tree(root, skip=("lost+found",)):
    """(files, dirs) below root, as sets of relative paths; skip names top-level
    entries to leave out."""
    files, dirs = set(), set()
    def onerror(e):
        fail(f"listing {e.filename}: {e.strerror} (errno {e.errno})")

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror):
        rel = os.path.relpath(dirpath, root)
        if rel == ".":
            dirnames[:] = [d for d in dirnames if d not in skip]
            filenames = [f for f in filenames if f not in skip]
        for d in dirnames:
            dirs.add(os.path.normpath(os.path.join(rel, d)))
        for f in filenames:
            files.add(os.path.normpath(os.path.join(rel, f)))
    return files, dirs


# ---------------------------------------------------------------- stats

def read_stats(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        fail(f"no stats file at {path}")
    except json.JSONDecodeError as e:
        fail(f"stats file {path} is not JSON: {e}")


def stat_get(stats, dotted):
    v = stats
    for k in dotted.split("."):
        if not isinstance(v, dict) or k not in v:
            fail(f"stats file has no '{dotted}'")
        v = v[k]
    return v


# ---------------------------------------------------------------- attach

class Attachment:
    """One export attached through scripts/fuse-attach: nbdkit + nbdfuse +
    a loop device. The state directory is DIR; the image and stats files are
    the caller's."""

    def __init__(self, ws, name, image):
        self.ws = ws
        self.dir = os.path.join(ws.root, name)
        self.image = image
        self.loop = None
        ws.attachments.append(self)

    def up(self, *params, statsfile=None, env=None):
        args = [FUSE_ATTACH, "up", self.dir, f"file={self.image}"] + list(params)
        if statsfile:
            args.append(f"statsfile={statsfile}")
        p = run(args, timeout=90, what="fuse-attach up", env=env)
        loop = _last_line(p.stdout)
        check(loop.startswith("/dev/loop") and os.path.exists(loop),
              f"fuse-attach up printed no loop device (stdout: {p.stdout.strip()!r})")
        check(loop_backing(loop) is not None, f"{loop} is not attached after fuse-attach up")
        self.loop = loop
        return loop

    def active(self):
        d = self.dir
        return os.path.isdir(d) and (
            any(os.path.exists(os.path.join(d, f)) for f in ("nbdkit.pid", "nbdfuse.pid", "loop"))
            or bool(mounts_under(os.path.join(d, "fuse"))))

    def down(self):
        """Clean power-down: umount, losetup -d, fusermount3 -u, SIGTERM nbdkit."""
        run([FUSE_ATTACH, "down", self.dir], timeout=90, what="fuse-attach down")
        self._check_gone()

    def kill(self):
        """The crash: SIGKILL nbdkit, then lazy teardown."""
        run([FUSE_ATTACH, "kill", self.dir], timeout=90, what="fuse-attach kill")

    def wait_detached(self, timeout=20):
        """After kill: waits until the loop device has let go of the FUSE file
        (which needs the lazily unmounted file system to be gone, i.e. every
        process that had files open on it to have exited)."""
        loop, self.loop = self.loop, None
        if loop:
            wait_until(lambda: not (loop_backing(loop) or "").startswith(self.dir),
                       timeout, f"{loop} to detach from {self.dir}/fuse/nbd after the crash")

    def _check_gone(self):
        loop, self.loop = self.loop, None
        if loop:
            b = loop_backing(loop) or ""
            check(not b.startswith(self.dir), f"{loop} is still attached to {b} after fuse-attach down")
        check(not mounts_under(os.path.join(self.dir, "fuse")),
              f"{self.dir}/fuse is still mounted after fuse-attach down")

    def teardown(self):
        """Best effort, for cleanup: down, or kill if down fails."""
        if not self.active():
            return
        p = run([FUSE_ATTACH, "down", self.dir], timeout=60, check_rc=False, what="fuse-attach down")
        if p.returncode != 0:
            run([FUSE_ATTACH, "kill", self.dir], timeout=60, check_rc=False, what="fuse-attach kill")


# ---------------------------------------------------------------- workspace

def sweep_stale():
    """Tears down workspaces of earlier test runs whose process is gone
    (e.g. killed by a ctest timeout). Never touches a live run's workspace."""
    try:
        names = os.listdir(WS_PARENT)
    except OSError:
        return
    for n in names:
        if not n.startswith(WS_PREFIX):
            continue
        root = os.path.join(WS_PARENT, n)
        try:
            with open(os.path.join(root, "owner.pid")) as f:
                owner = int(f.read().strip())
        except (OSError, ValueError):
            continue  # not (yet) one of ours
        if pid_running(owner):
            continue
        log(f"fslib: sweeping {root}, left behind by process {owner}")
        for mp in mounts_under(root):
            if "/fuse" not in mp[len(root):]:
                subprocess.run(["umount", "-l", mp], capture_output=True)
        for d in os.listdir(root):
            sd = os.path.join(root, d)
            if os.path.isdir(os.path.join(sd, "fuse")):
                subprocess.run([FUSE_ATTACH, "kill", sd], capture_output=True, timeout=60)
        if not mounts_under(root):
            shutil.rmtree(root, ignore_errors=True)


class Workspace:
    def __init__(self, name):
        sweep_stale()
        self.name = name
        self.root = tempfile.mkdtemp(prefix=f"{WS_PREFIX}{name}.", dir=WS_PARENT)
        with open(os.path.join(self.root, "owner.pid"), "w") as f:
            f.write(f"{os.getpid()}\n")
        self.attachments = []
        self.mounted = []   # mount points this test mounted
        self.procs = []     # child processes to stop at cleanup

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def mount(self, dev, mnt, fstype, options=None):
        os.makedirs(mnt, exist_ok=True)
        cmd = ["mount", "-t", fstype]
        if options:
            cmd += ["-o", options]
        run(cmd + [dev, mnt], timeout=60, what=f"mount {dev}")
        self.mounted.append(mnt)

    def umount(self, mnt):
        run(["umount", mnt], timeout=60, what=f"umount {mnt}")
        if mnt in self.mounted:
            self.mounted.remove(mnt)

    def forget_mount(self, mnt):
        if mnt in self.mounted:
            self.mounted.remove(mnt)

    def cleanup(self):
        """Stops everything the test left; returns a list of problems."""
        problems = []
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    problems.append(f"process {p.pid} did not exit after SIGKILL")
        for mnt in reversed(self.mounted):
            r = subprocess.run(["umount", mnt], capture_output=True)
            if r.returncode != 0 and mnt in mounts_under(mnt):
                subprocess.run(["umount", "-l", mnt], capture_output=True)
        for a in self.attachments:
            try:
                a.teardown()
            except Exception as e:  # keep going: the rest still needs tearing down
                problems.append(f"teardown of {a.dir}: {e}")
        left = [m for m in mounts_under(self.root)]
        for m in left:  # last resort, so that rmtree never walks into a mount
            subprocess.run(["umount", "-l", m], capture_output=True)
        if mounts_under(self.root):
            problems.append(f"mounts left under {self.root}: {mounts_under(self.root)}")
        else:
            shutil.rmtree(self.root, ignore_errors=True)
        leftover_loops = [l for l in _loops() if (loop_backing(l) or "").startswith(self.root)]
        if leftover_loops:
            problems.append(f"loop devices left attached: {leftover_loops}")
        return problems


def _loops():
    try:
        return ["/dev/" + n for n in os.listdir("/sys/block") if n.startswith("loop")]
    except OSError:
        return []


# ---------------------------------------------------------------- e2fsck

def e2fsck(dev, mode, what):
    """e2fsck -f{n,y} on dev. For -n: exit 0 required (clean). For -y: exit 0
    or 1 (errors corrected) allowed; returns the CompletedProcess."""
    if mode == "n":
        p = run(["e2fsck", "-fn", dev], timeout=120, check_rc=False, what=f"e2fsck -fn ({what})")
        if p.returncode != 0:
            body = [l.strip() for l in (p.stdout + p.stderr).splitlines()
                    if l.strip() and not l.startswith(("e2fsck ", "Pass "))]
            fail(f"e2fsck -fn {what}: exit status {p.returncode} (not clean): "
                 + "; ".join(body[:4]))
        return p
    p = run(["e2fsck", "-fy", dev], timeout=120, check_rc=False, what=f"e2fsck -fy ({what})")
    if p.returncode not in (0, 1):
        fail(f"e2fsck -fy {what}: exit status {p.returncode}: {_last_line(p.stdout + p.stderr)}")
    return p


# ---------------------------------------------------------------- main

def _on_signal(signum, frame):
    raise Interrupted(f"signal {signal.Signals(signum).name}")


def require_root_and_tools(tools):
    check(os.geteuid() == 0, "needs root (loop devices, mount)")
    check(os.path.isfile(PLUGIN), f"no plugin at {PLUGIN} (set VLD_PLUGIN or build first)")
    check(os.path.isfile(FUSE_ATTACH), f"no {FUSE_ATTACH}")
    for t in tools:
        check(shutil.which(t) is not None, f"needs {t} in PATH")


def main(name, body, tools=()):
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, _on_signal)
    t0 = time.monotonic()
    rc = 0
    ws = None
    msg = None
    try:
        require_root_and_tools(("mount", "umount", "losetup", "nbdkit", "nbdfuse", "fusermount3")
                               + tuple(tools))
        ws = Workspace(name)
        body(ws)
    except Fail as e:
        rc, msg = 1, str(e)
    except Interrupted as e:
        rc, msg = 1, f"interrupted by {e}"
    except Exception as e:
        traceback.print_exc()
        rc, msg = 1, f"unexpected {type(e).__name__}: {e}"
    finally:
        if ws is not None:
            try:
                problems = ws.cleanup()
            except BaseException as e:
                problems = [f"cleanup raised {type(e).__name__}: {e}"]
            if problems:
                log(f"{name}: cleanup problems: {problems}")
                if rc == 0:
                    rc, msg = 1, f"cleanup: {problems[0]}"
    dt = time.monotonic() - t0
    if rc:
        print(f"FAIL {name}: {msg}", file=sys.stderr, flush=True)
    else:
        log(f"PASS {name} ({dt:.1f} s)")
    sys.exit(rc)
