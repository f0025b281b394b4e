"""Writes the synthetic run directories under data/ (largefile, recovery,
kernel_fsync, hostcost, pacing, fs-fio, fs-smallfile, fs-largefile, fs-sqlite, fill,
fig8-lld, fig10):
the files each bench-* script leaves, in their format, with round numbers
chosen so that the tests can state the expected results by hand.

The stats files are the stored fig8 stats file (a real one) with the fields
each module reads overwritten; the fio outputs keep fio's notes before the
JSON and only the keys the modules read. Rerun after changing a number here:
    /usr/bin/python3 bench/tests/make_synthetic.py
"""
import copy
import json
import pathlib
import shutil

DATA = pathlib.Path(__file__).parent / "data"
TEMPLATE = json.loads((DATA / "fig8/raw/st19101-vld-80.stats.json").read_text())
META = {"date_utc": "2026-11-25T12:00:00Z", "commit": "abc1234", "worktree_modified": False,
        "worktree_diff_sha256": None, "kernel": "6.18.44", "cpus": 2, "loadavg": ["0.50", "0.40", "0.30"]}
FIO_NOTE = "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\n"


# Each mode's recovery (docs/stats.md: the keys every mode has, then its
# own): the template's for mode=vld, a clean open for the others.
RECOVERY = {
    "vld": TEMPLATE["recovery"],
    "lld": {"clean": True, "method": "checkpoint+roll-forward+nvram", "sectors_read": 262,
            "simulated_ms": 21.0, "wall_ms": 1.5, "damage": "", "checkpoint_generation": 3,
            "writes_rolled_forward": 0, "writes_discarded": 0, "nvram_records_replayed": 0,
            "stopped_because": "no whole write of seq 1 at segment 0 sector 0"},
    "inplace": {"clean": None, "method": "redo-journal", "sectors_read": 1, "simulated_ms": 6.0,
                "wall_ms": 0.5, "damage": "", "records_replayed": 0, "blocks_replayed": 0},
}


def lat(mean_us, count):
    return {"count": count, "mean": mean_us, "p50": mean_us, "p99": 2 * mean_us, "max": 3 * mean_us}


def stats(mode="vld", writes=0, reads=0, flushes=0, fua=0, write_us=0.0, read_us=0.0, flush_us=0.0,
          busy_us=0.0, bytes_written=0, bytes_read=0, util=0.5, **extra):
    """A stats file of mode MODE after these requests (fields not named: the template's)."""
    s = copy.deepcopy(TEMPLATE)
    s.update(mode=mode, busy_us=busy_us, simulated_time_us=busy_us, bytes_written=bytes_written,
             bytes_read=bytes_read, utilization=util, physical_writes=writes, physical_reads=reads,
             backing_syncs=flushes)
    s["requests"] = {"errors": 0, "extents": 0, "flush": flushes, "read": reads, "trim": 0,
                     "write": writes, "write_fua": fua, "zero": 0}
    s["write_latency_us"] = lat(write_us, writes)
    s["read_latency_us"] = lat(read_us, reads)
    s["flush_latency_us"] = lat(flush_us, flushes)
    s["queue_wait_us"] = lat(0.0, writes + reads + flushes)
    s["breakdown_us"] = {"head_switch": 0.2 * write_us, "overhead": 0.1 * write_us,
                         "rotation": 0.3 * write_us, "seek": 0.1 * write_us, "transfer": 0.3 * write_us}
    if mode != "vld":
        s.pop("vld", None)
        s.pop("compactor", None)
    s["recovery"] = copy.deepcopy(RECOVERY[mode])
    s["checksum_failures"] = None if mode == "inplace" else 0  # inplace keeps no checksums
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(s.get(k), dict):
            s[k].update(v)
        else:
            s[k] = v
    if "lld" in s:
        s["lld"]["recovery"] = s["recovery"]  # the alias the lld section keeps
    return s


def fio_dir(total_ios, mean_us, iops=0.0):
    ns = {"mean": mean_us * 1e3, "percentile": {"50.000000": mean_us * 1e3, "99.000000": 2 * mean_us * 1e3}}
    return {"io_bytes": 4096 * total_ios, "iops": iops, "runtime": 1000 if total_ios else 0,
            "total_ios": total_ios, "slat_ns": {"mean": 500.0}, "clat_ns": ns, "lat_ns": dict(ns)}


def fio(name, writes=0, reads=0, syncs=0, write_us=0.0, read_us=0.0, sync_us=0.0, iops=0.0,
        runtime_ms=1000, cpu=(1.0, 2.0)):
    """fio --output-format=json as written to a file: a note, then the JSON."""
    job = {"jobname": name, "groupid": 0, "error": 0, "read": fio_dir(reads, read_us),
           "write": fio_dir(writes, write_us, iops), "sync": {"total_ios": syncs, "lat_ns": fio_dir(
               syncs, sync_us)["lat_ns"]}, "job_runtime": runtime_ms, "usr_cpu": cpu[0], "sys_cpu": cpu[1]}
    job["write"]["runtime"] = runtime_ms
    return FIO_NOTE + json.dumps({"fio version": "fio-3.33", "jobs": [job]}, indent=1) + "\n"


class Run:
    """A run directory being written: Run(name).json('raw/x.json', obj)."""
    def __init__(self, name, meta=True):
        self.dir = DATA / name
        shutil.rmtree(self.dir, ignore_errors=True)
        (self.dir / "raw").mkdir(parents=True)
        if meta:
            self.json("meta.json", META)

    def json(self, rel, obj):
        rel = str(rel)
        (self.dir / rel).write_text(json.dumps(obj, indent=None if rel.endswith("stats.json") else 1) + "\n")

    def text(self, rel, text):
        (self.dir / rel).write_text(text)


# ---------------------------------------------------------------- bench-largefile
LF_BYTES = 4 << 20
LF_PHASES = [("1", "seqwrite", "write", 65536), ("2", "seqread", "read", 65536),
             ("3", "randwrite", "write", 4096), ("4", "seqread", "read", 65536),
             ("4k", "seqread", "read", 4096), ("5", "randread", "read", 4096)]
# MB/s (bytes / simulated busy µs) per (config, phase); in place 2.0 throughout.
LF_MBS = {("vld", p): 4.0 for p, *_ in LF_PHASES}
LF_MBS.update({("vld", "4"): 1.0, ("vld-tboff", "4"): 0.5, ("inplace-tboff", "4"): 1.0,
               ("vld-compacted", "4"): 3.0})


def largefile():
    run = Run("largefile")
    for ph, name, kind, req in LF_PHASES:
        for cfg in ("inplace", "inplace-tboff", "vld", "vld-tboff", "vld-compacted"):
            mbs = LF_MBS.get((cfg, ph), 2.0 if cfg == "inplace" else None)
            if mbs is None:
                continue
            prefix, suffix = (cfg[:-6], "-tboff") if cfg.endswith("-tboff") else (cfg, "")
            key = f"{prefix}-{ph}-{name}{suffix}"
            n = LF_BYTES // req
            mode = "inplace" if cfg.startswith("inplace") else "vld"
            io = {"writes": n, "bytes_written": LF_BYTES} if kind == "write" else \
                {"reads": n, "bytes_read": LF_BYTES}
            extra = {"vld": {"empty_tracks": 40 if cfg == "vld-compacted" else 3}} if mode == "vld" else {}
            run.json(f"raw/{key}.stats.json", stats(mode, flushes=n if ph == "3" else 1, busy_us=LF_BYTES / mbs,
                                                    write_us=100.0, read_us=50.0, **io, **extra))
            run.text(f"raw/{key}.fio.json", fio(key, **({"writes": n} if kind == "write" else {"reads": n})))
    run.json("raw/vld-compaction.poll.json", {"settled": True, "wall_s": 2.5, "writes": 7})
    run.json("raw/vld-compaction.stats.json", stats(
        "vld", compactor={"policy": "fewest-live", "tracks_compacted": 37, "tracks_abandoned": 1,
                          "blocks_moved": 900, "map_sectors_moved": 120, "steps": 50, "idle_steps": 50,
                          "busy_ms": 321.5, "empty_tracks": 40, "victim": None}))


# ---------------------------------------------------------------- bench-recovery
def recovery():
    run = Run("recovery")
    geo = dict(TEMPLATE["geometry"], export_bytes=1 << 30, simulated_cylinders=100, tracks_per_cylinder=16,
               sectors_per_track=256, revolution_us=6000.0, head_switch_us=500.0, block_bytes=4096,
               seek="1.0,0.0,10,1.0,0.0", platter_bytes=1100 << 20)
    run.json("raw/base.status.json", {"VmRSS": 20480, "VmHWM": 20480, "Threads": 4})
    run.json("raw/open.status.json", {"VmRSS": 22528, "VmHWM": 22528, "Threads": 5})
    run.json("raw/writes.status.json", {"VmRSS": 30720, "VmHWM": 31744, "RssAnon": 28672, "RssFile": 2048,
                                        "RssShmem": 0, "Threads": 5})
    run.json("raw/writes.stats.json", stats("vld", writes=1000, flushes=1000, write_us=400.0, util=0.25,
                                            geometry=geo, vld={"map_sectors_written": 2000,
                                                               "live_map_sectors": 500,
                                                               "log_records_written": 3}))
    run.text("raw/writes.fio.json", fio("writes", writes=1000, syncs=1000, iops=2000.0, runtime_ms=500))
    # 1600 tracks: a full scan is 1600 x 6 ms + 1500 head switches x 0.5 ms + 99 seeks x 1 ms = 10449 ms.
    for name, method, sectors, ms in (("clean", "clean-walk", 500, 50.0), ("clean_nobuf", "clean-walk", 500, 80.0),
                                      ("unclean", "tail-scan", 4096, 1044.9),
                                      ("unclean_nobuf", "tail-scan", 4096, 2089.8),
                                      ("clean2", "clean-walk", 510, 52.0)):
        run.json(f"raw/{name}.stats.json", stats("vld", geometry=geo, recovery={
            "method": method, "sectors_read": sectors, "map_sectors_walked": 500, "tracks_scanned": 16 if
            method == "tail-scan" else 0, "candidates": 3 if method == "tail-scan" else 0,
            "simulated_ms": ms, "wall_ms": 2.0}))
        run.json(f"raw/{name}.wall.json", {"wall_ms_start_to_exit": 120})


# ---------------------------------------------------------------- bench-kernel-fsync
def kernel_fsync():
    run = Run("kernel_fsync")
    n, base = 10, 5
    for path in ("kernel", "fuse"):
        for mode, (w_us, f_us) in (("inplace", (4000.0, 100.0)), ("vld", (500.0, 100.0))):
            for k in (base, base + n):
                # per fsync: 3 writes (1 FUA), 2 flushes, 12 KiB; plus 4 writes at mount
                writes, flushes = 4 + 3 * k, 2 * k
                s = stats(mode, writes=writes, flushes=flushes, fua=k, write_us=w_us, flush_us=f_us,
                          bytes_written=writes * 4096, busy_us=writes * w_us + flushes * f_us)
                if mode == "vld":
                    s["vld"].update(log_records_written=k, map_sectors_written=8 * writes)
                run.json(f"raw/{path}-{mode}-{k}.stats.json", s)
                run.json(f"raw/{path}-{mode}-{k}.loop.json",
                         {"n": k, "secs": 0.01 * k, "writes": 3 * k, "write_kib": 12 * k, "flushes": 2 * k,
                          "reads": 0, "discards": 0, "fs": "ext4"})


# ---------------------------------------------------------------- bench-hostcost
def hostcost():
    run = Run("hostcost")
    for rep in (1, 2, 3):
        for qd, scale in ((1, 1), (16, 4)):
            for target, iops in (("vld", (800.0 + 100 * rep) * scale), ("file", 1000.0 * scale)):
                name = f"raw/{target}-qd{qd}-{rep}"
                run.text(f"{name}.fio.json", fio(target, writes=1000, syncs=1000 // qd, write_us=300.0,
                                                 sync_us=200.0, iops=iops))
                run.json(f"{name}.cpu.json", {"target": target, "qd": qd, "rep": rep, "cpu_ticks": 10 * rep,
                                              "clk_tck": 100, "loadavg": "0.50 0.40 0.30"})
                if target != "file":
                    run.json(f"{name}.stats.json", stats("vld", writes=1000, write_us=380.0, util=0.1))


# ---------------------------------------------------------------- bench-pacing
def pacing():
    run = Run("pacing", meta=False)
    for latency, (clat, sync) in (("sleep", (1000.0, 300.0)), ("none", (60.0, 40.0))):
        run.text(f"fio-{latency}.json", fio(latency, writes=500, syncs=500, write_us=clat, sync_us=sync,
                                            iops=1e6 / (clat + sync)))
        run.json(f"stats-{latency}.json", stats("inplace", writes=500, flushes=500, write_us=900.0,
                                                flush_us=100.0))


# ---------------------------------------------------------------- bench-fs
def fs_common(run):
    run.text("raw/uptime-start.txt", " 12:00:00 up 1:00,  0 users,  load average: 0.50, 0.40, 0.30\n")
    run.text("raw/uptime-end.txt", " 12:05:00 up 1:05,  0 users,  load average: 0.60, 0.50, 0.40\n")


def op_json(elapsed_s, **kw):
    return dict(kw, ops_s=elapsed_s - 0.1, sync_s=0.1, elapsed_s=elapsed_s,
                loadavg_before=META["loadavg"], loadavg_after=META["loadavg"])


def lld_counters(blocks):
    """mode=lld's counters after BLOCKS blocks went into segments: a drain per 100, 1 ms each."""
    c = {k: 0 for k in ("segment_write_ms", "cleaning_ms", "checkpoint_ms", "segments_cleaned", "idle_cleans",
                        "nvram_drains", "nvram_stalls", "client_blocks_written", "nvram_records_written")}
    c.update(client_blocks_written=blocks, nvram_records_written=blocks, segment_write_ms=1.0 * blocks,
             nvram_drains=blocks // 100)
    return c


def fs_fio():
    run = Run("fs-fio")
    fs_common(run)
    for mode, w_us in (("inplace", 4000.0), ("vld", 800.0), ("lld", 20.0)):
        # ext4: 4 writes from mount, then 2 NBD writes and 1 flush per fsync
        lld = lambda n: {"lld": lld_counters(n)} if mode == "lld" else {}
        before = stats(mode, writes=4, write_us=w_us, bytes_written=4 * 4096, busy_us=4 * w_us, **lld(4))
        after = stats(mode, writes=4 + 200, flushes=100, write_us=w_us, flush_us=100.0,
                      bytes_written=204 * 4096, busy_us=204 * w_us + 100 * 100.0, **lld(204))
        run.json(f"raw/{mode}-ext4.before.stats.json", before)
        run.json(f"raw/{mode}-ext4.after.stats.json", after)
        run.text(f"raw/{mode}-ext4.fio.json", fio(f"{mode}-ext4", writes=100, syncs=100, write_us=10.0,
                                                  sync_us=2 * w_us + 200.0))
        run.json(f"raw/{mode}-nbd.stats.json", stats(mode, writes=100, flushes=100, write_us=w_us,
                                                     flush_us=100.0, bytes_written=100 * 4096,
                                                     busy_us=100 * (w_us + 100.0), **lld(100)))
        run.text(f"raw/{mode}-nbd.fio.json", fio(f"{mode}-nbd", writes=100, syncs=100, write_us=w_us + 50,
                                                 sync_us=150.0))


def phase_stats(run, pre, mode, cum, writes, reads, w_us, busy):
    """PRE.before/after.stats.json around a phase of WRITES (each with a flush) and READS
    taking BUSY µs; CUM (the drive's totals so far) is advanced past it."""
    def snap():
        extra = {"lld": lld_counters(cum["w"])} if mode == "lld" else {}
        return stats(mode, writes=cum["w"], reads=cum["r"], flushes=cum["f"], write_us=w_us, read_us=500.0,
                     busy_us=cum["busy"], bytes_read=cum["r"] * 4096, bytes_written=cum["w"] * 4096, **extra)
    run.json(f"{pre}.before.stats.json", snap())
    cum.update(w=cum["w"] + writes, r=cum["r"] + reads, f=cum["f"] + writes, busy=cum["busy"] + busy)
    run.json(f"{pre}.after.stats.json", snap())


def fs_smallfile():
    run = Run("fs-smallfile")
    fs_common(run)
    for mode, scale in (("inplace", 4.0), ("vld", 1.0), ("lld", 0.5)):
        cum = {"w": 0, "r": 0, "f": 0, "busy": 0.0}
        for i, (ph, writes, reads) in enumerate((("create", 300, 0), ("read", 0, 100), ("delete", 200, 0)), 1):
            pre = f"raw/ext4-{mode}-{i}-{ph}"
            k = scale if ph != "read" else 1.0  # 1 s of drive time (4 s in place), reads alike
            phase_stats(run, pre, mode, cum, writes, reads, 1000.0 * scale, 1e6 * k)
            run.json(f"{pre}.op.json", op_json(2.0 * k, op=ph, files=100))
            cum.update(w=cum["w"] + 1, busy=cum["busy"] + 500.0)  # one write between the phases


def fs_largefile():
    run = Run("fs-largefile")
    fs_common(run)
    nbytes = 8 << 20
    for variant in ("async", "sync"):
        for mode, speed in (("inplace", 1.0), ("vld", 2.0), ("lld", 4.0)):
            cum = {"w": 0, "r": 0, "f": 0, "busy": 0.0}
            for key in ("1-seqwrite", "2-seqread", "3-randwrite", "4-seqread", "5-randread"):
                pre = f"raw/{variant}-{mode}-{key}"
                writes = 2048 if "write" in key else 0
                # 4 MB/s in place, 8 vld (simulated); half that on the wall clock
                phase_stats(run, pre, mode, cum, writes, 0 if writes else 2048, 100.0, nbytes / (4.0 * speed))
                run.json(f"{pre}.op.json", op_json(nbytes / (2e6 * speed), op=key[2:], bytes=nbytes))


# 100 transactions; per transaction 4 writes and 2 flushes. ext4 -b 1024: a 1 KiB journal block
# (part of a 4 KiB block), a 4 KiB database page at offset 1 KiB (parts of two), a whole 4 KiB block
# and a 1 KiB block elsewhere; -b 4096: whole blocks only. Journal: fs blocks 1-3 (-b 1024) or 1-2;
# the database: fs blocks 5-8 (-b 1024) or 4-5.
SQL_WRITES = {1024: ["W 1024 1024", "W 5120 4096", "W 12288 4096", "W 20480 1024"],
              4096: ["W 4096 4096", "W 16384 8192", "W 32768 4096", "W 40960 4096"]}
SQL_LAYOUT = {1024: ("1 2 3", 5, 8), 4096: ("1 2", 4, 5)}
SQL_WRITE_US = {(1024, "inplace"): 5000.0, (1024, "vld"): 4000.0, (4096, "inplace"): 5000.0,
                (4096, "vld"): 500.0}


def fs_sqlite():
    run = Run("fs-sqlite")
    fs_common(run)
    for (blk, mode), w_us in SQL_WRITE_US.items():
        key = f"raw/b{blk}-{mode}"
        run.json(f"{key}.before.stats.json", stats(mode, vld={"rmw_reads": 7}) if mode == "vld" else stats(mode))
        rmw = {"vld": {"rmw_reads": 7 + (300 if blk == 1024 else 0)}} if mode == "vld" else {}
        run.json(f"{key}.after.stats.json", stats(mode, writes=400, flushes=200, write_us=w_us, flush_us=100.0,
                                                  busy_us=400 * w_us + 200 * 100.0, **rmw))
        run.json(f"{key}.op.json", op_json(3.0, op="sqlite", transactions=100, bytes=150000, rows=100))
        run.text(f"{key}.requests.tsv", "".join(w + "\n" for w in SQL_WRITES[blk] * 100) + "F 0 0\n")
        journal, lo, hi = SQL_LAYOUT[blk]
        run.text(f"{key}.journal-blocks", journal + "\n")
        run.text(f"{key}.db-extents",
                 f"Filesystem type is: ef53\nFile size of /mnt/db.sqlite is 4096 (4 blocks of {blk} bytes)\n"
                 " ext:     logical_offset:        physical_offset: length:   expected: flags:\n"
                 f"   0:        0..       {hi - lo}:        {lo}..        {hi}:      {hi - lo + 1}:      "
                 "       last,eof\n")


# ---------------------------------------------------------------- bench-fill
def fill():
    run = Run("fill")
    lines = []
    for mode, us in (("vld", 400.0), ("inplace", 4000.0)):
        for k, pct in enumerate((50.0, 100.0)):
            j = {"experiment": "fill", "disk": {"geometry": "st19101"}, "mode": mode, "order": "sequential",
                 "flush_every": 1, "written_pct": pct, "utilization": pct / 110, "writes": 100 * (k + 1),
                 "mean_us": us * (k + 1), "p99_us": 2 * us, "max_us": 3 * us}
            if mode == "vld":
                j.update(repacks=k, repack_ms=10.0 * k, empty_tracks=5 - k)
            lines.append(json.dumps(j))
    run.text("results.jsonl", "\n".join(lines) + "\n")
    (run.dir / "raw").rmdir()


# ---------------------------------------------------------------- bench-fig8 with the lld curves
F8_PLATTER, F8_NVRAM_REGION = 276 << 20, 47 * 256 * 512  # st19101: 6100000 bytes take 47 tracks
# update = write + flush (µs) per (label, U); None: no measured point
F8_UPDATE = {"vld": {20: (400.0, 100.0), 50: (600.0, 100.0), 80: (900.0, 100.0)},
             "inplace": {20: (4000.0, 100.0), 50: (4000.0, 100.0), 80: (4000.0, 100.0)},
             "lld": {20: (100.0, 0.0), 50: (500.0, 0.0), 80: (1500.0, 0.0), 95: (9000.0, 0.0)},
             "lld-nonvram": {20: (50.0, 6000.0), 50: (60.0, 6100.0), 80: (100.0, 6200.0)}}


def fig8_lld_section(cleaned, moved, freed):
    """An lld stats section: 1000 client blocks, 125 blocks per segment, whole segments read."""
    return {"blocks_per_segment": 125, "segment_count": 500, "segment_sectors": 1024, "live_blocks": 50000,
            "client_blocks_written": 1000, "cleaner_blocks_moved": moved, "cleaner_sectors_read": 1024 * cleaned,
            "segments_cleaned": cleaned, "segments_freed": freed, "idle_cleans": 0, "checkpoints": 3,
            "nvram_drains": 2, "nvram_stalls": 2, "refused_requests": 0, "nvram_capacity_records": 1466,
            "cleaning_ms": 100.0, "segment_write_ms": 50.0}


def fig8_lld():
    run = Run("fig8-lld")
    for label, points in F8_UPDATE.items():
        for u, (w_us, f_us) in points.items():
            key = f"st19101-{label}-{u}"
            lld = label.startswith("lld")
            disk = F8_PLATTER - (F8_NVRAM_REGION if label == "lld" else 0)
            geo = dict(TEMPLATE["geometry"], platter_bytes=F8_PLATTER, simulated_cylinders=138)
            extra = {"lld": fig8_lld_section(20, 1500, 20)} if lld else {}
            if label == "lld-nonvram":
                extra["recovery"] = {"method": "checkpoint+roll-forward"}
            run.json(f"raw/{key}.stats.json", stats("lld" if lld else label, writes=1000, flushes=1000,
                                                    write_us=w_us, flush_us=f_us, util=u / 100 * disk / F8_PLATTER,
                                                    geometry=geo, **extra))
            run.text(f"raw/{key}.fio.json", fio(key, writes=1000, syncs=1000))
            run.text(f"raw/{key}.plan.txt", f"spare=3 {u << 20} 5000 1000\n")
            if lld:
                run.json(f"raw/{key}.warm.stats.json", stats("lld", writes=5000, flushes=5000, geometry=geo,
                                                             lld=fig8_lld_section(30, 2000, 40),
                                                             recovery=extra.get("recovery", {})))
    run.text("raw/st19101-vld-95.plan.txt", "spare=4 skip 95% of the 270 MiB disk is 257 MiB, more than it holds\n")
    run.text("raw/st19101-inplace-95.refused.txt", "nbdkit: error: vld: spare=4 is refused\n")
    run.text("raw/st19101-lld-nonvram-95.failed.txt", "warm: nbdkit/fio failed\nnbdkit: error: ENOSPC\n")


# ---------------------------------------------------------------- bench-fig10
F10_LLD = {32: {0.0: 2000.0, 100.0: 1000.0, 1000.0: 20.0}, 256: {0.0: 2000.0, 100.0: 1900.0, 1000.0: 20.0}}
F10_VLD = {32: {0.0: 1000.0, 100.0: 500.0, 1000.0: 400.0}, 256: {0.0: 1000.0, 100.0: 900.0, 1000.0: 400.0}}
F10_COUNTERS = ("segment_writes", "partial_writes", "segments_closed", "client_blocks_written", "segments_cleaned",
                "segments_freed", "cleaner_blocks_moved", "cleaner_sectors_read", "idle_cleans", "checkpoints",
                "nvram_records_written", "nvram_drains", "nvram_stalls", "refused_requests", "nvram_ms",
                "segment_write_ms", "cleaning_ms", "checkpoint_ms", "nvram_stall_ms")


def f10_counters(**kw):
    return {k: float(kw.get(k, 0)) for k in F10_COUNTERS}


def f10_lld_line(burst, idle, mean):
    """At no idle time 10 segments cleaned in 500 ms with 600 of 1000 blocks live (t_clean 50 ms,
    u 0.6); at the longest pause 200 blocks drained in 40 ms of segment writes (t_block 0.2 ms)."""
    fg = f10_counters(segments_cleaned=10, cleaning_ms=500, cleaner_blocks_moved=600, nvram_stalls=2) \
        if idle == 0 else f10_counters(segments_cleaned=4, idle_cleans=4, cleaning_ms=200)
    idle_work = f10_counters(client_blocks_written=200, segment_write_ms=40, idle_cleans=4, cleaning_ms=200) \
        if idle else f10_counters()
    return {"experiment": "fig10", "idle_ms": idle, "burst": burst, "bursts": 10, "writes": 10 * burst,
            "mean_us": mean, "latency_us": {"p50": 20.0, "p99": 20.0, "max": 100 * mean},
            "breakdown_us": {"overhead": 0, "seek": 0, "head_switch": 0, "rotation": 0, "transfer": mean,
                             "locate": 0}, "preempted_writes": 0, "preempt_wait_mean_us": 0.0,
            "preempt_wait_max_us": 0.0, "idle_busy_ms": 5.0 * idle, "utilization": 0.78, "disk_utilization": 0.8,
            "lld": fg, "lld_idle": idle_work, "free_segments_end": 3, "nvram_used_records_end": 0,
            "disk": {"geometry": "st19101", "export_bytes": 256 << 20, "spare": 3, "cylinders": 138, "util": 0.8,
                     "segment_count": 500, "blocks_per_segment": 100, "nvram_bytes": 6100000,
                     "nvram_capacity_records": 1466, "cleaner_policy": "greedy", "region_blocks": 40000},
            "warmup": {"writes": 50000, "segments_cleaned": 700}}


def f10_vld_line(burst, idle, mean, on):
    j = {"experiment": "fig11", "idle_ms": idle, "burst": burst, "bursts": 10, "writes": 10 * burst, "mean_us": mean,
         "breakdown_us": {"overhead": 100, "seek": 0, "head_switch": 0, "rotation": 0, "transfer": mean - 100,
                          "locate": 0}, "preempted_writes": 0, "preempt_wait_mean_us": 0.0,
         "preempt_wait_max_us": 0.0, "utilization": 0.8, "disk": {"geometry": "st19101"},
         "compactor_on": on, "policy": "fewest-live" if on else "off"}
    if on:
        j["compactor"] = {"enabled": True, "policy": "fewest-live", "tracks_compacted": 5, "blocks_moved": 50,
                          "empty_tracks_end": 9, "busy_ms": 1.0, "write_amplification": 1.2,
                          "write_amplification_with_map": 1.3}
    return j


def fig10():
    run = Run("fig10")
    for b in F10_LLD:
        run.text(f"raw/lld-burst{b}.jsonl", "".join(json.dumps(f10_lld_line(b, i, m)) + "\n"
                                                      for i, m in F10_LLD[b].items()))
        run.text(f"raw/vld-burst{b}.jsonl", "".join(
            json.dumps(f10_vld_line(b, i, m if on else 1000.0, on)) + "\n"
            for on in (True, False) for i, m in F10_VLD[b].items()))
        run.text(f"raw/lld-burst{b}.err", "")
        run.text(f"raw/vld-burst{b}.err", "")


if __name__ == "__main__":
    for make in (largefile, recovery, kernel_fsync, hostcost, pacing, fs_fio, fs_smallfile, fs_largefile,
                 fs_sqlite, fill,
                 fig8_lld, fig10):
        make()
