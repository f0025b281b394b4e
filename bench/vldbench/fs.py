"""What a user of a real file system sees on the simulated drive (paper 001,
sections 5.1 and 5.2): the half of scripts/bench-fs that is not mounting.

Subcommands (bench-fs calls them as `python3 -m vldbench.fs ...`):
  snap STATS OUT          copy the first rewrite of the stats file >= 0.1 s from now
  op KIND ARGS...         a timed file operation (create/read/delete small files,
                          large-file phases), its JSON on stdout
  requests LOG FROM TO    nbdkit's log filter's requests between two byte offsets
                          of LOG (vldbench.fs_sqlite)
  report fio|smallfile|largefile|sqlite RUN_DIR --command CMD --modes M
         --geometry G --size S --compactor C [--file-mb N --runtime S | --fs-list L
         --files N --file-kb N | --lf-mb N | --sql-tx N --sql-rows MIN MAX
         --ext4-blocks B --loop-sector N]
                          results.json, table.md and fs-*.png from the run's raw/

The paper's numbers: section 5.1 (small files: create, read, delete on UFS
with and without a VLD) and section 5.2 (large file phases).
"""
import argparse, functools, json, os, random, sys, time

from . import fs_sqlite
from .common import (fio_job, fio_percentile_us, fmt, ints, load_json, results_header, words, write_json,
                     write_table)
from .meta import loadavg
from .plotting import pyplot, save


# ---------------------------------------------------------------- snapshots
def snap(stats, out, margin=0.1, limit=30.0):
    """Copy the first rewrite of the stats file whose mtime is >= now+margin."""
    t0 = time.time()
    while time.time() - t0 < limit:
        try:
            st = os.stat(stats)
            if st.st_mtime >= t0 + margin:
                text = open(stats).read()
                json.loads(text)
                open(out, "w").write(text)
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.02)
    sys.exit(f"bench-fs: {stats} was not rewritten within {limit} s")


# ---------------------------------------------------------------- operations
def pattern(size):
    """The bytes every small file holds."""
    return bytes((i * 7 + 1) & 0xFF for i in range(size))


def op_create(d, n, size, fsync):  # DIR N BYTES fsync|nofsync
    data = pattern(int(size))
    n, size = int(n), int(size)
    for i in range(n):
        fd = os.open(f"{d}/f{i:05d}", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        if os.write(fd, data) != size:
            sys.exit("short write")
        if fsync == "fsync":
            os.fsync(fd)
        os.close(fd)
    return {"files": n, "bytes": n * size}


def op_read(d, n, size):  # DIR N BYTES
    n, size = int(n), int(size)
    data = pattern(size)
    for i in range(n):
        fd = os.open(f"{d}/f{i:05d}", os.O_RDONLY)
        got = os.read(fd, size + 1)
        os.close(fd)
        if got != data:
            sys.exit(f"bench-fs: f{i:05d} read back wrong ({len(got)} bytes)")
    return {"files": n, "bytes": n * size}


def op_delete(d, n, fsync):  # DIR N fsyncdir|nofsync
    n = int(n)
    dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    for i in range(n):
        os.unlink(f"{d}/f{i:05d}")
        if fsync == "fsyncdir":
            os.fsync(dfd)
    os.close(dfd)
    return {"files": n}


def op_seqwrite(path, total, bs):  # FILE BYTES BS
    total, bs = int(total), int(bs)
    buf = os.urandom(bs)
    fd = os.open(path, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o644)
    for _ in range(0, total, bs):
        os.write(fd, buf)
    os.fsync(fd)
    os.close(fd)
    return {"bytes": total, "requests": total // bs}


def read_all(fd, size, bs, order):
    """Bytes read from FD: sequentially (ORDER None) or the BS blocks in ORDER."""
    got = 0
    if order is None:
        while True:
            b = os.read(fd, bs)
            if not b:
                return got
            got += len(b)
    for blk in order:
        got += len(os.pread(fd, bs, blk * bs))
    return got


def op_seqread(path, bs, seed=None, shuffled=False):  # FILE BS [SEED]
    bs = int(bs)
    fd = os.open(path, os.O_RDONLY)
    size = os.fstat(fd).st_size
    order = None
    if shuffled:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # no read-ahead, as fio's default
        order = list(range(size // bs))
        random.Random(int(seed)).shuffle(order)
    got = read_all(fd, size, bs, order)
    os.close(fd)
    if got != size:
        sys.exit(f"bench-fs: read {got} of {size} bytes")
    return {"bytes": got, "requests": size // bs}


def op_randread(path, bs, seed):  # FILE BS SEED
    return op_seqread(path, bs, seed, shuffled=True)


def op_randwrite(path, bs, seed, sync):  # FILE BS SEED sync|async
    bs = int(bs)
    buf = os.urandom(bs)
    fd = os.open(path, os.O_WRONLY)
    size = os.fstat(fd).st_size
    blocks = list(range(size // bs))
    random.Random(int(seed)).shuffle(blocks)  # every block once
    for blk in blocks:
        os.pwrite(fd, buf, blk * bs)
        if sync == "sync":
            os.fsync(fd)
    os.fsync(fd)  # async: all the phase's writes reach the drive inside the phase
    os.close(fd)
    return {"bytes": size, "requests": len(blocks)}


def op_sqlite(path, transactions, min_bytes, max_bytes, seed):  # DB N MIN MAX SEED
    """A small database's synchronous commits: TRANSACTIONS transactions, each one
    INSERT of a row of MIN_BYTES to MAX_BYTES (seeded sizes and bytes), with
    journal_mode=DELETE and synchronous=FULL: each commit writes and fsyncs a
    rollback journal, writes and fsyncs the database, and deletes the journal."""
    import sqlite3  # the standard library's, so only this op needs it
    n, lo, hi = int(transactions), int(min_bytes), int(max_bytes)
    rng = random.Random(int(seed))
    con = sqlite3.connect(path, isolation_level=None)  # autocommit: BEGIN/COMMIT are ours
    con.execute("PRAGMA journal_mode=DELETE")
    con.execute("PRAGMA synchronous=FULL")
    con.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v BLOB)")
    total = 0
    for _ in range(n):
        row = rng.randbytes(rng.randint(lo, hi))
        con.execute("BEGIN")
        con.execute("INSERT INTO t (v) VALUES (?)", (row,))
        con.execute("COMMIT")
        total += len(row)
    rows = con.execute("SELECT count(*) FROM t").fetchone()[0]
    con.close()
    if rows < n:
        sys.exit(f"bench-fs: the database holds {rows} rows after {n} inserts")
    return {"transactions": n, "bytes": total, "rows": rows}


OPS = {"create": op_create, "read": op_read, "delete": op_delete, "seqwrite": op_seqwrite,
       "seqread": op_seqread, "randread": op_randread, "randwrite": op_randwrite, "sqlite": op_sqlite}


def op(args):
    """Time the operation ARGS[0] with arguments ARGS[1:]; its JSON on stdout."""
    kind, a = args[0], args[1:]
    if kind not in OPS:
        sys.exit(f"bench-fs: unknown op {kind}")
    res = {"op": kind, "loadavg_before": loadavg()}
    t0 = time.monotonic()
    res.update(OPS[kind](*a))
    t1 = time.monotonic()
    if kind in ("create", "delete", "seqwrite", "randwrite", "sqlite"):
        os.sync()  # all the phase's writes (metadata too) reach the drive inside the phase
    t2 = time.monotonic()
    res.update(ops_s=t1 - t0, sync_s=t2 - t1, elapsed_s=t2 - t0, loadavg_after=loadavg())
    json.dump(res, sys.stdout)


# ---------------------------------------------------------------- stats
load = load_json


def diff(a, b):
    """What the drive did between snapshots a and b (b later)."""
    d = {k: b["requests"][k] - a["requests"][k] for k in b["requests"]}
    for k in ("busy_us", "bytes_written", "bytes_read", "physical_writes", "physical_reads"):
        d[k] = b[k] - a[k]
    for kind in ("write", "read", "flush"):
        la, lb = a[f"{kind}_latency_us"], b[f"{kind}_latency_us"]
        n = lb["count"] - la["count"]
        d[f"{kind}_count"] = n
        d[f"{kind}_mean_us"] = ((lb["count"] * lb["mean"] - la["count"] * la["mean"]) / n
                                if n else None)
    qa, qb = a["queue_wait_us"], b["queue_wait_us"]
    d["queue_wait_us_total"] = qb["count"] * qb["mean"] - qa["count"] * qa["mean"]
    wa, wb = a["write_latency_us"]["count"], b["write_latency_us"]["count"]
    if wb > wa:
        d["breakdown_us"] = {k: (wb * b["breakdown_us"][k] - wa * a["breakdown_us"][k]) / (wb - wa)
                             for k in b["breakdown_us"]}
    if "compactor" in b and "compactor" in a:
        d["compactor_steps"] = b["compactor"]["steps"] - a["compactor"]["steps"]
        d["compactor_busy_ms"] = b["compactor"]["busy_ms"] - a["compactor"]["busy_ms"]
    if "lld" in b and "lld" in a:
        # mode=lld's own counters: its drains and cleaning, in requests and in idle time alike
        # (busy_us counts requests only)
        d["lld"] = {k: b["lld"][k] - a["lld"][k] for k in LLD_COUNTERS}
    d["utilization"] = b["utilization"]
    return d


LLD_COUNTERS = ("segment_write_ms", "cleaning_ms", "checkpoint_ms", "segments_cleaned", "idle_cleans",
                "nvram_drains", "nvram_stalls", "client_blocks_written", "nvram_records_written")


def lld_lines(rows, label):
    """What mode=lld did in each phase beyond the requests' busy time (LABEL names a row)."""
    out = []
    for r in rows:
        x = r.get("lld")
        if x:
            out.append(f"{label(r)}: lld wrote {x['client_blocks_written']} blocks into segments in "
                       f"{x['segment_write_ms']:.0f} ms ({x['nvram_drains']} NVRAM drains, {x['nvram_stalls']} "
                       f"writes waited for one), cleaned {x['segments_cleaned']} segments "
                       f"({x['idle_cleans']} in idle time), {x['cleaning_ms']:.0f} ms of cleaning.")
    return out


def zero_like(s):
    """A snapshot of the same drive before any request (for a whole-run stats file)."""
    z = {"requests": {k: 0 for k in s["requests"]}, "busy_us": 0, "bytes_written": 0,
         "bytes_read": 0, "physical_writes": 0, "physical_reads": 0,
         "queue_wait_us": {"count": 0, "mean": 0}, "breakdown_us": {k: 0 for k in s["breakdown_us"]},
         "utilization": s["utilization"]}
    for k in ("write", "read", "flush"):
        z[f"{k}_latency_us"] = {"count": 0, "mean": 0}
    if "compactor" in s:
        z["compactor"] = {"steps": 0, "busy_ms": 0}
    if "lld" in s:
        z["lld"] = {k: 0 for k in LLD_COUNTERS}
    return z


def meta_for(run_dir, command):
    meta = load(f"{run_dir}/meta.json")
    meta["command"] = command
    meta["uptime_start"] = open(f"{run_dir}/raw/uptime-start.txt").read().strip()
    meta["uptime_end"] = open(f"{run_dir}/raw/uptime-end.txt").read().strip()
    return meta


def header(meta, what):
    return [results_header(meta), "",
            what, "",
            f"load: start `{meta['uptime_start']}`; end `{meta['uptime_end']}`", ""]


def plt_or_none():
    return pyplot("bench-fs")


MODE_COLOR = {"inplace": "tab:red", "vld": "tab:blue", "lld": "tab:green", "lld-nonvram": "tab:olive"}
MODE_NAME = {"inplace": "in place", "vld": "vld", "lld": "lld (6.1 MB NVRAM)", "lld-nonvram": "lld (no NVRAM)"}


def others(modes):
    """The modes compared with in place."""
    return [m for m in modes if m != "inplace"]


def bar_width(modes):
    return 0.8 / max(1, len(modes))


def phase_runs(raw, prefixes):
    """For the phases of one drive run (PREFIXES in order): [(op.json or None, what the drive did
    in the phase)], and what it did between the phases."""
    out, outside, prev = [], [], None
    for pre in prefixes:
        b, a = load(f"{raw}/{pre}.before.stats.json"), load(f"{raw}/{pre}.after.stats.json")
        o = load(f"{raw}/{pre}.op.json")
        if prev:
            outside.append(diff(prev, b))
        prev = a
        out.append((o, diff(b, a)))
    return out, outside


def between_phases(outside):
    """The requests and busy time between the phases (drop_caches), all runs together."""
    between = {k: sum(o[k] for o in outside) for k in ("write", "flush", "read")}
    between["busy_us"] = sum(o["busy_us"] for o in outside)
    return between


def between_line(between):
    return (f"Between the phases (drop_caches, not counted above): {between['write']} writes, "
            f"{between['flush']} flushes, {between['read']} reads in all runs together, "
            f"{between['busy_us'] / 1000:.1f} ms simulated.")


def bar_labels(ax, xs, ys, rotate=False):
    for x, y in zip(xs, ys):
        if rotate:
            ax.text(x, y, f"{y:.1f}" if y >= 10 else f"{y:.2f}", ha="center", va="bottom", fontsize=7,
                    rotation=90)
        else:
            ax.text(x, y, f"{y:.2f}", ha="center", va="bottom", fontsize=7)


# ---------------------------------------------------------------- fio report
def load_fio_target(raw, mode, target):
    """(fio job, what the drive did in the phase, the stats file for percentiles, mount's writes)."""
    fio = fio_job(f"{raw}/{mode}-{target}.fio.json")
    if target == "ext4":
        before = load(f"{raw}/{mode}-ext4.before.stats.json")
        after = load(f"{raw}/{mode}-ext4.after.stats.json")
        # percentiles: since the restart (mount's writes included)
        return fio, diff(before, after), after, before["requests"]["write"]
    cum = load(f"{raw}/{mode}-nbd.stats.json")
    return fio, diff(zero_like(cum), cum), cum, 0


def fio_row(mode, target, fio, d, cum, mount_writes):
    """fio's latencies beside the NBD requests and simulated time per fsync."""
    w, s = fio["write"], fio["sync"]
    nsync = s["total_ios"]
    runtime_s = w["runtime"] / 1000
    pct = lambda lat, p: fio_percentile_us(lat, p, missing=None)
    r = {"mode": mode, "target": target, "fio_writes": w["total_ios"], "fio_fsyncs": nsync,
         "runtime_s": runtime_s, "ops_per_s": nsync / runtime_s if runtime_s else None,
         "fio_write_mean_us": w["lat_ns"]["mean"] / 1000,
         "fio_write_p50_us": pct(w["clat_ns"], 50), "fio_write_p99_us": pct(w["clat_ns"], 99),
         "fio_fsync_mean_us": s["lat_ns"]["mean"] / 1000,
         "fio_fsync_p50_us": pct(s["lat_ns"], 50), "fio_fsync_p99_us": pct(s["lat_ns"], 99),
         "fio_errors": fio["error"]}
    r["fio_op_mean_us"] = r["fio_write_mean_us"] + r["fio_fsync_mean_us"]
    r.update(nbd_writes=d["write"], nbd_fua=d["write_fua"], nbd_flushes=d["flush"],
             nbd_reads=d["read"],
             writes_per_fsync=d["write"] / nsync, fua_per_fsync=d["write_fua"] / nsync,
             flushes_per_fsync=d["flush"] / nsync, reads_per_fsync=d["read"] / nsync,
             kib_per_fsync=d["bytes_written"] / 1024 / nsync,
             sim_write_mean_us=d["write_mean_us"], sim_flush_mean_us=d["flush_mean_us"],
             sim_write_p50_us=cum["write_latency_us"]["p50"],
             sim_write_p99_us=cum["write_latency_us"]["p99"],
             sim_write_count_for_pct=cum["write_latency_us"]["count"],
             mount_writes=mount_writes,
             sim_busy_per_fsync_us=d["busy_us"] / nsync,
             queue_wait_per_fsync_us=d["queue_wait_us_total"] / nsync,
             breakdown_us=d.get("breakdown_us"), utilization=d["utilization"],
             compactor_steps=d.get("compactor_steps"), lld=d.get("lld"))
    r["host_overhead_per_fsync_us"] = r["fio_op_mean_us"] - r["sim_busy_per_fsync_us"]
    return r


def fio_problems(mode, target, fio, d):
    problems = []
    if target == "nbd" and d["write"] != fio["write"]["total_ios"]:
        problems.append(f"{mode}-nbd: the stats file counts {d['write']} writes, fio {fio['write']['total_ios']}")
    if fio["error"] or d["errors"]:
        problems.append(f"{mode}-{target}: fio error {fio['error']}, plugin errors {d['errors']}")
    return problems


FIO_RATIO_KEYS = ("fio_op_mean_us", "fio_fsync_p99_us", "fio_write_p99_us", "sim_busy_per_fsync_us",
                  "sim_write_mean_us")


def fio_ratios(by, mode="vld"):
    """In place / MODE of the headline numbers, per target (when both modes ran); None where
    MODE's number is 0 or missing (lld with NVRAM: no simulated write time)."""
    ratios = {}
    if ("inplace", "ext4") in by and (mode, "ext4") in by:
        for t in ("ext4", "nbd"):
            i, v = by[("inplace", t)], by[(mode, t)]
            ratios[t] = {k: i[k] / v[k] if v[k] and i[k] is not None else None for k in FIO_RATIO_KEYS}
    return ratios


def fio_table(meta, p, rows, ratios, problems):
    fm = p.file_mb
    md = header(meta, f"{p.geometry}, {p.size} export, latency=sleep, compactor={p.compactor}; "
                f"fio rw=randwrite bs=4k iodepth=1 fsync=1 for {p.runtime} s over {fm} MiB: "
                f"*ext4* = ioengine=psync on a {fm} MiB file in ext4 (nbdfuse + loop), *NBD* = "
                f"ioengine=nbd on the first {fm} MiB of the export. fio µs: write = write.lat_ns "
                "(ext4: the write() into the page cache; NBD: the NBD write), fsync = sync.lat_ns "
                "(ext4: fsync(); NBD: the NBD flush), op = write mean + fsync mean. "
                "Simulated (stats file, the measured phase only): NBD requests per fsync, mean "
                "simulated NBD write, drive busy time per fsync.")
    md += ["| mode | target | ops/s | fio write mean | fio write p99 | fio fsync mean | fio fsync p50 | "
           "fio fsync p99 | fio op mean | NBD writes / fsync | FUA / fsync | flushes / fsync | "
           "KiB written / fsync | sim NBD write mean | sim NBD write p50 / p99 | sim busy / fsync | "
           "fio op - sim busy |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        md.append(f"| {r['mode']} | {r['target']} | {r['ops_per_s']:.0f} | {r['fio_write_mean_us']:.0f} | "
                  f"{r['fio_write_p99_us']:.0f} | {r['fio_fsync_mean_us']:.0f} | {r['fio_fsync_p50_us']:.0f} | "
                  f"{r['fio_fsync_p99_us']:.0f} | **{r['fio_op_mean_us']:.0f}** | "
                  f"{r['writes_per_fsync']:.2f} | {r['fua_per_fsync']:.2f} | {r['flushes_per_fsync']:.2f} | "
                  f"{r['kib_per_fsync']:.1f} | {fmt(r['sim_write_mean_us'])} | "
                  f"{r['sim_write_p50_us']:.0f} / {r['sim_write_p99_us']:.0f} | "
                  f"**{r['sim_busy_per_fsync_us']:.0f}** | {r['host_overhead_per_fsync_us']:.0f} |")
    for mode, per_target in ratios.items():
        for t, q in per_target.items():
            x = {k: fmt(v, ".2f") + "x" for k, v in q.items()}
            md.append("")
            md.append(f"{t}: in place / {mode} = {x['fio_op_mean_us']} (fio op mean), "
                      f"{x['fio_fsync_p99_us']} (fio fsync p99), {x['fio_write_p99_us']} "
                      f"(fio write p99), {x['sim_busy_per_fsync_us']} (simulated busy per fsync), "
                      f"{x['sim_write_mean_us']} (simulated NBD write mean)")
    md += ["", "sim NBD write p50 / p99 are over every write since nbdkit started for the phase "
           "(ext4: mount's " + ", ".join(f"{r['mode']} {r['mount_writes']}" for r in rows
                                         if r["target"] == "ext4") + " writes included)."]
    md += [f"{r['mode']}-{r['target']}: {r['compactor_steps']} compactor steps during the phase."
           for r in rows if r["compactor_steps"]]
    md += lld_lines(rows, lambda r: f"{r['mode']}-{r['target']}")
    return md + [""] + [f"problem: {x}" for x in problems]


def plot_fio(by, p, meta, path):
    """fio's mean and p99 beside the simulated drive time, ext4 and raw NBD."""
    plt = plt_or_none()
    if not plt:
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, t, title in ((axes[0], "ext4", "ext4 file, fio psync fsync=1"),
                         (axes[1], "nbd", "raw export, fio ioengine=nbd fsync=1")):
        metrics = [("fio_op_mean_us", "fio mean\nwrite+fsync"),
                   ("fio_fsync_p99_us" if t == "ext4" else "fio_write_p99_us",
                    "fio p99\nof fsync" if t == "ext4" else "fio p99\nof write"),
                   ("sim_busy_per_fsync_us", "simulated drive\ntime per fsync")]
        width = bar_width(p.modes)
        for k, mode in enumerate(p.modes):
            r = by.get((mode, t))
            if not r:
                continue
            xs = [j + (k - (len(p.modes) - 1) / 2) * width for j in range(len(metrics))]
            ys = [r[m] / 1000 for m, _ in metrics]
            ax.bar(xs, ys, width, color=MODE_COLOR.get(mode), label=MODE_NAME.get(mode, mode))
            bar_labels(ax, xs, ys)
        ax.set_xticks(range(len(metrics)))
        ax.set_xticklabels([n for _, n in metrics], fontsize=8)
        ax.set_ylabel("ms")
        ax.set_title(title, fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"4 KiB random write + fsync, {p.geometry}, latency=sleep "
                 f"(load at start {meta['loadavg'][0]})", fontsize=10)
    save(plt, fig, path)


def report_fio(run_dir, p):
    """fs-fio: results.json, table.md, fs-fio.png."""
    meta = meta_for(run_dir, p.command)
    rows, problems = [], []
    for mode in p.modes:
        for target in ("ext4", "nbd"):
            fio, d, cum, mount_writes = load_fio_target(f"{run_dir}/raw", mode, target)
            rows.append(fio_row(mode, target, fio, d, cum, mount_writes))
            problems += fio_problems(mode, target, fio, d)
    by = {(r["mode"], r["target"]): r for r in rows}
    ratios = {m: fio_ratios(by, m) for m in others(p.modes) if fio_ratios(by, m)}
    write_json(f"{run_dir}/results.json", dict(meta, rows=rows, ratios_inplace_over=ratios,
                                               ratios_inplace_over_vld=ratios.get("vld", {}), problems=problems))
    write_table(f"{run_dir}/table.md", fio_table(meta, p, rows, ratios, problems))
    plot_fio(by, p, meta, f"{run_dir}/fs-fio.png")
    print(f"results: {run_dir}/{{results.json,table.md,fs-fio.png}}")


# ---------------------------------------------------------------- smallfile report
PHASES_SF = ["create", "read", "delete"]
FS_TITLE = {"ext4": "ext4, fsync per create and unlink", "ext4-async": "ext4, no fsync",
            "ext2-sync": "ext2 mounted -o sync"}


def smallfile_rows(run_dir, p):
    """(a row per file system, mode and phase; problems; what happened between the phases)."""
    rows, problems, outside = [], [], []
    for fs in p.fs_list:
        for mode in p.modes:
            runs, out = phase_runs(f"{run_dir}/raw", [f"{fs}-{mode}-{i}-{ph}" for i, ph in enumerate(PHASES_SF, 1)])
            outside += out
            for ph, (o, d) in zip(PHASES_SF, runs):
                rows.append({"fs": fs, "mode": mode, "phase": ph, "files": p.files, "wall_s": o["elapsed_s"],
                             "sync_s": o["sync_s"], "sim_busy_s": d["busy_us"] / 1e6,
                             "nbd_writes": d["write"], "nbd_flushes": d["flush"], "nbd_reads": d["read"],
                             "nbd_fua": d["write_fua"], "kib_written": d["bytes_written"] / 1024,
                             "kib_read": d["bytes_read"] / 1024,
                             "sim_write_mean_us": d["write_mean_us"], "sim_read_mean_us": d["read_mean_us"],
                             "compactor_steps": d.get("compactor_steps"), "lld": d.get("lld"),
                             "loadavg": [o["loadavg_before"], o["loadavg_after"]]})
                if d["errors"]:
                    problems.append(f"{fs}-{mode}-{ph}: {d['errors']} plugin errors")
    return rows, problems, outside


def add_speedups(rows):
    """speedup = in place time / this mode's time, wall and simulated (> 1: faster)."""
    by = {(r["fs"], r["mode"], r["phase"]): r for r in rows}
    for r in rows:
        ip = by.get((r["fs"], "inplace", r["phase"]))
        r["speedup_wall"] = ip["wall_s"] / r["wall_s"] if ip else None
        r["speedup_sim"] = ip["sim_busy_s"] / r["sim_busy_s"] if ip and r["sim_busy_s"] else None
    return by


def smallfile_table(meta, p, by, rows, between, problems):
    n = p.files
    md = header(meta, f"{p.geometry}, {p.size} export, latency=sleep, compactor={p.compactor}; "
                f"{n} files of {p.file_kb} KiB in one directory: create, read back, delete; "
                "caches dropped before every phase. wall = the phase in the client (a sync() ends create and delete); "
                "sim = the drive's simulated busy time in the phase (stats file). speedup = in place "
                "time / this mode's time (> 1: faster than in place; the paper's Figure 6 normalises to UFS "
                "on the regular disk the same way).")
    md += ["| fs | phase | mode | wall s | speedup wall | sim s | speedup sim | NBD w / f / r per file |",
           "|---|---|---|---:|---:|---:|---:|---:|"]
    per = lambda r: f"{r['nbd_writes'] / n:.2f} / {r['nbd_flushes'] / n:.2f} / {r['nbd_reads'] / n:.2f}"
    for fs in p.fs_list:
        for ph in PHASES_SF:
            for m in p.modes:
                r = by.get((fs, m, ph))
                if not r:
                    continue
                bold = lambda x: f"**{x}**" if m != "inplace" else x
                md.append(f"| {fs} | {ph} | {MODE_NAME.get(m, m)} | {r['wall_s']:.2f} | "
                          f"{bold(fmt(r['speedup_wall'], '.2f'))} | {r['sim_busy_s']:.2f} | "
                          f"{bold(fmt(r['speedup_sim'], '.2f'))} | {per(r)} |")
    md += ["", "w / f / r = NBD writes / flushes / reads per file (no FUA arrives through FUSE).",
           between_line(between)]
    md += [f"{r['fs']}-{r['mode']}-{r['phase']}: {r['compactor_steps']} compactor steps."
           for r in rows if r["compactor_steps"]]
    md += lld_lines(rows, lambda r: f"{r['fs']} {r['phase']}")
    return md + [""] + [f"problem: {x}" for x in problems]


def plot_smallfile(by, rows, p, meta, path):
    """Each mode's speed-up over in place per phase, wall and simulated, one panel per file system."""
    plt = plt_or_none()
    if not plt:
        return
    fig, axes = plt.subplots(1, len(p.fs_list), figsize=(4.2 * len(p.fs_list), 4.0), squeeze=False)
    bars = [(m, what, f"{MODE_NAME.get(m, m)}, {kind}", hatch) for m in others(p.modes)
            for what, kind, hatch in (("speedup_wall", "wall", None), ("speedup_sim", "simulated", "//"))]
    for ax, fs in zip(axes[0], p.fs_list):
        width = bar_width(bars)
        for k, (m, what, label, hatch) in enumerate(bars):
            xs = [j + (k - (len(bars) - 1) / 2) * width for j in range(len(PHASES_SF))]
            ys = [(by.get((fs, m, ph)) or {}).get(what) or 0 for ph in PHASES_SF]
            color = MODE_COLOR.get(m)
            ax.bar(xs, ys, width, color=color, alpha=0.55 if hatch else 0.9, hatch=hatch,
                   edgecolor=color, label=label)
            bar_labels(ax, xs, ys, rotate=len(bars) > 2)
        ax.axhline(1.0, color="tab:red", lw=1.5, label="in place = 1")
        ax.set_xticks(range(len(PHASES_SF)))
        ax.set_xticklabels(PHASES_SF, fontsize=8)
        ax.set_title(FS_TITLE.get(fs, fs), fontsize=9)
        ax.set_yscale("log")
        bottom, top = ax.get_ylim()
        ax.set_ylim(bottom, top * 3)  # room for the labels above the bars
        ax.set_ylabel("performance relative to in place (log)", fontsize=8)
        ax.grid(True, axis="y", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8)
    fig.suptitle(f"Small files ({p.files} x {p.file_kb} KiB), {p.geometry}, latency=sleep "
                 f"(paper 001 Fig. 6; load at start {meta['loadavg'][0]})", fontsize=10)
    save(plt, fig, path, rect=(0, 0.07, 1, 1))


# ---------------------------------------------------------------- largefile report
PHASES_LF = [("1-seqwrite", "sequential write"), ("2-seqread", "sequential read"),
             ("3-randwrite", "random write"), ("4-seqread", "sequential read after random write"),
             ("5-randread", "random read")]
LF_GROUPS = [("async", "1-seqwrite", "seq write"), ("async", "2-seqread", "seq read"),
             ("async", "3-randwrite", "rand write\nasync"), ("sync", "3-randwrite", "rand write\nsync"),
             ("async", "4-seqread", "seq read after\nasync rand write"),
             ("sync", "4-seqread", "seq read after\nsync rand write"),
             ("async", "5-randread", "rand read\n(async run)"), ("sync", "5-randread", "rand read\n(sync run)")]


def largefile_rows(run_dir, p):
    """(a row per variant, mode and phase; problems; what happened between the phases)."""
    rows, problems, outside = [], [], []
    for variant in ("async", "sync"):
        for mode in p.modes:
            runs, out = phase_runs(f"{run_dir}/raw", [f"{variant}-{mode}-{key}" for key, _ in PHASES_LF])
            outside += out
            for (key, label), (o, d) in zip(PHASES_LF, runs):
                nbytes = o["bytes"]
                rows.append({"variant": variant, "mode": mode, "phase": key, "label": label,
                             "bytes": nbytes, "wall_s": o["elapsed_s"],
                             "mb_per_s_wall": nbytes / o["elapsed_s"] / 1e6,
                             "sim_busy_s": d["busy_us"] / 1e6,
                             "mb_per_s_sim": nbytes / d["busy_us"] if d["busy_us"] else None,
                             "nbd_writes": d["write"], "nbd_flushes": d["flush"], "nbd_reads": d["read"],
                             "mib_written": d["bytes_written"] / 2**20, "mib_read": d["bytes_read"] / 2**20,
                             "sim_write_mean_us": d["write_mean_us"], "sim_read_mean_us": d["read_mean_us"],
                             "compactor_steps": d.get("compactor_steps"), "lld": d.get("lld"),
                             "loadavg": [o["loadavg_before"], o["loadavg_after"]]})
                if d["errors"]:
                    problems.append(f"{variant}-{mode}-{key}: {d['errors']} plugin errors")
    return rows, problems, outside


def add_throughput_ratios(rows):
    """This mode's MB/s / in place's, wall and simulated (over_inplace_*; the field names
    vld_over_inplace_* are kept on every row as they were when vld was the only other mode)."""
    by = {(r["variant"], r["mode"], r["phase"]): r for r in rows}
    for r in rows:
        ip = by.get((r["variant"], "inplace", r["phase"]))
        r["over_inplace_wall"] = r["mb_per_s_wall"] / ip["mb_per_s_wall"] if ip else None
        r["over_inplace_sim"] = (r["mb_per_s_sim"] / ip["mb_per_s_sim"]
                                 if ip and r["mb_per_s_sim"] and ip["mb_per_s_sim"] else None)
        r["vld_over_inplace_wall"], r["vld_over_inplace_sim"] = r["over_inplace_wall"], r["over_inplace_sim"]
    return by


def largefile_table(meta, p, by, rows, between, problems):
    md = header(meta, f"{p.geometry}, {p.size} export, latency=sleep, compactor={p.compactor}; "
                f"one {p.lf_mb} MiB file in ext4; caches dropped before every phase. MB/s = file bytes / "
                "wall time of the phase (the closing fsync and sync() included) and / the drive's simulated busy time in the "
                "phase (10^6 bytes/s). *async* and *sync* are two runs on fresh file systems that differ "
                "in phase 3 only: 4 KiB random writes with one fsync at the end, or an fsync after each.")
    md += ["| run | phase | mode | MB/s wall | / in place wall | MB/s sim | / in place sim | NBD w / f / r |",
           "|---|---|---|---:|---:|---:|---:|---:|"]
    wfr = lambda r: f"{r['nbd_writes']} / {r['nbd_flushes']} / {r['nbd_reads']}"
    for variant in ("async", "sync"):
        for key, label in PHASES_LF:
            lab = label + (f" ({variant})" if key == "3-randwrite" else "")
            for m in p.modes:
                r = by.get((variant, m, key))
                if not r:
                    continue
                bold = lambda x: f"**{x}x**" if m != "inplace" else f"{x}x"
                md.append(f"| {variant} | {key[0]} {lab} | {MODE_NAME.get(m, m)} | {r['mb_per_s_wall']:.2f} | "
                          f"{bold(fmt(r['over_inplace_wall'], '.2f'))} | {fmt(r['mb_per_s_sim'], '.2f')} | "
                          f"{bold(fmt(r['over_inplace_sim'], '.2f'))} | {wfr(r)} |")
    md += ["", "w / f / r = NBD writes / flushes / reads in the phase.", between_line(between)]
    md += [f"{r['variant']}-{r['mode']}-{r['phase']}: {r['compactor_steps']} compactor steps."
           for r in rows if r["compactor_steps"]]
    md += lld_lines(rows, lambda r: f"{r['variant']} {r['phase']}")
    return md + [""] + [f"problem: {x}" for x in problems]


def plot_largefile(by, rows, p, meta, path):
    """MB/s per phase and mode, wall above, simulated below."""
    plt = plt_or_none()
    if not plt:
        return
    fig, axes = plt.subplots(2, 1, figsize=(10, 6.4), sharex=True)
    for ax, what, ylabel in ((axes[0], "mb_per_s_wall", "MB/s, wall"),
                             (axes[1], "mb_per_s_sim", "MB/s, simulated busy time")):
        width = bar_width(p.modes)
        for k, mode in enumerate(p.modes):
            xs = [j + (k - (len(p.modes) - 1) / 2) * width for j in range(len(LF_GROUPS))]
            ys = [(by.get((v, mode, ph)) or {}).get(what) or 0 for v, ph, _ in LF_GROUPS]
            ax.bar(xs, ys, width, color=MODE_COLOR.get(mode), label=MODE_NAME.get(mode, mode))
            bar_labels(ax, xs, ys, rotate=True)
        ax.set_ylabel(ylabel, fontsize=8)
        top = max([(r[what] or 0) for r in rows] + [1])
        ax.set_ylim(0, top * 1.25)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    axes[1].set_xticks(range(len(LF_GROUPS)))
    axes[1].set_xticklabels([g[2] for g in LF_GROUPS], fontsize=8)
    fig.suptitle(f"Large file ({p.lf_mb} MiB) in ext4, {p.geometry}, latency=sleep "
                 f"(paper 001 Fig. 7; load at start {meta['loadavg'][0]})", fontsize=10)
    save(plt, fig, path)


def report_phases(kind, run_dir, p):
    """fs-smallfile or fs-largefile (KIND): results.json, table.md, fs-KIND.png."""
    rows_of, ratios_of, table_of, plot_of = PHASE_REPORTS[kind]
    meta = meta_for(run_dir, p.command)
    rows, problems, outside = rows_of(run_dir, p)
    by = ratios_of(rows)
    between = between_phases(outside)
    write_json(f"{run_dir}/results.json", dict(meta, rows=rows, between_phases=between, problems=problems))
    write_table(f"{run_dir}/table.md", table_of(meta, p, by, rows, between, problems))
    plot_of(by, rows, p, meta, f"{run_dir}/fs-{kind}.png")
    print(f"results: {run_dir}/{{results.json,table.md,fs-{kind}.png}}")


PHASE_REPORTS = {"smallfile": (smallfile_rows, add_speedups, smallfile_table, plot_smallfile),
                 "largefile": (largefile_rows, add_throughput_ratios, largefile_table, plot_largefile)}


# ---------------------------------------------------------------- command line
REPORTS = {"fio": report_fio, "smallfile": functools.partial(report_phases, "smallfile"),
           "largefile": functools.partial(report_phases, "largefile"), "sqlite": fs_sqlite.report}


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="vldbench.fs", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sn = sub.add_parser("snap", help="copy the next rewrite of a stats file")
    sn.add_argument("stats")
    sn.add_argument("out")
    o = sub.add_parser("op", help="a timed file operation, its JSON on stdout")
    o.add_argument("args", nargs=argparse.REMAINDER)
    rq = sub.add_parser("requests", help="the requests in a slice of nbdkit's log filter output")
    rq.add_argument("log")
    rq.add_argument("start", type=int, help="byte offset in LOG where the slice starts")
    rq.add_argument("end", type=int, help="byte offset in LOG where it ends")
    rp = sub.add_parser("report", help="results.json, table.md and a plot from RUN_DIR/raw")
    rp.add_argument("kind", choices=REPORTS)
    rp.add_argument("run_dir")
    rp.add_argument("--command", required=True, help="the command line, for the results header")
    rp.add_argument("--modes", type=words, required=True)
    rp.add_argument("--geometry", required=True)
    rp.add_argument("--size", required=True)
    rp.add_argument("--compactor", required=True, help="the plugin's compactor= of the runs")
    rp.add_argument("--file-mb", type=int, help="fio: the file's (and region's) MiB")
    rp.add_argument("--runtime", type=int, help="fio: seconds per run")
    rp.add_argument("--fs-list", type=words, help="smallfile: the file systems")
    rp.add_argument("--files", type=int, help="smallfile: files per phase")
    rp.add_argument("--file-kb", type=int, help="smallfile: KiB per file")
    rp.add_argument("--lf-mb", type=int, help="largefile: the file's MiB")
    rp.add_argument("--sql-tx", type=int, help="sqlite: transactions per run")
    rp.add_argument("--sql-rows", type=int, nargs=2, metavar=("MIN", "MAX"),
                    help="sqlite: bytes per row")
    rp.add_argument("--ext4-blocks", type=ints, help="sqlite: the ext4 block sizes")
    rp.add_argument("--loop-sector", type=int, help="sqlite: the loop device's sector bytes")
    return ap.parse_args(argv)


def main(argv=None):
    a = parse_args(argv)
    if a.cmd == "snap":
        snap(a.stats, a.out)
    elif a.cmd == "op":
        op(a.args)
    elif a.cmd == "requests":
        sys.stdout.write(fs_sqlite.extract(a.log, a.start, a.end))
    else:
        REPORTS[a.kind](a.run_dir, a)


if __name__ == "__main__":
    main()
