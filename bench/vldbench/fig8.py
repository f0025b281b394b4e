"""Figure 8 of paper 001 (section 5.3): the mean simulated latency of a random
4 KiB synchronous update as the disk fills, the virtual log disk (mode=vld)
against the update-in-place disk (mode=inplace) of the same drive.

Input (scripts/bench-fig8): RUN_DIR/meta.json and, per point
GEOMETRY-MODE-U, raw/KEY.stats.json (the plugin's stats file of the measured
run alone) and raw/KEY.fio.json. A point whose region did not fit the export
has no files (skipped.txt says why).
Parameters, as bench-fig8 passes them: --geometries --modes --utils (bash
lists, one argument each) --run-id --command --size --spare --warmup-pct.
Output: results.json, results.csv, table.md, fig8.png in RUN_DIR.

The paper's numbers (Figure 8, 80% utilization): eager writing is about 5x
faster than update in place on the modern drive (ST19101), about 2x on the
HP97560.
"""
import os

from .common import (fio_job, fmt, ints, load_json, load_run_meta, results_header, run_parser, words, write_csv,
                     write_json, write_table)
from .plotting import pyplot, save

COLORS = {"st19101": "tab:blue", "hp97560": "tab:red", "savvio10k4": "tab:green"}


def point_row(geometry, mode, target_util_pct, stats, fio):
    """One point's row: latency, breakdown (Figure 9's parts) and vld's map cost."""
    w, b = stats["write_latency_us"], stats["breakdown_us"]
    vld = stats.get("vld", {})
    alloc = vld.get("allocator", {})
    r = {
        "geometry": geometry, "mode": mode, "target_util_pct": target_util_pct,
        "utilization_pct": 100 * stats["utilization"],
        "platter_bytes": stats["geometry"]["platter_bytes"],
        "simulated_cylinders": stats["geometry"]["simulated_cylinders"],
        "writes": w["count"], "flushes": stats["requests"]["flush"],
        "mean_us": w["mean"], "p50_us": w["p50"], "p99_us": w["p99"], "max_us": w["max"],
        "flush_mean_us": stats["flush_latency_us"]["mean"],
        **{f"{k}_us": v for k, v in b.items()},
        "locate_us": b["seek"] + b["head_switch"] + b["rotation"],
        "map_update_us": vld.get("map_update_us"),
        "log_records": vld.get("log_records_written"),
        "log_record_us_per_write": (vld["log_record_us"] / w["count"]) if vld and w["count"] else None,
        "mean_locate_sectors": alloc.get("mean_locate_sectors"),
        "contiguous_commands": alloc.get("contiguous_commands"),
        "fio_errors": fio["error"],
    }
    r["map_share_pct"] = (100 * r["map_update_us"] / r["mean_us"]
                          if r["map_update_us"] is not None else None)
    return r


def point_problems(key, row, stats, fio):
    """What makes a point untrustworthy: errors, a stale stats file, the wrong U."""
    problems = []
    if fio["error"] or stats["requests"]["errors"]:
        problems.append(f"{key}: fio error {fio['error']}, plugin errors {stats['requests']['errors']}")
    if row["writes"] != fio["write"]["total_ios"]:
        problems.append(f"{key}: the stats file counts {row['writes']} writes, fio "
                        f"{fio['write']['total_ios']}")
    if abs(row["utilization_pct"] - row["target_util_pct"]) > 1.0:
        problems.append(f"{key}: utilization {row['utilization_pct']:.2f}% is not "
                        f"{row['target_util_pct']}% +- 1")
    return problems


def load_points(run_dir, geos, modes, utils):
    """(rows, problems) for every point of the run that was not skipped."""
    rows, problems = [], []
    for g in geos:
        for mode in modes:
            for u in utils:
                key = f"{g}-{mode}-{u}"
                if not os.path.exists(f"{run_dir}/raw/{key}.stats.json"):
                    continue  # skipped: U% does not fit the export (skipped.txt)
                stats = load_json(f"{run_dir}/raw/{key}.stats.json")
                fio = fio_job(f"{run_dir}/raw/{key}.fio.json")
                row = point_row(g, mode, u, stats, fio)
                problems += point_problems(key, row, stats, fio)
                rows.append(row)
    add_ratios(rows)
    return rows, problems


def add_ratios(rows):
    """ratio_inplace_over_vld on each row: in place mean / vld mean at its U."""
    by = index(rows)
    for r in rows:
        ip = by.get((r["geometry"], "inplace", r["target_util_pct"]))
        v = by.get((r["geometry"], "vld", r["target_util_pct"]))
        r["ratio_inplace_over_vld"] = ip["mean_us"] / v["mean_us"] if ip and v else None


def index(rows):
    return {(r["geometry"], r["mode"], r["target_util_pct"]): r for r in rows}


def table_lines(meta, rows, problems, geos, modes, utils):
    by = index(rows)
    md = [results_header(meta), ""]
    for g in geos:
        md += [f"**{g}**: simulated µs per random 4 KiB write (each followed by a flush), "
               "mean and p99; vld locate = seek + head switch + rotation; map = vld.map_update_us", "",
               "| U target | U measured | in place mean | in place p99 | vld mean | vld p99 | ratio | "
               "vld seek | vld head sw | vld rotation | vld transfer | vld map | map share |",
               "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for u in utils:
            md.append(table_row(u, by.get((g, "inplace", u)), by.get((g, "vld", u))))
        md.append("")
        if "inplace" in modes:
            md += [f"{g} in place breakdown (µs): " + "; ".join(
                f"U={u}%: seek {by[(g, 'inplace', u)]['seek_us']:.0f}, "
                f"rot {by[(g, 'inplace', u)]['rotation_us']:.0f}"
                for u in utils if (g, "inplace", u) in by), ""]
    md += checks(by) + [""] + [f"problem: {p}" for p in problems]
    return md


def table_row(u, ip, v):
    ref = v or ip
    if not ref:
        return f"| {u}% | skipped: U% of the platters exceeds the export |" + " |" * 11
    ratio = ref["ratio_inplace_over_vld"]
    return "| " + " | ".join([
        f"{u}%", f"{ref['utilization_pct']:.1f}%",
        fmt(ip and ip["mean_us"]), fmt(ip and ip["p99_us"]),
        fmt(v and v["mean_us"]), fmt(v and v["p99_us"]),
        fmt(ratio, ".2f") + ("x" if ratio else ""),
        fmt(v and v["seek_us"]), fmt(v and v["head_switch_us"]), fmt(v and v["rotation_us"]),
        fmt(v and v["transfer_us"]), fmt(v and v["map_update_us"]),
        fmt(v and v["map_share_pct"], ".1f") + ("%" if v else "")]) + " |"


def checks(by):
    """The targets at 80%: st19101 >= 5x with the map <= 10% of a vld write."""
    out = []
    v, ip = by.get(("st19101", "vld", 80)), by.get(("st19101", "inplace", 80))
    if v and ip:
        ratio, share = ip["mean_us"] / v["mean_us"], v["map_share_pct"]
        out.append(f"st19101 at 80%: in place {ip['mean_us']:.0f} us / vld {v['mean_us']:.0f} us = "
                   f"{ratio:.2f}x (target >= 5x: {'met' if ratio >= 5 else 'MISSED'}); map update "
                   f"{v['map_update_us']:.0f} us = {share:.1f}% of a vld write (target <= 10%: "
                   f"{'met' if share <= 10 else 'MISSED'})")
    v, ip = by.get(("hp97560", "vld", 80)), by.get(("hp97560", "inplace", 80))
    if v and ip:
        out.append(f"hp97560 at 80%: in place {ip['mean_us']:.0f} us / vld {v['mean_us']:.0f} us = "
                   f"{ip['mean_us'] / v['mean_us']:.2f}x; map update {v['map_update_us']:.0f} us = "
                   f"{v['map_share_pct']:.1f}% of a vld write")
    return out


def plot(rows, geos, modes, utils, path):
    """Latency against utilization (log scale) and the in place / vld ratio."""
    plt = pyplot("bench-fig8")
    if plt is None:
        return
    by = index(rows)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.8), gridspec_kw={"width_ratios": [3, 2]})
    for g in geos:
        for mode in modes:
            pts = [(by[(g, mode, u)]["utilization_pct"], by[(g, mode, u)]["mean_us"] / 1e3)
                   for u in utils if (g, mode, u) in by]
            if pts:
                ax.plot(*zip(*pts), marker="o" if mode == "vld" else "s",
                        linestyle="-" if mode == "vld" else "--", color=COLORS.get(g),
                        label=f"{g} {'in place' if mode == 'inplace' else 'vld'}")
        pts = [(by[(g, "vld", u)]["utilization_pct"], by[(g, "vld", u)]["ratio_inplace_over_vld"])
               for u in utils if (g, "vld", u) in by and by[(g, "vld", u)]["ratio_inplace_over_vld"]]
        if pts:
            ax2.plot(*zip(*pts), marker="o", color=COLORS.get(g), label=g)
    ax.set_yscale("log")
    ax.set_xlabel("disk utilization (%)")
    ax.set_ylabel("mean simulated latency per 4 KiB write (ms)")
    ax.set_title("Random synchronous 4 KiB updates (Fig. 8)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax2.set_xlabel("disk utilization (%)")
    ax2.set_ylabel("in place / vld")
    ax2.set_title("Speed-up of eager writing", fontsize=10)
    ax2.set_ylim(bottom=0)
    ax2.grid(True, alpha=0.3)
    if ax2.lines:
        ax2.legend(fontsize=8)
    save(plt, fig, path)


def parse_args(argv):
    ap = run_parser("vldbench.fig8", "Figure 8: random synchronous updates as the disk fills")
    ap.add_argument("--geometries", type=words, required=True)
    ap.add_argument("--modes", type=words, required=True)
    ap.add_argument("--utils", type=ints, required=True, help="target utilizations, %%")
    ap.add_argument("--size", required=True, help="the export's size, as given to the plugin")
    ap.add_argument("--spare", type=int, required=True)
    ap.add_argument("--warmup-pct", type=int, required=True)
    return ap.parse_args(argv)


def main(argv=None):
    a = parse_args(argv)
    run_dir, geos, modes, utils = a.run_dir, a.geometries, a.modes, a.utils
    meta = load_run_meta(a, size=a.size, spare=a.spare, warmup_pct=a.warmup_pct)
    rows, problems = load_points(run_dir, geos, modes, utils)
    write_json(f"{run_dir}/results.json", dict(meta, rows=rows, problems=problems))
    write_csv(f"{run_dir}/results.csv", rows)
    write_table(f"{run_dir}/table.md", table_lines(meta, rows, problems, geos, modes, utils))
    plot(rows, geos, modes, utils, f"{run_dir}/fig8.png")
    print(f"results: {run_dir}/{{results.json,results.csv,table.md,fig8.png}}")


if __name__ == "__main__":
    main()
