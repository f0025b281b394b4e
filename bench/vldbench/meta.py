"""meta.json: the conditions of a benchmark run (date, commit, host, versions).

Written by scripts/bench-lib.sh's bench_meta before the runs; every results
header (common.results_header) and the report read it. The bash side passes
what only it knows (commit, versions, the image directory) in the
environment: COMMIT DIRTY DIFF_HASH NBDKIT_VERSION FIO_VERSION FSTYPE
TMP_PARENT BUILD_DIR SNAPSHOT.
"""
import os
import sys
import time

from .common import write_json


def cpu_model():
    """The CPU's model name from /proc/cpuinfo, or 'unknown'."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def mem_gib():
    """Total memory, GiB (one decimal)."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    return 0.0


def loadavg():
    """The 1, 5 and 15 minute load averages, as strings."""
    with open("/proc/loadavg") as f:
        return f.read().split()[:3]


def run_meta(env):
    """The meta.json object, from ENV (see the module's docstring) and /proc."""
    dirty = env.get("DIRTY") == "yes"
    commit = env.get("COMMIT", "unknown")
    return {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": commit, "worktree_modified": dirty,
        "worktree_diff_sha256": env.get("DIFF_HASH") if dirty else None,
        "build_dir": env.get("BUILD_DIR", ""),
        "source": "git archive " + commit if env.get("SNAPSHOT") == "1" else "work tree",
        "kernel": os.uname().release, "cpus": os.cpu_count(),
        "cpu_model": cpu_model(), "mem_gib": mem_gib(),
        "nbdkit": env.get("NBDKIT_VERSION", ""), "fio": env.get("FIO_VERSION", ""),
        "image_dir": env.get("TMP_PARENT", ""), "image_fs": env.get("FSTYPE", ""),
        "loadavg": loadavg(),
    }


def main(argv=None):
    """usage: python3 -m vldbench.meta OUT.json"""
    argv = sys.argv[1:] if argv is None else argv
    write_json(argv[0], run_meta(os.environ))


if __name__ == "__main__":
    main()
