"""Figure 8 with the lld curves (vldbench.fig8 over data/fig8-lld, written by
make_synthetic.py), and the curve labels of vldbench.modes."""
import json

import pytest

from vldbench import fig8, modes
from vldbench.common import load_json

PNG = b"\x89PNG\r\n\x1a\n"
ARGS = ["--geometries", "st19101", "--modes", "vld inplace lld lld-nonvram", "--utils", "20 50 80 95",
        "--run-id", "fixture", "--command", "scripts/bench-fig8", "--size", "256M", "--warmup-pct", "50",
        "--lld-warm", "1"]


def run_fig8_lld(run_copy):
    run = run_copy("fig8-lld")
    fig8.main([str(run)] + ARGS)
    res = json.loads((run / "results.json").read_text())
    return run, res, {(r["mode"], r["target_util_pct"]): r for r in res["rows"]}


def test_write_cost_measured_and_analytic(run_copy):
    _, res, by = run_fig8_lld(run_copy)
    r = by[("lld", 80)]
    # 1000 client blocks, 1500 moved, 20 segments of 1024 sectors read (2560 blocks)
    assert r["write_cost"] == pytest.approx((1000 + 1500 + 2560) / 1000)
    assert r["cleaned_util"] == pytest.approx(1500 / (20 * 125))
    assert r["lfs_write_cost"] == pytest.approx(2 / (1 - 0.6))
    assert r["segment_blocks_per_write"] == pytest.approx(1.0)
    assert r["warm_segments_cleaned"] == 30 and r["warm_segments_freed"] == 40
    # the disk of lld is the platters less its NVRAM region; U is checked against it
    assert r["disk_bytes"] == (276 << 20) - 47 * 256 * 512
    assert r["utilization_pct"] == pytest.approx(80.0)
    assert res["problems"] == ["st19101-lld-nonvram-95: warm: nbdkit/fio failed nbdkit: error: ENOSPC"]


def test_update_is_write_plus_flush_and_ratios(run_copy):
    _, _, by = run_fig8_lld(run_copy)
    assert by[("lld-nonvram", 80)]["update_mean_us"] == pytest.approx(6300.0)
    assert by[("vld", 80)]["update_mean_us"] == pytest.approx(1000.0)
    assert by[("lld-nonvram", 80)]["ratio_over_vld"] == pytest.approx(6.3)
    assert by[("vld", 80)]["ratio_inplace_over_vld"] == pytest.approx(4000.0 / 900.0)  # writes alone


def test_crossover_interpolates_between_points(run_copy):
    _, res, _ = run_fig8_lld(run_copy)
    c = next(c for c in res["crossovers"] if c["against"] == "vld")
    # lld - vld: 20%: 100 - 500 < 0; 50%: 500 - 700 < 0; 80%: 1500 - 1000 > 0
    assert c["status"] == "crosses" and c["between"] == [50, 80]
    assert c["at_pct"] == pytest.approx(50 + 30 * 200 / 700)
    assert next(c for c in res["crossovers"] if c["against"] == "inplace")["status"] == "always"


def test_crossover_cases():
    row = lambda m: {"update_mean_us": m}
    by = {("g", "a", 20): row(1), ("g", "b", 20): row(2), ("g", "a", 80): row(3), ("g", "b", 80): row(2)}
    assert fig8.crossover(by, "g", "a", "b", [20, 80])["at_pct"] == pytest.approx(50.0)
    assert fig8.crossover(by, "g", "b", "a", [20, 80]) == {"status": "never", "points": 2, "from_pct": 20}
    assert fig8.crossover(by, "g", "a", "b", [20])["status"] == "always"
    assert fig8.crossover(by, "g", "a", "c", [20, 80]) == {"status": "none", "points": 0}
    c = fig8.crossover(by, "g", "a", "b", [20, 50, 80])
    line = fig8.crossover_line("g", "lld", "vld", c, {("g", "lld", 50): ("failed", "ENOSPC")})
    assert "faster at 20%, slower at 80%; the points between are missing" in line


def test_table_says_why_points_are_missing(run_copy):
    run, _, _ = run_fig8_lld(run_copy)
    table = (run / "table.md").read_text()
    assert "| 80% | 1000 | 4100 | 1500 | 6300 | 4.10x | 1.50x | 6.30x |" in table
    assert "| 95% | skipped | refused | 9000 | failed | - | - | - |" in table
    assert "- lld-nonvram at 95%: **failed**: warm: nbdkit/fio failed nbdkit: error: ENOSPC" in table
    assert "| 80% | lld | 80.0% | 80.0% | 1500 | 1500 | 3000 | 0 | 0 | 5000 | 30 | 20 | 20 | 0.600 | 5.06 | 5.00 |" \
        in table
    assert "faster below **59%**, slower above (interpolated between 50% and 80%)" in table
    for name in ("fig8.png", "fig8-st19101.png"):
        assert (run / name).read_bytes()[:8] == PNG


def test_a_warm_up_that_freed_nothing_is_flagged(run_copy):
    run = run_copy("fig8-lld")
    warm = load_json(run / "raw/st19101-lld-20.warm.stats.json")
    warm["lld"]["segments_freed"] = 0
    (run / "raw/st19101-lld-20.warm.stats.json").write_text(json.dumps(warm))
    rows, _, problems = fig8.load_points(str(run), ["st19101"], ["lld"], [20])
    assert problems == ["st19101-lld-20: not in a steady state: the warm-up freed no segment (raise LLD_WARM)"]


# ---------------------------------------------------------------- vldbench.modes
def geo_stats(platter, export, spt=256, lld=None):
    s = {"geometry": {"platter_bytes": platter, "export_bytes": export, "sectors_per_track": spt}}
    if lld:
        s["lld"] = lld
    return s


def test_labels_and_nvram_region():
    assert modes.params("lld-nonvram") == "mode=lld nvram=0"
    assert modes.nvram_bytes("lld") == 6100000 and modes.nvram_bytes("vld") == 0
    # 6100000 bytes = 11915 sectors = 46.5 tracks of 256: 47 whole tracks
    assert modes.nvram_region_bytes("lld", 256) == 47 * 256 * 512
    assert modes.nvram_region_bytes("lld-nonvram", 256) == 0
    with pytest.raises(SystemExit):
        modes.params("lfs")


def test_spare_overrides():
    assert modes.spare("st19101", "lld", env={}) == 3
    assert modes.spare("savvio10k4", "vld", env={}) == modes.SPARE_FALLBACK
    assert modes.spare("st19101", "lld", env={"SPARE": "9"}) == 9
    env = {"SPARE": "9", "SPARE_st19101": "7", "SPARE_st19101_lld_nonvram": "2"}
    assert modes.spare("st19101", "lld", env=env) == 7
    assert modes.spare("st19101", "lld-nonvram", env=env) == 2


def test_region_fits_caps_or_skips():
    mib = 1 << 20
    s = geo_stats(270 * mib, 256 * mib)
    assert modes.region_bytes(s, "vld", 80) == (216 * mib, None)
    # 95% of 270 MiB rounds to 257 MiB; the 256 MiB export is 94.8%: within a point, so capped
    assert modes.region_bytes(s, "vld", 95) == (256 * mib, None)
    region, why = modes.region_bytes(geo_stats(292 * mib, 256 * mib), "vld", 95)
    assert region is None and "it holds at most 87.7%" in why
    # lld: the disk is the platters less the NVRAM region
    assert modes.disk_bytes(geo_stats(276 * mib, 256 * mib), "lld") == 276 * mib - 47 * 128 * 1024


def test_warmup_and_measured_writes():
    lld = {"segment_count": 535, "blocks_per_segment": 127, "nvram_capacity_records": 1466}
    s = geo_stats(1, 1, lld=lld)
    assert modes.warmup_writes(s, "lld", 3000, 50, 1.0) == 535 * 127
    assert modes.warmup_writes(s, "vld", 3000, 50, 1.0) == 1500
    assert modes.warmup_writes(s, "inplace", 3000, 50, 1.0) == 0
    assert modes.measured_writes(s, 3000) == 3 * 1466 + 1
    assert modes.measured_writes(geo_stats(1, 1, lld=dict(lld, nvram_capacity_records=0)), 3000) == 3000
    mib = 1 << 20
    nonvram = dict(lld, nvram_capacity_records=0)
    line = modes.point_line(geo_stats(270 * mib, 256 * mib, lld=nonvram), "lld-nonvram", 50, 3000, 50, 0.5)
    assert line == f"{135 * mib} {-(-535 * 127 // 2)} 3000"
