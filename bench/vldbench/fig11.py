"""Figure 11 of paper 001 (section 5.5): bursts of random synchronous 4 KiB updates with idle
time after each, the compactor on and off, and the compaction policies.
Input: RUN_DIR/raw/burst{B}-seed{S}.jsonl (one file per burst size and seed; an older run's
burst{B}.jsonl is one seed), policies.jsonl and meta.json.
Output: results.json, results.csv, table.md, fig11.png in RUN_DIR.

Across seeds (the compactor's promise: "never worse than no idle, mean and p99"): per burst size, policy and
idle interval, the mean of the seeds' mean latencies and the mean of their p99s (every seed
measures the same number of writes); a point is flagged where the compactor on is worse than
off in either.

usage: python3 -m vldbench.fig11 RUN_DIR --burst-sizes "B ..." --idles "MS ..." --policy-burst B
           --policy-idles "MS ..." --policies "P ..." --warm "B:BURSTS ..." --run-id ID --command CMD
"""
import glob
import json
import re

from .common import (floats, fmt, ints, load_run_meta, results_header, run_parser, words, write_csv,
                     write_json, write_table)
from .plotting import pyplot, save

COLORS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]


# ---------------------------------------------------------------- loading
def flat(j, run):
    """One vld-bench line as a row (its disk kept under "disk" until load_rows drops it)."""
    c = j.get("compactor", {})
    b = j["breakdown_us"]
    on = j["compactor_on"]
    r = {
        "run": run, "seed": j["disk"].get("seed"), "burst": j["burst"], "idle_ms": j["idle_ms"],
        "policy": j["policy"], "compactor_on": on, "bursts": j["bursts"], "writes": j["writes"],
        "mean_us": j["mean_us"], "p99_us": j.get("latency_us", {}).get("p99"),
        **{f"{k}_us": v for k, v in b.items()},
        "preempted_writes": j["preempted_writes"],
        "preempt_wait_mean_us": j["preempt_wait_mean_us"],
        "preempt_wait_max_us": j["preempt_wait_max_us"],
        "utilization": j["utilization"],
        "tracks_compacted": c.get("tracks_compacted"), "blocks_moved": c.get("blocks_moved"),
        "busy_ms": c.get("busy_ms"), "empty_tracks_end": c.get("empty_tracks_end"),
        "write_amplification": c.get("write_amplification"),
        "write_amplification_with_map": c.get("write_amplification_with_map"),
    }
    r["blocks_per_track"] = (r["blocks_moved"] / r["tracks_compacted"]
                             if r["tracks_compacted"] else None)
    idle_total = j["bursts"] * j["idle_ms"]
    r["busy_pct_of_idle"] = 100 * r["busy_ms"] / idle_total if on and idle_total else None
    r["busy_us_per_write"] = 1e3 * r["busy_ms"] / r["writes"] if on and r["writes"] else None
    r["disk"] = j["disk"]
    return r


def burst_files(run_dir, b):
    """Burst size B's raw files: one per seed, in seed order (or an older run's one file)."""
    files = glob.glob(f"{run_dir}/raw/burst{b}-seed*.jsonl")
    if not files:
        return [f"{run_dir}/raw/burst{b}.jsonl"]
    return sorted(files, key=lambda f: int(re.search(r"-seed(\d+)\.jsonl$", f).group(1)))


def load_rows(run_dir, sizes):
    """(main rows, policy rows, the disk) from the burst files and raw/policies.jsonl."""
    rows = [flat(json.loads(line), "main") for b in sizes for f in burst_files(run_dir, b)
            for line in open(f)]
    prow = [flat(json.loads(line), "policies") for line in open(f"{run_dir}/raw/policies.jsonl")]
    disk = rows[0]["disk"]
    for r in rows + prow:
        del r["disk"]
    return rows, prow, disk


def parse_warm(text):
    """'64:16 256:5' -> {64: 16, 256: 5}: the unmeasured warm-up bursts per burst size."""
    return {int(k): int(v) for k, v in (x.split(":") for x in text.split())}


# ---------------------------------------------------------------- computing
def first_seed(rows):
    """The rows of the first seed (the per-point tables and the plot show one seed)."""
    seeds = [r["seed"] for r in rows]
    return [r for r in rows if r["seed"] == seeds[0]] if seeds else []


def across_seeds(rows):
    """{(burst, policy, idle): summary}: the seeds' mean of mean_us and of p99_us (None if a
    seed has no p99), and the seeds."""
    groups = {}
    for r in rows:
        groups.setdefault((r["burst"], r["policy"], r["idle_ms"]), []).append(r)
    out = {}
    for k, g in groups.items():
        p99 = [r["p99_us"] for r in g]
        out[k] = {"seeds": [r["seed"] for r in g], "mean_us": sum(r["mean_us"] for r in g) / len(g),
                  "p99_us": None if None in p99 else sum(p99) / len(p99),
                  "p99_max_us": None if None in p99 else max(p99)}
    return out


def worse_than_off(summary, policy="fewest-live"):
    """The points where the compactor on is worse than off, across seeds: 'B=256 idle 50: mean
    1121 > 1017' (and the same for p99)."""
    out = []
    for (b, pol, i), on in sorted(summary.items()):
        off = summary.get((b, "off", i))
        if pol != policy or off is None:
            continue
        for key, name in (("mean_us", "mean"), ("p99_us", "p99")):
            if on[key] is not None and off[key] is not None and on[key] > off[key]:
                out.append(f"B={b} idle {i:g}: {name} {on[key]:.0f} > {off[key]:.0f}")
    return out


def problems_of(rows, disk):
    """Points whose utilization is off the disk's."""
    return [f"burst {r['burst']} {r['policy']} idle {r['idle_ms']:g}: utilization {r['utilization']:.3f}"
            for r in rows if abs(r["utilization"] - disk["util"]) > 0.01]


def same_as_main(by, pby, pburst, pidles):
    """Determinism: per policy idle, whether the policy run's fewest-live point is the main run's."""
    same = []
    for i in pidles:
        a, b = pby.get(("fewest-live", i)), by.get((pburst, "fewest-live", i))
        if a and b:
            same.append(a["mean_us"] == b["mean_us"] and a["blocks_moved"] == b["blocks_moved"])
    return same


# ---------------------------------------------------------------- table.md
def latency_table(meta, disk, rows, by, warm, sizes, idles):
    """The heading, and the mean latency per idle interval, compactor on and off."""
    md = [results_header(meta), "",
          f"{disk['geometry']}: {disk['export_bytes'] >> 20} MiB export, {disk['cylinders']} cylinders, "
          f"{disk['platter_bytes'] >> 20} MiB of platters, utilization {100 * rows[0]['utilization']:.1f}%; "
          "unmeasured warm-up bursts first: " + ", ".join(f"B={b}: {w}" for b, w in warm.items())
          + f"; seed {disk['seed']}", "",
          "**Mean simulated latency per 4 KiB synchronous write (µs)**, compactor on (fewest-live) / off", "",
          "| idle (ms) | " + " | ".join(f"B={b} ({b * 4} KiB) on | B={b} off" for b in sizes) + " |",
          "|---:|" + "---:|---:|" * len(sizes)]
    for i in idles:
        cells = []
        for b in sizes:
            on, off = by.get((b, "fewest-live", i)), by.get((b, "off", i))
            cells += [fmt(on and on["mean_us"]), fmt(off and off["mean_us"])]
        md.append(f"| {i:g} | " + " | ".join(cells) + " |")
    md.append("")
    md.append("Measured writes per point: " + ", ".join(
        f"B={b}: {by[(b, 'off', idles[0])]['writes']} ({by[(b, 'off', idles[0])]['bursts']} bursts)"
        for b in sizes if (b, 'off', idles[0]) in by) + ".")
    for b in sizes:
        offs = [by[(b, "off", i)]["mean_us"] for i in idles if (b, "off", i) in by]
        if offs:
            md.append(f"B={b}, compactor off: {min(offs):.0f}-{max(offs):.0f} µs over the idle intervals "
                      f"(spread {100 * (max(offs) - min(offs)) / min(offs):.1f}%).")
    return md


def work_row(b, i, r, off):
    return "| " + " | ".join([
        str(b), f"{i:g}", fmt(r["mean_us"]), fmt(off and off["mean_us"]),
        fmt(off and r["mean_us"] / off["mean_us"], ".2f"), fmt(r["locate_us"]),
        str(r["tracks_compacted"]), str(r["blocks_moved"]), fmt(r["blocks_per_track"], ".1f"),
        fmt(r["write_amplification"], ".2f"), fmt(r["write_amplification_with_map"], ".2f"),
        fmt(r["busy_ms"]), fmt(r["busy_pct_of_idle"]), fmt(r["busy_us_per_write"]),
        str(r["empty_tracks_end"]),
        str(r["preempted_writes"]),
        f"{r['preempt_wait_mean_us']:.0f} / {r['preempt_wait_max_us']:.0f}"]) + " |"


def work_table(rows, by, sizes, idles):
    """What the compactor did per point, and the write amplification."""
    md = ["", "**Compactor work per point (on, fewest-live), during the measured bursts**", "",
          "| B | idle (ms) | mean µs | off µs | on/off | locate µs | tracks compacted | blocks moved | "
          "blocks/track | WA | WA+map | busy ms | busy % of idle | busy µs per write | empty tracks at end | "
          "preempted writes | preempt wait mean / max µs |",
          "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    md += [work_row(b, i, by[(b, "fewest-live", i)], by.get((b, "off", i)))
           for b in sizes for i in idles if (b, "fewest-live", i) in by]
    off_wa = {round(r["write_amplification_with_map"], 3) for r in rows if r["policy"] == "off"}
    settled = [r for r in rows if r["policy"] != "off" and r["busy_pct_of_idle"] is not None
               and r["busy_pct_of_idle"] < 90 and r["tracks_compacted"]]
    md += ["", "WA = physical data blocks written (client + compactor moves) / client blocks; "
           "WA+map also counts map sectors (8 per block). Compactor off: WA 1.00, WA+map "
           + ", ".join(f"{x:.3f}" for x in sorted(off_wa)) + "."]
    if settled:
        bw = [r["busy_us_per_write"] for r in settled]
        wa = [r["write_amplification"] for r in settled]
        md.append(f"Where the compactor finished its work within the idle time (busy < 90% of it; "
                  f"{len(settled)} points): {min(bw):.0f}-{max(bw):.0f} µs of compaction per client write, "
                  f"WA {min(wa):.2f}-{max(wa):.2f}.")
    return md + [""]


def policy_table(pby, pburst, pidles, policies, same):
    """The compaction policies side by side, and the determinism check."""
    md = [f"**Compaction policies**, B={pburst}, compactor on", "",
          "| idle (ms) | policy | mean µs | tracks compacted | blocks moved | blocks/track | WA | WA+map | "
          "busy ms | empty tracks at end | preempt wait mean µs |",
          "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for i in pidles:
        for p in policies:
            r = pby.get((p, i))
            if not r:
                continue
            md.append("| " + " | ".join([
                f"{i:g}", p, fmt(r["mean_us"]), str(r["tracks_compacted"]), str(r["blocks_moved"]),
                fmt(r["blocks_per_track"], ".1f"), fmt(r["write_amplification"], ".2f"),
                fmt(r["write_amplification_with_map"], ".2f"), fmt(r["busy_ms"]),
                str(r["empty_tracks_end"]), fmt(r["preempt_wait_mean_us"])]) + " |")
    md.append("")
    if same:
        md.append("Determinism check: the policy run's fewest-live points are "
                  + ("identical to" if all(same) else "NOT identical to")
                  + f" the B={pburst} points of the main run.")
    return md


def seeds_table(summary, sizes, idles, worse):
    """Mean and p99 across the seeds, compactor on and off, and the points where on is worse."""
    any_point = next(iter(summary.values()), {"seeds": []})
    md = ["", f"**Across {len(any_point['seeds'])} seeds ({', '.join(str(x) for x in any_point['seeds'])})**: "
          "mean of the seeds' mean latency / mean of their p99 (µs), compactor on (fewest-live) and off", "",
          "| idle (ms) | " + " | ".join(f"B={b} on mean | off mean | on p99 | off p99" for b in sizes) + " |",
          "|---:|" + "---:|---:|---:|---:|" * len(sizes)]
    for i in idles:
        cells = []
        for b in sizes:
            on, off = summary.get((b, "fewest-live", i)), summary.get((b, "off", i))
            cells += [fmt(on and on["mean_us"]), fmt(off and off["mean_us"]),
                      fmt(on and on["p99_us"]), fmt(off and off["p99_us"])]
        md.append(f"| {i:g} | " + " | ".join(cells) + " |")
    md += ["", "Compactor on worse than off (across seeds): " + ("; ".join(worse) if worse else "none") + ".", ""]
    return md


# ---------------------------------------------------------------- the plot
def burst_label(b, pol):
    size = f"{b * 4 // 1024} MiB" if b >= 256 else f"{b * 4} KiB"
    return f"{b} writes ({size}), compactor {'on' if pol != 'off' else 'off'}"


def plot(by, disk, sizes, idles, path):
    """Mean latency against the idle interval (on and off) and the write amplification."""
    plt = pyplot("bench-fig11")
    if plt is None:
        return
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 3.9), gridspec_kw={"width_ratios": [3, 2]})
    for k, b in enumerate(sizes):
        c = COLORS[k % len(COLORS)]
        for pol, ls, mk in (("fewest-live", "-", "o"), ("off", "--", "s")):
            pts = [(i, by[(b, pol, i)]["mean_us"]) for i in idles if (b, pol, i) in by]
            if pts:
                ax.plot(*zip(*pts), linestyle=ls, marker=mk, ms=4, color=c, label=burst_label(b, pol))
        pts = [(i, by[(b, "fewest-live", i)]["write_amplification"]) for i in idles
               if (b, "fewest-live", i) in by]
        ax2.plot(*zip(*pts), marker="o", ms=4, color=c, label=f"B={b}")
    for a in (ax, ax2):
        a.set_xscale("symlog", linthresh=10)
        a.set_xlabel("idle interval after each burst (ms)")
        a.grid(True, which="both", alpha=0.3)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("mean latency per 4 KiB write (µs)")
    ax.set_title(f"Bursts of random sync updates, {disk['geometry']} at 80% (Fig. 11)", fontsize=10)
    ax.legend(fontsize=7)
    ax2.set_ylim(bottom=0.9)
    ax2.set_ylabel("write amplification (data blocks)")
    ax2.set_title("Compactor on: physical / client blocks", fontsize=10)
    ax2.legend(fontsize=7)
    save(plt, fig, path)


def parse_args(argv):
    ap = run_parser("vldbench.fig11", "Figure 11: bursts and idle time, the compactor on and off")
    ap.add_argument("--burst-sizes", type=ints, required=True, help="writes per burst, e.g. '64 256'")
    ap.add_argument("--idles", type=floats, required=True, help="idle ms after each burst")
    ap.add_argument("--policy-burst", type=int, required=True)
    ap.add_argument("--policy-idles", type=floats, required=True)
    ap.add_argument("--policies", type=words, required=True)
    ap.add_argument("--warm", type=parse_warm, required=True, help="'B:BURSTS ...' warm-up per burst size")
    return ap.parse_args(argv)


def main(argv=None):
    a = parse_args(argv)
    meta = load_run_meta(a, warm_bursts=a.warm)
    rows, prow, disk = load_rows(a.run_dir, a.burst_sizes)
    one = first_seed(rows)
    by = {(r["burst"], r["policy"], r["idle_ms"]): r for r in one}
    pby = {(r["policy"], r["idle_ms"]): r for r in prow}
    problems = problems_of(rows + prow, disk)
    same = same_as_main(by, pby, a.policy_burst, a.policy_idles)
    summary = across_seeds(rows)
    worse = worse_than_off(summary)
    write_json(f"{a.run_dir}/results.json", dict(
        meta, disk=disk, rows=rows, policy_rows=prow, problems=problems, worse_than_off=worse,
        across_seeds=[dict(burst=b, policy=p, idle_ms=i, **v) for (b, p, i), v in sorted(summary.items())]))
    write_csv(f"{a.run_dir}/results.csv", rows + prow)
    md = latency_table(meta, disk, one, by, a.warm, a.burst_sizes, a.idles)
    md += seeds_table(summary, a.burst_sizes, a.idles, worse)
    md += work_table(one, by, a.burst_sizes, a.idles)
    md += policy_table(pby, a.policy_burst, a.policy_idles, a.policies, same)
    write_table(f"{a.run_dir}/table.md", md + [f"problem: {p}" for p in problems])
    plot(by, disk, a.burst_sizes, a.idles, f"{a.run_dir}/fig11.png")
    print(f"results: {a.run_dir}/{{results.json,results.csv,table.md,fig11.png}}")


if __name__ == "__main__":
    main()
