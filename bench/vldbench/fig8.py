"""Figure 8 of paper 001 (section 5.3): the mean simulated latency of a random
4 KiB synchronous update as the disk fills, for the three systems of the
paper on one simulated drive: eager writing (mode=vld), update in place
(mode=inplace) and logging (mode=lld, with NVRAM and without); curves are
the labels of vldbench.modes.

Input (scripts/bench-fig8): RUN_DIR/meta.json and, per point
GEOMETRY-LABEL-U in raw/: KEY.stats.json (the plugin's stats file of the
measured run alone), KEY.fio.json, KEY.plan.txt ("spare=S REGION WARMUP" or
"spare=S skip REASON"), KEY.warm.stats.json (the warm-up run, if any),
KEY.refused.txt (the plugin refused to create the image) or KEY.failed.txt
(a run failed: its stage and the first error lines).
Parameters, as bench-fig8 passes them: --geometries --modes --utils (bash
lists, one argument each) --run-id --command --size --warmup-pct --lld-warm.
Output: results.json, results.csv, table.md, fig8.png (every geometry) and
fig8-GEOMETRY.png in RUN_DIR.

The paper's Figure 8 (HP97560 and UFS, with the host's time): in place rises
slowly with the region, the VLD with utilization, staying far below in place;
LFS with NVRAM is excellent while the file fits the NVRAM, then the cleaner
dominates as utilization grows. Our targets at 80% on the ST19101: vld at
least 5x faster than in place, its map update at most 10% of a write.
"""
import os

from . import modes as modes_mod
from .common import (fio_job, fmt, ints, load_json, load_run_meta, results_header, run_parser, words, write_csv,
                     write_json, write_table)
from .plotting import pyplot, save

STYLE = {"vld": ("tab:blue", "o", "-"), "inplace": ("tab:red", "s", "--"),
         "lld": ("tab:green", "^", "-"), "lld-nonvram": ("tab:olive", "v", ":")}
SECTOR = 512


# ---------------------------------------------------------------- one point
def point_row(geometry, mode, target_util_pct, stats, fio):
    """One point's row: latency, breakdown (Figure 9's parts) and vld's map cost.
    MODE is the curve's label (vldbench.modes)."""
    w, b = stats["write_latency_us"], stats["breakdown_us"]
    vld = stats.get("vld", {})
    alloc = vld.get("allocator", {})
    r = {
        "geometry": geometry, "mode": mode, "target_util_pct": target_util_pct,
        "utilization_pct": 100 * modes_mod.disk_utilization(stats, mode),
        "stats_utilization_pct": 100 * stats["utilization"],
        "platter_bytes": stats["geometry"]["platter_bytes"],
        "disk_bytes": modes_mod.disk_bytes(stats, mode),
        "simulated_cylinders": stats["geometry"]["simulated_cylinders"],
        "writes": w["count"], "flushes": stats["requests"]["flush"],
        "mean_us": w["mean"], "p50_us": w["p50"], "p99_us": w["p99"], "max_us": w["max"],
        "flush_mean_us": stats["flush_latency_us"]["mean"], "flush_p99_us": stats["flush_latency_us"]["p99"],
        "update_mean_us": update_mean_us(stats),
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


def update_mean_us(stats):
    """The mean simulated time of one synchronous update, write and flush (fio fsync=1):
    the curves differ in where the work is (vld and in place: the write, the flush being
    the controller overhead; lld without NVRAM: the flush, the write going to memory)."""
    w, f = stats["write_latency_us"], stats["flush_latency_us"]
    return (w["mean"] * w["count"] + f["mean"] * f["count"]) / w["count"] if w["count"] else None


def lfs_write_cost(u):
    """Sprite LFS's write cost 2/(1-u) (core/lld/cleaner_policy.h lfs_write_cost):
    1 at u = 0 (an empty segment is not read), None (infinite) at u = 1."""
    if u is None:
        return None
    if u <= 0:
        return 1.0
    return None if u >= 1 else 2 / (1 - u)


def lld_fields(stats, warm=None):
    """What the cleaner did in the run of STATS (and its warm-up WARM), and its write cost:
    measured = (client blocks + blocks the cleaner moved + segment blocks it read) / client
    blocks, all counted into or out of segments; u = the mean live fraction of the segments
    it cleaned = moved / (cleaned x blocks per segment); analytic = 2/(1-u)."""
    lld = stats["lld"]
    block_sectors = stats["geometry"]["block_bytes"] // SECTOR
    client, moved = lld["client_blocks_written"], lld["cleaner_blocks_moved"]
    read_blocks = lld["cleaner_sectors_read"] / block_sectors
    cleaned, bps = lld["segments_cleaned"], lld["blocks_per_segment"]
    u = moved / (cleaned * bps) if cleaned else None
    writes = stats["write_latency_us"]["count"]
    return {
        "segments_cleaned": cleaned, "segments_freed": lld["segments_freed"],
        "cleaner_blocks_moved": moved, "cleaner_blocks_read": read_blocks,
        "client_blocks_written": client, "blocks_per_segment": bps,
        "segment_count": lld["segment_count"], "idle_cleans": lld["idle_cleans"],
        "checkpoints": lld["checkpoints"], "nvram_drains": lld["nvram_drains"],
        "nvram_stalls": lld["nvram_stalls"], "refused_requests": lld["refused_requests"],
        "segment_util_pct": 100 * lld["live_blocks"] / (lld["segment_count"] * bps),
        "cleaned_util": u,
        "write_cost": (client + moved + read_blocks) / client if client else None,
        "lfs_write_cost": lfs_write_cost(u),
        "segment_blocks_per_write": client / writes if writes else None,
        "cleaning_ms": lld["cleaning_ms"], "segment_write_ms": lld["segment_write_ms"],
        "warm_segments_cleaned": warm["lld"]["segments_cleaned"] if warm else None,
        "warm_segments_freed": warm["lld"]["segments_freed"] if warm else None,
        "warm_writes": warm["write_latency_us"]["count"] if warm else None,
    }


def point_problems(key, row, stats, fio):
    """What makes a point untrustworthy: errors, a stale stats file, the wrong U."""
    problems = []
    if fio["error"] or stats["requests"]["errors"]:
        problems.append(f"{key}: fio error {fio['error']}, plugin errors {stats['requests']['errors']}")
    if row["writes"] != fio["write"]["total_ios"]:
        problems.append(f"{key}: the stats file counts {row['writes']} writes, fio "
                        f"{fio['write']['total_ios']}")
    if abs(row["utilization_pct"] - row["target_util_pct"]) > modes_mod.UTIL_TOLERANCE_PCT:
        problems.append(f"{key}: utilization {row['utilization_pct']:.2f}% is not "
                        f"{row['target_util_pct']}% +- {modes_mod.UTIL_TOLERANCE_PCT:g}")
    return problems


def read_text(path):
    with open(path) as f:
        return f.read().strip()


def point_note(run_dir, key):
    """(status, why) of a point without a measured stats file: refused, skipped, failed or
    not run."""
    raw = f"{run_dir}/raw/{key}"
    if os.path.exists(f"{raw}.refused.txt"):
        return "refused", read_text(f"{raw}.refused.txt")
    if os.path.exists(f"{raw}.failed.txt"):
        return "failed", " ".join(read_text(f"{raw}.failed.txt").split("\n"))
    if os.path.exists(f"{raw}.plan.txt"):
        plan = read_text(f"{raw}.plan.txt").split(" ", 2)
        if len(plan) == 3 and plan[1] == "skip":
            return "skipped", plan[2]
    return "not run", ""


def plan_spare(run_dir, key):
    path = f"{run_dir}/raw/{key}.plan.txt"
    if not os.path.exists(path):
        return None
    word = read_text(path).split()[0]
    return int(word.split("=")[1]) if word.startswith("spare=") else None


def load_point(run_dir, g, mode, u):
    """(row, problems) of a measured point, or (None, (status, why))."""
    key = f"{g}-{mode}-{u}"
    raw = f"{run_dir}/raw/{key}"
    if not os.path.exists(f"{raw}.stats.json"):
        return None, point_note(run_dir, key)
    stats = load_json(f"{raw}.stats.json")
    fio = fio_job(f"{raw}.fio.json")
    row = point_row(g, mode, u, stats, fio)
    row["spare"] = plan_spare(run_dir, key)
    if "lld" in stats:
        warm = load_json(f"{raw}.warm.stats.json") if os.path.exists(f"{raw}.warm.stats.json") else None
        row.update(lld_fields(stats, warm))
    problems = point_problems(key, row, stats, fio)
    if "lld" in stats and not row["warm_segments_freed"]:
        problems.append(f"{key}: not in a steady state: the warm-up freed no segment (raise LLD_WARM)")
    return row, problems


def load_points(run_dir, geos, modes, utils):
    """(rows, notes, problems): a row per measured point; notes[(g, mode, u)] = (status, why)
    for the others (refused, skipped, failed)."""
    rows, notes, problems = [], {}, []
    for g in geos:
        for mode in modes:
            for u in utils:
                row, more = load_point(run_dir, g, mode, u)
                if row is None:
                    notes[(g, mode, u)] = more
                    if more[0] == "failed":
                        problems.append(f"{g}-{mode}-{u}: {more[1]}")
                    continue
                rows.append(row)
                problems += more
    add_ratios(rows)
    return rows, notes, problems


def add_ratios(rows):
    """ratio_inplace_over_vld (in place mean / vld mean, write latency) on the vld row of each
    U, and ratio_over_vld (this curve's update mean / vld's) on every row."""
    by = index(rows)
    for r in rows:
        ip = by.get((r["geometry"], "inplace", r["target_util_pct"]))
        v = by.get((r["geometry"], "vld", r["target_util_pct"]))
        r["ratio_inplace_over_vld"] = ip["mean_us"] / v["mean_us"] if ip and v else None
        r["ratio_over_vld"] = r["update_mean_us"] / v["update_mean_us"] if v else None


def index(rows):
    return {(r["geometry"], r["mode"], r["target_util_pct"]): r for r in rows}


# ---------------------------------------------------------------- crossover
def crossover(by, geometry, a, b, utils):
    """Where curve A stops beating curve B (A's update mean rises above B's) on GEOMETRY:
    {"status": "crosses", "at_pct": U by linear interpolation of A - B between the
    bracketing points, "between": (u1, u2)}, "always" (A below B at every point both
    have), "never" (A at or above B from the first), or "none" (no common point)."""
    pts = [(u, by[(geometry, a, u)]["update_mean_us"] - by[(geometry, b, u)]["update_mean_us"])
           for u in utils if (geometry, a, u) in by and (geometry, b, u) in by]
    if not pts:
        return {"status": "none", "points": 0}
    if pts[0][1] >= 0:
        return {"status": "never", "points": len(pts), "from_pct": pts[0][0]}
    for (u1, d1), (u2, d2) in zip(pts, pts[1:]):
        if d1 < 0 <= d2:
            return {"status": "crosses", "points": len(pts), "between": [u1, u2],
                    "at_pct": u1 + (u2 - u1) * (-d1) / (d2 - d1)}
    return {"status": "always", "points": len(pts), "up_to_pct": pts[-1][0]}


def crossover_line(geometry, a, b, c, notes):
    names = f"{modes_mod.LABELS[a]['title']} against {modes_mod.LABELS[b]['title']}"
    missing = sorted(u for (g, m, u), (st, _) in notes.items() if g == geometry and m in (a, b)
                     and st != "skipped")
    tail = f" (no point at {', '.join(f'{u}%' for u in missing)}: see above)" if missing else ""
    if c["status"] == "crosses":
        u1, u2 = c["between"]
        if any(u1 < u < u2 for u in missing):
            return (f"{geometry}, {names}: faster at {u1}%, slower at {u2}%; the points between are "
                    f"missing, so the crossover is not located more closely{tail}")
        return (f"{geometry}, {names}: faster below **{c['at_pct']:.0f}%**, slower above (interpolated "
                f"between {u1}% and {u2}%){tail}")
    if c["status"] == "always":
        return f"{geometry}, {names}: faster at every utilization measured, up to {c['up_to_pct']}%{tail}"
    if c["status"] == "never":
        return f"{geometry}, {names}: never faster, from {c['from_pct']}% on{tail}"
    return f"{geometry}, {names}: no utilization where both were measured{tail}"


# ---------------------------------------------------------------- table.md
def cell(r, note):
    if r:
        return f"{r['update_mean_us']:.0f}"
    return note[0] if note else "-"


def summary_table(g, by, notes, modes, utils):
    """The update mean of every curve per U, and each curve's over vld's."""
    others = [m for m in modes if m != "vld"] if "vld" in modes else []
    head = [modes_mod.LABELS[m]["title"] for m in modes] + [f"{m} / vld" for m in others]
    md = ["| U | " + " | ".join(head) + " |", "|---:|" + "---:|" * len(head)]
    for u in utils:
        cells = [cell(by.get((g, m, u)), notes.get((g, m, u))) for m in modes]
        ratios = [fmt(by[(g, m, u)]["ratio_over_vld"], ".2f") + "x"
                  if (g, m, u) in by and by[(g, m, u)]["ratio_over_vld"] else "-" for m in others]
        md.append(f"| {u}% | " + " | ".join(cells + ratios) + " |")
    return md


def disks_line(g, rows, modes):
    parts = []
    for m in modes:
        r = next((x for x in rows if x["geometry"] == g and x["mode"] == m), None)
        if r:
            parts.append(f"{m} {r['simulated_cylinders']} cylinders (spare={r['spare']}), disk "
                         f"{r['disk_bytes'] / 2**20:.1f} MiB")
    return "Disks: " + "; ".join(parts) + "."


def vld_table(g, by, utils):
    """vld against in place with vld's breakdown and map cost (the lld curves apart)."""
    md = ["vld and in place: simulated µs per write; vld locate = seek + head switch + rotation; "
          "map = vld.map_update_us", "",
          "| U target | U measured | in place mean | in place p99 | vld mean | vld p99 | ratio | "
          "vld seek | vld head sw | vld rotation | vld transfer | vld map | map share |",
          "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for u in utils:
        ip, v = by.get((g, "inplace", u)), by.get((g, "vld", u))
        if ip or v:
            md.append(table_row(u, ip, v))
    return md


def table_row(u, ip, v):
    ref = v or ip
    ratio = ref["ratio_inplace_over_vld"]
    return "| " + " | ".join([
        f"{u}%", f"{ref['utilization_pct']:.1f}%",
        fmt(ip and ip["mean_us"]), fmt(ip and ip["p99_us"]),
        fmt(v and v["mean_us"]), fmt(v and v["p99_us"]),
        fmt(ratio, ".2f") + ("x" if ratio else ""),
        fmt(v and v["seek_us"]), fmt(v and v["head_switch_us"]), fmt(v and v["rotation_us"]),
        fmt(v and v["transfer_us"]), fmt(v and v["map_update_us"]),
        fmt(v and v["map_share_pct"], ".1f") + ("%" if v else "")]) + " |"


LLD_HEAD = ("| U target | curve | U measured | segments U | update mean µs | write mean | write p99 | "
            "flush mean | flush p99 | warm-up writes | cleaned in warm-up | cleaned | freed | u of cleaned | "
            "write cost | 2/(1-u) | segment blocks / write | NVRAM stalls |")


def lld_table(g, by, modes, utils):
    """The cleaner beside each lld point: its work and its write cost, measured and analytic."""
    lmodes = [m for m in modes if modes_mod.is_lld(m)]
    md = [LLD_HEAD, "|---:|---|" + "---:|" * 16]
    for u in utils:
        for m in lmodes:
            r = by.get((g, m, u))
            if not r:
                continue
            md.append("| " + " | ".join([
                f"{u}%", m, f"{r['utilization_pct']:.1f}%", f"{r['segment_util_pct']:.1f}%",
                fmt(r["update_mean_us"]), fmt(r["mean_us"]), fmt(r["p99_us"]), fmt(r["flush_mean_us"]),
                fmt(r["flush_p99_us"]),
                fmt(r["warm_writes"]), fmt(r["warm_segments_cleaned"]), str(r["segments_cleaned"]),
                str(r["segments_freed"]), fmt(r["cleaned_util"], ".3f"), fmt(r["write_cost"], ".2f"),
                fmt(r["lfs_write_cost"], ".2f"), fmt(r["segment_blocks_per_write"], ".3f"),
                str(r["nvram_stalls"])]) + " |")
    return md


def notes_lines(g, notes, modes, utils):
    return [f"- {m} at {u}%: **{notes[(g, m, u)][0]}**" + (f": {notes[(g, m, u)][1]}" if notes[(g, m, u)][1] else "")
            for m in modes for u in utils if (g, m, u) in notes]


def geometry_section(g, rows, by, notes, modes, utils):
    md = [f"**{g}**: mean simulated µs per synchronous random 4 KiB update (the write and the flush "
          "after it); X / vld = X's mean over vld's", "", disks_line(g, rows, modes), ""]
    md += summary_table(g, by, notes, modes, utils) + [""]
    md += notes_lines(g, notes, modes, utils) + [""]
    if "vld" in modes or "inplace" in modes:
        md += vld_table(g, by, utils) + [""]
    if any(modes_mod.is_lld(m) for m in modes):
        md += [f"{g}, lld: the cleaner in the measured run. segments U = live blocks / what the segments "
               "hold; write cost = (client blocks + blocks moved + segment blocks read by the cleaner) / "
               "client blocks, all into or out of segments; u = moved / (cleaned x blocks per segment); "
               "segment blocks / write = client blocks written into segments per fio write (the NVRAM "
               "absorbs overwrites)", ""]
        md += lld_table(g, by, modes, utils) + [""]
    return md


def table_lines(meta, rows, notes, problems, crossings, geos, modes, utils):
    by = index(rows)
    md = [results_header(meta), ""]
    for g in geos:
        md += geometry_section(g, rows, by, notes, modes, utils)
    md += [line for line, _ in crossings] + [""] + checks(by) + [""]
    return md + [f"problem: {p}" for p in problems]


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


def all_crossings(by, notes, geos, modes, utils):
    """[(line, result)] for lld with NVRAM against vld and against in place, per geometry."""
    out = []
    for g in geos:
        for a, b in (("lld", "vld"), ("lld", "inplace")):
            if a in modes and b in modes:
                c = crossover(by, g, a, b, utils)
                out.append((crossover_line(g, a, b, c, notes), dict(c, geometry=g, curve=a, against=b)))
    return out


# ---------------------------------------------------------------- plots
def mark_crossover(ax, g, crossings):
    """A vertical line where lld with NVRAM stops beating vld (if the run located it)."""
    for _, c in crossings:
        if c["geometry"] == g and c["curve"] == "lld" and c["against"] == "vld" and c["status"] == "crosses":
            ax.axvline(c["at_pct"], color="grey", lw=0.8, ls="-.")
            ax.text(c["at_pct"], 1.0, f" lld = vld at {c['at_pct']:.0f}%", transform=ax.get_xaxis_transform(),
                    ha="left", va="bottom", fontsize=7, color="grey")


def plot_latency(ax, g, by, notes, modes, utils):
    for m in modes:
        # a missing point breaks the line (NaN), so that no segment bridges a failed run
        pts = [(by[(g, m, u)]["utilization_pct"], by[(g, m, u)]["update_mean_us"] / 1e3)
               if (g, m, u) in by else (u, float("nan")) for u in utils]
        failed = [u for u in utils if notes.get((g, m, u), ("",))[0] == "failed"]
        label = modes_mod.LABELS[m]["title"] + (f" (failed at {', '.join(map(str, failed))}%)" if failed else "")
        color, marker, ls = STYLE.get(m, (None, "o", "-"))
        if any((g, m, u) in by for u in utils):
            ax.plot(*zip(*pts), marker=marker, linestyle=ls, color=color, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("disk utilization (%)")
    ax.set_ylabel("mean simulated time per update, write + flush (ms)")
    ax.set_title(f"{g}: random synchronous 4 KiB updates, no idle time", fontsize=10, pad=12)
    ax.grid(True, which="both", alpha=0.3)
    if ax.lines:
        ax.legend(fontsize=7)


def plot_write_cost(ax, g, by, modes, utils):
    for m in (m for m in modes if modes_mod.is_lld(m)):
        color, marker, _ = STYLE.get(m, (None, "o", "-"))
        rows = [by[(g, m, u)] for u in utils if (g, m, u) in by]
        meas = [(r["utilization_pct"], r["write_cost"]) for r in rows if r["write_cost"]]
        model = [(r["utilization_pct"], r["lfs_write_cost"]) for r in rows if r["lfs_write_cost"]]
        if meas:
            ax.plot(*zip(*meas), marker=marker, color=color, label=f"{m}: measured")
        if model:
            ax.plot(*zip(*model), marker=marker, color=color, linestyle="--", fillstyle="none",
                    label=f"{m}: 2/(1-u), u of cleaned segments")
    ax.set_yscale("log")
    ax.set_xlabel("disk utilization (%)")
    ax.set_ylabel("blocks written + read per client block")
    ax.set_title(f"{g}: LFS cleaner write cost", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    if ax.lines:
        ax.legend(fontsize=7)


def plot(rows, notes, geos, modes, utils, run_dir, crossings=()):
    """fig8-GEOMETRY.png per geometry (latency of every curve; the lld write cost) and
    fig8.png with every geometry, one row each."""
    plt = pyplot("bench-fig8")
    if plt is None:
        return
    by = index(rows)
    cost = any(modes_mod.is_lld(m) for m in modes)
    ncol = 2 if cost else 1
    for g in geos:
        fig, axes = plt.subplots(1, ncol, figsize=(5.5 * ncol, 4.2), squeeze=False)
        plot_latency(axes[0][0], g, by, notes, modes, utils)
        mark_crossover(axes[0][0], g, crossings)
        if cost:
            plot_write_cost(axes[0][1], g, by, modes, utils)
        save(plt, fig, f"{run_dir}/fig8-{g}.png")
    fig, axes = plt.subplots(len(geos), ncol, figsize=(5.5 * ncol, 4.0 * len(geos)), squeeze=False)
    for k, g in enumerate(geos):
        plot_latency(axes[k][0], g, by, notes, modes, utils)
        mark_crossover(axes[k][0], g, crossings)
        if cost:
            plot_write_cost(axes[k][1], g, by, modes, utils)
    save(plt, fig, f"{run_dir}/fig8.png")


# ---------------------------------------------------------------- command line
def parse_args(argv):
    ap = run_parser("vldbench.fig8", "Figure 8: random synchronous updates as the disk fills")
    ap.add_argument("--geometries", type=words, required=True)
    ap.add_argument("--modes", type=words, required=True, help="curve labels (vldbench.modes)")
    ap.add_argument("--utils", type=ints, required=True, help="target utilizations, %%")
    ap.add_argument("--size", required=True, help="the export's size, as given to the plugin")
    ap.add_argument("--warmup-pct", type=int, required=True)
    ap.add_argument("--lld-warm", type=float, default=None, help="lld warm-up, x the segments' blocks")
    return ap.parse_args(argv)


def main(argv=None):
    a = parse_args(argv)
    run_dir, geos, modes, utils = a.run_dir, a.geometries, a.modes, a.utils
    for m in modes:
        modes_mod.label_info(m)
    meta = load_run_meta(a, size=a.size, warmup_pct=a.warmup_pct, lld_warm=a.lld_warm)
    rows, notes, problems = load_points(run_dir, geos, modes, utils)
    crossings = all_crossings(index(rows), notes, geos, modes, utils)
    write_json(f"{run_dir}/results.json", dict(
        meta, rows=rows, problems=problems, crossovers=[c for _, c in crossings],
        notes=[{"geometry": g, "mode": m, "target_util_pct": u, "status": s, "why": w}
               for (g, m, u), (s, w) in notes.items()]))
    write_csv(f"{run_dir}/results.csv", rows)
    write_table(f"{run_dir}/table.md", table_lines(meta, rows, notes, problems, crossings, geos, modes, utils))
    plot(rows, notes, geos, modes, utils, run_dir, crossings)
    print(f"results: {run_dir}/{{results.json,results.csv,table.md,fig8.png}}")


if __name__ == "__main__":
    main()
