# crashlib: the crash-consistency model shared by crash_cycles_test.py and
# crash_powercut_test.py (not a test itself).
#
# A workload process (this file run with --workload) executes a list of
# file-system operations on the mounted ext4, one after another, and reports
# on stdout, flushed line by line:
#   B i          op i begins
#   F i          op i's file (create: the file; replace: the temporary) was
#                fsynced: fsync() returned 0
#   A i          op i is acknowledged: its last fsync (of the directory) returned 0
#   E i ERRNO    op i failed; the workload stops
#   DONE         all ops done
# The test process keeps these lines (the journal lives in the test, not on
# the disk under test) and, after the crash and recovery, checks the file
# system against them, using what ext4 (data=ordered, journalled) promises:
#   - fsync(file) returned: the file's data and inode are durable; its name
#     needs fsync of the directory (so a created file whose directory fsync
#     did not return may be absent, but if present it is complete);
#   - rename and unlink are durable once the directory fsync returned (both
#     directories for a rename across directories), and atomic: after a
#     crash a rename shows the old or the new name, never both or neither;
#   - a file not yet fsynced may be absent, or present with a prefix of its
#     size whose every file-system block is its own data or zeros (ordered
#     mode: never another file's or stale data).
# The workload runs ops strictly in order and stops at its first error, so at
# most one op (the last begun, not acknowledged) is in flight at the crash.
# Every acknowledged op must be in the recovered file system exactly.
import json
import os
import random
import re
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fslib  # noqa: E402
from fslib import MiB, check, fail, log  # noqa: E402

KiB = 1024
CHUNK = 256 * KiB  # write size: a crash can come between two writes of a file


def fkey(seed, n):
    return f"{seed}:file:{n}"


def file_bytes(key, size):
    return fslib.content(key, size)


# ---------------------------------------------------------------- ops

class Model:
    """The state the file system must have: files (path -> (key, size)) and
    directories (relative paths)."""

    def __init__(self):
        self.files = {}
        self.dirs = set()
        self.counter = 0

    def copy(self):
        m = Model()
        m.files = dict(self.files)
        m.dirs = set(self.dirs)
        m.counter = self.counter
        return m

    def live_bytes(self):
        return sum(s for _, s in self.files.values())

    def apply(self, op):
        k = op["op"]
        if k == "mkdir":
            self.dirs.add(op["path"])
        elif k in ("create", "replace"):
            self.files[op["path"]] = (op["key"], op["size"])
        elif k == "rename":
            self.files[op["dst"]] = self.files.pop(op["src"])
        elif k == "unlink":
            del self.files[op["path"]]
        else:
            raise ValueError(k)


def pick_size(rng):
    r = rng.random()
    if r < 0.08:
        return rng.choice([0, 1, 511, 4096, 4097])
    if r < 0.60:
        return rng.randrange(1, 8 * KiB)
    if r < 0.90:
        return rng.randrange(8 * KiB, 200 * KiB)
    return rng.randrange(200 * KiB, 3 * MiB)


def gen_ops(model, rng, seed, cycle, count, max_live=48 * MiB):
    """count ops from model's state, simulated forward on a copy. Returns
    (ops, the model's new counter)."""
    m = model.copy()
    ops = []
    top = f"cyc{cycle}"
    if top not in m.dirs:
        ops.append({"op": "mkdir", "path": top})
        m.apply(ops[-1])

    def newname(d):
        m.counter += 1
        return os.path.join(d, f"c{cycle}-{m.counter}")

    while len(ops) < count:
        dirs = sorted(m.dirs)
        files = sorted(m.files)
        r = rng.random()
        heavy = m.live_bytes() > max_live
        if r < 0.04 and len(dirs) < 40:
            op = {"op": "mkdir", "path": os.path.join(rng.choice(dirs), f"sub{m.counter + 1}")}
            m.counter += 1
        elif files and (r < 0.24 or (heavy and r < 0.6)):
            op = {"op": "unlink", "path": rng.choice(files)}
        elif files and r < 0.40:
            op = {"op": "rename", "src": rng.choice(files), "dst": newname(rng.choice(dirs))}
        elif files and r < 0.55:
            m.counter += 1
            op = {"op": "replace", "path": rng.choice(files), "key": fkey(seed, m.counter),
                  "size": pick_size(rng)}
        else:
            path = newname(rng.choice(dirs))
            op = {"op": "create", "path": path, "key": fkey(seed, m.counter),
                  "size": pick_size(rng)}
        m.apply(op)
        ops.append(op)
    return ops, m.counter


def describe(op):
    k = op["op"]
    if k == "rename":
        return f"rename {op['src']} -> {op['dst']}"
    if k in ("create", "replace"):
        return f"{k} {op['path']} ({op['size']} B)"
    return f"{k} {op['path']}"


# ---------------------------------------------------------------- workload

def _fsync_dir(d):
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_new(path, key, size):
    data = file_bytes(key, size)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        for off in range(0, len(data), CHUNK):
            os.write(fd, data[off:off + CHUNK])
        os.fsync(fd)
    finally:
        os.close(fd)


def workload_main(mnt, ops_path):
    with open(ops_path) as f:
        ops = json.load(f)
    out = sys.stdout

    def say(s):
        out.write(s + "\n")
        out.flush()

    def P(rel):
        return os.path.join(mnt, rel)

    for i, op in enumerate(ops):
        say(f"B {i}")
        k = op["op"]
        try:
            if k == "mkdir":
                os.mkdir(P(op["path"]))
                _fsync_dir(os.path.dirname(P(op["path"])))
            elif k == "create":
                _write_new(P(op["path"]), op["key"], op["size"])
                say(f"F {i}")
                _fsync_dir(os.path.dirname(P(op["path"])))
            elif k == "replace":
                tmp = P(op["path"] + ".tmp")
                _write_new(tmp, op["key"], op["size"])
                say(f"F {i}")
                os.rename(tmp, P(op["path"]))
                _fsync_dir(os.path.dirname(P(op["path"])))
            elif k == "rename":
                os.rename(P(op["src"]), P(op["dst"]))
                _fsync_dir(os.path.dirname(P(op["dst"])))
                if os.path.dirname(op["src"]) != os.path.dirname(op["dst"]):
                    _fsync_dir(os.path.dirname(P(op["src"])))
            elif k == "unlink":
                os.unlink(P(op["path"]))
                _fsync_dir(os.path.dirname(P(op["path"])))
        except OSError as e:
            say(f"E {i} {e.errno} {e.strerror}")
            return 0
        say(f"A {i}")
    say("DONE")
    return 0


# ---------------------------------------------------------------- journal

class Journal:
    """What the workload reported. acked: op indices acknowledged; begun:
    the last op begun; fsynced: ops with F; error: (i, errno, text) or None."""

    def __init__(self, lines, ops):
        self.ops = ops
        self.acked = []
        self.fsynced = set()
        self.begun = None
        self.error = None
        self.done = False
        for line in lines:
            parts = line.split(" ", 3)
            tag = parts[0]
            if tag == "B":
                self.begun = int(parts[1])
            elif tag == "F":
                self.fsynced.add(int(parts[1]))
            elif tag == "A":
                i = int(parts[1])
                check(i == len(self.acked), f"journal out of order: A {i} after {len(self.acked)} acks")
                self.acked.append(i)
            elif tag == "E":
                self.error = (int(parts[1]), int(parts[2]), parts[3] if len(parts) > 3 else "")
            elif tag == "DONE":
                self.done = True
            else:
                fail(f"workload printed an unexpected line: {line!r}")

    def in_flight(self):
        """The op begun and not acknowledged, or None."""
        if self.begun is not None and self.begun not in self.acked:
            return self.begun
        return None


# ---------------------------------------------------------------- verify

def _read(path):
    return fslib.read_file(path)


def _is_partial_of(data, want, gran):
    """data is what a not-yet-fsynced new file may hold after a crash: no
    longer than want, each gran-sized block equal to want's or zeros."""
    if len(data) > len(want):
        return False
    for off in range(0, len(data), gran):
        a = data[off:off + gran]
        if a != want[off:off + len(a)] and a.count(0) != len(a):
            return False
    return True


def _loose_paths(op):
    """The (files, dirs) an in-flight op may leave in either state."""
    files, dirs = set(), set()
    if not op:
        return files, dirs
    k = op["op"]
    if k == "mkdir":
        dirs.add(op["path"])
    elif k in ("create", "unlink"):
        files.add(op["path"])
    elif k == "replace":
        files |= {op["path"], op["path"] + ".tmp"}
    elif k == "rename":
        files |= {op["src"], op["dst"]}
    return files, dirs


def _check_acknowledged(mnt, model, got_files, got_dirs, op, label):
    """Every acknowledged directory and file exactly, and nothing else but
    what the in-flight op may have left; returns the files checked."""
    lf = os.path.join(mnt, "lost+found")
    if os.path.isdir(lf):
        check(not os.listdir(lf), f"{label}: lost+found is not empty after recovery: "
              f"{sorted(os.listdir(lf))[:5]}")
    loose_files, loose_dirs = _loose_paths(op)
    want_dirs = set(model.dirs)
    missing_d = sorted(want_dirs - got_dirs)
    check(not missing_d, f"{label}: acknowledged directory missing after recovery: {missing_d[:3]}")
    extra_d = sorted(got_dirs - want_dirs - loose_dirs)
    check(not extra_d, f"{label}: unexpected directory after recovery: {extra_d[:3]}")
    checked = 0
    for path, (key, size) in sorted(model.files.items()):
        if path in loose_files:
            continue
        full = os.path.join(mnt, path)
        check(path in got_files, f"{label}: acknowledged file {path} ({size} B) is missing "
              f"after recovery")
        data = _read(full)
        check(len(data) == size, f"{label}: acknowledged file {path} has {len(data)} bytes "
              f"after recovery, wrote {size}")
        check(data == file_bytes(key, size), f"{label}: acknowledged file {path} ({size} B) "
              f"has wrong content after recovery")
        checked += 1
    extra = sorted(got_files - set(model.files) - loose_files)
    check(not extra, f"{label}: unexpected file(s) after recovery: {extra[:3]}")
    return checked


class _InFlight:
    """What the op in flight at the crash left: its before or its after
    state (resolve() applies the after state to `new`), or for a file not yet
    fsynced a prefix of its data and zeros, which is removed."""

    def __init__(self, mnt, model, new, got_files, got_dirs, op, fsynced, label):
        self.mnt, self.model, self.new, self.op, self.fs, self.label = (
            mnt, model, new, op, fsynced, label)
        self.got_files, self.got_dirs = got_files, got_dirs
        self.gran = os.statvfs(mnt).f_bsize

    def present(self, p):
        return p in self.got_files

    def read(self, p):
        return _read(os.path.join(self.mnt, p))

    def resolve(self):
        return getattr(self, "_" + self.op["op"])()

    def _mkdir(self):
        op, label = self.op, self.label
        if op["path"] not in self.got_dirs:
            return "before"
        check(not os.listdir(os.path.join(self.mnt, op["path"])),
              f"{label}: in-flight mkdir {op['path']} is not empty")
        self.new.apply(op)
        return "after"

    def _create(self):
        op, label, p = self.op, self.label, self.op["path"]
        want = file_bytes(op["key"], op["size"])
        if not self.present(p):
            return "before" + (" (fsynced, name not yet durable)" if self.fs else "")
        data = self.read(p)
        if data == want:
            self.new.apply(op)
            return "after"
        check(not self.fs, f"{label}: {p} was fsynced (fsync returned) but holds "
              f"{len(data)} bytes that are not its content ({op['size']} B written)")
        check(_is_partial_of(data, want, self.gran),
              f"{label}: in-flight new file {p} holds {len(data)} bytes that are "
              f"neither a prefix of its data nor zeros (stale or foreign data)")
        os.unlink(os.path.join(self.mnt, p))
        return f"partial ({len(data)} of {op['size']} B), removed"

    def _replace(self):
        op, label = self.op, self.label
        p, tmp = op["path"], op["path"] + ".tmp"
        old_key, old_size = self.model.files[p]
        want = file_bytes(op["key"], op["size"])
        check(self.present(p), f"{label}: {p} vanished during an in-flight atomic replace")
        data = self.read(p)
        if data == want:
            check(not self.present(tmp), f"{label}: replace of {p}: new content in place but "
                  f"{tmp} still exists")
            self.new.apply(op)
            return "after"
        check(data == file_bytes(old_key, old_size),
              f"{label}: in-flight atomic replace left {p} with {len(data)} bytes that "
              f"are neither the old ({old_size} B) nor the new ({op['size']} B) content")
        if not self.present(tmp):
            return "before"
        t = self.read(tmp)
        if self.fs:
            check(t == want, f"{label}: {tmp} was fsynced but holds wrong data "
                  f"({len(t)} of {op['size']} B)")
        else:
            check(_is_partial_of(t, want, self.gran), f"{label}: in-flight {tmp} holds "
                  f"{len(t)} bytes of stale or foreign data")
        os.unlink(os.path.join(self.mnt, tmp))
        return f"before (temporary with {len(t)} B removed)"

    def _rename(self):
        op, label = self.op, self.label
        s, d = op["src"], op["dst"]
        key, size = self.model.files[s]
        check(self.present(s) != self.present(d), f"{label}: in-flight rename {s} -> {d} is not "
              f"atomic after recovery: source {'present' if self.present(s) else 'absent'}, "
              f"target {'present' if self.present(d) else 'absent'}")
        where = s if self.present(s) else d
        check(self.read(where) == file_bytes(key, size),
              f"{label}: {where} (in-flight rename) has wrong content after recovery")
        if not self.present(d):
            return "before"
        self.new.apply(op)
        return "after"

    def _unlink(self):
        op, label, p = self.op, self.label, self.op["path"]
        if not self.present(p):
            self.new.apply(op)
            return "after"
        key, size = self.model.files[p]
        check(self.read(p) == file_bytes(key, size),
              f"{label}: {p} (in-flight unlink) has wrong content after recovery")
        return "before"


def verify(mnt, model, journal, ops, label):
    """Checks the mounted file system against model (every acknowledged op
    applied) and the in-flight op; returns (resolved model, report dict).
    Leftovers of the in-flight op that are neither its before nor its after
    state (a partial file) are removed, so the returned model is exact."""
    got_files, got_dirs = fslib.tree(mnt)
    i = journal.in_flight()
    op = ops[i] if i is not None else None
    checked = _check_acknowledged(mnt, model, got_files, got_dirs, op, label)
    new = model.copy()
    outcome = "none in flight"
    if op:
        outcome = _InFlight(mnt, model, new, got_files, got_dirs, op, i in journal.fsynced,
                            label).resolve()
        checked += 1
        if "removed" in outcome:
            _fsync_dir(os.path.dirname(os.path.join(mnt, op["path"])))
    return new, {"checked": checked, "outcome": outcome,
                 "in_flight": describe(op) if op else None,
                 "bytes": new.live_bytes()}


# ---------------------------------------------------------------- driver

OPS_PER_CYCLE = 600           # more than the kill point: the kill always comes first
ACKS_BEFORE_KILL = (15, 140)  # seeded, per cycle
KILL_DELAYS = (0.0, 0.0, 0.0005, 0.002, 0.005, 0.015)  # after the next op began (seeded)

# What e2fsck -fy may say after a crash of a journalled ext4: the journal
# replay, orphans, and the superblock's summary counters, which ext4 does not
# keep current on disk. Anything else (an inode, block, bitmap, group or
# directory repaired) means the disk lost or mixed data the file system had
# been promised, and fails the test.
BENIGN_FSCK = [re.compile(r) for r in (
    r"^e2fsck \d",
    r"^Pass \d[A-Za-z]?: ",
    r"^/dev/\S+: recovering journal$",
    r"^/dev/\S+: \*+ FILE SYSTEM WAS MODIFIED \*+$",
    r"^/dev/\S+: \d+/\d+ files \(.*\), \d+/\d+ blocks$",
    r"^Free (blocks|inodes) count wrong \(\d+, counted=\d+\)\.$",
    r"^Setting free (blocks|inodes) count to \d+ \(was \d+\)$",
    r"^Fix\? yes$",
    r"^(Clearing|Truncating) orphaned inode \d+ .*$",
)]
# A journal commit block torn by the crash: benign only where the crash may
# tear one of the file system's blocks, i.e. in a mode whose requests are
# not atomic (mode=inplace: docs/crash-contract.md) cut in units smaller
# than the block. The commit of a transaction no flush had completed, it
# holds the transaction's header in its first sector and old bytes in the
# rest: its checksum fails, and e2fsck (like the kernel's jbd2) drops that
# transaction and the ones after it, none of them acknowledged. The
# acknowledged ops are still checked one by one after this.
TORN_COMMIT_FSCK = re.compile(r"^Journal transaction \d+ was corrupt, replay was aborted\.$")


def fsck_after_crash(loop, label, torn_commit=False):
    """e2fsck -fy (must only replay and fix counters; and drop a torn last
    commit if torn_commit), then e2fsck -fn clean."""
    p = fslib.e2fsck(loop, "y", label)
    out = [l.strip() for l in (p.stdout + p.stderr).splitlines() if l.strip()]
    benign = BENIGN_FSCK + ([TORN_COMMIT_FSCK] if torn_commit else [])
    bad = [l for l in out if not any(r.match(l) for r in benign)]
    check(not bad, f"{label}: e2fsck -fy repaired more than a crash of ext4 leaves: "
          f"{'; '.join(bad[:3])}")
    fslib.e2fsck(loop, "n", label)
    notes = [l for l in out if not re.match(r"^(e2fsck \d|Pass |Fix\? yes|/dev/\S+: \d+/)", l)]
    return p.returncode, [re.sub(r"^/dev/\S+: ", "", l) for l in notes]


def wait_recovery(statsfile, label, expect_method):
    """The recovery report (the stats file's `recovery`, the same keys in
    every mode: docs/stats.md) of a server started after a crash: clean must
    be false, and (mode=vld) the method expect_method. mode=inplace cannot
    tell a crash from a clean stop unless it replayed a redo record: clean
    is null then."""
    fslib.wait_until(lambda: os.path.exists(statsfile), 20, f"{label}: the stats file {statsfile}")
    s = fslib.read_stats(statsfile)
    r = fslib.stat_get(s, "recovery")
    want = None if s["mode"] == "inplace" and not r["records_replayed"] else False
    check(r["clean"] is want, f"{label}: after the crash the stats say recovery.clean = "
          f"{r['clean']!r}, expected {want!r} (method {r['method']})")
    if s["mode"] == "vld":
        check(r["method"] == expect_method, f"{label}: after the crash recovery.method = "
              f"{r['method']!r}, expected {expect_method}")
    return r


def describe_recovery(rec):
    """One line of what recovery did, for the log: the keys every mode has,
    then the mode's own."""
    common = (f"recovery {rec['method']}: {rec['sectors_read']} sectors read, simulated "
              f"{rec['simulated_ms']:.1f} ms, wall {rec['wall_ms']:.1f} ms")
    if "records_replayed" in rec:  # mode=inplace
        return f"{common}; {rec['records_replayed']} redo journal records replayed"
    if "checkpoint_generation" in rec:  # mode=lld
        return (f"{common}; from checkpoint {rec['checkpoint_generation']}: "
                f"{rec['writes_rolled_forward']} segment writes rolled forward, "
                f"{rec['writes_discarded']} discarded, {rec['nvram_records_replayed']} NVRAM "
                f"records replayed")
    return (f"{common}; groups accepted {rec['groups_accepted']}, rejected "
            f"{rec['groups_rejected']}, {rec['candidates']} candidates, "
            f"{rec['tracks_scanned']} tracks scanned, {rec['data_blocks_checked']} data "
            f"blocks checked")


class Workload:
    def __init__(self, ws, mnt, ops, name):
        path = ws.path(f"ops-{name}.json")
        with open(path, "w") as f:
            json.dump(ops, f)
        self.lines = []
        self.proc = subprocess.Popen(
            ["/usr/bin/python3", os.path.abspath(__file__), "--workload", mnt, path],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        ws.procs.append(self.proc)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def count(self, tag):
        return sum(1 for l in list(self.lines) if l.startswith(tag + " "))

    def ended(self):
        ls = list(self.lines)
        return bool(ls) and (ls[-1] == "DONE" or ls[-1].startswith("E "))

    def finish(self, timeout, label):
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail(f"{label}: the workload did not stop within {timeout} s after the crash")
        self.reader.join(timeout=10)
        err = self.proc.stderr.read().strip()
        check(self.proc.returncode == 0, f"{label}: workload exited {self.proc.returncode}: "
              f"{fslib._last_line(err)}")
        return list(self.lines)


def run_and_crash(ws, att, mnt, ops, rng, cycle, trigger=None, tag="crash"):
    """Runs the workload and crashes nbdkit under it. Without trigger: after
    a seeded number of acknowledged ops, a seeded delay into the next op,
    `fuse-attach kill`. With trigger(cycle, rng, att, workload): the trigger
    makes nbdkit die and returns a description; then `fuse-attach kill`
    tears down what is left."""
    label = f"cycle {cycle}" if tag == "crash" else f"{tag} cycle {cycle}"
    n_acks = rng.randint(*ACKS_BEFORE_KILL)
    delay = rng.choice(KILL_DELAYS)
    w = Workload(ws, mnt, ops, f"{tag}-{cycle}")
    fslib.wait_until(lambda: w.count("A") >= n_acks or w.ended() or w.proc.poll() is not None,
                     60, f"{label}: {n_acks} acknowledged ops")
    check(not w.ended() and w.proc.poll() is None,
          f"{label}: the workload stopped before the crash: {(w.lines or ['nothing'])[-1]}")
    how = None
    if trigger is None:
        begun = w.count("B")
        fslib.wait_until(lambda: w.count("B") > begun or w.ended(), 30,
                         f"{label}: the next op to begin")
        if delay:
            time.sleep(delay)  # the crash moment inside the op (seeded), not a wait for a condition
        lines_at_kill = len(w.lines)
    else:
        lines_at_kill = len(w.lines)  # the crash may come any time after arming
        how = trigger(cycle, rng, att, w)
    att.kill()
    ws.forget_mount(mnt)
    lines = w.finish(30, label)
    att.wait_detached()
    j = Journal(lines, ops)
    if j.error:
        # An error before the kill is the workload's or the test's fault.
        first_e = next(k for k, l in enumerate(lines) if l.startswith("E "))
        check(first_e >= lines_at_kill, f"{label}: workload error before the crash: {lines[first_e]}")
    acks_after = sum(1 for k, l in enumerate(lines) if l.startswith("A ") and k >= lines_at_kill)
    return j, {"kill_after": n_acks, "delay_ms": delay * 1000, "acks_after_kill": acks_after,
               "error": j.error, "how": how}


def check_final_run(ws, name, tag, cycles, totals):
    """The last server (stopped cleanly) served without an error or a bad
    checksum; logs the totals of all cycles."""
    s = fslib.read_stats(ws.path(f"stats-{tag}-{cycles}.json"))
    check(fslib.stat_get(s, "requests.errors") == 0,
          f"{tag}: final run: requests.errors = {s['requests']['errors']}")
    # null: mode=inplace keeps no checksums, so it checked none.
    failures = fslib.stat_get(s, "checksum_failures")
    check(failures == 0 or (failures is None and s["mode"] == "inplace"),
          f"{tag}: final run: checksum_failures = {failures!r}")
    if s.get("mode") == "inplace":
        rec_totals = f"recovery replayed {totals['records_replayed']} redo journal records in all"
    elif "lld" in s:
        rec_totals = (f"recovery discarded {totals['writes_discarded']} segment writes and "
                      f"replayed {totals['nvram_records_replayed']} NVRAM records in all")
    else:
        rec_totals = (f"recovery accepted {totals['groups_accepted']} and rejected "
                      f"{totals['groups_rejected']} groups in all")
    log(f"{name}: {cycles} crashes, {totals['acked']} acknowledged ops all found; "
        f"in-flight ops found done {totals['in_flight_after']}, not done "
        f"{totals['in_flight_before']}; {rec_totals}; final {totals['files']} files")


def run_cycles(ws, name, seed, cycles, expect_method="record+window", up_env=None,
               after_crash=None, trigger=None, image=None, mkfs_args=(), mode=("mode=vld",),
               torn_commit=None):
    """The crash cycles on one 256 MiB image (see crash_cycles_test.py).
    mode: the plugin parameters that create it (mode=vld; mode=lld, with
    nvram=0 or not; mode=inplace).
    up_env: extra environment for fuse-attach up. after_crash(cycle, rng):
    called after the kill and the teardown, before the next attach (it may
    change the image); returns a note to print. trigger: see run_and_crash.
    image: the image path (default WS/crash.img); its name (without .img)
    also names the state directory, mount point and stats files.
    mkfs_args: extra mkfs.ext4 options. torn_commit(cycle, fs_block_bytes):
    whether the crash at the end of that cycle may have torn a journal
    commit block of a file system of blocks of that size (see
    TORN_COMMIT_FSCK; default never). Returns a dict of totals."""
    rng = random.Random(seed)
    image = image or ws.path("crash.img")
    tag = os.path.basename(image).removesuffix(".img")
    mnt = ws.path(f"mnt-{tag}")
    att = fslib.Attachment(ws, f"st-{tag}", image)
    model = Model()
    journal, ops = None, None
    totals = {"acked": 0, "in_flight_after": 0, "in_flight_before": 0, "groups_rejected": 0,
              "groups_accepted": 0, "writes_discarded": 0, "nvram_records_replayed": 0,
              "records_replayed": 0}
    log(f"{name}: seed {seed}, {cycles} cycles, {' '.join(mode)}, mkfs.ext4 "
        f"{' '.join(mkfs_args) or '(defaults)'}")
    for cycle in range(cycles + 1):
        label = f"cycle {cycle}" if tag == "crash" else f"{tag} cycle {cycle}"
        statsfile = ws.path(f"stats-{tag}-{cycle}.json")
        if cycle == 0:
            loop = att.up("size=256M", *mode, "latency=none", statsfile=statsfile, env=up_env)
            fslib.run(["mkfs.ext4", "-q", *mkfs_args, loop], what="mkfs.ext4")
            ws.mount(loop, mnt, "ext4")
            fs_block_bytes = os.statvfs(mnt).f_bsize
            log(f"  ext4 block size {fs_block_bytes}")
        else:
            loop = att.up("latency=none", statsfile=statsfile, env=up_env)
            rec = wait_recovery(statsfile, label, expect_method)
            for k in ("groups_rejected", "groups_accepted", "writes_discarded",
                      "nvram_records_replayed", "records_replayed"):
                totals[k] += rec.get(k, 0)
            fsck_rc, fsck_notes = fsck_after_crash(
                loop, label,
                torn_commit=bool(torn_commit and torn_commit(cycle - 1, fs_block_bytes)))
            ws.mount(loop, mnt, "ext4")
            model, rep = verify(mnt, model, journal, ops, label)
            o = rep["outcome"]
            if rep["in_flight"]:
                totals["in_flight_after" if o.startswith("after") else "in_flight_before"] += 1
            log(f"  recovered: {len(model.files)} files ({rep['bytes'] / MiB:.1f} MiB) and "
                f"{len(model.dirs)} dirs verified; in flight: {rep['in_flight'] or '-'} -> {o}; "
                f"{describe_recovery(rec)}; e2fsck -fy exit {fsck_rc}"
                + (f" ({'; '.join(fsck_notes[:3])})" if fsck_notes else ""))
        if cycle == cycles:
            break
        ops, model.counter = gen_ops(model, rng, seed, cycle, OPS_PER_CYCLE)
        journal, info = run_and_crash(ws, att, mnt, ops, rng, cycle, trigger, tag)
        # Acknowledged ops are promises now: the model has them.
        for i in journal.acked:
            model.apply(ops[i])
        totals["acked"] += len(journal.acked)
        inf = journal.in_flight()
        note = after_crash(cycle, rng) if after_crash else ""
        when = info["how"] or f"{info['delay_ms']:.1f} ms into the next op"
        log(f"cycle {cycle}: {len(journal.acked)} ops acknowledged "
            f"({info['acks_after_kill']} of them after the kill was issued; kill after "
            f"{info['kill_after']} acks, {when}); in flight: "
            f"{describe(ops[inf]) if inf is not None else '-'}"
            f"{' (file fsynced)' if inf in journal.fsynced else ''}; workload stopped with "
            f"{'errno ' + str(info['error'][1]) if info['error'] else 'DONE'}"
            + (f"; {note}" if note else ""))
    ws.umount(mnt)
    att.down()
    totals["files"] = len(model.files)
    check_final_run(ws, name, tag, cycles, totals)
    return totals


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--workload":
        sys.exit(workload_main(sys.argv[2], sys.argv[3]))
    print("usage: crashlib.py --workload MOUNT OPS.json", file=sys.stderr)
    sys.exit(2)
