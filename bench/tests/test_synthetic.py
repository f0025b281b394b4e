"""The modules without a stored real run, on synthetic run directories
(data/*, written by make_synthetic.py in the format each bench-* script
leaves), with results that can be worked out by hand."""
import json

import pytest

from vldbench import cli, largefile
from vldbench.common import load_json

PNG = b"\x89PNG\r\n\x1a\n"


def results(run):
    return json.loads((run / "results.json").read_text())


# ---------------------------------------------------------------- largefile
LARGEFILE_ARGS = ["--run-id", "fixture", "--command", "scripts/bench-largefile", "--geometry", "st19101",
                  "--size", "64M", "--spare", "5", "--file-bytes", str(4 << 20), "--overhead-us", "",
                  "--compact-quiet-ms", "0", "--compact-policy", "fewest-live", "--wall-s", "42"]


def test_largefile_throughput_and_ratios(run_copy):
    run = run_copy("largefile")
    largefile.main([str(run)] + LARGEFILE_ARGS)
    res = results(run)
    by = {(r["phase"], r["config"]): r for r in res["rows"]}
    assert len(by) == 15    # 6 phases x (in place, vld) + phase 4 buffer off x 2 + compacted
    assert by[("1", "inplace")]["mb_per_s"] == pytest.approx(2.0)
    assert by[("1", "vld")]["ratio_vs_inplace"] == pytest.approx(2.0)
    assert by[("4", "vld")]["ratio_vs_inplace"] == pytest.approx(0.5)
    assert by[("4", "vld-compacted")]["ratio_vs_inplace"] == pytest.approx(1.5)
    assert res["compaction"]["empty_tracks_without"] == 3 and res["compaction"]["empty_tracks_with"] == 40
    assert res["problems"] == [] and res["runs_wall_s"] == 42 and res["overhead_us"] is None
    table = (run / "table.md").read_text()
    assert "| 4 sequential read after random write (64 KiB) | 2.00 | 1.00 | 0.50x | 50 | 50 |" in table
    assert "| 2.00 (50) | 1.00 (50) | 1.00 (50) | 0.50 (50) | 3.00 (50) | 2.00x |" in table
    assert "settled after 2.5 s wall; 37 tracks emptied (1 abandoned)" in table
    assert (run / "largefile.png").read_bytes()[:8] == PNG


def test_largefile_flags_short_runs_and_unsettled_compaction(run_copy):
    run = run_copy("largefile")
    runs = largefile.load_runs(run)
    key, s, fio = runs[("2", "vld")]
    s["read_latency_us"]["count"] -= 1
    rows, problems = largefile.compute_rows(runs, 4 << 20)
    assert problems == [f"{key}: {4 << 20} bytes in 63 requests, expected {4 << 20} in 64",
                        f"{key}: the stats file counts 63 reads, fio 64"]
    poll, cs = largefile.load_compaction(run)
    cs["requests"]["write"] = 1
    c = largefile.compaction_summary(dict(poll, settled=False), cs, {})
    assert c["empty_tracks_without"] is None
    assert largefile.compaction_problems(c) == ["compaction did not settle within the time limit (2.5 s)",
                                                "the compaction run served client requests"]


def test_cli_compaction_line_and_kv_json(run_copy, tmp_path, capsys):
    run = run_copy("largefile")
    cli.main(["compaction-line", str(run / "raw/vld-compaction.poll.json"),
              str(run / "raw/vld-compaction.stats.json")])
    assert capsys.readouterr().out == \
        " settled after 2.5 s: 37 tracks emptied, 900 blocks and 120 map sectors moved in 50 steps;"
    cli.main(["kv-json", str(tmp_path / "loop.json"), "n=10 secs=1.50 writes=30 fs=ext4"])
    assert load_json(tmp_path / "loop.json") == {"n": 10, "secs": 1.5, "writes": 30, "fs": "ext4"}


# ---------------------------------------------------------------- locate (over the stored fig8 run)
def test_locate_beside_the_models(run_copy, tmp_path):
    from test_figures import run_fig8
    from vldbench import locate
    fig8_run = run_fig8(run_copy)
    out = tmp_path / "locate"
    out.mkdir()
    locate.main([str(fig8_run), str(out)])
    rows = results(out)["rows"]
    assert [(r["geometry"], r["target_util_pct"]) for r in rows] == \
        [("hp97560", 50), ("hp97560", 80), ("st19101", 50), ("st19101", 80)]
    st80 = rows[3]
    s = load_json(fig8_run / "raw/st19101-vld-80.stats.json")
    b = s["breakdown_us"]
    assert st80["sim_locate_us"] == b["seek"] + b["head_switch"] + b["rotation"]
    assert st80["sector_us"] == 6000.0 / 256
    assert st80["model1_sectors"] == pytest.approx(locate.m1(1 - s["utilization"], 256))
    assert "| 79% | 284 (12.1) = 14+231+39 | 264 (11.3) | 98 (4.2) | 89 (3.8) |" in (out / "table.md").read_text()
    assert (out / "locate.png").read_bytes()[:8] == PNG


def test_locate_models():
    from vldbench import locate
    assert locate.m1(0.5, 2) == 0.5
    assert locate.m1(1.0, 256) == 0.0                      # an empty track: the first sector is free
    assert locate.m9(0.5, 2, b=1, big_b=1) == locate.m1(0.5, 2)
    assert locate.m234(0.0, 16, 4) == float("inf")
    assert locate.m234(1.0, 16, 4) == 0.0
    # a head switch costs s: min(x, s + j) can never exceed s + E[j] nor the track's own E[x]
    p = 0.2
    assert locate.m234(p, 16, 3.0) < min((1 - p) / p, 3.0 + (1 - p) ** 15 / (1 - (1 - p) ** 15))


# ---------------------------------------------------------------- recovery
def test_recovery_memory_and_opens(run_copy):
    from vldbench import recovery
    run = run_copy("recovery")
    recovery.main([str(run), "--run-id", "fixture", "--command", "scripts/bench-recovery"])
    res = results(run)
    # VmRSS 20 MiB before, 30 MiB after, over a 1 GiB export
    assert res["rss"]["per_gib_mib"] == 10.0
    assert res["rss"]["model_map_mib_per_gib"] == 2.0          # 8 bytes per 4 KiB block
    # 1600 tracks x 6 ms + 1500 head switches x 0.5 ms + 99 one-cylinder seeks x 1 ms
    assert res["full_scan_estimate"]["simulated_ms"] == pytest.approx(9600 + 750 + 99)
    assert res["recovery"]["unclean"]["vs_full_scan_time_pct"] == pytest.approx(10.0)
    assert res["writes"]["runtime_s"] == 0.5
    table = (run / "table.md").read_text()
    assert "= **10.00 MiB/GiB**" in table
    # Stats files from before scattered_walked, tracks_walked and data_blocks_read: "-" and the
    # checked count
    assert "| U: after kill -9 | tail-scan | 4096 | 500 | - | - | 16 | 3 | 0 | 1045 | 2 | 120 | 10.0% |" in table
    assert res["unclean_vs_clean"] == pytest.approx(
        res["recovery"]["unclean"]["simulated_ms"] / res["recovery"]["clean"]["simulated_ms"])
    assert "**After kill -9 / clean open: " in table


def test_recovery_seek_curve():
    from vldbench import recovery
    seek = "0.5,0.25,100,3.0,0.01"     # A + B sqrt(d) below D cylinders, C + E d from there
    assert recovery.seek_ms(seek, 0) == 0.0
    assert recovery.seek_ms(seek, 4) == 1.0
    assert recovery.seek_ms(seek, 200) == 5.0


# ---------------------------------------------------------------- kernel_fsync
KFSYNC_ARGS = ["--run-id", "fixture", "--command", "scripts/bench-kernel-fsync", "--paths", "kernel fuse",
               "--modes", "inplace vld", "--n", "10", "--base", "5", "--size", "64M", "--file-mib", "16",
               "--seed", "1", "--geometry", "st19101", "--guest-kernel", "6.1.0", "--fuse-gap-ms", "0"]


def test_kernel_fsync_requests_per_fsync(run_copy):
    from vldbench import kernel_fsync
    run = run_copy("kernel_fsync")
    kernel_fsync.main([str(run)] + KFSYNC_ARGS)
    rows = results(run)["rows"]
    assert [(r["path"], r["mode"]) for r in rows] == \
        [("kernel", "inplace"), ("kernel", "vld"), ("fuse", "inplace"), ("fuse", "vld")]
    v = rows[1]
    # 3 writes (1 FUA) and 2 flushes per fsync; the 4 writes at mount cancel out
    assert (v["write_per_fsync"], v["write_fua_per_fsync"], v["flush_per_fsync"]) == (3.0, 1.0, 2.0)
    assert v["write_kib_per_fsync"] == 12.0
    assert v["mean_write_us"] == 500.0 and v["drive_us_per_fsync"] == 3 * 500.0 + 2 * 100.0
    assert v["vld_records_per_fsync"] == 1.0 and v["vld_map_sectors_per_fsync"] == 24.0
    assert v["breakdown_us_per_write"]["transfer"] == pytest.approx(150.0)
    table = (run / "table.md").read_text()
    assert "| kernel | inplace | 3.00 | 1.00 | 2.00 | 12.0 | 2.00 | 4000 | 100 | 12200 | 3.00 / 2.00 | 10.0 |" in table
    assert "guest kernel 6.1.0 under qemu TCG" in table


def test_kernel_fsync_no_writes_leaves_means_empty(run_copy):
    from vldbench import kernel_fsync
    run = run_copy("kernel_fsync")
    a, _ = kernel_fsync.load(run, "kernel-vld-5")
    r = kernel_fsync.per_fsync("kernel", "vld", a, a, {"n": 1, "secs": 0.0, "writes": 0, "write_kib": 0,
                                                        "flushes": 0, "reads": 0, "discards": 0}, 1)
    assert r["mean_write_us"] is None and r["breakdown_us_per_write"] is None and r["write_per_fsync"] == 0


# ---------------------------------------------------------------- hostcost
def test_hostcost_ratio_and_cpu(run_copy):
    from vldbench import hostcost
    run = run_copy("hostcost")
    hostcost.main([str(run), "--run-id", "fixture", "--command", "scripts/bench-hostcost",
                   "--repeats", "3", "--targets", "vld file", "--qds", "1 16"])
    res = results(run)
    s1, s16 = res["summary"]["qd1"], res["summary"]["qd16"]
    assert (s1["vld_iops"], s1["file_iops"]) == (1000.0, 1000.0)
    assert (s16["vld_iops"], s16["file_iops"]) == (4000.0, 4000.0)
    assert s1["pair_ratios"] == pytest.approx([0.9, 1.0, 1.1])
    assert (s1["ratio_min"], s1["ratio_median"], s1["ratio_max"]) == pytest.approx((0.9, 1.0, 1.1))
    # rows in run order: rep 1 vld QD1, file QD1, vld QD16, file QD16, rep 2 ...
    assert [(r["target"], r["qd"], r["rep"]) for r in res["rows"][:4]] == [
        ("vld", 1, 1), ("file", 1, 1), ("vld", 16, 1), ("file", 16, 1)]
    r = res["rows"][0]
    # 10 ticks of 1/100 s over 1000 writes
    assert r["server_cpu_us_per_io"] == pytest.approx(100.0) and r["flushes"] == 1000
    assert res["rows"][2]["flushes"] == 62
    assert r["sim_write_us"] == 380.0 and "sim_write_us" not in res["rows"][1]
    table = (run / "table.md").read_text()
    assert ("QD 1: ratio vld/file min 0.90, median 1.00, max 1.10 (pairs: 0.90, 1.00, 1.10); "
            "target median >= 0.9: met") in table
    assert (run / "results.csv").read_text().startswith("target,qd,rep,writes,")


def test_hostcost_missed_target():
    from vldbench import hostcost
    rows = [{"target": t, "qd": 16, "rep": rep, "iops": iops, "server_cpu_us_per_io": 1.0}
            for rep, (v, f) in enumerate(((70.0, 100.0), (95.0, 100.0), (80.0, 100.0)), 1)
            for t, iops in (("vld", v), ("file", f))]
    s = hostcost.summarize(rows, ["vld", "file"], [16])["qd16"]
    assert (s["ratio_min"], s["ratio_median"], s["ratio_max"]) == pytest.approx((0.7, 0.8, 0.95))
    assert hostcost.table_lines({}, [], {"qd16": s}, ["vld", "file"], [16])[-1].endswith(
        "target median >= 0.9: MISSED")


# ---------------------------------------------------------------- pacing
PACING_ARGS = ["--run-id", "fixture", "--date", "2026-11-25T12:00:00Z", "--command", "scripts/bench-pacing",
               "--commit", "abc1234", "--geometry", "st19101", "--size", "64M", "--runtime", "5",
               "--image-fs", "tmpfs", "--image-dir", "/dev/shm"]


def test_pacing_excess_over_the_floor(run_copy, capsys):
    from vldbench import pacing
    run = run_copy("pacing")
    csv_path = run.parent / "results.csv"
    for _ in range(2):
        pacing.main([str(run), str(csv_path)] + PACING_ARGS)
    res = results(run)
    # sleep: fio 1000 + 300 µs against 900 + 100 simulated; none: fio 60 + 40 µs
    assert res["floor_us"] == 100.0 and res["excess_us"] == 200.0
    sleep = res["rows"][0]
    assert (sleep["gap_us"], sleep["period_us"]) == (300.0, pytest.approx(1300.0))
    out = capsys.readouterr().out
    assert "excess   = gap(sleep) - total(none)  =    200.0 us per write+flush (20.0% of the simulated time)" in out
    assert "| sleep        |                   1000.0 |" in out
    lines = csv_path.read_text().splitlines()
    assert len(lines) == 1 + 2 * 2 and lines[0].startswith("run_id,date_utc,commit,")   # one header


def test_pacing_notes_a_count_mismatch(capsys):
    from conftest import DATA
    from vldbench import pacing
    st = load_json(DATA / "pacing/stats-none.json")
    st["requests"]["flush"] -= 1
    pacing.mode_row("none", load_json(DATA / "pacing/fio-none.json"), st)
    assert "fio counted 500 writes/500 syncs, the plugin 500/499" in capsys.readouterr().out


# ---------------------------------------------------------------- fs
FS_COMMON = ["--modes", "inplace vld lld", "--geometry", "st19101", "--size", "256M"]


def test_fs_fio_per_fsync_and_ratios(run_copy):
    from vldbench import fs
    run = run_copy("fs-fio")
    fs.main(["report", "fio", str(run), "--command", "scripts/bench-fs fio", *FS_COMMON, "--compactor", "off",
             "--file-mb", "16", "--runtime", "5"])
    res = results(run)
    by = {(r["mode"], r["target"]): r for r in res["rows"]}
    ext4 = by[("vld", "ext4")]
    # 200 NBD writes and 100 flushes for 100 fsyncs; mount's 4 writes are before the phase
    assert (ext4["writes_per_fsync"], ext4["flushes_per_fsync"], ext4["mount_writes"]) == (2.0, 1.0, 4)
    assert ext4["sim_busy_per_fsync_us"] == 2 * 800.0 + 100.0
    assert ext4["fio_op_mean_us"] == 10.0 + 1800.0
    assert by[("vld", "nbd")]["writes_per_fsync"] == 1.0
    assert res["ratios_inplace_over_vld"]["ext4"]["sim_write_mean_us"] == 5.0
    assert res["ratios_inplace_over"]["lld"]["ext4"]["sim_write_mean_us"] == 200.0
    assert res["problems"] == []
    table = (run / "table.md").read_text()
    assert "| vld | ext4 | 100 | 10 | 20 | 1800 | 1800 | 3600 | **1810** | 2.00 | 0.00 | 1.00 | 8.0 |" in table
    assert "ext4: in place / lld = 32.84x (fio op mean)" in table
    assert "lld-ext4: lld wrote 200 blocks into segments in 200 ms (2 NVRAM drains" in table
    assert (run / "fs-fio.png").read_bytes()[:8] == PNG


def test_fs_fio_flags_a_stale_stats_file(run_copy):
    from vldbench import fs
    fio, d, cum, _ = fs.load_fio_target(str(run_copy("fs-fio") / "raw"), "vld", "nbd")
    d["write"] -= 1
    assert fs.fio_problems("vld", "nbd", fio, d) == ["vld-nbd: the stats file counts 99 writes, fio 100"]


def test_fs_smallfile_speedups(run_copy):
    from vldbench import fs
    run = run_copy("fs-smallfile")
    fs.main(["report", "smallfile", str(run), "--command", "scripts/bench-fs smallfile", *FS_COMMON,
             "--compactor", "on", "--fs-list", "ext4", "--files", "100", "--file-kb", "1"])
    res = results(run)
    by = {(r["mode"], r["phase"]): r for r in res["rows"]}
    assert by[("vld", "create")]["speedup_wall"] == 4.0 and by[("vld", "create")]["speedup_sim"] == 4.0
    assert by[("vld", "read")]["speedup_sim"] == 1.0 and by[("inplace", "create")]["speedup_wall"] == 1.0
    assert by[("vld", "delete")]["nbd_writes"] == 200
    # one write and 0.5 ms between each pair of phases, 2 pairs x 3 modes
    assert res["between_phases"] == {"write": 6, "flush": 0, "read": 0, "busy_us": 3000.0}
    table = (run / "table.md").read_text()
    assert "| ext4 | create | vld | 2.00 | **4.00** | 1.00 | **4.00** | 3.00 / 3.00 / 0.00 |" in table
    assert "| ext4 | create | in place | 8.00 | 1.00 | 4.00 | 1.00 | 3.00 / 3.00 / 0.00 |" in table
    assert by[("lld", "create")]["speedup_sim"] == 8.0
    assert "ext4 create: lld wrote 300 blocks into segments in 300 ms (3 NVRAM drains" in table
    assert (run / "fs-smallfile.png").read_bytes()[:8] == PNG


def test_fs_largefile_throughput(run_copy):
    from vldbench import fs
    run = run_copy("fs-largefile")
    fs.main(["report", "largefile", str(run), "--command", "scripts/bench-fs largefile", *FS_COMMON,
             "--compactor", "on", "--lf-mb", "8"])
    res = results(run)
    r = next(r for r in res["rows"] if (r["variant"], r["mode"], r["phase"]) == ("sync", "vld", "3-randwrite"))
    nbytes = 8 << 20
    assert r["mb_per_s_sim"] == 8.0 and r["mb_per_s_wall"] == pytest.approx(4.0)
    assert r["vld_over_inplace_sim"] == 2.0 and r["nbd_writes"] == 2048 and r["bytes"] == nbytes
    assert res["between_phases"]["busy_us"] == 0
    table = (run / "table.md").read_text()
    assert "| sync | 3 random write (sync) | vld | 4.00 | **2.00x** | 8.00 | **2.00x** | 2048 / 2048 / 0 |" in table
    assert "| sync | 3 random write (sync) | lld (6.1 MB NVRAM) | 8.00 | **4.00x** | 16.00 | **4.00x** |" in table
    assert (run / "fs-largefile.png").read_bytes()[:8] == PNG


def test_fs_ops_on_files(tmp_path, capsys):
    from vldbench import fs
    d = str(tmp_path)
    for args in (["create", d, "3", "100", "nofsync"], ["read", d, "3", "100"], ["delete", d, "3", "nofsync"],
                 ["seqwrite", f"{d}/big", "32768", "4096"], ["randwrite", f"{d}/big", "4096", "1", "async"],
                 ["seqread", f"{d}/big", "4096"], ["randread", f"{d}/big", "4096", "2"]):
        fs.main(["op", *args])
        res = json.loads(capsys.readouterr().out)
        assert res["op"] == args[0] and res["elapsed_s"] >= res["ops_s"] >= 0
        assert res.get("bytes", 300) in (300, 32768) and res.get("requests", 8) == 8
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big"]
    (tmp_path / "f00000").write_bytes(b"x" * 100)
    with pytest.raises(SystemExit, match="f00000 read back wrong"):
        fs.op(["read", d, "1", "100"])


# ---------------------------------------------------------------- fill
def test_fill_table_and_plot(run_copy):
    from vldbench import fill
    run = run_copy("fill")
    fill.main([str(run), "--command", "scripts/bench-fill --quick"])
    table = (run / "table.md").read_text()
    assert table.startswith("`scripts/bench-fill --quick` (2026-11-25T12:00:00Z, commit abc1234)")
    assert "| 100% | 0.91 | 800 | 800 | 1200 | 1 | 10 | 8000 | 10.00x |" in table
    # whole fill: (400 x 100 + 800 x 200) / 300 writes
    assert "Whole fill: vld 667 µs per write, in place 6667 (10.00x); 1 repacks." in table
    assert (run / "fill.png").read_bytes()[:8] == PNG


def test_fill_weighted_mean():
    from vldbench import fill
    assert fill.weighted_mean_us([{"mean_us": 100.0, "writes": 1}, {"mean_us": 400.0, "writes": 2}]) == 300.0
    runs = fill.runs_by_geometry_order([{"disk": {"geometry": "g"}, "order": "random", "mode": m} for m in "ab"])
    assert list(runs) == [("g", "random")] and set(runs[("g", "random")]) == {"a", "b"}
