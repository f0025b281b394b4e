"""Memory per GiB exported and the cost of opening after a clean stop and after kill -9,
against a full-disk scan (paper 001 section 3: recovery from the log tail).
Input: RUN_DIR/raw/*.status.json, *.stats.json, *.wall.json, writes.fio.json and meta.json.
Output: results.json, table.md in RUN_DIR.

usage: python3 -m vldbench.recovery RUN_DIR --run-id ID --command CMD
"""
import math

from .common import fio_job, load_json, load_run_meta, results_header, run_parser, write_json, write_table

PHASES = ("clean", "clean_nobuf", "unclean", "unclean_nobuf", "clean2")
LABELS = {"clean": "C: clean, after the writes",
          "clean_nobuf": "C, track_buffer=off",
          "unclean": "U: after kill -9",
          "unclean_nobuf": "U, track_buffer=off",
          "clean2": "C2: clean, after U is written and closed"}


def load_run(run_dir):
    """Every raw file of the run, by name (without raw/ and .json)."""
    raw = lambda name: load_json(f"{run_dir}/raw/{name}.json")
    names = ["base.status", "open.status", "writes.status", "writes.stats"]
    names += [f"{p}.{k}" for p in PHASES for k in ("stats", "wall")]
    run = {n: raw(n) for n in names}
    run["writes.fio"] = fio_job(f"{run_dir}/raw/writes.fio.json")
    return run


def memory(base, opened, after, geo):
    """VmRSS at each step, per GiB exported, and the map and bitmap's model size."""
    export_gib = geo["export_bytes"] / 2**30
    rss = {
        "baseline_kib": base["VmRSS"], "open_kib": opened["VmRSS"], "after_writes_kib": after["VmRSS"],
        "after_writes_anon_kib": after.get("RssAnon"), "after_writes_hwm_kib": after["VmHWM"],
        "after_writes_file_kib": after.get("RssFile"), "after_writes_shmem_kib": after.get("RssShmem"),
        "threads": after.get("Threads"),
    }
    rss["per_gib_mib"] = (after["VmRSS"] - base["VmRSS"]) / 1024 / export_gib
    blocks = geo["export_bytes"] // geo["block_bytes"]
    tracks = geo["simulated_cylinders"] * geo["tracks_per_cylinder"]
    rss["model_map_mib_per_gib"] = 8 * blocks / 2**20 / export_gib  # 8-byte MapEntry per block
    rss["model_free_map_mib_per_gib"] = (tracks * geo["sectors_per_track"] / 8 + 4 * tracks) / 2**20 / export_gib
    return rss


def writes_summary(w, job):
    return {"writes": w["requests"]["write"], "flushes": w["requests"]["flush"],
            "iops": job["write"]["iops"], "runtime_s": job["job_runtime"] / 1e3,
            "utilization_pct": 100 * w["utilization"],
            "sim_write_mean_us": w["write_latency_us"]["mean"],
            "map_sectors_written": w["vld"]["map_sectors_written"],
            "live_map_sectors": w["vld"]["live_map_sectors"],
            "log_records_written": w["vld"]["log_records_written"]}


def seek_ms(seek, d):
    """The drive's seek curve (geometry.seek: A,B,D,C,E in ms) over D cylinders."""
    a, b, bound, c, e = (float(x) for x in seek.split(","))
    return 0.0 if d == 0 else (a + b * math.sqrt(d) if d < bound else c + e * d)


def full_scan(geo):
    """Reading every track: a revolution each, head switches, one-cylinder seeks."""
    cyl, tracks = geo["simulated_cylinders"], geo["simulated_cylinders"] * geo["tracks_per_cylinder"]
    rev_ms = geo["revolution_us"] / 1e3
    return {
        "tracks": tracks, "sectors": tracks * geo["sectors_per_track"],
        "revolutions_only_ms": tracks * rev_ms,
        "simulated_ms": tracks * rev_ms + (tracks - cyl) * geo["head_switch_us"] / 1e3
                        + (cyl - 1) * seek_ms(geo["seek"], 1),
    }


def opens(run, full):
    """Each open's recovery.* beside the full scan."""
    phases = {}
    for name in PHASES:
        r = dict(run[f"{name}.stats"]["recovery"])
        r["wall_ms_start_to_exit"] = run[f"{name}.wall"]["wall_ms_start_to_exit"]
        r["vs_full_scan_time_pct"] = 100 * r["simulated_ms"] / full["simulated_ms"]
        r["vs_full_scan_sectors_pct"] = 100 * r["sectors_read"] / full["sectors"]
        phases[name] = r
    return phases


def compute(meta, run):
    """results.json: memory, the writes, the full scan and each open."""
    geo = run["writes.stats"]["geometry"]
    full = full_scan(geo)
    rec = opens(run, full)
    return dict(meta, rss=memory(run["base.status"], run["open.status"], run["writes.status"], geo),
                writes=writes_summary(run["writes.stats"], run["writes.fio"]), full_scan_estimate=full,
                recovery=rec, unclean_vs_clean=unclean_ratio(rec), export_bytes=geo["export_bytes"], platter_bytes=geo["platter_bytes"],
                simulated_cylinders=geo["simulated_cylinders"])


def memory_lines(res, geo):
    rss, writes = res["rss"], res["writes"]
    export_gib = geo["export_bytes"] / 2**30
    return [f"Image: {export_gib:.0f} GiB export, {geo['name']}, {res['simulated_cylinders']} cylinders "
            f"({geo['platter_bytes'] / 2**30:.2f} GiB of platters); after the writes: "
            f"{writes['writes']} writes, {writes['flushes']} flushes at {writes['iops']:.0f} IOPS, "
            f"utilization {writes['utilization_pct']:.1f}%, {writes['live_map_sectors']} live map sectors.", "",
            "**Memory** (nbdkit VmRSS)", "",
            "| | VmRSS (MiB) |", "|---|---:|",
            f"| baseline: 64M image, after 1000 writes | {rss['baseline_kib'] / 1024:.1f} |",
            f"| {export_gib:.0f} GiB image, just opened | {rss['open_kib'] / 1024:.1f} |",
            f"| {export_gib:.0f} GiB image, after the writes (RssAnon {(rss['after_writes_anon_kib'] or 0) / 1024:.1f}, "
            f"VmHWM {rss['after_writes_hwm_kib'] / 1024:.1f}) | {rss['after_writes_kib'] / 1024:.1f} |", "",
            f"RSS per GiB exported: ({rss['after_writes_kib'] / 1024:.1f} - {rss['baseline_kib'] / 1024:.1f}) / "
            f"{export_gib:.0f} = **{rss['per_gib_mib']:.2f} MiB/GiB** (indirection map alone: "
            f"{rss['model_map_mib_per_gib']:.2f} MiB/GiB; free-space bitmap: {rss['model_free_map_mib_per_gib']:.2f})"]


def open_lines(res, geo):
    full = res["full_scan_estimate"]
    rev_ms = geo["revolution_us"] / 1e3
    md = ["**Opening the image** (recovery.* from the stats file; simulated = on the modelled drive; "
          "scattered = map sectors walked that requests wrote since the last checkpoint; tracks walked = the "
          "tracks the walked map sectors lie on; data read = "
          "candidates' data blocks read on their own, not in the window scan)", "",
          "| open | method | sectors read | map sectors walked | scattered | tracks walked | tracks scanned | candidates | "
          "data read | simulated (ms) | wall (ms) | nbdkit start to exit (ms) | vs full scan (time) |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in res["recovery"].items():
        md.append(f"| {LABELS[name]} | {r['method']} | {r['sectors_read']} | {r['map_sectors_walked']} | "
                  f"{r.get('scattered_walked', '-')} | {r.get('tracks_walked', '-')} | {r['tracks_scanned']} | {r['candidates']} | "
                  f"{r.get('data_blocks_read', r['data_blocks_checked'])} | {r['simulated_ms']:.0f} | "
                  f"{r['wall_ms']:.0f} | {r['wall_ms_start_to_exit']} | {r['vs_full_scan_time_pct']:.1f}% |")
    md.append(f"| full-disk scan (estimate) | every track | {full['sectors']} | - | - | - | {full['tracks']} | - | - | "
              f"{full['simulated_ms']:.0f} | - | - | 100% |")
    rec = res["recovery"]
    md += ["", f"**After kill -9 / clean open: {unclean_ratio(rec):.2f}x** simulated "
           f"({rec['unclean']['simulated_ms'] / 1e3:.2f} s against {rec['clean']['simulated_ms'] / 1e3:.2f} s; "
           f"wall {rec['unclean']['wall_ms']:.0f} against {rec['clean']['wall_ms']:.0f} ms)"]
    md += ["", f"Full scan: {full['tracks']} tracks x {rev_ms:.1f} ms = {full['revolutions_only_ms'] / 1e3:.1f} s "
           f"of revolutions, {full['simulated_ms'] / 1e3:.1f} s with head switches and one-cylinder seeks."]
    return md


def unclean_ratio(rec):
    """How much longer the open after kill -9 took than the clean one (simulated)."""
    return rec["unclean"]["simulated_ms"] / max(rec["clean"]["simulated_ms"], 1e-9)


def table_lines(meta, res, geo):
    return [results_header(meta), ""] + memory_lines(res, geo) + [""] + open_lines(res, geo)


def main(argv=None):
    a = run_parser("vldbench.recovery", "memory per GiB and the cost of opening").parse_args(argv)
    meta = load_run_meta(a)
    run = load_run(a.run_dir)
    res = compute(meta, run)
    write_json(f"{a.run_dir}/results.json", res)
    print()
    write_table(f"{a.run_dir}/table.md", table_lines(meta, res, run["writes.stats"]["geometry"]))
    print(f"results: {a.run_dir}/{{results.json,table.md}}")


if __name__ == "__main__":
    main()
