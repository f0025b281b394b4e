"""vld-compare's command line: plan the jobs (jobs.py), run them or print
them, then load what they wrote (runs.py) and write the report
(report.py).

Exit status: 0 every job finished and the report is written; 1 a job
failed or has no result (the report says which), or --fio/--fs without
the module that runs them (vldcompare.live); 2 a bad command line (one line on stderr saying what to
do); 130 interrupted.
"""
import argparse
import json
import os
import shutil
import sys

from vldcompare import jobs as jobsmod
from vldcompare import report as reportmod
from vldcompare import runs as runsmod

PROG = "vld-compare"
FORMATS = ("auto", "fio-v2", "fio-v3", "blkparse", "nbdkit-log", "msr")
MAPS = ("none", "fold", "scale")
DEFAULT_MODES = "vld,inplace,lld,lld-nvram0"


class UsageError(Exception):
    """A bad command line: the message is the whole line printed."""


class Refused(Exception):
    """A command line that is right but cannot run here (a missing module):
    the message is the whole line printed; exit status 1."""


class Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's help with "Usage:" capitalised, as help2man (the man page
    is made from --help) and vld's other tools have it; the epilog keeps
    its paragraphs; lines are not broken at hyphens (vld-bench stays one
    word in the man page)."""

    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, "Usage: " if prefix is None else prefix)

    def _split_lines(self, text, width):
        import textwrap
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{message} (see {PROG} --help)")


EPILOG = """\
Examples:
  the shipped PostgreSQL trace on every mode, each request when the one
  before it completed, two jobs at once:

    vld-compare traces/pgbench.log.gz --closed-loop --jobs 2

  an MSR Cambridge trace, its address space scaled onto a 1 GiB disk, a
  flush after every 8 writes, on two drives:

    vld-compare src1_0.csv.gz --size 1G --map scale --sync every=8 --geometry st19101,savvio10k4

  your own fio job, and a command on ext4, live through nbdkit:

    vld-compare --fio randwrite.fio --modes vld,inplace
    vld-compare --fs ext4 --run 'git clone -q /srv/repo r' --util 0

Jobs:
  Each (workload, drive preset, mode) is one job, a `vld-bench replay`
  process writing only DIR/runs/WORKLOAD/PRESET/MODE: summary.json (its
  stdout), stats.json and stats.json.jsonl (--stats), stderr.txt. --jobs N
  runs N at once. --print-jobs prints each job as one shell line instead,
  to run anywhere that sees the same files (a cluster's shared file
  system), then --report-only assembles the report. With xargs:

    vld-compare --print-jobs --out runs-dir TRACE... > jobs.txt

    xargs -d '\\n' -n 1 -P 8 sh -c < jobs.txt

    vld-compare --report-only --out runs-dir

  On Slurm: an array job of `wc -l < jobs.txt` tasks, task I running

    sh -c "$(sed -n ${SLURM_ARRAY_TASK_ID}p jobs.txt)"

Report:
  DIR/report.md and DIR/report.html (the HTML has its pictures inside; the
  Markdown refers to DIR/img), DIR/report.json (the tables' numbers) and
  DIR/table.md (each section's paragraph and table alone).
  Per workload and preset: mean, p50 and p99 latency, IOPS, write
  amplification, idle-time work (compactor, cleaner) and the mean
  relative to inplace; latency CDFs of writes, reads and all requests;
  each mode's write time by part; latency over time with the intervals
  of idle work shaded. See the project's docs/compare.md.

Exit status:
  0 every job finished; 1 a job failed or has no result (the report and
  stderr name it); 2 a bad command line; 130 interrupted.
"""


def parser(version=None):
    """The argument parser; its --help is also the man page's source."""
    p = Parser(
        prog=PROG, formatter_class=Formatter, epilog=EPILOG,
        usage=f"{PROG} [OPTIONS] [TRACE...]",
        description="Replay block traces (or run live workloads) on every vld disk mode "
                    "and write a report comparing them.")
    p._optionals.title = "Options"  # help2man makes "Options:" the OPTIONS section
    p._positionals.title = "Arguments"
    p.add_argument("traces", metavar="TRACE", nargs="*",
                   help="a block trace vld-bench replay reads (fio, blkparse, nbdkit log, MSR)")
    p.add_argument("--version", action="version",
                   version=f"{PROG} {version or 'unknown (run from the source tree)'}")
    p.add_argument("--modes", default=DEFAULT_MODES, metavar="MODE[,MODE...]",
                   help="disk modes to compare: vld, inplace, lld (with vld-bench's default "
                        f"NVRAM), lld-nvram0 (lld without NVRAM) (default {DEFAULT_MODES})")
    p.add_argument("--geometry", default="st19101", metavar="PRESET[,PRESET...]",
                   help="drive presets, as vld-bench's --geometry (default st19101)")
    p.add_argument("--size", default="256M", help="export size, as vld-bench's (default 256M)")
    p.add_argument("--util", type=float, default=80, metavar="PERCENT",
                   help="age the disk first: this percent of its blocks filled and updated, as "
                        "vld-bench replay's --util; 0 a new disk (default 80)")
    p.add_argument("--closed-loop", action="store_true",
                   help="each request when the one before it finished (default: at its "
                        "trace time, gaps left idle for the compactor and cleaner)")
    p.add_argument("--qd", type=int, default=1, metavar="N",
                   help="with --closed-loop: requests in flight (default 1)")
    p.add_argument("--sync", metavar="writes|every=N|none",
                   help="for traces without flushes (msr): which writes are FUA")
    p.add_argument("--map", choices=MAPS,
                   help="requests beyond the export: fold or scale them (default: an error)")
    p.add_argument("--format", choices=FORMATS, help="the traces' format (default auto)")
    p.add_argument("--stats-interval", type=float, metavar="S",
                   help="simulated seconds per line of each run's time series "
                        "(default: vld-bench's)")
    p.add_argument("--fio", action="append", default=[], metavar="JOB",
                   help="also run this fio job file live on nbdkit, on every mode (repeat)")
    p.add_argument("--fs", metavar="FS",
                   help="with --run: also make file system FS (ext4, ...) on nbdkit, on "
                        "every mode, and run CMD in it")
    p.add_argument("--run", metavar="CMD", help="with --fs: the command run in the file system")
    p.add_argument("--name", metavar="NAME",
                   help="with one workload: its name in DIR/runs and the report (default: "
                        "the trace's or job file's name, or FS-CMD)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="jobs run at once (default 1)")
    p.add_argument("--out", default="vld-compare-out", metavar="DIR",
                   help="where the runs and the report go (default ./vld-compare-out)")
    p.add_argument("--vld-bench", metavar="PATH",
                   help="the vld-bench to run (default: the one beside vld-compare, else PATH's)")
    p.add_argument("--print-jobs", action="store_true",
                   help="print each job as one shell line and exit (see Jobs below)")
    p.add_argument("--report-only", action="store_true",
                   help="run nothing: write the report from DIR/runs")
    p.add_argument("--no-report", action="store_true",
                   help="run the jobs, write no report (the lines --print-jobs prints for "
                        "live workloads use it)")
    return p


def split_list(text, what, known=None):
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise UsageError(f"{what} is empty: give at least one")
    for x in items:
        if known is not None and x not in known:
            raise UsageError(f"unknown {what[2:].rstrip('s')} '{x}' in {what}: choose from "
                             f"{', '.join(known)}")
    if len(set(items)) != len(items):
        raise UsageError(f"{what} names one twice: {text}")
    return items


def check(args):
    """Refuses what cannot run, before anything runs."""
    args.mode_list = split_list(args.modes, "--modes", jobsmod.MODES)
    args.preset_list = split_list(args.geometry, "--geometry")
    if args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs}: give at least 1")
    if not 0 <= args.util <= 95:
        raise UsageError(f"--util {args.util}: give a percent from 0 (a new disk) to 95")
    if args.qd < 1:
        raise UsageError(f"--qd {args.qd}: give at least 1")
    if args.qd != 1 and not args.closed_loop:
        raise UsageError("--qd applies to --closed-loop: add --closed-loop")
    if bool(args.fs) != bool(args.run):
        raise UsageError("--fs and --run go together: --fs ext4 --run 'CMD'")
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UsageError(f"--out {args.out} is a file, not a directory: give another --out")
    if args.report_only:
        if args.traces or args.fio or args.fs or args.print_jobs:
            raise UsageError("--report-only reads DIR/runs: give it no TRACE, --fio, --fs "
                             "or --print-jobs")
        return
    if not (args.traces or args.fio or args.fs):
        raise UsageError("nothing to run: give a TRACE, --fio JOB or --fs FS --run CMD "
                         "(or --report-only)")
    if args.name is not None and (len(args.traces) + len(args.fio) + bool(args.fs) != 1
                                  or not args.name or "/" in args.name):
        raise UsageError("--name names one workload: give one TRACE, --fio or --fs, and a "
                         "name without '/'")
    for path in args.traces + args.fio:
        if not os.path.isfile(path):
            raise UsageError(f"{path}: no such file (give a trace or fio job file that exists)")


def workloads(args):
    taken, out = set(), []
    for t in args.traces:
        out.append(jobsmod.Workload(jobsmod.workload_name(t, taken), "replay", t))
    for f in args.fio:
        out.append(jobsmod.Workload(jobsmod.workload_name(f, taken), "fio", f))
    if args.fs:
        first = os.path.basename(args.run.split()[0]) if args.run.split() else "run"
        name = jobsmod.workload_name(f"{args.fs}-{first}", taken)
        out.append(jobsmod.Workload(name, "fs", (args.fs, args.run)))
    if args.name:
        out[0].name = args.name
    return out


def find_vld_bench(args, tools_dir):
    """The vld-bench to run: --vld-bench, the one beside vld-compare, or
    PATH's; UsageError if none."""
    if args.vld_bench:
        if not os.access(args.vld_bench, os.X_OK):
            raise UsageError(f"--vld-bench {args.vld_bench}: not an executable file")
        return os.path.abspath(args.vld_bench)
    if tools_dir and os.access(os.path.join(tools_dir, "vld-bench"), os.X_OK):
        return os.path.join(tools_dir, "vld-bench")
    found = shutil.which("vld-bench")
    if not found:
        raise UsageError("no vld-bench beside vld-compare or on PATH: give --vld-bench PATH")
    return found


def import_live():
    """vldcompare.live, for --fio and --fs; Refused if it is missing."""
    try:
        from vldcompare import live
    except ImportError as e:
        raise Refused(f"--fio and --fs need vldcompare.live, which this installation "
                      f"lacks ({e}): replay traces instead") from e
    return live


def header(args, workload_list):
    loop = f"closed loop, qd {args.qd}" if args.closed_loop else "open loop (trace times)"
    names = ", ".join(f"{w.name} ({w.kind}: {w.source if w.kind != 'fs' else ' '.join(w.source)})"
                      for w in workload_list)
    return (f"Workloads: {names}. Modes: {', '.join(args.mode_list)}. Presets: "
            f"{', '.join(args.preset_list)}. Size {args.size}, util {args.util}, {loop}.")


MANIFEST = "jobs.json"


def write_manifest(args, workload_list):
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, MANIFEST), "w", encoding="utf-8") as f:
        json.dump({"workloads": [w.name for w in workload_list], "presets": args.preset_list,
                   "modes": args.mode_list, "header": header(args, workload_list)}, f, indent=1)


def _subdirs(path):
    return sorted(d for d in os.listdir(path) if os.path.isdir(os.path.join(path, d)))


def layout_of(out_dir):
    """(workloads, presets, modes, header) of a runs directory: its
    jobs.json, else what DIR/runs holds (modes in vld-compare's order)."""
    runs_dir = os.path.join(out_dir, "runs")
    if not os.path.isdir(runs_dir):
        raise UsageError(f"{out_dir} has no runs/: run the jobs first (vld-compare, or the "
                         "lines of --print-jobs), then --report-only")
    try:
        with open(os.path.join(out_dir, MANIFEST), encoding="utf-8") as f:
            m = json.load(f)
        return m["workloads"], m["presets"], m["modes"], m["header"]
    except (OSError, ValueError, KeyError):
        pass
    found = _subdirs(runs_dir)
    presets = sorted({p for w in found for p in _subdirs(os.path.join(runs_dir, w))})
    modes = sorted({m for w in found for p in _subdirs(os.path.join(runs_dir, w))
                    for m in _subdirs(os.path.join(runs_dir, w, p))},
                   key=lambda m: (list(jobsmod.MODES).index(m) if m in jobsmod.MODES
                                  else len(jobsmod.MODES), m))
    return found, presets, modes, f"Runs found in {runs_dir}."


def assemble(out_dir):
    """Loads every run and writes the report; returns the runs that did
    not finish."""
    workload_names, presets, modes, head = layout_of(out_dir)
    sections = [reportmod.Section(w, p, [runsmod.load_run(jobsmod.run_dir(out_dir, w, p, m), m)
                                         for m in modes])
                for w in workload_names for p in presets]
    md, page = reportmod.write(out_dir, sections, head)
    print(f"{PROG}: wrote {md} and {page}", file=sys.stderr)
    return [(s, r) for s in sections for r in s.runs if r.status != runsmod.OK]


def run(args, tools_dir, self_path):
    check(args)
    if args.report_only:
        bad = assemble(args.out)
        for s, r in bad:
            print(f"{PROG}: {s.workload} {s.preset} {r.mode}: {r.status}"
                  + (f": {r.error}" if r.error else ""), file=sys.stderr)
        return 1 if bad else 0
    wl = workloads(args)
    live = import_live() if any(w.kind != "replay" for w in wl) else None
    vld_bench = find_vld_bench(args, tools_dir) if any(w.kind == "replay" for w in wl) else ""
    job_list = jobsmod.plan(wl, args.preset_list, args.mode_list, args.out)
    if not args.no_report:
        write_manifest(args, wl)
    if args.print_jobs:
        for job in job_list:
            print(jobsmod.shell_line(job, args, vld_bench, self_path))
        return 0
    try:
        failures = jobsmod.run_all(job_list, args, vld_bench, live, workers=args.jobs)
    except KeyboardInterrupt:
        if not args.no_report:
            assemble(args.out)  # what finished, the rest named as not finished
        raise
    if not args.no_report:
        assemble(args.out)
    for job in job_list:
        if job.number in failures:
            print(f"{PROG}: job {job.number} ({job.title()}) failed: {failures[job.number]}",
                  file=sys.stderr)
    return 1 if failures else 0


def main(argv=None, version=None, tools_dir=None, self_path=None):
    """Runs vld-compare; returns the exit status. tools_dir: where the
    launcher is (its vld-bench is the default); self_path: the launcher,
    for the lines --print-jobs prints for live workloads."""
    try:
        args = parser(version).parse_args(argv)
        return run(args, tools_dir, self_path or PROG)
    except UsageError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except Refused as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"{PROG}: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 1
    except ImportError as e:
        print(f"{PROG}: needs matplotlib for /usr/bin/python3 (python3-matplotlib): {e}",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
