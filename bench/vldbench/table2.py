"""Table 2 / Figure 9 of paper 001 (section 5.4): in place / vld at 80% on three drives, vld
right after compaction, with the latency breakdown and the ratio against the number of writes.
Input: RUN_DIR/raw/GEOMETRY-WRITES.jsonl; parameters from bench-table2's environment.
"""
import csv, json, os, sys

from .common import fio_job, fio_mean_us, fio_percentile_us, fmt, load_json, load_jsonl, results_header, write_csv, write_json, write_table
from .plotting import pyplot


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    run_dir = argv[0]
    e = os.environ
    geos = e["GEOMETRIES"].split()
    writes = int(e["WRITES"])
    sg = e["SWEEP_GEOMETRY"]
    sweep = [int(x) for x in e["SWEEP_WRITES"].split()]
    meta = load_json(f"{run_dir}/meta.json")
    meta.update(run_id=e["RUN_ID"], command=e["COMMAND"])


    def load(g, w):
        out = {}
        for line in open(f"{run_dir}/raw/{g}-{w}.jsonl"):
            j = json.loads(line)
            b = j["breakdown_us"]
            r = {"geometry": g, "writes": w, "mode": j["mode"], "mean_us": j["mean_us"],
                 "p50_us": j["p50_us"], "p99_us": j["p99_us"],
                 **{f"{k}_us": v for k, v in b.items()},
                 "host_wall_us_per_write": j["host_us_per_write"],
                 "utilization_reported": j["utilization"],
                 "map_update_us": j.get("map_update_us"),
                 "empty_tracks_end": j.get("empty_tracks_end"),
                 "cylinders": j["disk"]["cylinders"], "platter_bytes": j["disk"]["platter_bytes"]}
            c = j.get("compactor_after")
            if c:
                r.update(compaction_steps=j["compaction_steps"], compacted_tracks=c["tracks_compacted"],
                         compacted_blocks_moved=c["blocks_moved"], compaction_busy_ms=c["busy_ms"],
                         empty_tracks_after_compaction=c["empty_tracks"],
                         tracks_abandoned=c["tracks_abandoned"])
            out[j["mode"]] = r
        v, ip = out["vld"], out["inplace"]
        for r in (v, ip):
            r["ratio_mean"] = ip["mean_us"] / v["mean_us"]
            r["ratio_p99"] = ip["p99_us"] / v["p99_us"]
            r["ratio_with_host_wall"] = ((ip["mean_us"] + ip["host_wall_us_per_write"])
                                         / (v["mean_us"] + v["host_wall_us_per_write"]))
        return v, ip


    head = {g: load(g, writes) for g in geos}
    sw = {w: load(sg, w) for w in sweep}
    rows = [r for g in geos for r in head[g]] + [r for w in sweep for r in sw[w]]

    problems = []
    util = float(e["UTIL"]) / 100
    for g, (v, ip) in head.items():
        for r in (v, ip):
            if abs(r["utilization_reported"] - util) > 0.01:
                problems.append(f"{g}: {r['mode']} utilization {r['utilization_reported']:.3f}")
        if abs(v["overhead_us"] + v["locate_us"] + v["transfer_us"] - v["mean_us"]) > 0.01 * v["mean_us"]:
            problems.append(f"{g}: vld breakdown does not add up to the mean")


    md = [results_header(meta), "",
          f"**Random 4 KiB synchronous updates at 80%, {writes} writes** (simulated µs per write; vld "
          "measured right after compacting to completion; ratio = in place / vld)", "",
          "| preset | vld mean | vld p50 | vld p99 | in place mean | in place p50 | in place p99 | "
          "ratio (mean) | ratio (p99) | ratio incl. host wall |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for g in geos:
        v, ip = head[g]
        md.append("| " + " | ".join([
            g, fmt(v["mean_us"]), fmt(v["p50_us"]), fmt(v["p99_us"]), fmt(ip["mean_us"]),
            fmt(ip["p50_us"]), fmt(ip["p99_us"]), f"**{v['ratio_mean']:.2f}x**", f"{v['ratio_p99']:.2f}x",
            f"{v['ratio_with_host_wall']:.2f}x"]) + " |")
    md += ["", "**Breakdown (Figure 9)**, µs per write; locate = seek + head switch + rotation; "
           "host wall = wall time of this machine's CPU in the write path (not simulated)", "",
           "| preset | mode | SCSI overhead | seek | head switch | rotation | locate | transfer | "
           "simulated total | host wall | vld map update |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for g in geos:
        for r in head[g]:
            md.append("| " + " | ".join([
                g, "vld" if r["mode"] == "vld" else "in place", fmt(r["overhead_us"]), fmt(r["seek_us"]),
                fmt(r["head_switch_us"], ".1f"), fmt(r["rotation_us"]), fmt(r["locate_us"]),
                fmt(r["transfer_us"]), fmt(r["mean_us"]), fmt(r["host_wall_us_per_write"], ".1f"),
                fmt(r["map_update_us"])]) + " |")
    md += ["", "**The compactor before the measurement (vld)**", "",
           "| preset | cylinders | steps | tracks compacted | blocks moved | busy (simulated ms) | "
           "empty tracks after compaction | empty tracks after the writes |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for g in geos:
        v = head[g][0]
        md.append("| " + " | ".join([
            g, str(v["cylinders"]), str(v["compaction_steps"]), str(v["compacted_tracks"]),
            str(v["compacted_blocks_moved"]), fmt(v["compaction_busy_ms"]),
            str(v["empty_tracks_after_compaction"]), str(v["empty_tracks_end"])]) + " |")
    md += ["", f"**{sg}: the ratio against the number of measured writes** (each a separate run from "
           "the same compacted image)", "",
           "| writes | vld mean | vld p99 | vld locate | in place mean | ratio (mean) | empty tracks after the writes |",
           "|---:|---:|---:|---:|---:|---:|---:|"]
    for w in sweep:
        v, ip = sw[w]
        md.append("| " + " | ".join([
            str(w), fmt(v["mean_us"]), fmt(v["p99_us"]), fmt(v["locate_us"]), fmt(ip["mean_us"]),
            f"{v['ratio_mean']:.2f}x", str(v["empty_tracks_end"])]) + " |")
    md.append("")
    ratios = [(g, head[g][0]["ratio_mean"]) for g in geos]
    trend = " -> ".join(f"{g} {x:.2f}x" for g, x in ratios)
    direction = ("rises" if all(b[1] > a[1] for a, b in zip(ratios, ratios[1:]))
                 else "falls" if all(b[1] < a[1] for a, b in zip(ratios, ratios[1:])) else "is not monotonic")
    md.append(f"Ratio in place / vld (mean, {writes} writes): {trend}: it {direction} from drive to drive "
              "in this order.")
    if len(sweep) > 1:
        md.append(f"{sg}, ratio against writes: " + ", ".join(
            f"{w}: {sw[w][0]['ratio_mean']:.2f}x" for w in sweep) + ".")
    md += [f"problem: {p}" for p in problems]

    with open(f"{run_dir}/results.json", "w") as f:
        json.dump(dict(meta, rows=rows, problems=problems), f, indent=1)
    fields = []
    for r in rows:
        fields += [k for k in r if k not in fields]
    with open(f"{run_dir}/results.csv", "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=fields)
        wr.writeheader()
        wr.writerows(rows)
    open(f"{run_dir}/table.md", "w").write("\n".join(md) + "\n")
    print("\n".join(md))

    plt = pyplot("bench-table2")
    if plt is None:
        return
    fig, axes = plt.subplots(1, len(geos) + 1, figsize=(3.0 * (len(geos) + 1), 4.0),
                             gridspec_kw={"width_ratios": [2] * len(geos) + [2.4]})
    parts = [("overhead_us", "SCSI overhead", "tab:gray"), ("transfer_us", "transfer", "tab:blue"),
             ("locate_us", "locate (seek + head switch + rotation)", "tab:orange"),
             ("host_wall_us_per_write", "other: host CPU, WALL time on this machine", "tab:green")]
    for ax, g in zip(axes, geos):
        v, ip = head[g]
        xs = [0, 1]
        bottom = [0.0, 0.0]
        for key, label, c in parts:
            h = [ip[key] / 1e3, v[key] / 1e3]
            ax.bar(xs, h, bottom=bottom, color=c, width=0.6, label=label)
            bottom = [b + x for b, x in zip(bottom, h)]
        ax.set_xticks(xs, ["in place", "vld"])
        ax.set_title(f"{g}: {v['ratio_mean']:.1f}x", fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].set_ylabel(f"ms per random 4 KiB write ({writes} writes, 80%)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
    for ax, g in zip(axes, geos):
        v, ip = head[g]
        for x, r in ((0, ip), (1, v)):
            tot = (r["mean_us"] + r["host_wall_us_per_write"]) / 1e3
            ax.annotate(f"{r['mean_us'] / 1e3:.2f} ms\n+{r['host_wall_us_per_write']:.1f} µs wall",
                        (x, tot), ha="center", va="bottom", fontsize=7)
        ax.set_ylim(0, (ip["mean_us"] + ip["host_wall_us_per_write"]) / 1e3 * 1.15)
    ax = axes[-1]
    ax.plot(sweep, [sw[w][0]["ratio_mean"] for w in sweep], "o-", color="tab:purple")
    ax.set_xscale("log")
    ax.set_xticks(sweep, [str(w) for w in sweep])
    ax.minorticks_off()
    ax.set_xlabel("measured writes after compaction")
    ax.set_ylabel("in place / vld (mean)")
    ax.set_title(f"{sg}: the ratio decays", fontsize=10)
    ax.set_ylim(bottom=0)
    ax.grid(True, which="both", alpha=0.3)
    fig.suptitle("Table 2 / Fig. 9: simulated drive time (overhead, transfer, locate) + host wall time",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(f"{run_dir}/table2.png", dpi=90)
    print(f"results: {run_dir}/{{results.json,results.csv,table.md,table2.png}}")


if __name__ == "__main__":
    main()
