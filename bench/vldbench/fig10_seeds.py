"""Does idle time ever make mode=lld slower? Figure 10's bursts and pauses on
several seeds, with and without NVRAM (scripts/bench-fig10-seeds): each
pause's mean and p99 latency against the same seed's bursts with no pause
at all (idle 0), of the writes (Figure 10's measure) and of each write with
its flush (sync: with nvram=0 the flush does the durable work). Idle-time
work must start only what the pause covers (core/idle_gap_predictor.h), so
a pause may make writes faster, never slower.

Input: RUN_DIR/meta.json and raw/*.jsonl (`vld-bench fig10` lines, one per
pause; each says its seed, NVRAM size and burst size); raw/NAME.err if a run
failed. Output: results.json, results.csv, table.md in RUN_DIR. Exit status
4 if a point is worse than no idle time (a mean or a p99) on any seed.
"""
import glob
import os
import sys

from .common import fmt, load_jsonl, load_run_meta, results_header, run_parser, write_csv, write_json, write_table

METRICS = ("mean_us", "p99_us", "sync_mean_us", "sync_p99_us")


def load_points(run_dir):
    """{(nvram_bytes, burst, idle_ms, seed): {"mean_us", "p99_us", "preempted_writes"}} and
    the failed runs {name: first line of stderr}."""
    points, failures = {}, {}
    for path in sorted(glob.glob(f"{run_dir}/raw/*.jsonl")):
        for j in load_jsonl(path):
            key = (j["disk"]["nvram_bytes"], j["burst"], j["idle_ms"], j["disk"]["seed"])
            points[key] = {"mean_us": j["mean_us"], "p99_us": j["latency_us"]["p99"],
                           "sync_mean_us": j["sync_mean_us"], "sync_p99_us": j["sync_latency_us"]["p99"],
                           "preempted_writes": j["preempted_writes"]}
    for path in sorted(glob.glob(f"{run_dir}/raw/*.err")):
        with open(path) as f:
            text = f.read().strip()
        if text:
            failures[os.path.basename(path)[:-4]] = text.splitlines()[0]
    return points, failures


def compare(points):
    """One row per (NVRAM, burst, pause > 0): the seeds' mean and p99 beside idle 0's, the
    worst ratio over the seeds, and the seeds on which the pause was worse."""
    rows = []
    groups = sorted({(n, b, i) for n, b, i, _ in points if i > 0}, key=lambda k: (-k[0], k[1], k[2]))
    for n, b, i in groups:
        seeds = sorted(s for nn, bb, ii, s in points if (nn, bb, ii) == (n, b, i) and (n, b, 0.0, s) in points)
        if not seeds:
            continue
        at = [points[(n, b, i, s)] for s in seeds]
        none = [points[(n, b, 0.0, s)] for s in seeds]
        row = {"nvram_bytes": n, "burst": b, "idle_ms": i, "seeds": seeds}
        for k in METRICS:
            row[k] = sum(p[k] for p in at) / len(at)
            row[f"{k}_no_idle"] = sum(p[k] for p in none) / len(none)
            row[f"{k}_worst_ratio"] = max(p[k] / q[k] for p, q in zip(at, none))
            row[f"{k}_worse_seeds"] = [s for s, p, q in zip(seeds, at, none) if p[k] > q[k]]
        row["preempted_writes"] = sum(p["preempted_writes"] for p in at)
        rows.append(row)
    return rows


def worse_seeds(row):
    return sorted({s for k in METRICS for s in row[f"{k}_worse_seeds"]})


def table(rows):
    md = ["| NVRAM | B | idle (ms) | write mean µs (no idle) | ratio | write p99 µs (no idle) | ratio | "
          "sync mean µs (no idle) | ratio | sync p99 µs (no idle) | ratio | preempted writes | worse on seeds |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        cells = ["none" if r["nvram_bytes"] == 0 else f"{r['nvram_bytes'] / 1e6:g} MB", str(r["burst"]),
                 f"{r['idle_ms']:g}"]
        for k in METRICS:
            cells += [f"{fmt(r[k])} ({fmt(r[f'{k}_no_idle'])})", fmt(r[f"{k}_worst_ratio"], ".3f")]
        cells += [str(r["preempted_writes"]), ", ".join(str(s) for s in worse_seeds(r)) or "-"]
        md.append("| " + " | ".join(cells) + " |")
    return md + [""]


def main(argv=None):
    ap = run_parser("vldbench.fig10_seeds", __doc__)
    args = ap.parse_args(argv)
    meta = load_run_meta(args)
    points, failures = load_points(args.run_dir)
    rows = compare(points)
    worse = [r for r in rows if worse_seeds(r)]
    write_json(f"{args.run_dir}/results.json", {"meta": meta, "rows": rows, "failures": failures})
    write_csv(f"{args.run_dir}/results.csv", [{k: v for k, v in r.items() if not isinstance(v, list)}
                                                for r in rows])
    md = [results_header(meta), "",
          "Mean and p99 simulated µs per 4 KiB write (write: the write request, Figure 10's measure; "
          "sync: the write and its flush) with pauses of idle time, averaged over the seeds, with the same "
          "seeds' bursts and no pauses in parentheses; ratio = the largest (with pause) / (no pause) over the "
          "seeds (above 1: the pause made writes slower).", ""]
    md += table(rows)
    md.append(f"**{len(worse)} of {len(rows)} points are worse than no idle time on some seed.**"
              if worse else f"**No point of {len(rows)} is worse than no idle time, on any seed.**")
    for name, why in sorted(failures.items()):
        md.append(f"- run {name} failed: {why}")
    write_table(f"{args.run_dir}/table.md", md)
    return 4 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
