"""vld-compare's jobs: one per (workload, drive preset, disk mode), each
independent of the others, each writing only its own directory
DIR/runs/WORKLOAD/PRESET/MODE (runs.py says what is in it).

A trace's job is one `vld-bench replay` process; its command line (as a
shell line: mkdir, the replay, its stdout to summary.json) is what
--print-jobs prints, so the same jobs can run anywhere (xargs -P, a Slurm
array) and `vld-compare --report-only` assemble the report. The live jobs
(--fio, --fs: a real client on nbdkit) run in this process through
vldcompare.live, imported only when asked for.

Thread contract: run_all() runs jobs on a thread pool; each job touches only
its own directory and its own Popen; progress lines are printed under one
lock, so they do not interleave.
"""
import concurrent.futures
import os
import shlex
import subprocess
import sys
import threading
import time

# Disk modes by the name vld-compare gives them: vld-bench replay's options.
MODES = {
    "vld": ["--mode", "vld"],
    "inplace": ["--mode", "inplace"],
    "lld": ["--mode", "lld"],                   # with vld-bench's default NVRAM
    "lld-nvram0": ["--mode", "lld", "--nvram", "0"],
}
# Suffixes a trace's file name loses to name its workload.
TRACE_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".log", ".csv", ".txt", ".trace", ".msr", ".blk",
                  ".blktrace", ".out", ".json", ".fio")


class Workload:
    """What is run on every mode: kind "replay" (source: the trace's path),
    "fio" (the fio job file) or "fs" (source: (file system, command))."""

    def __init__(self, name, kind, source):
        self.name = name
        self.kind = kind
        self.source = source


class Job:
    """One (workload, preset, mode); `number` counts from 1 in plan order."""

    def __init__(self, number, workload, preset, mode, out_dir):
        self.number = number
        self.workload = workload
        self.preset = preset
        self.mode = mode
        self.dir = run_dir(out_dir, workload.name, preset, mode)

    def title(self):
        return f"{self.workload.name} {self.preset} {self.mode}"


def run_dir(out_dir, workload, preset, mode):
    return os.path.join(out_dir, "runs", workload, preset, mode)


def workload_name(path, taken):
    """The trace's file name without its directory and suffixes, made
    unique among `taken` (a set, updated) by -2, -3, ..."""
    name = os.path.basename(path.rstrip("/")) or "trace"
    stripped = True
    while stripped:
        stripped = False
        for suffix in TRACE_SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix):
                name, stripped = name[:-len(suffix)], True
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    unique, k = name, 2
    while unique in taken:
        unique, k = f"{name}-{k}", k + 1
    taken.add(unique)
    return unique


def plan(workloads, presets, modes, out_dir):
    """Every job, workload-major, then preset, then mode (the report's order)."""
    jobs = []
    for w in workloads:
        for p in presets:
            for m in modes:
                jobs.append(Job(len(jobs) + 1, w, p, m, out_dir))
    return jobs


def replay_argv(job, opts, vld_bench):
    """The `vld-bench replay` command of a trace's job; opts: the parsed
    command line (size, util, closed_loop, qd, sync, map, format,
    stats_interval)."""
    argv = [vld_bench, "replay", os.path.abspath(job.workload.source)]
    argv += MODES[job.mode]
    argv += ["--geometry", job.preset, "--size", opts.size, "--util", f"{opts.util:g}"]
    if opts.closed_loop:
        argv += ["--closed-loop", "--qd", str(opts.qd)]
    for flag, value in (("--sync", opts.sync), ("--map", opts.map), ("--format", opts.format)):
        if value:
            argv += [flag, value]
    argv += ["--stats", os.path.join(os.path.abspath(job.dir), "stats.json")]
    if opts.stats_interval is not None:
        argv += ["--stats-interval", str(opts.stats_interval)]
    return argv


def live_argv(job, opts, vld_compare):
    """A vld-compare command that runs only this live job, writing no report."""
    w = job.workload
    argv = [vld_compare]
    if w.kind == "fio":
        argv += ["--fio", os.path.abspath(w.source)]
    else:
        argv += ["--fs", w.source[0], "--run", w.source[1]]
    argv += ["--name", w.name, "--modes", job.mode, "--geometry", job.preset,
             "--size", opts.size, "--util", f"{opts.util:g}", "--out", os.path.abspath(opts.out),
             "--no-report"]
    return argv


def shell_line(job, opts, vld_bench, vld_compare):
    """The job as one line for sh -c: what --print-jobs prints. A replay's
    summary is written to a .part file and renamed, so a summary.json is
    always whole; stderr goes to stderr.txt, where runs.py finds why a run
    failed."""
    d = shlex.quote(os.path.abspath(job.dir))
    if job.workload.kind != "replay":
        return " ".join(shlex.quote(a) for a in live_argv(job, opts, vld_compare))
    replay = " ".join(shlex.quote(a) for a in replay_argv(job, opts, vld_bench))
    return (f"mkdir -p {d} && {replay} >{d}/summary.json.part 2>{d}/stderr.txt"
            f" && mv {d}/summary.json.part {d}/summary.json")


def clear(job):
    """Removes what an earlier run of the job left, so a stale summary is
    never taken for this run's."""
    os.makedirs(job.dir, exist_ok=True)
    for name in ("summary.json", "summary.json.part", "stderr.txt", "stats.json",
                 "stats.json.jsonl"):
        try:
            os.remove(os.path.join(job.dir, name))
        except FileNotFoundError:
            pass


def run_replay(job, opts, vld_bench):
    """Runs one replay; returns "" or the one line that says why it failed."""
    part = os.path.join(job.dir, "summary.json.part")
    with open(part, "wb") as out, open(os.path.join(job.dir, "stderr.txt"), "wb") as err:
        try:
            status = subprocess.run(replay_argv(job, opts, vld_bench), stdout=out,
                                    stderr=err, stdin=subprocess.DEVNULL).returncode
        except OSError as e:
            line = f"cannot run {vld_bench}: {e.strerror or e} (give --vld-bench PATH)"
            err.write((line + "\n").encode())
            return line
    if status != 0:
        from vldcompare.runs import last_line
        with open(os.path.join(job.dir, "stderr.txt"), encoding="utf-8",
                  errors="replace") as f:
            line = last_line(f.read())
        if line:
            return line
        return (f"vld-bench replay was killed by signal {-status}" if status < 0
                else f"vld-bench replay exited with status {status} and said nothing")
    os.replace(part, os.path.join(job.dir, "summary.json"))
    return ""


def run_live(job, opts, live):
    """Runs one live job through vldcompare.live; its summary is written to
    summary.json here if live did not write it."""
    import json
    w = job.workload
    args = (job.mode, job.preset, opts.size, opts.util, job.dir)
    try:
        summary = (live.run_fio(w.source, *args) if w.kind == "fio"
                   else live.run_fs(w.source[0], w.source[1], *args))
    except Exception as e:  # noqa: BLE001 - any failure of a live run is that job's
        line = f"{type(e).__name__}: {e}".splitlines()[0]
        with open(os.path.join(job.dir, "stderr.txt"), "a", encoding="utf-8") as f:
            f.write(line + "\n")
        return line
    path = os.path.join(job.dir, "summary.json")
    if not os.path.exists(path):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(summary, f)
    return ""


class Progress:
    """The per-job lines on stderr: "[3/8] pgbench st19101 lld: started",
    then "...: done in 12.3 s" or "...: FAILED in 0.1 s: WHY"."""

    def __init__(self, total, stream=None):
        self.total = total
        self.stream = stream or sys.stderr
        self.lock = threading.Lock()

    def say(self, job, what):
        with self.lock:
            print(f"[{job.number}/{self.total}] {job.title()}: {what}", file=self.stream,
                  flush=True)


def run_all(jobs, opts, vld_bench, live=None, workers=1, progress=None):
    """Runs the jobs, `workers` at once; returns {job.number: error line}
    for the jobs that failed."""
    progress = progress or Progress(len(jobs))
    failures = {}

    def one(job):
        clear(job)
        progress.say(job, "started")
        t0 = time.monotonic()
        if job.workload.kind == "replay":
            error = run_replay(job, opts, vld_bench)
        else:
            error = run_live(job, opts, live)
        dt = time.monotonic() - t0
        progress.say(job, f"FAILED in {dt:.1f} s: {error}" if error else f"done in {dt:.1f} s")
        return job, error

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers)
    try:
        for job, error in pool.map(one, jobs):
            if error:
                failures[job.number] = error
    except KeyboardInterrupt:
        # Ctrl-C reached the running replays too (one process group): they
        # write what they measured and exit; the jobs not started never are.
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return failures
