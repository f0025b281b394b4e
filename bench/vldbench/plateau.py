"""The 60-85% plateau of paper 001's Figure 8 (section 5.3): mode=lld's mean latency of random
synchronous 4 KiB updates against utilization, no idle time, per curve (a setting of the
segment size, the cleaner policy, the NVRAM, the disk or the workload), each update broken
down into where its time went, and the cleaner's u beside the u that uniform updates give
analytically.

Per update, from the lld counters of the measured run (docs/stats.md): nvram = the copy into
NVRAM; segment writes = the drains' own writes (drain time - cleaning time); cleaning = the
cleaner's reads and moves (cleaning time - checkpoint time: with no idle time every checkpoint
is one that frees the segments the cleaner emptied); checkpoint = those checkpoints.

u = the mean live fraction of the segments cleaned; u model = the u at which uniform random
updates leave the segments a FIFO (or greedy) cleaner reaches: a segment's live fraction
decays as e^(-a/N) with its age a in updates (N live blocks), ages are spread evenly up to the
cleaning age A, so U = N / (segments x blocks per segment) = (1 - u) / ln(1/u), u = e^(-A/N):
U and u rise together, and the write cost 2/(1-u) with them.

Input: RUN_DIR/raw/K-CURVE-uU.jsonl (`vld-bench fig10 --idle-ms 0`, one line, tagged with
"curve" by scripts/bench-plateau; K orders the curves) and meta.json.
Output: results.json, results.csv, table.md, plateau.png in RUN_DIR.

usage: python3 -m vldbench.plateau RUN_DIR --run-id ID --command CMD
"""
import glob
import math
from collections import defaultdict

from .common import fmt, load_jsonl, load_run_meta, results_header, run_parser, write_csv, write_json, write_table
from .fig8 import lfs_write_cost
from .plotting import pyplot, save

PARTS = ["nvram", "segment_write", "cleaning", "checkpoint"]
RISE = (60, 85)  # the paper's plateau: "between roughly 60% and 85% disk utilization"


def uniform_cleaned_util(segment_util):
    """The u with (1 - u) / ln(1/u) = SEGMENT_UTIL (0 < U < 1), by bisection; the function
    rises from 0 at u = 0 to 1 at u = 1. None outside (0, 1)."""
    if segment_util is None or not 0 < segment_util < 1:
        return None
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if mid > 0 and (1 - mid) / math.log(1 / mid) < segment_util:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def point_row(j):
    """One fig10 line (no idle time) as a row."""
    d, L, n = j["disk"], j["lld"], j["writes"]
    bps = d["blocks_per_segment"]
    per = lambda ms: 1000 * ms / n  # noqa: E731 (ms of the run -> µs per update)
    r = {"curve": j["curve"], "util_pct": round(100 * d["util"]),
         "segment_util_pct": 100 * d["region_blocks"] / (d["segment_count"] * bps),
         "segment_count": d["segment_count"], "writes": n, "mean_us": j["mean_us"],
         "nvram_us": per(L["nvram_ms"]),
         "segment_write_us": per(L["segment_write_ms"] - L["cleaning_ms"]),
         "cleaning_us": per(L["cleaning_ms"] - L["checkpoint_ms"]),
         "checkpoint_us": per(L["checkpoint_ms"])}
    r["other_us"] = r["mean_us"] - sum(r[f"{p}_us"] for p in PARTS)
    cleaned, moved, ckpts = L["segments_cleaned"], L["cleaner_blocks_moved"], L["checkpoints"]
    client = L["client_blocks_written"]
    read_blocks = L["cleaner_sectors_read"] / (d["segment_sectors"] / bps) if bps else 0
    u = moved / (cleaned * bps) if cleaned else None
    # A drain empties the whole NVRAM: only a run of whole cycles (drains x records =
    # updates) holds its share of drains, whatever the warm-up left buffered.
    records = d.get("nvram_capacity_records", 0)
    r.update({
        "whole_cycles": bool(records) and L["nvram_drains"] * records == n,
        "segments_cleaned": cleaned, "checkpoints": ckpts, "nvram_drains": L["nvram_drains"],
        "victims_per_checkpoint": cleaned / ckpts if ckpts else None,
        "checkpoint_ms_each": L["checkpoint_ms"] / ckpts if ckpts else None,
        "cleaned_util": u, "model_util": uniform_cleaned_util(r["segment_util_pct"] / 100),
        "write_cost": (client + moved + read_blocks) / client if client else None,
        "lfs_write_cost": lfs_write_cost(u),
        "segment_blocks_per_write": client / n if n else None,
    })
    return r


def rows_of(lines):
    """Rows in the order the curves first appear, by utilization within each."""
    order = list(dict.fromkeys(j["curve"] for j in lines))
    rows = [point_row(j) for j in lines]
    return sorted(rows, key=lambda r: (order.index(r["curve"]), r["util_pct"]))


def curve_summaries(rows):
    """Per curve: the mean at the ends of RISE, their ratio (1: a plateau), and how much of
    the rise between them each part is."""
    by = defaultdict(dict)
    for r in rows:
        by[r["curve"]][r["util_pct"]] = r
    out = []
    for curve, pts in by.items():
        s = {"curve": curve}
        lo, hi = pts.get(RISE[0]), pts.get(RISE[1])
        s["mean_lo_us"] = lo["mean_us"] if lo else None
        s["mean_hi_us"] = hi["mean_us"] if hi else None
        s["rise"] = hi["mean_us"] / lo["mean_us"] if lo and hi else None
        rise_us = hi["mean_us"] - lo["mean_us"] if lo and hi else None
        for p in PARTS:
            s[f"{p}_share"] = (hi[f"{p}_us"] - lo[f"{p}_us"]) / rise_us if rise_us else None
        ups = [b["mean_us"] > a["mean_us"] for a, b in zip(list(pts.values()), list(pts.values())[1:])]
        s["monotonic"] = all(ups)
        out.append(s)
    return out


def curve_table(curve, rows):
    lines = [f"**{curve}**", "",
             "| U | U of segments | mean | nvram | segment writes | cleaning | checkpoint | cleaned "
             "| checkpoints | victims / ckpt | ms / ckpt | u | u model | write cost | 2/(1-u) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        mean = fmt(r["mean_us"]) + ("" if r["whole_cycles"] else "*")
        lines.append(f"| {r['util_pct']}% | {r['segment_util_pct']:.1f}% | {mean} | "
                     + " | ".join(fmt(r[f"{p}_us"]) for p in PARTS)
                     + f" | {r['segments_cleaned']:.0f} | {r['checkpoints']:.0f} | "
                     f"{fmt(r['victims_per_checkpoint'], '.1f')} | {fmt(r['checkpoint_ms_each'], '.1f')} | "
                     f"{fmt(r['cleaned_util'], '.3f')} | {fmt(r['model_util'], '.3f')} | "
                     f"{fmt(r['write_cost'], '.2f')} | {fmt(r['lfs_write_cost'], '.2f')} |")
    return lines + [""]


def table_lines(meta, rows, summaries):
    share = lambda v: "-" if v is None else f"{100 * v:.0f}%"  # noqa: E731
    lines = [results_header(meta), "",
             f"Mean simulated µs per update at {RISE[0]}% and {RISE[1]}% and the rise between "
             "them (1.00x: the paper's plateau), with each part's share of the rise; "
             "monotonic: every point above the one before.", "",
             f"| curve | {RISE[0]}% | {RISE[1]}% | rise | segment writes | cleaning | checkpoint "
             "| monotonic |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for s in summaries:
        lines.append(f"| {s['curve']} | {fmt(s['mean_lo_us'])} | {fmt(s['mean_hi_us'])} | "
                     f"{fmt(s['rise'], '.2f')}{'' if s['rise'] is None else 'x'} | "
                     f"{share(s['segment_write_share'])} | {share(s['cleaning_share'])} | "
                     f"{share(s['checkpoint_share'])} | {'yes' if s['monotonic'] else 'no'} |")
    lines += ["", "Per curve: µs per update and its parts; U of segments = live blocks / the "
              "segments' blocks; u = live fraction of the segments cleaned, u model = "
              "(1 - u) / ln(1/u) = U of segments solved for u; write cost = (client + moved + "
              "read blocks) / client blocks; *: the measured updates are not whole NVRAM cycles "
              "(drains x records the NVRAM holds), so the mean has more or less than its share "
              "of drains.", ""]
    for curve in dict.fromkeys(r["curve"] for r in rows):
        lines += curve_table(curve, [r for r in rows if r["curve"] == curve])
    return lines


def plot(rows, path):
    plt = pyplot("vldbench.plateau")
    if plt is None:
        return
    curves = list(dict.fromkeys(r["curve"] for r in rows))
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(15, 4.2))
    for curve in curves:
        rs = [r for r in rows if r["curve"] == curve]
        a.plot([r["util_pct"] for r in rs], [r["mean_us"] / 1e3 for r in rs], "o-", ms=3, label=curve)
        pts = [(r["segment_util_pct"], r["cleaned_util"]) for r in rs if r["cleaned_util"]]
        if pts:
            c.plot(*zip(*pts), "o", ms=3, label=curve)
    a.axvspan(*RISE, color="0.9")
    # Linear, as the paper's figure: a plateau is a flat stretch. The top is the highest mean
    # up to 90%; the steeper points above it are cut off.
    top = max(r["mean_us"] for r in rows if r["util_pct"] <= 90) / 1e3
    a.set(xlabel="utilization (%)", ylabel="simulated ms per update", ylim=(0, 1.05 * top),
          title="lld, no idle time (shaded: the paper's plateau)")
    a.legend(fontsize=7)
    first = [r for r in rows if r["curve"] == curves[0]]
    x = [r["util_pct"] for r in first]
    for p in PARTS:
        b.plot(x, [max(r[f"{p}_us"], 1e-3) for r in first], "o-", ms=3, label=p.replace("_", " "))
    b.plot(x, [r["mean_us"] for r in first], "k--", label="mean")
    b.set(xlabel="utilization (%)", ylabel="simulated µs per update", yscale="log",
          ylim=(5, None), title=f"{curves[0]}: where an update's time goes")
    b.legend(fontsize=7)
    us = [k / 100 for k in range(5, 98)]
    c.plot([100 * u for u in us], [uniform_cleaned_util(u) for u in us], "k-", lw=1,
           label="uniform updates: (1-u)/ln(1/u) = U")
    c.set(xlabel="live blocks / segment blocks (%)", ylabel="u of the segments cleaned",
          title="the cleaner's u")
    c.legend(fontsize=7)
    for ax in (a, b, c):
        ax.grid(True, which="both", alpha=0.3)
    save(plt, fig, path)


def main(argv=None):
    a = run_parser("vldbench.plateau", "Figure 8's 60-85% plateau: lld per curve").parse_args(argv)
    meta = load_run_meta(a)
    lines = [j for f in sorted(glob.glob(f"{a.run_dir}/raw/*.jsonl")) for j in load_jsonl(f)]
    rows = rows_of(lines)
    summaries = curve_summaries(rows)
    write_json(f"{a.run_dir}/results.json", dict(meta, rows=rows, curves=summaries))
    write_csv(f"{a.run_dir}/results.csv", rows)
    write_table(f"{a.run_dir}/table.md", table_lines(meta, rows, summaries))
    plot(rows, f"{a.run_dir}/plateau.png")


if __name__ == "__main__":
    main()
