"""Figure 10 of paper 001 (section 5.5) beside its Figure 11: bursts of random
synchronous 4 KiB updates with an idle interval after each, at 80%, on the
log-structured disk with NVRAM (mode=lld: idle time drains the buffer, then
cleans segments) and on the virtual log disk (mode=vld: its compactor empties
tracks), the same bursts and pauses.

Input (scripts/bench-fig10): RUN_DIR/meta.json, raw/lld-burstB.jsonl
(`vld-bench fig10`) and raw/vld-burstB.jsonl (`vld-bench fig11`, compactor
fewest-live and off) per burst size B; raw/NAME.err if a run failed.
Output: results.json, results.csv, table.md, fig10.png in RUN_DIR.

Marks on the lld curves, from measured per-segment costs: B = the time to
clean one segment, t_clean = cleaning time / segments cleaned at no idle time
(point A: the cleaner at work in the steady state, the checkpoints that free
the segments included), with u the live fraction of those segments; C = two
segments; D(burst) = the time to flush a whole burst from the NVRAM: burst x
t_block (segment-write time per block drained in the pauses of the longest
interval, where the drain needs no cleaning) plus the cleaning that makes
room for it, burst / ((1 - u) x blocks per segment) x t_clean.

The paper: point A (no idle time): LFS fills the NVRAM and flushes it,
cleaning as it must; B: a pause cleans one segment; C: two; D: it flushes the
whole burst and the benchmark runs at memory speed. "Because the cleaner
moves segment-sized data, LFS can only benefit from relatively long idle
intervals"; the VLD compactor "improves along a continuum of relatively small
idle intervals".
"""
import json
import os

from .common import fmt, ints, floats, load_run_meta, results_header, run_parser, write_csv, write_json, write_table
from .fig11 import flat as fig11_flat
from .plotting import pyplot, save

COLORS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"]
SHARE_AT = (20.0, 100.0)  # idle ms at which the continuum table reads off the improvement


# ---------------------------------------------------------------- loading
def lld_row(j):
    """One `vld-bench fig10` line as a row."""
    L, I = j["lld"], j["lld_idle"]
    bursts, idle = j["bursts"], j["idle_ms"]
    r = {"system": "lld", "burst": j["burst"], "idle_ms": idle, "bursts": bursts, "writes": j["writes"],
         "mean_us": j["mean_us"], **{f"{k}_us": v for k, v in j["latency_us"].items()},
         "preempted_writes": j["preempted_writes"], "preempt_wait_mean_us": j["preempt_wait_mean_us"],
         "preempt_wait_max_us": j["preempt_wait_max_us"], "utilization": j["disk_utilization"],
         "idle_busy_ms": j["idle_busy_ms"],
         "busy_pct_of_idle": 100 * j["idle_busy_ms"] / (bursts * idle) if idle else None,
         "nvram_stalls": L["nvram_stalls"], "segments_cleaned": L["segments_cleaned"],
         "segments_freed": L["segments_freed"], "cleaner_blocks_moved": L["cleaner_blocks_moved"],
         "client_blocks_written": L["client_blocks_written"], "checkpoints": L["checkpoints"],
         "cleaning_ms": L["cleaning_ms"], "segment_write_ms": L["segment_write_ms"],
         "free_segments_end": j["free_segments_end"]}
    for k in ("idle_cleans", "cleaning_ms", "segment_write_ms", "client_blocks_written", "cleaner_blocks_moved",
              "segments_cleaned", "checkpoints"):
        r[f"idle_{k}"] = I.get(k, 0.0)
    return r


def read_lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def failure(run_dir, name):
    """The first line of a failed run's stderr, or None."""
    path = f"{run_dir}/raw/{name}.err"
    if os.path.exists(path):
        with open(path) as f:
            text = f.read().strip()
        if text:
            return text.splitlines()[0]
    return None


def load_rows(run_dir, sizes, with_vld):
    """(lld rows, vld rows, the lld disk and warm-up, failures {name: message})."""
    lld, vld, failures, disk = [], [], {}, None
    for b in sizes:
        for j in read_lines(f"{run_dir}/raw/lld-burst{b}.jsonl"):
            lld.append(lld_row(j))
            disk = {"disk": j["disk"], "warmup": j["warmup"]}
        for j in read_lines(f"{run_dir}/raw/vld-burst{b}.jsonl") if with_vld else []:
            r = fig11_flat(j, "vld")
            r["system"] = "vld-on" if r["compactor_on"] else "vld-off"
            r.pop("disk")
            vld.append(r)
        for name in (f"lld-burst{b}", f"vld-burst{b}"):
            why = failure(run_dir, name)
            if why:
                failures[name] = why
    return lld, vld, disk, failures


def index(rows):
    return {(r["system"], r["burst"], r["idle_ms"]): r for r in rows}


# ---------------------------------------------------------------- computing
def segment_costs(lld_rows, blocks_per_segment):
    """The measured costs (pooled over burst sizes): t_clean (ms per segment cleaned) and u
    (live fraction of the segments cleaned) at the shortest pause (no idle time: the cleaner
    working when it must), t_block (ms per block drained in the pauses) at the longest; None
    if either is missing."""
    if not lld_rows:
        return None
    shortest, longest = min(r["idle_ms"] for r in lld_rows), max(r["idle_ms"] for r in lld_rows)
    fg = [r for r in lld_rows if r["idle_ms"] == shortest]
    idle = [r for r in lld_rows if r["idle_ms"] == longest]
    cleaned = sum(r["segments_cleaned"] for r in fg)
    blocks = sum(r["idle_client_blocks_written"] for r in idle)
    if not cleaned or not blocks:
        return None
    return {"clean_idle_ms": shortest, "segments": cleaned, "drain_idle_ms": longest, "blocks": blocks,
            "t_clean_ms": sum(r["cleaning_ms"] for r in fg) / cleaned,
            "t_block_ms": sum(r["idle_segment_write_ms"] for r in idle) / blocks,
            "u": sum(r["cleaner_blocks_moved"] for r in fg) / (cleaned * blocks_per_segment)}


def marks(costs, sizes, blocks_per_segment):
    """{"B": ms, "C": ms, "D": {burst: ms}} from segment_costs."""
    if not costs:
        return None
    t, tb, u = costs["t_clean_ms"], costs["t_block_ms"], costs["u"]
    d = {b: b * tb + b / ((1 - u) * blocks_per_segment) * t for b in sizes}
    return {"B": t, "C": 2 * t, "D": d}


def improvement_share(by, system, burst, idles, at):
    """(mean(0) - mean(at)) / (mean(0) - mean(longest)): how much of what idle time buys
    a pause of AT ms already gives (1 = all of it); None without the points."""
    lo, hi = by.get((system, burst, idles[0])), by.get((system, burst, idles[-1]))
    r = by.get((system, burst, at))
    if not (lo and hi and r) or lo["mean_us"] <= hi["mean_us"]:
        return None
    return (lo["mean_us"] - r["mean_us"]) / (lo["mean_us"] - hi["mean_us"])


def half_idle(by, system, burst, idles):
    """The pause from which on every longer pause measured buys at least half of what the
    longest buys (a curve need not fall monotonically: a pause can end inside an idle step
    and make the next burst wait), interpolated linearly between the last pause below half
    and the next; None without the points."""
    pts = [(i, improvement_share(by, system, burst, idles, i)) for i in idles]
    pts = [(i, s) for i, s in pts if s is not None]
    below = [k for k, (_, s) in enumerate(pts) if s < 0.5]
    if not pts or not below:
        return pts[0][0] if pts else None
    k = below[-1]
    if k + 1 == len(pts):
        return None
    (i1, s1), (i2, s2) = pts[k], pts[k + 1]
    return i1 + (i2 - i1) * (0.5 - s1) / (s2 - s1)


def continuum(by, sizes, idles, systems):
    """Per burst size and system: the improvement shares at SHARE_AT and the half-way pause."""
    out = []
    for b in sizes:
        row = {"burst": b}
        for s in systems:
            for at in SHARE_AT:
                row[f"{s}_share_{at:g}"] = improvement_share(by, s, b, idles, at) if at in idles else None
            row[f"{s}_half_idle_ms"] = half_idle(by, s, b, idles)
        out.append(row)
    return out


def claim(cont):
    """The paper's claim, per burst size: the compactor needs a shorter pause for half its gain."""
    ok = [c["vld-on_half_idle_ms"] < c["lld_half_idle_ms"] for c in cont
          if c.get("vld-on_half_idle_ms") is not None and c.get("lld_half_idle_ms") is not None]
    if not ok:
        return "The claim cannot be checked: no burst size with both half-way pauses."
    return (f"Half of what idle time buys takes a shorter pause with vld's compactor than with the lld "
            f"cleaner for {sum(ok)} of {len(ok)} burst sizes.")


# ---------------------------------------------------------------- table.md
def size_label(b):
    kib = b * 4
    return f"{kib // 1024} MiB" if kib >= 1024 else f"{kib} KiB"


def latency_table(by, systems, sizes, idles, title):
    md = [title, "", "| idle (ms) | " + " | ".join(f"{s} B={b} ({size_label(b)})" for s in systems for b in sizes)
          + " |", "|---:|" + "---:|" * (len(systems) * len(sizes))]
    for i in idles:
        md.append(f"| {i:g} | " + " | ".join(fmt((by.get((s, b, i)) or {}).get("mean_us")) for s in systems
                                             for b in sizes) + " |")
    return md + [""]


def lld_work_table(lld_rows):
    md = ["**lld: what the measured bursts and their pauses did**", "",
          "| B | idle (ms) | mean µs | p99 µs | max ms | NVRAM stalls | segments cleaned | of which in idle | "
          "idle busy ms | busy % of idle | preempted writes | preempt wait mean µs | free segments at end |",
          "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in lld_rows:
        md.append("| " + " | ".join([
            str(r["burst"]), f"{r['idle_ms']:g}", fmt(r["mean_us"]), fmt(r["p99_us"]), fmt(r["max_us"] / 1e3, ".1f"),
            str(r["nvram_stalls"]), fmt(r["segments_cleaned"]), fmt(r["idle_idle_cleans"]), fmt(r["idle_busy_ms"]),
            fmt(r["busy_pct_of_idle"]), str(r["preempted_writes"]), fmt(r["preempt_wait_mean_us"]),
            str(r["free_segments_end"])]) + " |")
    return md + [""]


def marks_lines(costs, mk, sizes):
    if not mk:
        return ["Marks: no segment cleaned at the shortest pause or none drained at the longest; B, C and D "
                "are not computed.", ""]
    return [f"Marks: t_clean = **{costs['t_clean_ms']:.1f} ms** per segment cleaned, u = {costs['u']:.3f} "
            f"(at {costs['clean_idle_ms']:g} ms of idle time: {costs['segments']:.0f} segments cleaned, the "
            f"checkpoints that free them included); t_block = {costs['t_block_ms']:.3f} ms per block drained "
            f"(in the pauses of {costs['drain_idle_ms']:g} ms: {costs['blocks']:.0f} blocks). B (one segment "
            f"cleaned) = {mk['B']:.0f} ms, C (two) = {mk['C']:.0f} ms; D (the whole burst flushed, with the "
            "cleaning that makes room for it): " + ", ".join(f"B={b}: {mk['D'][b]:.0f} ms" for b in sizes) + ".", ""]


def continuum_table(cont, systems):
    head = " | ".join(f"{s}: share at {at:g} ms" for s in systems for at in SHARE_AT)
    md = ["**A continuum of short pauses?** share = (mean at no idle - mean at this pause) / (mean at no "
          "idle - mean at the longest pause), below 0 where the pause made writes slower; half = the pause "
          "from which on every longer one buys at least half of it (interpolated)", "",
          f"| B | {head} | " + " | ".join(f"{s}: half (ms)" for s in systems) + " |",
          "|---:|" + "---:|" * (len(systems) * (len(SHARE_AT) + 1))]
    for c in cont:
        cells = [fmt(c[f"{s}_share_{at:g}"], ".2f") for s in systems for at in SHARE_AT]
        cells += [fmt(c[f"{s}_half_idle_ms"], ".0f") for s in systems]
        md.append(f"| {c['burst']} | " + " | ".join(cells) + " |")
    return md + [""]


def header_lines(meta, disk):
    if not disk:
        return [results_header(meta), ""]
    d, w = disk["disk"], disk["warmup"]
    return [results_header(meta), "",
            f"lld: {d['geometry']}, {d['export_bytes'] >> 20} MiB export, spare={d['spare']}, {d['cylinders']} "
            f"cylinders, {d['segment_count']} segments of {d['blocks_per_segment']} blocks, NVRAM "
            f"{d['nvram_bytes']} bytes ({d['nvram_capacity_records']} records), cleaner {d['cleaner_policy']}, "
            f"region {d['region_blocks']} blocks ({100 * d['util']:.0f}% of the disk); warm-up "
            f"{w['writes']} updates, {w['segments_cleaned']} segments cleaned in it.", ""]


def table_lines(meta, disk, lld_rows, vld_rows, failures, costs, mk, cont, sizes, idles):
    by = index(lld_rows + vld_rows)
    systems = ["lld"] + (["vld-on"] if vld_rows else [])
    md = header_lines(meta, disk)
    md += latency_table(by, ["lld"], sizes, idles, "**Mean simulated µs per 4 KiB synchronous write, lld with "
                        "NVRAM** (Figure 10)")
    if vld_rows:
        md += latency_table(by, ["vld-on", "vld-off"], sizes, idles, "**The same, vld with its compactor on "
                            "(fewest-live) and off** (Figure 11)")
    md += lld_work_table(lld_rows) + marks_lines(costs, mk, sizes) + continuum_table(cont, systems)
    md += [claim(cont), ""] if vld_rows else []
    return md + [f"problem: {name} failed: {why}" for name, why in failures.items()]


# ---------------------------------------------------------------- the plot
def draw_marks(ax, mk, sizes):
    if not mk:
        return
    ax.text(0, 1.0, "A", transform=ax.get_xaxis_transform(), ha="center", va="bottom", fontsize=8)
    for name in ("B", "C"):
        ax.axvline(mk[name], color="grey", lw=0.8, ls="-.")
        ax.text(mk[name], 1.0, name, transform=ax.get_xaxis_transform(), ha="center", va="bottom", fontsize=8)
    for k, b in enumerate(sizes):
        ax.axvline(mk["D"][b], color=COLORS[k % len(COLORS)], lw=0.8, ls=":")
        ax.text(mk["D"][b], 1.0, "D", color=COLORS[k % len(COLORS)], transform=ax.get_xaxis_transform(),
                ha="center", va="bottom", fontsize=8)


def plot(by, mk, sizes, idles, with_vld, path):
    """Mean latency against the pause: lld (Fig. 10, marks B, C, D) and vld (Fig. 11) on the
    same axes."""
    plt = pyplot("bench-fig10")
    if plt is None:
        return
    ncol = 2 if with_vld else 1
    fig, axes = plt.subplots(1, ncol, figsize=(6 * ncol, 4.4), sharex=True, sharey=True, squeeze=False)
    panels = [(axes[0][0], (("lld", "-", "o"),), "LFS (lld), 6.1 MB NVRAM: cleaner (Fig. 10)")]
    if with_vld:
        panels.append((axes[0][1], (("vld-on", "-", "o"), ("vld-off", "--", "s")),
                       "vld: compactor on (solid) and off (dashed) (Fig. 11)"))
    for ax, systems, title in panels:
        for k, b in enumerate(sizes):
            for s, ls, mkr in systems:
                pts = [(i, by[(s, b, i)]["mean_us"]) for i in idles if (s, b, i) in by]
                if pts:
                    ax.plot(*zip(*pts), linestyle=ls, marker=mkr, ms=4, color=COLORS[k % len(COLORS)],
                            label=f"{b} writes ({size_label(b)})" if ls == "-" else None)
        ax.set_xscale("symlog", linthresh=10)
        ax.set_yscale("log")
        ax.set_xlabel("idle interval after each burst (ms)")
        ax.set_title(title, fontsize=9, pad=14)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, title="burst", title_fontsize=7)
    draw_marks(axes[0][0], mk, sizes)
    axes[0][0].set_ylabel("mean latency per 4 KiB synchronous write (µs)")
    fig.suptitle("Bursts of random synchronous updates at 80%, st19101: idle time for the cleaner and the "
                 "compactor", fontsize=10)
    save(plt, fig, path)


# ---------------------------------------------------------------- command line
def parse_args(argv):
    ap = run_parser("vldbench.fig10", "Figure 10 beside Figure 11: bursts and idle time, lld and vld")
    ap.add_argument("--burst-sizes", type=ints, required=True, help="writes per burst, e.g. '32 256'")
    ap.add_argument("--idles", type=floats, required=True, help="idle ms after each burst")
    ap.add_argument("--vld", type=int, default=1, help="1 if the vld runs were made")
    return ap.parse_args(argv)


def main(argv=None):
    a = parse_args(argv)
    meta = load_run_meta(a)
    lld_rows, vld_rows, disk, failures = load_rows(a.run_dir, a.burst_sizes, a.vld == 1)
    bps = disk["disk"]["blocks_per_segment"] if disk else 1
    costs = segment_costs(lld_rows, bps)
    mk = marks(costs, a.burst_sizes, bps)
    by = index(lld_rows + vld_rows)
    systems = ["lld"] + (["vld-on"] if vld_rows else [])
    cont = continuum(by, a.burst_sizes, a.idles, systems)
    write_json(f"{a.run_dir}/results.json", dict(meta, disk=disk, rows=lld_rows + vld_rows, costs=costs,
                                                 marks=mk, continuum=cont, failures=failures))
    write_csv(f"{a.run_dir}/results.csv", lld_rows + vld_rows)
    write_table(f"{a.run_dir}/table.md", table_lines(meta, disk, lld_rows, vld_rows, failures, costs, mk, cont,
                                                     a.burst_sizes, a.idles))
    plot(by, mk, a.burst_sizes, a.idles, bool(vld_rows), f"{a.run_dir}/fig10.png")
    print(f"results: {a.run_dir}/{{results.json,results.csv,table.md,fig10.png}}")


if __name__ == "__main__":
    main()
