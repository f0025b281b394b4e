"""The kernel's fsync through NBD (qemu guest) and through FUSE+loop: what one fsync of a
4 KiB write costs in NBD requests and simulated time (docs/filesystems.md; not in the paper).
Input: RUN_DIR/raw/PATH-MODE-COUNT.{stats,loop}.json and meta.json.
Output: results.json, table.md in RUN_DIR.

usage: python3 -m vldbench.kernel_fsync RUN_DIR --paths "kernel fuse" --modes "inplace vld" --n N
           --base N --size SIZE --file-mib N --seed N --geometry G [--guest-kernel V]
           --fuse-gap-ms MS --run-id ID --command CMD
"""

from .common import load_json, load_run_meta, run_parser, words, write_json, write_table


def load(run_dir, key):
    """(stats file, the guest's loop counts) of run KEY."""
    return (load_json(f"{run_dir}/raw/{key}.stats.json"),
            load_json(f"{run_dir}/raw/{key}.loop.json"))


def total(s, lat):
    """The sum of a latency histogram's values: mean x count."""
    h = s[lat]
    return h["mean"] * h["count"]


def per_fsync(path, mode, a, b, loop, n):
    """What N more fsyncs cost: run B (BASE+N fsyncs) less run A (BASE fsyncs), per fsync."""
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
    return r


def compute_rows(run_dir, paths, modes, n, base):
    rows = []
    for path in paths:
        for mode in modes:
            (a, _), (b, loop) = load(run_dir, f"{path}-{mode}-{base}"), load(run_dir, f"{path}-{mode}-{base + n}")
            rows.append(per_fsync(path, mode, a, b, loop, n))
    return rows


def f(x, p=2):
    return "-" if x is None else f"{x:.{p}f}"


def table_lines(meta, rows):
    """table.md: requests and simulated time per fsync, then the write breakdown."""
    n, base = meta["n"], meta["base"]
    lines = [
        f"Per fsync of a random 4 KiB overwrite on ext4 ({n} fsyncs, difference of "
        f"{base + n}- and {base}-fsync runs; {meta['geometry']}, latency=none; simulated µs)",
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
    return lines


def parse_args(argv):
    ap = run_parser("vldbench.kernel_fsync", "the kernel's fsync through NBD and FUSE+loop")
    ap.add_argument("--paths", type=words, required=True)
    ap.add_argument("--modes", type=words, required=True)
    ap.add_argument("--n", type=int, required=True, help="the fsyncs told apart (runs of BASE and BASE+N)")
    ap.add_argument("--base", type=int, required=True)
    ap.add_argument("--size", required=True)
    ap.add_argument("--file-mib", type=int, required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--geometry", required=True)
    ap.add_argument("--guest-kernel", default="")
    ap.add_argument("--fuse-gap-ms", type=int, required=True)
    return ap.parse_args(argv)


def main(argv=None):
    a = parse_args(argv)
    meta = load_run_meta(a, n=a.n, base=a.base, size=a.size,
                file_mib=a.file_mib, seed=a.seed, geometry=a.geometry,
                guest_kernel=a.guest_kernel or None, fuse_gap_ms=a.fuse_gap_ms)
    rows = compute_rows(a.run_dir, a.paths, a.modes, a.n, a.base)
    write_json(f"{a.run_dir}/results.json", {"meta": meta, "rows": rows})
    write_table(f"{a.run_dir}/table.md", table_lines(meta, rows))
    print(f"results: {a.run_dir}/{{results.json,table.md}}")


if __name__ == "__main__":
    main()
