"""Each figure module turns a stored run directory into its table and plot."""
import json

from vldbench import demo, fig8, presets, procstatus
from vldbench.common import load_json

FIG8_COMMAND = "UTILS=\"50 80\" IOS=400 scripts/bench-fig8"
FIG8_ARGS = ["--geometries", "st19101 hp97560", "--modes", "vld inplace", "--utils", "50 80",
             "--run-id", "fixture", "--command", FIG8_COMMAND, "--size", "64M", "--warmup-pct", "25"]


def run_fig8(run_copy):
    run = run_copy("fig8")
    fig8.main([str(run)] + FIG8_ARGS)
    return run


def test_fig8_results_and_ratio(run_copy):
    run = run_fig8(run_copy)
    res = json.loads((run / "results.json").read_text())
    by = {(r["geometry"], r["mode"], r["target_util_pct"]): r for r in res["rows"]}
    assert len(by) == 8
    v, ip = by[("st19101", "vld", 80)], by[("st19101", "inplace", 80)]
    assert round(v["mean_us"], 1) == 595.5
    assert round(ip["mean_us"], 1) == 3994.4
    assert abs(v["ratio_inplace_over_vld"] - 3994.4296875 / 595.52343999) < 1e-6
    assert v["locate_us"] == v["seek_us"] + v["head_switch_us"] + v["rotation_us"]
    assert res["problems"] == []
    assert res["command"] == FIG8_COMMAND


def test_fig8_table_and_plot(run_copy):
    run = run_fig8(run_copy)
    table = (run / "table.md").read_text()
    assert table.startswith(f"`{FIG8_COMMAND}` (")
    assert "| 80% | 79.4% | 3994 | " in table
    assert "6.71x (target >= 5x: met)" in table
    assert (run / "fig8.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (run / "results.csv").read_text().startswith("geometry,mode,target_util_pct,")


def test_fig8_flags_a_stale_stats_file(run_copy):
    run = run_copy("fig8")
    stats = run / "raw/st19101-vld-50.stats.json"
    s = load_json(stats)
    s["write_latency_us"]["count"] -= 1
    stats.write_text(json.dumps(s))
    fig8.main([str(run)] + FIG8_ARGS)
    res = json.loads((run / "results.json").read_text())
    assert any("st19101-vld-50: the stats file counts" in p for p in res["problems"])


def test_fig8_skipped_point(run_copy):
    run = run_copy("fig8")
    for f in run.glob("raw/hp97560-*-80.*"):
        f.unlink()
    (run / "raw/hp97560-vld-80.plan.txt").write_text("spare=13 skip 80% of the 292 MiB disk is more\n")
    fig8.main([str(run)] + FIG8_ARGS)
    table = (run / "table.md").read_text()
    assert "| 80% | skipped | not run | - |" in table
    assert "- vld at 80%: **skipped**: 80% of the 292 MiB disk is more" in table


def test_presets_table_and_plot(run_copy):
    run = run_copy("presets")
    presets.main([str(run), "hp97560", "st19101", "savvio10k4"])
    rows = json.loads((run / "presets.json").read_text())
    assert [r["preset"] for r in rows] == ["hp97560", "st19101", "savvio10k4"]
    st = rows[1]
    assert st["writes"] == 300
    b = st["breakdown_us"]
    assert abs(sum(b[p] for p in presets.PARTS) - st["latency_us"]["mean"]) < 0.01 * st["latency_us"]["mean"]
    assert "| st19101 | 5072 | 8552 | 100 |" in (run / "table.md").read_text()
    assert (run / "presets.png").stat().st_size > 1000


def test_demo_lines():
    from conftest import DATA
    job = load_json(DATA / "fig8/raw/st19101-vld-80.fio.json")["jobs"][0]
    assert demo.fio_line(job).startswith("   fio: 400 writes, ")


def _demo_stats(write_mean, flush_mean, busy_us, writes=500):
    lat = {"count": writes, "mean": write_mean, "p50": write_mean, "p99": write_mean,
           "max": write_mean}
    return {"write_latency_us": lat, "busy_us": busy_us,
            "flush_latency_us": {"count": writes, "mean": flush_mean}}


def test_demo_table_puts_the_three_modes_side_by_side():
    named = [("vld", _demo_stats(372.0, 100.0, 236000.0)),
             ("inplace", _demo_stats(4900.0, 100.0, 2500000.0)),
             ("lld", _demo_stats(250.0, 0.0, 125000.0))]
    lines = demo.table(named)
    assert lines[0] == demo.TABLE_HEADER
    assert lines[1].split() == ["vld", "372", "372", "372", "372", "100", "472"]
    assert lines[3].split()[0] == "lld"
    assert lines[4] == "== in place / each mode, mean write + flush: vld 10.6x, lld 20.0x"
    assert [ln.split()[0] for ln in lines[5:]] == ["vld", "inplace", "lld"]


def test_demo_table_without_inplace_has_no_ratio():
    lines = demo.table([("vld", _demo_stats(372.0, 100.0, 1.0))])
    assert not any("in place /" in ln for ln in lines)


def test_procstatus_parses_kib():
    text = "Name:\tnbdkit\nVmRSS:\t   22836 kB\nThreads:\t5\nVmSwap:\t0 kB\n"
    assert procstatus.parse_status(text) == {"VmRSS": 22836, "Threads": 5}


TABLE2_ARGS = ["--geometries", "hp97560 st19101 savvio10k4", "--writes", "1000",
               "--sweep-geometry", "st19101", "--sweep-writes", "500 1000 2000", "--util", "80",
               "--run-id", "fixture", "--command", "scripts/bench-table2 --quick"]


def test_table2_ratios(run_copy):
    from vldbench import table2
    run = run_copy("table2")
    table2.main([str(run)] + TABLE2_ARGS)
    res = json.loads((run / "results.json").read_text())
    head = {r["geometry"]: r for r in res["rows"] if r["writes"] == 1000 and r["mode"] == "vld"}
    assert round(head["hp97560"]["ratio_mean"], 2) == 2.33
    assert round(head["st19101"]["ratio_mean"], 2) == 12.98
    assert res["problems"] == []
    table = (run / "table.md").read_text()
    assert "**12.98x**" in table
    assert "it rises from drive to drive" in table
    assert (run / "table2.png").stat().st_size > 1000


def test_fig11_compactor_helps_with_idle_time(run_copy):
    from vldbench import fig11
    run = run_copy("fig11")
    fig11.main([str(run), "--burst-sizes", "64 256", "--idles", "0 20 100 500 2000",
                "--policy-burst", "256", "--policy-idles", "200",
                "--policies", "fewest-live cost-benefit random", "--warm", "64:16 256:5 256:5",
                "--run-id", "fixture", "--command", "scripts/bench-fig11 --quick"])
    res = json.loads((run / "results.json").read_text())
    by = {(r["burst"], r["policy"], r["idle_ms"]): r for r in res["rows"]}
    assert round(by[(64, "fewest-live", 500.0)]["mean_us"]) == 398
    assert round(by[(64, "off", 500.0)]["mean_us"]) == 1077
    assert by[(64, "off", 500.0)]["tracks_compacted"] in (0, None)
    assert "| 500 | 398 | 1077 | 379 | 1042 |" in (run / "table.md").read_text()
    assert (run / "fig11.png").stat().st_size > 1000


def test_fig2_model_and_simulation(run_copy):
    from vldbench import fig2
    run = run_copy("fig2")
    fig2.main([str(run), "--geometries", "hp97560 st19101 savvio10k4", "--sectors", "1 8",
               "--mc-writes", "4000", "--seed", "1", "--run-id", "fixture",
               "--command", "scripts/bench-fig2 --quick"])
    res = json.loads((run / "results.json").read_text())
    r = next(r for r in res["rows"] if r["geometry"] == "hp97560" and r["sectors_per_write"] == 1
             and r["threshold_pct"] == 0)
    assert round(r["model13_us"], 1) == 988.3   # model (13), n = 72, m = 0
    assert round(r["strict_mean_locate_us"], 1) == 1070.6
    assert abs(r["mc_strict_us"] - r["model13_us"]) < 0.05 * r["model13_us"]
    assert (run / "fig2.png").stat().st_size > 1000


def test_fig2_models_and_summary_are_pure():
    from vldbench import fig2
    # (11) at m = n - 1: one write per track, s plus the expected rotation to the next free slot.
    assert fig2.model11(4, 3, 100.0, 10.0) == 100.0 + 10.0 * (4 - 4) / 5
    assert fig2.model13(800, 0, 1.0, 1.0) is None          # 8 - n/96 <= 0: eps undefined
    assert fig2.spans([50, 55, 60, 70], [40, 50, 55, 60, 65, 70]) == "50-60, 70"
    rs = [{"threshold_pct": t, "strict_mean_locate_us": v, "as_built_mean_locate_us": v}
          for t, v in ((0, 30.0), (25, 10.0), (50, 12.0), (75, 40.0))]
    assert fig2.best(rs, "strict_mean_locate_us") == (25, 10.0, [25])
    shape = fig2.curve_shape(rs, {k: fig2.best(rs, k) for k in fig2.SIM.values()})
    assert shape["strict"] == {"left_over_min": 3.0, "right_over_min": 4.0, "u_shaped": True}
    assert fig2.policies_agree_from(rs) == 0


def test_table2_flags_a_utilization_off_target(run_copy):
    from vldbench import table2
    run = run_copy("table2")
    head = {"st19101": table2.with_ratios(table2.load_point(run, "st19101", 1000))}
    assert table2.problems_of(head, 0.80) == []
    assert table2.problems_of(head, 0.50) == ["st19101: vld utilization 0.800",
                                              "st19101: inplace utilization 0.800"]
    assert table2.direction([2.0, 3.0, 4.0]) == "rises"
    assert table2.direction([4.0, 3.0]) == "falls"
    assert table2.direction([2.0, 3.0, 1.0]) == "is not monotonic"


def fig11_row(seed, policy, idle, mean, p99, burst=256):
    return {"seed": seed, "burst": burst, "policy": policy, "idle_ms": idle, "mean_us": mean, "p99_us": p99}


def test_fig11_across_seeds_flags_each_point_where_on_is_worse_than_off():
    from vldbench import fig11
    rows = [fig11_row(1, "fewest-live", 50.0, 900, 3000), fig11_row(2, "fewest-live", 50.0, 1000, 2600),
            fig11_row(1, "off", 50.0, 1000, 2900), fig11_row(2, "off", 50.0, 1010, 2800),
            fig11_row(1, "fewest-live", 100.0, 800, 2000), fig11_row(2, "fewest-live", 100.0, 1300, 2000),
            fig11_row(1, "off", 100.0, 1000, 2900), fig11_row(2, "off", 100.0, 1000, 2900)]
    s = fig11.across_seeds(rows)
    # idle 50: on (900 + 1000) / 2 = 950 against off (1000 + 1010) / 2 = 1005; p99 (3000 + 2600) / 2
    # = 2800 against (2900 + 2800) / 2 = 2850: better in both, though seed 1's p99 alone is worse.
    assert s[(256, "fewest-live", 50.0)] == {"seeds": [1, 2], "mean_us": 950, "p99_us": 2800, "p99_max_us": 3000}
    assert (s[(256, "off", 50.0)]["mean_us"], s[(256, "off", 50.0)]["p99_us"]) == (1005, 2850)
    # idle 100: on (800 + 1300) / 2 = 1050 > off 1000; p99 2000 < 2900.
    assert fig11.worse_than_off(s) == ["B=256 idle 100: mean 1050 > 1000"]
    table = "\n".join(fig11.seeds_table(s, [256], [50.0, 100.0], fig11.worse_than_off(s)))
    assert "**Across 2 seeds (1, 2)**" in table
    assert "| 50 | 950 | 1005 | 2800 | 2850 |" in table
    assert "| 100 | 1050 | 1000 | 2000 | 2900 |" in table
    assert "Compactor on worse than off (across seeds): B=256 idle 100: mean 1050 > 1000." in table
    assert fig11.first_seed(rows) == rows[0::2]
    # A p99 missing (a run from before vld-bench reported it) is no comparison.
    rows[0]["p99_us"] = None
    assert fig11.across_seeds(rows)[(256, "fewest-live", 50.0)]["p99_us"] is None
    assert fig11.worse_than_off(fig11.across_seeds(rows)) == ["B=256 idle 100: mean 1050 > 1000"]


def test_fig11_reads_one_file_per_seed_in_seed_order(tmp_path):
    from vldbench import fig11
    (tmp_path / "raw").mkdir()
    for seed in (10, 2):
        line = {"experiment": "fig11", "idle_ms": 50.0, "burst": 64, "bursts": 4, "writes": 256,
                "mean_us": 500.0 + seed, "latency_us": {"p50": 400.0, "p99": 900.0 + seed, "max": 1000.0},
                "breakdown_us": {"overhead": 100}, "preempted_writes": 0, "preempt_wait_mean_us": 0.0,
                "preempt_wait_max_us": 0.0, "utilization": 0.8, "compactor_on": False, "policy": "off",
                "disk": {"geometry": "st19101", "seed": seed, "util": 0.8}}
        (tmp_path / "raw" / f"burst64-seed{seed}.jsonl").write_text(json.dumps(line) + "\n")
    (tmp_path / "raw" / "policies.jsonl").write_text("")
    assert [p.rsplit("/", 1)[1] for p in fig11.burst_files(str(tmp_path), 64)] == [
        "burst64-seed2.jsonl", "burst64-seed10.jsonl"]
    rows, prow, disk = fig11.load_rows(str(tmp_path), [64])
    assert [(r["seed"], r["mean_us"], r["p99_us"]) for r in rows] == [(2, 502.0, 902.0), (10, 510.0, 910.0)]
    assert prow == [] and disk["seed"] == 2


def test_fig11_determinism_and_utilization_checks(run_copy):
    from vldbench import fig11
    rows, prow, disk = fig11.load_rows(run_copy("fig11"), [64, 256])
    assert "disk" not in rows[0] and disk["geometry"]
    by = {(r["burst"], r["policy"], r["idle_ms"]): r for r in rows}
    pby = {(r["policy"], r["idle_ms"]): r for r in prow}
    assert fig11.same_as_main(by, pby, 256, [200.0]) == []   # the quick run shares no idle
    by[(256, "fewest-live", 200.0)] = dict(pby[("fewest-live", 200.0)])
    assert fig11.same_as_main(by, pby, 256, [200.0]) == [True]
    pby[("fewest-live", 200.0)] = dict(pby[("fewest-live", 200.0)], mean_us=1.0)
    assert fig11.same_as_main(by, pby, 256, [200.0]) == [False]
    assert fig11.problems_of(rows, disk) == []
    assert len(fig11.problems_of(rows, dict(disk, util=disk["util"] - 0.1))) == len(rows)
    assert fig11.parse_warm("64:16 256:5") == {64: 16, 256: 5}
