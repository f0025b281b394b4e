"""Filling a new disk, every block once, 4 KiB at a time, back to back: the
write time as the disk fills, vld beside in place, and the repacks that keep
the last blocks writable (docs/compaction.md, "Running out of room for whole
blocks"). Not a figure of paper 001; its section 4.2 is the background.

Input: RUN_DIR/results.jsonl (`vld-bench fill` lines) and meta.json.
Output: RUN_DIR/table.md, RUN_DIR/fill.png.

usage: python3 -m vldbench.fill RUN_DIR [--command CMD]
"""
import argparse

from .common import load_json, load_jsonl, results_header, write_table
from .plotting import pyplot, save


def runs_by_geometry_order(points):
    """{(geometry, order): {mode: [points in order]}}."""
    runs = {}
    for p in points:
        runs.setdefault((p["disk"]["geometry"], p["order"]), {}).setdefault(p["mode"], []).append(p)
    return runs


def weighted_mean_us(points):
    """The mean µs per write over the whole fill (slices weighted by writes)."""
    return sum(p["mean_us"] * p["writes"] for p in points) / sum(p["writes"] for p in points)


def table_lines(meta, runs, command=None):
    md = [results_header(meta, command), "",
          "Mean simulated µs per 4 KiB write over each slice of the export, written once, back to "
          "back; repacks (and their simulated ms) in that slice.", ""]
    for (g, order), by_mode in runs.items():
        v, ip = by_mode["vld"], by_mode["inplace"]
        md += [f"**{g}, {order}**", "",
               "| written | utilization | vld mean | vld p99 | vld max | repacks | repack ms | "
               "in place mean | in place / vld |",
               "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for a, b in zip(v, ip):
            md.append(f"| {a['written_pct']:.0f}% | {a['utilization']:.2f} | {a['mean_us']:.0f} | "
                      f"{a['p99_us']:.0f} | {a['max_us']:.0f} | {a['repacks']} | "
                      f"{a['repack_ms']:.0f} | {b['mean_us']:.0f} | "
                      f"{b['mean_us'] / a['mean_us']:.2f}x |")
        tv, ti = weighted_mean_us(v), weighted_mean_us(ip)
        md += ["", f"Whole fill: vld {tv:.0f} µs per write, in place {ti:.0f} ({ti / tv:.2f}x); "
               f"{sum(a['repacks'] for a in v)} repacks.", ""]
    return md


def plot(runs, path):
    plt = pyplot("bench-fill")
    if plt is None:
        return
    geos = sorted({g for g, _ in runs})
    fig, axes = plt.subplots(1, len(geos), figsize=(5 * len(geos), 4), squeeze=False)
    for ax, g in zip(axes[0], geos):
        for (gg, order), by_mode in runs.items():
            if gg != g:
                continue
            for mode, style in (("vld", "-"), ("inplace", ":")):
                pts = by_mode[mode]
                ax.plot([p["written_pct"] for p in pts], [p["mean_us"] / 1000 for p in pts], style,
                        marker="o", ms=3, label=f"{mode}, {order}")
        ax.set_title(g)
        ax.set_xlabel("export written (%)")
        ax.set_ylabel("mean ms per write (simulated)")
        ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    save(plt, fig, path, dpi=110)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="vldbench.fill")
    ap.add_argument("run_dir")
    ap.add_argument("--command")
    a = ap.parse_args(argv)
    meta = load_json(f"{a.run_dir}/meta.json")
    runs = runs_by_geometry_order(load_jsonl(f"{a.run_dir}/results.jsonl"))
    write_table(f"{a.run_dir}/table.md", table_lines(meta, runs, a.command))
    plot(runs, f"{a.run_dir}/fill.png")


if __name__ == "__main__":
    main()
