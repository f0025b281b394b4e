"""The simulated locate time of a 4 KiB vld write beside paper 001's models (1), (2)-(4) and (9)
(sections 2.1-2.2, appendix A.1), from a bench-fig8 run.
Input: FIG8_RUN_DIR/results.json and raw/GEOMETRY-vld-U.stats.json.
Output: results.json, results.csv, table.md, locate.png in RUN_DIR.

usage: python3 -m vldbench.locate FIG8_RUN_DIR RUN_DIR
"""
import argparse, sys

from .common import load_json, write_csv, write_json, write_table
from .plotting import pyplot, save

B = 8  # 4 KiB blocks of 512-byte sectors (b = B)
SERIES = [("sim_locate", "simulated: seek+hs+rot per write", "k", "o", "-"),
          ("sim_data_locate", "simulated: data block only (est.)", "0.45", "o", "-"),
          ("model1", "(1) 1 track, sectors", "tab:green", None, ":"),
          ("model234", "(2)-(4) 1 cylinder, sectors", "tab:blue", None, "--"),
          ("model234_4k", "(2)-(4) 1 cylinder, 4 KiB slots", "tab:purple", None, "-."),
          ("model9", "(9) 1 track, b=B=8", "tab:red", None, "--")]


# ---------------------------------------------------------------- the models
def m1(p, n):
    """(1): expected sectors to the first free one on a track of N, free fraction P."""
    return (1 - p) * n / (1 + p * n)


def m9(p, n, b=B, big_b=B):
    """(9): the same for a run of b free sectors, in units of B."""
    return (1 - p) * n / (b + p * n) * big_b


def m234(p, t, s):
    """E[min(x, y)] in slots: x ~ p(1-p)^x (x >= 0), y = s + j, j ~ q(1-q)^j."""
    if p <= 0:
        return float("inf")
    q = 1 - (1 - p) ** (t - 1)
    total, mass_x = 0.0, 0.0
    x = 0
    while True:
        fx = p * (1 - p) ** x
        if fx < 1e-15 and x > 10:
            break
        # E[min(x, s + j)] over j: j < x - s contributes s + j, the rest x
        e, mass = 0.0, 0.0
        j = 0
        while s + j < x:
            fy = q * (1 - q) ** j
            e += (s + j) * fy
            mass += fy
            j += 1
        e += x * (1 - mass)
        total += fx * e
        mass_x += fx
        x += 1
    return total


# ---------------------------------------------------------------- computing
def locate_row(g, u, s):
    """One vld point of the fig8 run (its stats file S): simulated locate against the models."""
    geo, vld = s["geometry"], s["vld"]
    n, t = geo["sectors_per_track"], geo["tracks_per_cylinder"]
    sector_us = geo["revolution_us"] / n
    hs_sectors = geo["head_switch_us"] / sector_us
    writes = s["write_latency_us"]["count"]
    p = 1 - s["utilization"]
    b = s["breakdown_us"]
    locate = b["seek"] + b["head_switch"] + b["rotation"]
    map_per_write = vld["map_sectors_written"] / writes  # includes relays
    map_locate = max(0.0, vld["map_update_us"] - map_per_write * sector_us)
    rec_locate = max(0.0, (vld["log_record_us"] - vld["log_records_written"] * sector_us) / writes)
    data_locate = locate - map_locate - rec_locate
    row = {
        "geometry": g, "target_util_pct": u, "utilization_pct": 100 * s["utilization"],
        "free_fraction_p": p, "n": n, "t": t, "head_switch_sectors": hs_sectors,
        "sector_us": sector_us, "writes": writes,
        "sim_seek_us": b["seek"], "sim_head_switch_us": b["head_switch"],
        "sim_rotation_us": b["rotation"], "sim_locate_us": locate,
        "sim_map_locate_us": map_locate, "sim_record_locate_us": rec_locate,
        "sim_data_locate_us": data_locate,
        "sim_alloc_mean_locate_sectors": vld["allocator"]["mean_locate_sectors"],
        "model1_sectors": m1(p, n),
        "model234_sectors": m234(p, t, hs_sectors),
        "model234_4k_sectors": B * m234(p, t, hs_sectors / B),
        "model9_sectors": m9(p, n),
    }
    for k in ("sim_alloc_mean_locate", "model1", "model234", "model234_4k", "model9"):
        row[f"{k}_us"] = row[f"{k}_sectors"] * sector_us
    row["sim_locate_sectors"] = locate / sector_us
    row["sim_data_locate_sectors"] = data_locate / sector_us
    return row


def load_rows(fig8_dir, fig8):
    """A row per vld point of the fig8 run, by geometry and utilization."""
    rows = [locate_row(r["geometry"], r["target_util_pct"],
                       load_json(f"{fig8_dir}/raw/{r['geometry']}-vld-{r['target_util_pct']}.stats.json"))
            for r in fig8["rows"] if r["mode"] == "vld"]
    return sorted(rows, key=lambda r: (r["geometry"], r["target_util_pct"]))


def run_meta(fig8_dir, fig8):
    """The fig8 run's conditions (this module runs nothing of its own)."""
    meta = {k: fig8[k] for k in ("date_utc", "commit", "worktree_modified", "command", "kernel", "cpus")
            if k in fig8}
    meta["worktree_diff_sha256"] = fig8.get("worktree_diff_sha256")
    meta["fig8_run"] = fig8_dir
    return meta


# ---------------------------------------------------------------- table.md
def table_lines(fig8, rows):
    """A table per geometry: µs (sectors) of each simulated and modelled locate."""
    md = [f"simulation: `{fig8.get('command', '?')}` ({fig8.get('date_utc', '?')}, commit {fig8.get('commit', '?')}"
          + (", uncommitted changes" if fig8.get("worktree_modified") else "") + ")", ""]
    for g in sorted({r["geometry"] for r in rows}):
        gr = [r for r in rows if r["geometry"] == g]
        r0 = gr[0]
        md += [f"**{g}** (n = {r0['n']}, t = {r0['t']}, s = {r0['head_switch_sectors']:.1f} sectors, "
               f"sector = {r0['sector_us']:.1f} µs): locate time per 4 KiB write, µs (sectors)", "",
               "| U | sim locate (seek+hs+rot) | sim data locate (est.) | allocator mean per piece | "
               "(1) sector, 1 track | (2)-(4) sector, 1 cyl | (2)-(4) 4 KiB slots | (9) b=B=8 |",
               "|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in gr:
            c = lambda k: f"{r[k + '_us']:.0f} ({r[k + '_sectors']:.1f})"
            md.append(f"| {r['utilization_pct']:.0f}% | {r['sim_locate_us']:.0f} ({r['sim_locate_sectors']:.1f}) "
                      f"= {r['sim_seek_us']:.0f}+{r['sim_head_switch_us']:.0f}+{r['sim_rotation_us']:.0f} | "
                      f"{c('sim_data_locate')} | {c('sim_alloc_mean_locate')} | {c('model1')} | "
                      f"{c('model234')} | {c('model234_4k')} | {c('model9')} |")
        md.append("")
    return md


# ---------------------------------------------------------------- the plot
def plot(rows, path):
    """Per geometry: each locate against utilization (log), a grey line at one head switch."""
    plt = pyplot("")
    if plt is None:
        return
    geos = sorted({r["geometry"] for r in rows})
    fig, axes = plt.subplots(1, len(geos), figsize=(4.8 * len(geos), 3.8), squeeze=False)
    for ax, g in zip(axes[0], geos):
        gr = [r for r in rows if r["geometry"] == g]
        x = [r["utilization_pct"] for r in gr]
        for k, label, color, marker, ls in SERIES:
            ax.plot(x, [r[k + "_us"] for r in gr], color=color, marker=marker, linestyle=ls, label=label)
        ax.axhline(gr[0]["head_switch_sectors"] * gr[0]["sector_us"], color="0.7", lw=0.8)
        ax.set_yscale("log")
        ax.set_title(f"{g}: locate time per 4 KiB write", fontsize=10)
        ax.set_xlabel("disk utilization (%)")
        ax.set_ylabel("µs")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=7)
    save(plt, fig, path)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="vldbench.locate", description="locate time beside models (1)-(4), (9)")
    ap.add_argument("fig8_dir", help="a bench-fig8 run directory (with its results.json)")
    ap.add_argument("run_dir")
    a = ap.parse_args(argv)
    fig8 = load_json(f"{a.fig8_dir}/results.json")
    rows = load_rows(a.fig8_dir, fig8)
    if not rows:
        sys.exit("bench-locate: no vld rows in the bench-fig8 run")
    write_json(f"{a.run_dir}/results.json", dict(run_meta(a.fig8_dir, fig8), rows=rows))
    write_csv(f"{a.run_dir}/results.csv", rows)
    write_table(f"{a.run_dir}/table.md", table_lines(fig8, rows))
    plot(rows, f"{a.run_dir}/locate.png")
    print(f"results: {a.run_dir}/{{results.json,results.csv,table.md,locate.png}} (grey line: one head switch)")


if __name__ == "__main__":
    main()
