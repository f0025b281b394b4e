"""What serving the simulated drive costs the host against nbdkit's file plugin (not in the
paper; docs/benchmarks.md): IOPS, fio latency, nbdkit CPU per write, at each queue depth.
Input: RUN_DIR/raw/TARGET-qdQD-REP.{fio,cpu,stats}.json and meta.json.
Output: results.json, results.csv, table.md in RUN_DIR.

The runs are interleaved in pairs (vld then file, at one queue depth, in one rep), so the
verdict is taken over the pairs' ratios: min, median and max, the median against TARGET.

usage: python3 -m vldbench.hostcost RUN_DIR --targets "vld file" --qds "1 16" --repeats N
                                   --run-id ID --command CMD
"""
import statistics, sys

from .common import (fio_job, fio_mean_us, fio_percentile_us, ints, load_json, load_run_meta,
                     results_header, run_parser, words, write_csv, write_json, write_table)

NAMES = {"vld": "vld plugin (mode=vld)", "inplace": "vld plugin (mode=inplace)", "file": "nbdkit file plugin"}
TARGET = 0.9  # docs/scale.md, point 5: mode=vld serves at least 0.9x the file plugin's IOPS


def load_run(run_dir, target, qd, rep):
    """(fio job, cpu.json, stats file or None for the file plugin) of one run."""
    pre = f"{run_dir}/raw/{target}-qd{qd}-{rep}"
    return (fio_job(f"{pre}.fio.json"), load_json(f"{pre}.cpu.json"),
            load_json(f"{pre}.stats.json") if target != "file" else None)


def run_row(target, qd, rep, j, cpu, st):
    """One run's IOPS, fio latency and nbdkit CPU per write."""
    if j["error"]:
        sys.exit(f"bench-hostcost: fio error {j['error']} ({target} QD {qd} run {rep})")
    w, s = j["write"], j["sync"]
    n = w["total_ios"]
    r = {"target": target, "qd": qd, "rep": rep, "writes": n, "flushes": s["total_ios"],
         "iops": w["iops"],
         "write_us": fio_mean_us(w["clat_ns"]), "flush_us": fio_mean_us(s["lat_ns"]),
         "write_p99_us": fio_percentile_us(w["clat_ns"], 99),
         "server_cpu_us_per_io": cpu["cpu_ticks"] / cpu["clk_tck"] * 1e6 / n if n else 0,
         "fio_cpu_pct": j["usr_cpu"] + j["sys_cpu"], "loadavg": cpu["loadavg"]}
    if st is not None:
        r["utilization_pct"] = 100 * st["utilization"]
        r["sim_write_us"] = st["write_latency_us"]["mean"]
    return r


def summarize_qd(rows, targets, qd):
    """Mean IOPS and CPU per target at one queue depth; vld / file IOPS per pair of runs,
    and their min, median and max."""
    at = [r for r in rows if r["qd"] == qd]
    mean = lambda t, k: statistics.mean(r[k] for r in at if r["target"] == t)
    s = {f"{t}_{k}": mean(t, k) for t in targets for k in ("iops", "server_cpu_us_per_io")}
    if "vld" in targets and "file" in targets:
        pairs = [a["iops"] / b["iops"] for a, b in zip([r for r in at if r["target"] == "vld"],
                                                         [r for r in at if r["target"] == "file"])]
        s.update(pair_ratios=pairs, ratio_min=min(pairs), ratio_median=statistics.median(pairs),
                 ratio_max=max(pairs))
    return s


def summarize(rows, targets, qds):
    """{"qd1": summary at QD 1, ...}: see summarize_qd."""
    return {f"qd{qd}": summarize_qd(rows, targets, qd) for qd in qds}


def verdict_line(qd, s):
    """The pairs' ratios at one queue depth and whether the median meets TARGET."""
    met = "met" if s["ratio_median"] >= TARGET else "MISSED"
    return (f"QD {qd}: ratio vld/file min {s['ratio_min']:.2f}, median {s['ratio_median']:.2f}, "
            f"max {s['ratio_max']:.2f} (pairs: {', '.join(f'{x:.2f}' for x in s['pair_ratios'])}); "
            f"target median >= {TARGET}: {met}")


def table_lines(meta, rows, summary, targets, qds):
    md = [results_header(meta), "",
          "| server | QD | run | writes | IOPS | fio write mean (µs) | fio flush mean (µs) | write p99 (µs) | "
          "nbdkit CPU per write (µs) | load avg |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        md.append(f"| {NAMES[r['target']]} | {r['qd']} | {r['rep']} | {r['writes']} | {r['iops']:.0f} | "
                  f"{r['write_us']:.1f} | {r['flush_us']:.1f} | {r['write_p99_us']:.0f} | "
                  f"{r['server_cpu_us_per_io']:.1f} | {r['loadavg']} |")
    md.append("")
    for qd in qds:
        s = summary[f"qd{qd}"]
        md.append(f"QD {qd}: mean IOPS " + ", ".join(f"{t} {s[t + '_iops']:.0f}" for t in targets)
                  + "; nbdkit CPU per write: "
                  + ", ".join(f"{t} {s[t + '_server_cpu_us_per_io']:.1f} µs" for t in targets))
    for qd in qds:
        if "ratio_median" in summary[f"qd{qd}"]:
            md.append(verdict_line(qd, summary[f"qd{qd}"]))
    return md


def main(argv=None):
    ap = run_parser("vldbench.hostcost", "what serving the simulated drive costs the host")
    ap.add_argument("--targets", type=words, required=True, help="'vld inplace file', as run")
    ap.add_argument("--qds", type=ints, default=[1], help="'1 16': the queue depths run")
    ap.add_argument("--repeats", type=int, required=True)
    a = ap.parse_args(argv)
    meta = load_run_meta(a)
    rows = [run_row(t, qd, rep, *load_run(a.run_dir, t, qd, rep))
            for rep in range(1, a.repeats + 1) for qd in a.qds for t in a.targets]
    summary = summarize(rows, a.targets, a.qds)
    write_json(f"{a.run_dir}/results.json", dict(meta, rows=rows, summary=summary))
    write_csv(f"{a.run_dir}/results.csv", rows)
    print()
    write_table(f"{a.run_dir}/table.md", table_lines(meta, rows, summary, a.targets, a.qds))
    print(f"results: {a.run_dir}/{{results.json,results.csv,table.md}}")


if __name__ == "__main__":
    main()
