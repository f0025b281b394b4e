"""What serving the simulated drive costs the host against nbdkit's file plugin (not in the
paper; docs/benchmarks.md): IOPS, fio latency, nbdkit CPU per write+flush.
Input: RUN_DIR/raw/TARGET-REP.{fio,cpu,stats}.json and meta.json.
Output: results.json, results.csv, table.md in RUN_DIR.

usage: python3 -m vldbench.hostcost RUN_DIR --targets "vld file" --repeats N --run-id ID --command CMD
"""
import statistics, sys

from .common import (fio_job, fio_mean_us, fio_percentile_us, load_json, load_run_meta, results_header,
                     run_parser, words, write_csv, write_json, write_table)

NAMES = {"vld": "vld plugin (mode=vld)", "inplace": "vld plugin (mode=inplace)", "file": "nbdkit file plugin"}


def load_run(run_dir, target, rep):
    """(fio job, cpu.json, stats file or None for the file plugin) of one run."""
    pre = f"{run_dir}/raw/{target}-{rep}"
    return (fio_job(f"{pre}.fio.json"), load_json(f"{pre}.cpu.json"),
            load_json(f"{pre}.stats.json") if target != "file" else None)


def run_row(target, rep, j, cpu, st):
    """One run's IOPS, fio latency and nbdkit CPU per write+flush."""
    if j["error"]:
        sys.exit(f"bench-hostcost: fio error {j['error']} ({target} run {rep})")
    w, s = j["write"], j["sync"]
    n = w["total_ios"]
    r = {"target": target, "rep": rep, "writes": n, "flushes": s["total_ios"],
         "iops": w["iops"],
         "write_us": fio_mean_us(w["clat_ns"]), "flush_us": fio_mean_us(s["lat_ns"]),
         "write_p99_us": fio_percentile_us(w["clat_ns"], 99),
         "server_cpu_us_per_io": cpu["cpu_ticks"] / cpu["clk_tck"] * 1e6 / n if n else 0,
         "fio_cpu_pct": j["usr_cpu"] + j["sys_cpu"], "loadavg": cpu["loadavg"]}
    r["per_io_us"] = r["write_us"] + r["flush_us"]
    if st is not None:
        r["utilization_pct"] = 100 * st["utilization"]
        r["sim_write_us"] = st["write_latency_us"]["mean"]
    return r


def summarize(rows, targets):
    """Mean IOPS and CPU per target; vld / file IOPS overall and per pair of runs."""
    mean = lambda t, k: statistics.mean(r[k] for r in rows if r["target"] == t)
    summary = {f"{t}_{k}": mean(t, k) for t in targets for k in ("iops", "server_cpu_us_per_io")}
    if "vld" in targets and "file" in targets:
        pairs = [a["iops"] / b["iops"] for a, b in zip([r for r in rows if r["target"] == "vld"],
                                                         [r for r in rows if r["target"] == "file"])]
        summary.update(ratio_vld_over_file_iops=mean("vld", "iops") / mean("file", "iops"), pair_ratios=pairs)
    return summary


def table_lines(meta, rows, summary, targets):
    md = [results_header(meta), "",
          "| server | run | writes | IOPS | fio write mean (µs) | fio flush mean (µs) | write p99 (µs) | "
          "nbdkit CPU per write+flush (µs) | load avg |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        md.append(f"| {NAMES[r['target']]} | {r['rep']} | {r['writes']} | {r['iops']:.0f} | {r['write_us']:.1f} | "
                  f"{r['flush_us']:.1f} | {r['write_p99_us']:.0f} | {r['server_cpu_us_per_io']:.1f} | "
                  f"{r['loadavg']} |")
    md += ["", "mean IOPS: " + ", ".join(f"{t} {summary[t + '_iops']:.0f}" for t in targets)
           + "; nbdkit CPU per write+flush: "
           + ", ".join(f"{t} {summary[t + '_server_cpu_us_per_io']:.1f} µs" for t in targets)]
    ratio = summary.get("ratio_vld_over_file_iops")
    if ratio is not None:
        md.append(f"ratio vld/file = {ratio:.2f} (per pair: {', '.join(f'{x:.2f}' for x in summary['pair_ratios'])}); "
                  f"target >= 0.8: {'met' if ratio >= 0.8 else 'MISSED'}")
    return md


def main(argv=None):
    ap = run_parser("vldbench.hostcost", "what serving the simulated drive costs the host")
    ap.add_argument("--targets", type=words, required=True, help="'vld inplace file', as run")
    ap.add_argument("--repeats", type=int, required=True)
    a = ap.parse_args(argv)
    meta = load_run_meta(a)
    rows = [run_row(t, rep, *load_run(a.run_dir, t, rep)) for rep in range(1, a.repeats + 1) for t in a.targets]
    summary = summarize(rows, a.targets)
    write_json(f"{a.run_dir}/results.json", dict(meta, rows=rows, summary=summary))
    write_csv(f"{a.run_dir}/results.csv", rows)
    print()
    write_table(f"{a.run_dir}/table.md", table_lines(meta, rows, summary, a.targets))
    print(f"results: {a.run_dir}/{{results.json,results.csv,table.md}}")


if __name__ == "__main__":
    main()
