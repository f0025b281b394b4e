"""Figure 11 of paper 001 (section 5.5): bursts of random synchronous 4 KiB updates with idle
time after each, the compactor on and off, and the compaction policies.
Input: RUN_DIR/raw/burst*.jsonl, policies.jsonl; parameters from bench-fig11's environment.
"""
import csv, json, os, sys

from .common import fio_job, fio_mean_us, fio_percentile_us, fmt, load_json, load_jsonl, results_header, write_csv, write_json, write_table
from .plotting import pyplot


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    run_dir = argv[0]
    e = os.environ
    sizes = [int(x) for x in e["BURST_SIZES"].split()]
    idles = [float(x) for x in e["IDLES"].split()]
    pburst = int(e["POLICY_BURST"])
    pidles = [float(x) for x in e["POLICY_IDLES"].split()]
    policies = e["POLICIES"].split()
    meta = load_json(f"{run_dir}/meta.json")
    warm = {int(k): int(v) for k, v in (x.split(":") for x in e["WARM"].split())}
    meta.update(run_id=e["RUN_ID"], command=e["COMMAND"], warm_bursts=warm)


    def flat(j, run):
        c = j.get("compactor", {})
        b = j["breakdown_us"]
        on = j["compactor_on"]
        r = {
            "run": run, "burst": j["burst"], "idle_ms": j["idle_ms"], "policy": j["policy"],
            "compactor_on": on, "bursts": j["bursts"], "writes": j["writes"],
            "mean_us": j["mean_us"], **{f"{k}_us": v for k, v in b.items()},
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


    rows = []
    for b in sizes:
        for line in open(f"{run_dir}/raw/burst{b}.jsonl"):
            rows.append(flat(json.loads(line), "main"))
    prow = [flat(json.loads(line), "policies") for line in open(f"{run_dir}/raw/policies.jsonl")]
    disk = rows[0]["disk"]
    for r in rows + prow:
        del r["disk"]

    by = {(r["burst"], r["policy"], r["idle_ms"]): r for r in rows}
    pby = {(r["policy"], r["idle_ms"]): r for r in prow}
    problems = []
    for r in rows + prow:
        if abs(r["utilization"] - disk["util"]) > 0.01:
            problems.append(f"burst {r['burst']} {r['policy']} idle {r['idle_ms']:g}: utilization "
                            f"{r['utilization']:.3f}")
    # Determinism: the policy run's fewest-live points are the main run's.
    same = []
    for i in pidles:
        a, b = pby.get(("fewest-live", i)), by.get((pburst, "fewest-live", i))
        if a and b:
            same.append(a["mean_us"] == b["mean_us"] and a["blocks_moved"] == b["blocks_moved"])


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
    md += ["", "**Compactor work per point (on, fewest-live), during the measured bursts**", "",
           "| B | idle (ms) | mean µs | off µs | on/off | locate µs | tracks compacted | blocks moved | "
           "blocks/track | WA | WA+map | busy ms | busy % of idle | busy µs per write | empty tracks at end | preempted writes | "
           "preempt wait mean / max µs |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for b in sizes:
        for i in idles:
            r, off = by.get((b, "fewest-live", i)), by.get((b, "off", i))
            if not r:
                continue
            md.append("| " + " | ".join([
                str(b), f"{i:g}", fmt(r["mean_us"]), fmt(off and off["mean_us"]),
                fmt(off and r["mean_us"] / off["mean_us"], ".2f"), fmt(r["locate_us"]),
                str(r["tracks_compacted"]), str(r["blocks_moved"]), fmt(r["blocks_per_track"], ".1f"),
                fmt(r["write_amplification"], ".2f"), fmt(r["write_amplification_with_map"], ".2f"),
                fmt(r["busy_ms"]), fmt(r["busy_pct_of_idle"]), fmt(r["busy_us_per_write"]),
                str(r["empty_tracks_end"]),
                str(r["preempted_writes"]),
                f"{r['preempt_wait_mean_us']:.0f} / {r['preempt_wait_max_us']:.0f}"]) + " |")
    off_wa = {round(r["write_amplification_with_map"], 3) for r in rows if r["policy"] == "off"}
    settled = [r for r in rows if r["policy"] != "off" and r["busy_pct_of_idle"] is not None
               and r["busy_pct_of_idle"] < 90]
    md += ["", "WA = physical data blocks written (client + compactor moves) / client blocks; "
           "WA+map also counts map sectors (8 per block). Compactor off: WA 1.00, WA+map "
           + ", ".join(f"{x:.3f}" for x in sorted(off_wa)) + "."]
    if settled:
        bw = [r["busy_us_per_write"] for r in settled]
        wa = [r["write_amplification"] for r in settled]
        md.append(f"Where the compactor finished its work within the idle time (busy < 90% of it; "
                  f"{len(settled)} points): {min(bw):.0f}-{max(bw):.0f} µs of compaction per client write, "
                  f"WA {min(wa):.2f}-{max(wa):.2f}.")
    md.append("")

    md += [f"**Compaction policies**, B={pburst}, compactor on", "",
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
    md += [f"problem: {p}" for p in problems]

    with open(f"{run_dir}/results.json", "w") as f:
        json.dump(dict(meta, disk=disk, rows=rows, policy_rows=prow, problems=problems), f, indent=1)
    with open(f"{run_dir}/results.csv", "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows + prow)
    open(f"{run_dir}/table.md", "w").write("\n".join(md) + "\n")
    print("\n".join(md))

    plt = pyplot("bench-fig11")
    if plt is None:
        return
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 3.9), gridspec_kw={"width_ratios": [3, 2]})
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]
    for k, b in enumerate(sizes):
        c = colors[k % len(colors)]
        for pol, ls, mk in (("fewest-live", "-", "o"), ("off", "--", "s")):
            pts = [(i, by[(b, pol, i)]["mean_us"]) for i in idles if (b, pol, i) in by]
            if pts:
                ax.plot(*zip(*pts), linestyle=ls, marker=mk, ms=4, color=c,
                        label=f"{b} writes ({b * 4 // 1024 if b >= 256 else b * 4}"
                              f"{' MiB' if b >= 256 else ' KiB'}), compactor {'on' if pol != 'off' else 'off'}")
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
    fig.tight_layout()
    fig.savefig(f"{run_dir}/fig11.png", dpi=90)
    print(f"results: {run_dir}/{{results.json,results.csv,table.md,fig11.png}}")


if __name__ == "__main__":
    main()
