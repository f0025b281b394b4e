"""Pacing fidelity (docs/pacing.md, not in the paper): latency=sleep against latency=none, fio's
view beside the simulated time.
usage: python3 -m vldbench.pacing RUN_DIR RESULTS_CSV (parameters from bench-pacing's environment)
"""
import csv, json, os, sys

from .common import fio_job, fio_mean_us, fio_percentile_us, fmt, load_json, load_jsonl, results_header, write_csv, write_json, write_table
from .plotting import pyplot


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    run_dir, csv_path = argv[0], argv[1]
    e = os.environ
    meta = {
        "run_id": e["RUN_ID"], "date_utc": e["STAMP"], "command": e["COMMAND"],
        "commit": e["COMMIT"], "geometry": e["GEOMETRY"], "size": e["SIZE"],
        "runtime_s": int(e["RUNTIME"]), "image_fs": e["FSTYPE"], "image_dir": e["TMP_PARENT"],
        "kernel": os.uname().release, "cpus": os.cpu_count(),
        "loadavg_after": open("/proc/loadavg").read().split()[:3],
    }


    def read_sys(path):
        try:
            return open(path).read().strip()
        except OSError:
            return "unknown"


    # What sets the sleep granularity (docs/pacing.md): timer slack, idle driver.
    meta["timerslack_ns"] = read_sys("/proc/self/timerslack_ns")
    meta["cpuidle_driver"] = read_sys("/sys/devices/system/cpu/cpuidle/current_driver")


    def row(latency):
        fio = load_json(f"{run_dir}/fio-{latency}.json")
        job = fio["jobs"][0]
        if job["error"]:
            sys.exit(f"bench-pacing: fio reported error {job['error']} (latency={latency})")
        st = load_json(f"{run_dir}/stats-{latency}.json")
        w, s = job["write"], job["sync"]
        r = {
            "latency": latency,
            "fio_write_clat_us": fio_mean_us(w["clat_ns"]),
            "fio_sync_us": fio_mean_us(s["lat_ns"]),
            "fio_write_slat_us": w["slat_ns"]["mean"] / 1e3,
            "fio_write_clat_p50_us": fio_percentile_us(w["clat_ns"], 50),
            "fio_write_clat_p99_us": fio_percentile_us(w["clat_ns"], 99),
            "fio_sync_p50_us": fio_percentile_us(s["lat_ns"], 50),
            "fio_sync_p99_us": fio_percentile_us(s["lat_ns"], 99),
            "sim_write_us": st["write_latency_us"]["mean"],
            "sim_flush_us": st["flush_latency_us"]["mean"],
            "sim_write_p50_us": st["write_latency_us"]["p50"],
            "sim_write_p99_us": st["write_latency_us"]["p99"],
            "sim_queue_wait_us": st["queue_wait_us"]["mean"],
            "iops": w["iops"],
            "fio_writes": w["total_ios"],
            "fio_syncs": s["total_ios"],
            "plugin_writes": st["requests"]["write"],
            "plugin_flushes": st["requests"]["flush"],
            "backing_syncs": st["backing_syncs"],
        }
        r["fio_total_us"] = r["fio_write_clat_us"] + r["fio_sync_us"]
        r["sim_total_us"] = r["sim_write_us"] + r["sim_flush_us"]
        r["gap_us"] = r["fio_total_us"] - r["sim_total_us"]
        r["period_us"] = 1e6 / r["iops"] if r["iops"] else 0.0  # wall time per write+flush
        if r["plugin_writes"] != r["fio_writes"] or r["plugin_flushes"] != r["fio_syncs"]:
            print(f"  note: latency={latency}: fio counted {r['fio_writes']} writes/"
                  f"{r['fio_syncs']} syncs, the plugin {r['plugin_writes']}/{r['plugin_flushes']}")
        return r


    rows = [row("sleep"), row("none")]
    by = {r["latency"]: r for r in rows}
    excess = by["sleep"]["gap_us"] - by["none"]["fio_total_us"]

    cols = [("latency mode", "latency", "s"),
            ("fio write clat mean (us)", "fio_write_clat_us", ".1f"),
            ("fio sync (flush) mean (us)", "fio_sync_us", ".1f"),
            ("fio per-IO total (us)", "fio_total_us", ".1f"),
            ("sim write mean (us)", "sim_write_us", ".1f"),
            ("sim flush mean (us)", "sim_flush_us", ".1f"),
            ("sim write+flush (us)", "sim_total_us", ".1f"),
            ("gap = fio - sim (us)", "gap_us", ".1f"),
            ("IOPS", "iops", ".1f")]
    cells = [[h for h, _, _ in cols]] + [[format(r[k], f) for _, k, f in cols] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
    line = lambda c: "| " + " | ".join(x.ljust(w) if i == 0 else x.rjust(w)
                                        for i, (x, w) in enumerate(zip(c, widths))) + " |"
    print()
    print(f"{meta['command']}   ({meta['date_utc']}, commit {meta['commit']}, image on {meta['image_fs']})")
    print(line(cells[0]))
    print("|" + "|".join(("-" * (w + 1) + ":") if i else (":" + "-" * (w + 1))
                         for i, w in enumerate(widths)) + "|")
    for c in cells[1:]:
        print(line(c))
    print()
    print(f"floor    = total(none)               = {by['none']['fio_total_us']:8.1f} us per write+flush")
    print(f"gap      = fio total - simulated     = {by['sleep']['gap_us']:8.1f} us (latency=sleep)")
    print(f"excess   = gap(sleep) - total(none)  = {excess:8.1f} us per write+flush"
          f" ({100 * excess / by['sleep']['sim_total_us']:.1f}% of the simulated time)")
    print("expected: with latency=sleep the gap is the transport/host floor, i.e. about total(none),"
          " so excess ~ 0")

    result = dict(meta, excess_us=excess, floor_us=by["none"]["fio_total_us"], rows=rows)
    with open(f"{run_dir}/results.json", "w") as f:
        json.dump(result, f, indent=2)
    new = not os.path.exists(csv_path)
    fields = ["run_id", "date_utc", "commit", "geometry", "size", "runtime_s", "image_fs"] + \
        list(rows[0].keys()) + ["excess_us"]
    with open(csv_path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        if new:
            w.writeheader()
        for r in rows:
            w.writerow(dict(meta, **r, excess_us=excess))
    print(f"results: {run_dir}/results.json (raw fio and stats JSON beside it), {csv_path}")


if __name__ == "__main__":
    main()
