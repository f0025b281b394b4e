"""The kernel's fsync through NBD (qemu guest) and through FUSE+loop: what one fsync of a
4 KiB write costs in NBD requests and simulated time (docs/filesystems.md; not in the paper).
Input: RUN_DIR/raw/KEY.{stats,loop}.json; parameters from bench-kernel-fsync's environment.
"""
import json, os, sys

from .common import fio_job, fio_mean_us, fio_percentile_us, fmt, load_json, load_jsonl, results_header, write_csv, write_json, write_table
from .plotting import pyplot


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    run_dir = argv[0]
    e = os.environ
    n, base = int(e["N"]), int(e["BASE"])
    meta = load_json(f"{run_dir}/meta.json")
    meta.update(run_id=e["RUN_ID"], command=e["COMMAND"], n=n, base=base, size=e["SIZE"],
                file_mib=int(e["FILE_MIB"]), seed=int(e["SEED"]), geometry=e["GEOMETRY"],
                guest_kernel=e["GUEST_KERNEL"] or None, fuse_gap_ms=int(e["FUSE_GAP_MS"]))


    def load(key):
        return (load_json(f"{run_dir}/raw/{key}.stats.json"),
                load_json(f"{run_dir}/raw/{key}.loop.json"))


    def total(s, lat):  # sum of a latency histogram's values: mean x count
        h = s[lat]
        return h["mean"] * h["count"]


    rows = []
    for path in e["PATHS"].split():
        for mode in e["MODES"].split():
            (a, _), (b, loop) = load(f"{path}-{mode}-{base}"), load(f"{path}-{mode}-{base + n}")
            ra, rb = a["requests"], b["requests"]
            d = {k: rb[k] - ra[k] for k in rb}
            writes = d["write"]
            r = {"path": path, "mode": mode, "fsyncs": n}
            for k in ("write", "write_fua", "flush", "read", "trim", "zero", "errors"):
                r[f"{k}_per_fsync"] = d[k] / n
            r["write_kib_per_fsync"] = (b["bytes_written"] - a["bytes_written"]) / 1024 / n
            r["backing_syncs_per_fsync"] = (b["backing_syncs"] - a["backing_syncs"]) / n
            r["mean_write_us"] = (total(b, "write_latency_us") - total(a, "write_latency_us")) / writes if writes else None
            nf = b["flush_latency_us"]["count"] - a["flush_latency_us"]["count"]
            r["mean_flush_us"] = (total(b, "flush_latency_us") - total(a, "flush_latency_us")) / nf if nf else None
            r["drive_us_per_fsync"] = (b["busy_us"] - a["busy_us"]) / n
            # breakdown_us is a mean per write request: weight by the counts.
            ca, cb = a["write_latency_us"]["count"], b["write_latency_us"]["count"]
            r["breakdown_us_per_write"] = {k: (b["breakdown_us"][k] * cb - a["breakdown_us"][k] * ca) / writes
                                           for k in b["breakdown_us"]} if writes else None
            if mode == "vld":
                va, vb = a["vld"], b["vld"]
                r["vld_records_per_fsync"] = (vb["log_records_written"] - va["log_records_written"]) / n
                r["vld_map_sectors_per_fsync"] = (vb["map_sectors_written"] - va["map_sectors_written"]) / n
            m = loop["n"]
            r["block_layer_per_fsync"] = {k: loop[k] / m for k in ("writes", "write_kib", "flushes", "reads", "discards")}
            r["wall_ms_per_fsync"] = 1000 * loop["secs"] / m
            r["runs"] = {"base": {"requests": ra, "backing_syncs": a["backing_syncs"]},
                         "measured": {"requests": rb, "backing_syncs": b["backing_syncs"]}}
            rows.append(r)

    json.dump({"meta": meta, "rows": rows}, open(f"{run_dir}/results.json", "w"), indent=1)


    def f(x, p=2):
        return "-" if x is None else f"{x:.{p}f}"


    lines = [
        f"Per fsync of a random 4 KiB overwrite on ext4 ({n} fsyncs, difference of "
        f"{base + n}- and {base}-fsync runs; {e['GEOMETRY']}, latency=none; simulated µs)",
        "",
        "| path | mode | NBD writes | of them FUA | flushes | KiB written | backing syncs "
        "| mean sim. write (µs) | mean sim. flush (µs) | sim. drive time per fsync (µs) "
        "| block layer: writes / flushes | wall ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        bl = r["block_layer_per_fsync"]
        lines.append(
            f"| {r['path']} | {r['mode']} | {f(r['write_per_fsync'])} | {f(r['write_fua_per_fsync'])} "
            f"| {f(r['flush_per_fsync'])} | {f(r['write_kib_per_fsync'], 1)} | {f(r['backing_syncs_per_fsync'])} "
            f"| {f(r['mean_write_us'], 0)} | {f(r['mean_flush_us'], 0)} | {f(r['drive_us_per_fsync'], 0)} "
            f"| {f(bl['writes'])} / {f(bl['flushes'])} | {f(r['wall_ms_per_fsync'], 1)} |")
    lines += ["", "Simulated write breakdown per NBD write of the loop (µs):", "",
              "| path | mode | overhead | seek | head switch | rotation | transfer |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        bd = r["breakdown_us_per_write"] or {}
        lines.append(f"| {r['path']} | {r['mode']} | " + " | ".join(
            f(bd.get(k), 1) for k in ("overhead", "seek", "head_switch", "rotation", "transfer")) + " |")
    if meta.get("guest_kernel"):
        lines += ["", f"kernel path: guest kernel {meta['guest_kernel']} under qemu TCG; "
                      f"fuse path: this host's kernel {meta['kernel']}."]
    text = "\n".join(lines) + "\n"
    open(f"{run_dir}/table.md", "w").write(text)
    print(text, end="")
    print(f"results: {run_dir}/{{results.json,table.md}}")


if __name__ == "__main__":
    main()
