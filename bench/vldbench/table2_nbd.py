"""Table 2 of paper 001 (section 5.4) through the plugin, as a user would run
it (scripts/bench-table2-nbd): an aged disk, served again with
latency=sleep and the compactor on, left idle, then random synchronous 4 KiB
updates, vld against in place; beside `vld-bench table2` on the same disk.

Subcommands (the bash script serves the image between them):
  prep URI AGE SEED fua|flush fill the whole export with 1 MiB writes, then
                              AGE random 4 KiB FUA writes (with `flush`:
                              each write followed by a flush, as vld-bench
                              ages), served with latency=none compactor=off
  measure URI IDLE_S WRITES SEED CONNECT OUT
                              CONNECT=late: sleep IDLE_S, then connect;
                              early: connect, then sleep IDLE_S; then WRITES
                              random 4 KiB FUA writes; what the client saw
                              (wall times) as JSON to OUT
  report RUN_DIR --run-id ID --command CMD --writes "N ..."
                              raw/MODE-WRITES.{client,stats}.json (and
                              .idle.json: the idle server's, when the writes
                              went to another) and raw/bench-WRITES.jsonl
                              (vld-bench table2) -> results.json,
                              results.csv, table.md

The latencies compared are the plugin's simulated write latencies (its
stats file, statsfile=: the measured writes are the only requests that
server saw) and vld-bench's.
"""
import json
import os
import random
import sys
import time

from .common import fmt, load_json, load_jsonl, load_run_meta, results_header, run_parser, write_csv, \
    write_json, write_table

BLOCK = 4096


def connect(uri):
    import nbd  # Debian's python3-nbd: /usr/bin/python3 only
    h = nbd.NBD()
    h.connect_uri(uri)
    return h


def prep(uri, age, seed, flush=False):
    import nbd
    h = connect(uri)
    size = h.get_size()
    chunk = random.Random(seed).randbytes(1 << 20)
    for off in range(0, size, 1 << 20):
        h.pwrite(chunk[:min(1 << 20, size - off)], off)
    h.flush()
    rng = random.Random(seed + 1)
    for _ in range(age):
        data, off = rng.randbytes(BLOCK), rng.randrange(size // BLOCK) * BLOCK
        if flush:
            h.pwrite(data, off)
            h.flush()
        else:
            h.pwrite(data, off, nbd.CMD_FLAG_FUA)
    h.shutdown()


def measure(uri, idle_s, writes, seed, when, out):
    import nbd
    t0 = time.monotonic()
    if when == "late":
        time.sleep(idle_s)
    c0 = time.monotonic()
    h = connect(uri)
    connect_s = time.monotonic() - c0
    if when == "early":
        time.sleep(idle_s)
    size = h.get_size()
    rng = random.Random(seed + 2)
    w0 = time.monotonic()
    for _ in range(writes):
        h.pwrite(rng.randbytes(BLOCK), rng.randrange(size // BLOCK) * BLOCK, nbd.CMD_FLAG_FUA)
    wall = time.monotonic() - w0
    h.shutdown()
    write_json(out, {"idle_s": idle_s, "connect": when, "writes": writes, "connect_wall_s": connect_s,
                     "idle_then_connect_wall_s": c0 + connect_s - t0,
                     "wall_us_per_write": 1e6 * wall / writes if writes else None})


def plugin_row(run_dir, mode, writes):
    """What the server said of its measured writes, or None if the run is missing."""
    stats, client = (f"{run_dir}/raw/{mode}-{writes}.{k}.json" for k in ("stats", "client"))
    if not (os.path.exists(stats) and os.path.exists(client)):
        return None
    s, c = load_json(stats), load_json(client)
    idle_path = f"{run_dir}/raw/{mode}-{writes}.idle.json"
    idle = load_json(idle_path) if os.path.exists(idle_path) else s  # the server that idled
    comp = idle.get("compactor") or {}
    return {"mode": mode, "writes": writes, "requests_write": s["requests"]["write"],
            "mean_us": s["write_latency_us"]["mean"], "p99_us": s["write_latency_us"]["p99"],
            "latency": s.get("latency", "sleep"),
            "idle_steps": idle["idle_steps"], "tracks_compacted": comp.get("tracks_compacted"),
            "blocks_moved": comp.get("blocks_moved"), "utilization": s["utilization"],
            "connect_wall_s": c["connect_wall_s"], "idle_s": c["idle_s"], "connect": c["connect"]}


def bench_rows(run_dir, writes):
    """vld-bench table2's two lines (vld, inplace) for WRITES, by mode."""
    path = f"{run_dir}/raw/bench-{writes}.jsonl"
    return {j["mode"]: j for j in load_jsonl(path)} if os.path.exists(path) else {}


def compare(run_dir, writes_list):
    rows = []
    for w in writes_list:
        vld, inplace, bench = plugin_row(run_dir, "vld", w), plugin_row(run_dir, "inplace", w), \
            bench_rows(run_dir, w)
        if not (vld and inplace):
            continue
        r = {"writes": w, "vld_mean_us": vld["mean_us"], "inplace_mean_us": inplace["mean_us"],
             "ratio": inplace["mean_us"] / vld["mean_us"], "vld_idle_steps": vld["idle_steps"],
             "vld_tracks_compacted": vld["tracks_compacted"], "vld_p99_us": vld["p99_us"],
             "connect_wall_s": vld["connect_wall_s"], "idle_s": vld["idle_s"], "connect": vld["connect"],
             "requests_write": vld["requests_write"], "writes_latency": vld["latency"]}
        if "vld" in bench and "inplace" in bench:
            r.update(bench_vld_mean_us=bench["vld"]["mean_us"], bench_inplace_mean_us=bench["inplace"]["mean_us"],
                     bench_ratio=bench["inplace"]["mean_us"] / bench["vld"]["mean_us"],
                     bench_tracks_compacted=bench["vld"]["compactor_after"]["tracks_compacted"],
                     bench_compaction_steps=bench["vld"]["compaction_steps"])
        rows.append(r)
    return rows


def table(rows):
    md = ["| writes (latency=) | idle (s), connect | plugin: idle steps | tracks compacted | vld µs | in place µs | "
          "**in place / vld** | vld-bench table2: tracks compacted | vld µs | in place µs | **ratio** |",
          "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        md.append("| " + " | ".join([
            f"{r['writes']} ({r['writes_latency']})", f"{r['idle_s']:g}, {r['connect']}", str(r["vld_idle_steps"]),
            str(r["vld_tracks_compacted"]), fmt(r["vld_mean_us"]), fmt(r["inplace_mean_us"]),
            f"**{r['ratio']:.2f}x**", fmt(r.get("bench_tracks_compacted")), fmt(r.get("bench_vld_mean_us")),
            fmt(r.get("bench_inplace_mean_us")),
            f"**{r['bench_ratio']:.2f}x**" if "bench_ratio" in r else "-"]) + " |")
    return md + [""]


def report(argv):
    ap = run_parser("vldbench.table2_nbd report", __doc__)
    ap.add_argument("--writes", required=True, help="the numbers of measured writes, e.g. \"1000 5000\"")
    args = ap.parse_args(argv)
    meta = load_run_meta(args)
    rows = compare(args.run_dir, [int(x) for x in args.writes.split()])
    write_json(f"{args.run_dir}/results.json", {"meta": meta, "rows": rows})
    write_csv(f"{args.run_dir}/results.csv", rows)
    md = [results_header(meta), "",
          "Mean simulated µs per random 4 KiB FUA write (the plugin's stats file; vld-bench's simulated "
          "latency), vld with its compactor against in place, after the server was left idle; the "
          "plugin's image aged through NBD, vld-bench's in-process.", ""]
    md += table(rows)
    for r in rows:
        md.append(f"- {r['writes']} writes: the first connection took {r['connect_wall_s']:.2f} s of wall "
                  f"time (the writable open and the idle steps caught up on).")
    write_table(f"{args.run_dir}/table.md", md)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in ("prep", "measure", "report"):
        print("usage: python3 -m vldbench.table2_nbd prep|measure|report ... (see the module's doc)",
              file=sys.stderr)
        return 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "prep":
        prep(rest[0], int(rest[1]), int(rest[2]), len(rest) > 3 and rest[3] == "flush")
    elif cmd == "measure":
        measure(rest[0], float(rest[1]), int(rest[2]), int(rest[3]), rest[4], rest[5])
    else:
        report(rest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
