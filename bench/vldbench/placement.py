"""Figure 8 in steady state, two placements of mode=vld side by side (paper 001, section 5):
"new", the plugin's (seeks either way within the window), and "old", seeking ahead only.
Per drive and utilization, the mean simulated latency of a random synchronous 4 KiB
update on mode=vld with the new placement and the old, and on mode=inplace; the ratios
in place / vld; the floor that no placement gets below without idle time (vld-bench
best-case: free space as kind as it can be, where no empty track is left) and the ratio it
allows; and the breakdown of each vld write.
Input: RUN_DIR/raw/*.jsonl (vld-bench fig11 --idle-ms 0, table2 and best-case lines, each
tagged with "placement": new, old, inplace or floor by scripts/bench-placement) and
meta.json.
Output: results.json, results.csv, table.md, placement.png in RUN_DIR.

usage: python3 -m vldbench.placement RUN_DIR --run-id ID --command CMD
"""
import glob
from collections import defaultdict

from .common import fmt, load_jsonl, load_run_meta, results_header, run_parser, write_csv, write_json, write_table
from .plotting import pyplot, save

PARTS = ["overhead", "transfer", "seek", "head_switch", "rotation"]


def points_of(lines):
    """{(geometry, util %, placement): [the lines of each seed]}: vld points of fig11, the
    inplace line of table2 (whose vld line, measured after compaction, is not this figure's),
    and best-case's floor."""
    points = defaultdict(list)
    for j in lines:
        p = j["placement"]
        if p == "inplace" and j.get("mode") != "inplace":
            continue
        if p == "floor":  # run at the utilization the vld point reached, tagged with its U
            points[(j["geometry"], j["nominal_util_pct"], p)].append(j)
        else:
            points[(j["disk"]["geometry"], round(100 * j["disk"]["util"]), p)].append(j)
    return points


def mean(values):
    return sum(values) / len(values) if values else None


def rows_of(points):
    """One row per (geometry, util): the seed means of each placement, the ratios, and the
    breakdown of the new placement and the old."""
    keys = sorted({(g, u) for g, u, _ in points})
    rows = []
    for g, u in keys:
        r = {"geometry": g, "util_pct": u}
        for p in ("new", "old", "inplace", "floor"):
            js = points.get((g, u, p), [])
            r[f"{p}_us"] = mean([j["mean_us"] for j in js])
            r[f"{p}_seeds"] = len(js)
            if p in ("new", "old"):
                for part in PARTS:
                    r[f"{p}_{part}_us"] = mean([j["breakdown_us"][part] for j in js])
        ok = r["inplace_us"] is not None
        r["ratio_new"] = r["inplace_us"] / r["new_us"] if ok and r["new_us"] else None
        r["ratio_old"] = r["inplace_us"] / r["old_us"] if ok and r["old_us"] else None
        r["ratio_floor"] = r["inplace_us"] / r["floor_us"] if ok and r["floor_us"] else None
        r["new_vs_old"] = r["new_us"] / r["old_us"] if r["new_us"] and r["old_us"] else None
        rows.append(r)
    return rows


def table_lines(meta, rows):
    lines = [results_header(meta), "",
             "Simulated µs per random synchronous 4 KiB update, no idle time, mean over seeds; "
             "ratio = in place / vld; floor: vld-bench best-case (every hole fits a write and its "
             "map sector, drawn afresh for each write), and the most any ratio can be without "
             "idle time; the new placement's write broken down.", "",
             "| drive | U | in place | vld old | vld new | floor | new / old | ratio old | ratio new "
             "| ratio at floor | overhead | transfer | seek | head switch | rotation |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        ratio = lambda v: "-" if v is None else f"{v:.2f}x"  # noqa: E731
        rel = "-" if r["new_vs_old"] is None else f"{r['new_vs_old']:.3f}"
        lines.append(f"| {r['geometry']} | {r['util_pct']}% | {fmt(r['inplace_us'])} | {fmt(r['old_us'])} "
                     f"| {fmt(r['new_us'])} | {fmt(r['floor_us'])} | {rel} | {ratio(r['ratio_old'])} "
                     f"| {ratio(r['ratio_new'])} | {ratio(r['ratio_floor'])} | "
                     + " | ".join(fmt(r.get(f"new_{p}_us")) for p in PARTS) + " |")
    return lines


def plot(rows, path):
    plt = pyplot("vldbench.placement")
    if plt is None:
        return
    drives = list(dict.fromkeys(r["geometry"] for r in rows))
    fig, axes = plt.subplots(1, len(drives), figsize=(5 * len(drives), 3.8), squeeze=False)
    for ax, g in zip(axes[0], drives):
        rs = [r for r in rows if r["geometry"] == g]
        x = [r["util_pct"] for r in rs]
        for key, style, label in (("inplace_us", "s-", "in place"), ("old_us", "o--", "vld, one-way seeks"),
                                  ("new_us", "o-", "vld, two-way seeks"),
                                  ("floor_us", "k:", "floor without idle time")):
            ax.plot(x, [None if r[key] is None else r[key] / 1e3 for r in rs], style, label=label)
        ax.set_title(g)
        ax.set_xlabel("utilization (%)")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("simulated ms per write")
    axes[0][0].legend()
    save(plt, fig, path)


def main(argv=None):
    a = run_parser("vldbench.placement", "Figure 8 in steady state, old and new placement").parse_args(argv)
    meta = load_run_meta(a)
    lines = [j for f in sorted(glob.glob(f"{a.run_dir}/raw/*.jsonl")) for j in load_jsonl(f)]
    rows = rows_of(points_of(lines))
    write_json(f"{a.run_dir}/results.json", dict(meta, rows=rows))
    write_csv(f"{a.run_dir}/results.csv", rows)
    write_table(f"{a.run_dir}/table.md", table_lines(meta, rows))
    plot(rows, f"{a.run_dir}/placement.png")


if __name__ == "__main__":
    main()
