"""Table 2 / Figure 9 of paper 001 (section 5.4): in place / vld at 80% on three drives, vld
right after compaction, with the latency breakdown and the ratio against the number of writes.
Input: RUN_DIR/raw/GEOMETRY-WRITES.jsonl and meta.json.
Output: results.json, results.csv, table.md, table2.png in RUN_DIR.

usage: python3 -m vldbench.table2 RUN_DIR --geometries "G ..." --writes N --sweep-geometry G
           --sweep-writes "N ..." --util PCT --run-id ID --command CMD
"""
import json

from .common import fmt, ints, load_run_meta, results_header, run_parser, words, write_csv, write_json, write_table
from .plotting import pyplot, save

PARTS = [("overhead_us", "SCSI overhead", "tab:gray"), ("transfer_us", "transfer", "tab:blue"),
         ("locate_us", "locate (seek + head switch + rotation)", "tab:orange"),
         ("host_wall_us_per_write", "other: host CPU, WALL time on this machine", "tab:green")]


# ---------------------------------------------------------------- loading
def flat(g, w, j):
    """One vld-bench line as a row."""
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
    return r


def load_point(run_dir, g, w):
    """{mode: row} of raw/G-W.jsonl."""
    return {j["mode"]: flat(g, w, j) for j in map(json.loads, open(f"{run_dir}/raw/{g}-{w}.jsonl"))}


# ---------------------------------------------------------------- computing
def with_ratios(by_mode):
    """(vld row, in place row), both given the in place / vld ratios."""
    v, ip = by_mode["vld"], by_mode["inplace"]
    for r in (v, ip):
        r["ratio_mean"] = ip["mean_us"] / v["mean_us"]
        r["ratio_p99"] = ip["p99_us"] / v["p99_us"]
        r["ratio_with_host_wall"] = ((ip["mean_us"] + ip["host_wall_us_per_write"])
                                     / (v["mean_us"] + v["host_wall_us_per_write"]))
    return v, ip


def problems_of(head, util):
    """A utilization off the target, a breakdown that does not add up."""
    problems = []
    for g, (v, ip) in head.items():
        for r in (v, ip):
            if abs(r["utilization_reported"] - util) > 0.01:
                problems.append(f"{g}: {r['mode']} utilization {r['utilization_reported']:.3f}")
        if abs(v["overhead_us"] + v["locate_us"] + v["transfer_us"] - v["mean_us"]) > 0.01 * v["mean_us"]:
            problems.append(f"{g}: vld breakdown does not add up to the mean")
    return problems


def direction(ratios):
    """Whether the ratios rise, fall or neither from one drive to the next."""
    pairs = list(zip(ratios, ratios[1:]))
    if all(b > a for a, b in pairs):
        return "rises"
    return "falls" if all(b < a for a, b in pairs) else "is not monotonic"


# ---------------------------------------------------------------- table.md
def row_line(cells):
    return "| " + " | ".join(cells) + " |"


def ratio_table(head, writes):
    md = [f"**Random 4 KiB synchronous updates at 80%, {writes} writes** (simulated µs per write; vld "
          "measured right after compacting to completion; ratio = in place / vld)", "",
          "| preset | vld mean | vld p50 | vld p99 | in place mean | in place p50 | in place p99 | "
          "ratio (mean) | ratio (p99) | ratio incl. host wall |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for g, (v, ip) in head.items():
        md.append(row_line([
            g, fmt(v["mean_us"]), fmt(v["p50_us"]), fmt(v["p99_us"]), fmt(ip["mean_us"]),
            fmt(ip["p50_us"]), fmt(ip["p99_us"]), f"**{v['ratio_mean']:.2f}x**", f"{v['ratio_p99']:.2f}x",
            f"{v['ratio_with_host_wall']:.2f}x"]))
    return md


def breakdown_table(head):
    md = ["", "**Breakdown (Figure 9)**, µs per write; locate = seek + head switch + rotation; "
          "host wall = wall time of this machine's CPU in the write path (not simulated)", "",
          "| preset | mode | SCSI overhead | seek | head switch | rotation | locate | transfer | "
          "simulated total | host wall | vld map update |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for g, pair in head.items():
        for r in pair:
            md.append(row_line([
                g, "vld" if r["mode"] == "vld" else "in place", fmt(r["overhead_us"]), fmt(r["seek_us"]),
                fmt(r["head_switch_us"], ".1f"), fmt(r["rotation_us"]), fmt(r["locate_us"]),
                fmt(r["transfer_us"]), fmt(r["mean_us"]), fmt(r["host_wall_us_per_write"], ".1f"),
                fmt(r["map_update_us"])]))
    return md


def compactor_table(head):
    md = ["", "**The compactor before the measurement (vld)**", "",
          "| preset | cylinders | steps | tracks compacted | blocks moved | busy (simulated ms) | "
          "empty tracks after compaction | empty tracks after the writes |",
          "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for g, (v, _) in head.items():
        md.append(row_line([
            g, str(v["cylinders"]), str(v["compaction_steps"]), str(v["compacted_tracks"]),
            str(v["compacted_blocks_moved"]), fmt(v["compaction_busy_ms"]),
            str(v["empty_tracks_after_compaction"]), str(v["empty_tracks_end"])]))
    return md


def sweep_table(sg, sw):
    md = ["", f"**{sg}: the ratio against the number of measured writes** (each a separate run from "
          "the same compacted image)", "",
          "| writes | vld mean | vld p99 | vld locate | in place mean | ratio (mean) | empty tracks after the writes |",
          "|---:|---:|---:|---:|---:|---:|---:|"]
    for w, (v, ip) in sw.items():
        md.append(row_line([
            str(w), fmt(v["mean_us"]), fmt(v["p99_us"]), fmt(v["locate_us"]), fmt(ip["mean_us"]),
            f"{v['ratio_mean']:.2f}x", str(v["empty_tracks_end"])]))
    return md + [""]


def table_lines(meta, head, sg, sw, writes, problems):
    """table.md: the ratios, the breakdown, the compactor, the sweep, the trend."""
    md = [results_header(meta), ""] + ratio_table(head, writes) + breakdown_table(head)
    md += compactor_table(head) + sweep_table(sg, sw)
    ratios = [(g, v["ratio_mean"]) for g, (v, _) in head.items()]
    trend = " -> ".join(f"{g} {x:.2f}x" for g, x in ratios)
    md.append(f"Ratio in place / vld (mean, {writes} writes): {trend}: it "
              f"{direction([x for _, x in ratios])} from drive to drive in this order.")
    if len(sw) > 1:
        md.append(f"{sg}, ratio against writes: " + ", ".join(
            f"{w}: {v['ratio_mean']:.2f}x" for w, (v, _) in sw.items()) + ".")
    return md + [f"problem: {p}" for p in problems]


# ---------------------------------------------------------------- the plot
def plot_breakdown(ax, g, v, ip):
    """One drive's stacked bars, in place beside vld, each with its total."""
    xs, bottom = [0, 1], [0.0, 0.0]
    for key, label, c in PARTS:
        h = [ip[key] / 1e3, v[key] / 1e3]
        ax.bar(xs, h, bottom=bottom, color=c, width=0.6, label=label)
        bottom = [b + x for b, x in zip(bottom, h)]
    ax.set_xticks(xs, ["in place", "vld"])
    ax.set_title(f"{g}: {v['ratio_mean']:.1f}x", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)


def annotate_totals(ax, v, ip):
    for x, r in ((0, ip), (1, v)):
        tot = (r["mean_us"] + r["host_wall_us_per_write"]) / 1e3
        ax.annotate(f"{r['mean_us'] / 1e3:.2f} ms\n+{r['host_wall_us_per_write']:.1f} µs wall",
                    (x, tot), ha="center", va="bottom", fontsize=7)
    ax.set_ylim(0, (ip["mean_us"] + ip["host_wall_us_per_write"]) / 1e3 * 1.15)


def plot_sweep(ax, sg, sw):
    sweep = list(sw)
    ax.plot(sweep, [sw[w][0]["ratio_mean"] for w in sweep], "o-", color="tab:purple")
    ax.set_xscale("log")
    ax.set_xticks(sweep, [str(w) for w in sweep])
    ax.minorticks_off()
    ax.set_xlabel("measured writes after compaction")
    ax.set_ylabel("in place / vld (mean)")
    ax.set_title(f"{sg}: the ratio decays", fontsize=10)
    ax.set_ylim(bottom=0)
    ax.grid(True, which="both", alpha=0.3)


def plot(head, sg, sw, writes, path):
    """Figure 9's bars per drive and the ratio against the number of writes."""
    plt = pyplot("bench-table2")
    if plt is None:
        return
    n = len(head)
    fig, axes = plt.subplots(1, n + 1, figsize=(3.0 * (n + 1), 4.0),
                             gridspec_kw={"width_ratios": [2] * n + [2.4]})
    for ax, (g, (v, ip)) in zip(axes, head.items()):
        plot_breakdown(ax, g, v, ip)
    axes[0].set_ylabel(f"ms per random 4 KiB write ({writes} writes, 80%)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
    for ax, (v, ip) in zip(axes, head.values()):
        annotate_totals(ax, v, ip)
    plot_sweep(axes[-1], sg, sw)
    fig.suptitle("Table 2 / Fig. 9: simulated drive time (overhead, transfer, locate) + host wall time",
                 fontsize=10)
    save(plt, fig, path, rect=(0, 0.07, 1, 1))


def parse_args(argv):
    ap = run_parser("vldbench.table2", "Table 2 / Figure 9: the three drives after compaction")
    ap.add_argument("--geometries", type=words, required=True)
    ap.add_argument("--writes", type=int, required=True, help="measured writes of the main rows")
    ap.add_argument("--sweep-geometry", required=True)
    ap.add_argument("--sweep-writes", type=ints, required=True)
    ap.add_argument("--util", type=float, required=True, help="target utilization, %%")
    return ap.parse_args(argv)


def main(argv=None):
    a = parse_args(argv)
    meta = load_run_meta(a)
    head = {g: with_ratios(load_point(a.run_dir, g, a.writes)) for g in a.geometries}
    sw = {w: with_ratios(load_point(a.run_dir, a.sweep_geometry, w)) for w in a.sweep_writes}
    rows = [r for pair in head.values() for r in pair] + [r for pair in sw.values() for r in pair]
    problems = problems_of(head, a.util / 100)
    write_json(f"{a.run_dir}/results.json", dict(meta, rows=rows, problems=problems))
    write_csv(f"{a.run_dir}/results.csv", rows)
    write_table(f"{a.run_dir}/table.md", table_lines(meta, head, a.sweep_geometry, sw, a.writes, problems))
    plot(head, a.sweep_geometry, sw, a.writes, f"{a.run_dir}/table2.png")
    print(f"results: {a.run_dir}/{{results.json,results.csv,table.md,table2.png}}")


if __name__ == "__main__":
    main()
