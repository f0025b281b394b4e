"""What serving the simulated drive costs the host against nbdkit's file plugin (not in the
paper; docs/benchmarks.md): IOPS, fio latency, nbdkit CPU per write+flush.
Input: RUN_DIR/raw/TARGET-REP.{fio,cpu,stats}.json; parameters from bench-hostcost's environment.
"""
import csv, json, os, statistics, sys

from .common import fio_job, fio_mean_us, fio_percentile_us, fmt, load_json, load_jsonl, results_header, write_csv, write_json, write_table
from .plotting import pyplot


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    run_dir = argv[0]
    e = os.environ
    meta = load_json(f"{run_dir}/meta.json")
    meta.update(run_id=e["RUN_ID"], command=e["COMMAND"])


    rows = []
    targets = e["TARGETS"].split()
    for rep in range(1, int(e["REPEATS"]) + 1):
        for target in targets:
            j = fio_job(f"{run_dir}/raw/{target}-{rep}.fio.json")
            cpu = load_json(f"{run_dir}/raw/{target}-{rep}.cpu.json")
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
            if target != "file":
                st = load_json(f"{run_dir}/raw/{target}-{rep}.stats.json")
                r["utilization_pct"] = 100 * st["utilization"]
                r["sim_write_us"] = st["write_latency_us"]["mean"]
            rows.append(r)

    mean = lambda t, k: statistics.mean(r[k] for r in rows if r["target"] == t)
    summary = {f"{t}_{k}": mean(t, k) for t in targets for k in ("iops", "server_cpu_us_per_io")}
    ratio = pairs = None
    if "vld" in targets and "file" in targets:
        ratio = mean("vld", "iops") / mean("file", "iops")
        pairs = [a["iops"] / b["iops"] for a, b in zip([r for r in rows if r["target"] == "vld"],
                                                         [r for r in rows if r["target"] == "file"])]
        summary.update(ratio_vld_over_file_iops=ratio, pair_ratios=pairs)
    json.dump(dict(meta, rows=rows, summary=summary), open(f"{run_dir}/results.json", "w"), indent=1)
    with open(f"{run_dir}/results.csv", "w", newline="") as f:
        fields = list(dict.fromkeys(k for r in rows for k in r))
        wr = csv.DictWriter(f, fieldnames=fields)
        wr.writeheader()
        wr.writerows(rows)

    md = [results_header(meta), "",
          "| server | run | writes | IOPS | fio write mean (µs) | fio flush mean (µs) | write p99 (µs) | "
          "nbdkit CPU per write+flush (µs) | load avg |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        name = {"vld": "vld plugin (mode=vld)", "inplace": "vld plugin (mode=inplace)",
                "file": "nbdkit file plugin"}[r["target"]]
        md.append(f"| {name} | {r['rep']} | {r['writes']} | {r['iops']:.0f} | {r['write_us']:.1f} | "
                  f"{r['flush_us']:.1f} | {r['write_p99_us']:.0f} | {r['server_cpu_us_per_io']:.1f} | "
                  f"{r['loadavg']} |")
    md += ["", "mean IOPS: " + ", ".join(f"{t} {summary[t + '_iops']:.0f}" for t in targets)
           + "; nbdkit CPU per write+flush: "
           + ", ".join(f"{t} {summary[t + '_server_cpu_us_per_io']:.1f} µs" for t in targets)]
    if ratio is not None:
        md.append(f"ratio vld/file = {ratio:.2f} (per pair: {', '.join(f'{x:.2f}' for x in pairs)}); "
                  f"target >= 0.8: {'met' if ratio >= 0.8 else 'MISSED'}")
    open(f"{run_dir}/table.md", "w").write("\n".join(md) + "\n")
    print()
    print("\n".join(md))
    print(f"results: {run_dir}/{{results.json,results.csv,table.md}}")


if __name__ == "__main__":
    main()
