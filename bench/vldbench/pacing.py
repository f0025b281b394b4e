"""Pacing fidelity (docs/pacing.md, not in the paper): latency=sleep against latency=none, fio's
view beside the simulated time.
Input: RUN_DIR/fio-{sleep,none}.json, stats-{sleep,none}.json.
Output: RUN_DIR/results.json, a row per mode appended to RESULTS_CSV, the table on stdout.

usage: python3 -m vldbench.pacing RUN_DIR RESULTS_CSV --run-id ID --date UTC --command CMD
           --commit C --geometry G --size SIZE --runtime S --image-fs FS --image-dir DIR
"""
import argparse, csv, json, os, sys

from .common import fio_mean_us, fio_percentile_us, load_json

COLS = [("latency mode", "latency", "s"),
        ("fio write clat mean (us)", "fio_write_clat_us", ".1f"),
        ("fio sync (flush) mean (us)", "fio_sync_us", ".1f"),
        ("fio per-IO total (us)", "fio_total_us", ".1f"),
        ("sim write mean (us)", "sim_write_us", ".1f"),
        ("sim flush mean (us)", "sim_flush_us", ".1f"),
        ("sim write+flush (us)", "sim_total_us", ".1f"),
        ("gap = fio - sim (us)", "gap_us", ".1f"),
        ("IOPS", "iops", ".1f")]


def read_sys(path):
    try:
        return open(path).read().strip()
    except OSError:
        return "unknown"


def host_meta(a):
    """The run's parameters and this host (what sets the sleep granularity: docs/pacing.md)."""
    return {
        "run_id": a.run_id, "date_utc": a.date, "command": a.command,
        "commit": a.commit, "geometry": a.geometry, "size": a.size,
        "runtime_s": a.runtime, "image_fs": a.image_fs, "image_dir": a.image_dir,
        "kernel": os.uname().release, "cpus": os.cpu_count(),
        "loadavg_after": open("/proc/loadavg").read().split()[:3],
        "timerslack_ns": read_sys("/proc/self/timerslack_ns"),
        "cpuidle_driver": read_sys("/sys/devices/system/cpu/cpuidle/current_driver"),
    }


def mode_row(latency, fio, st):
    """fio's view (write + flush) beside the simulated time, for one latency= mode."""
    job = fio["jobs"][0]
    if job["error"]:
        sys.exit(f"bench-pacing: fio reported error {job['error']} (latency={latency})")
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


def excess_us(by):
    """What latency=sleep adds beyond the transport floor (total with latency=none)."""
    return by["sleep"]["gap_us"] - by["none"]["fio_total_us"]


def table_lines(meta, rows, excess):
    """The aligned table and the floor / gap / excess lines, as printed."""
    by = {r["latency"]: r for r in rows}
    cells = [[h for h, _, _ in COLS]] + [[format(r[k], f) for _, k, f in COLS] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLS))]
    line = lambda c: "| " + " | ".join(x.ljust(w) if i == 0 else x.rjust(w)
                                        for i, (x, w) in enumerate(zip(c, widths))) + " |"
    return ["", f"{meta['command']}   ({meta['date_utc']}, commit {meta['commit']}, image on {meta['image_fs']})",
            line(cells[0]),
            "|" + "|".join(("-" * (w + 1) + ":") if i else (":" + "-" * (w + 1)) for i, w in enumerate(widths)) + "|",
            *[line(c) for c in cells[1:]], "",
            f"floor    = total(none)               = {by['none']['fio_total_us']:8.1f} us per write+flush",
            f"gap      = fio total - simulated     = {by['sleep']['gap_us']:8.1f} us (latency=sleep)",
            f"excess   = gap(sleep) - total(none)  = {excess:8.1f} us per write+flush"
            f" ({100 * excess / by['sleep']['sim_total_us']:.1f}% of the simulated time)",
            "expected: with latency=sleep the gap is the transport/host floor, i.e. about total(none),"
            " so excess ~ 0"]


def append_csv(csv_path, meta, rows, excess):
    """A row per mode appended to CSV_PATH (the header when it is new)."""
    new = not os.path.exists(csv_path)
    fields = ["run_id", "date_utc", "commit", "geometry", "size", "runtime_s", "image_fs"] + \
        list(rows[0].keys()) + ["excess_us"]
    with open(csv_path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        if new:
            w.writeheader()
        for r in rows:
            w.writerow(dict(meta, **r, excess_us=excess))


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="vldbench.pacing", description="latency=sleep against latency=none")
    ap.add_argument("run_dir")
    ap.add_argument("results_csv", help="the CSV across runs, appended to")
    for opt in ("--run-id", "--date", "--command", "--commit", "--geometry", "--size", "--image-fs",
                "--image-dir"):
        ap.add_argument(opt, required=True)
    ap.add_argument("--runtime", type=int, required=True, help="fio's runtime, s")
    return ap.parse_args(argv)


def main(argv=None):
    a = parse_args(argv)
    meta = host_meta(a)
    rows = [mode_row(lat, load_json(f"{a.run_dir}/fio-{lat}.json"), load_json(f"{a.run_dir}/stats-{lat}.json"))
            for lat in ("sleep", "none")]
    by = {r["latency"]: r for r in rows}
    excess = excess_us(by)
    print("\n".join(table_lines(meta, rows, excess)))
    with open(f"{a.run_dir}/results.json", "w") as f:
        json.dump(dict(meta, excess_us=excess, floor_us=by["none"]["fio_total_us"], rows=rows), f, indent=2)
    append_csv(a.results_csv, meta, rows, excess)
    print(f"results: {a.run_dir}/results.json (raw fio and stats JSON beside it), {a.results_csv}")


if __name__ == "__main__":
    main()
