"""vldbench.placement over data/placement (hand-made, round numbers): st19101 at 80% with two
seeds (new 900 and 1100 µs, old 1250 twice, in place 4000 and 6000, table2's vld line left
out, the best-case floor 600 and 650) and at 30% with one seed and no in-place or floor run."""
import json

import pytest

from vldbench import placement

PNG = b"\x89PNG\r\n\x1a\n"


def run_placement(run_copy):
    run = run_copy("placement")
    placement.main([str(run), "--run-id", "fixture", "--command", "scripts/bench-placement"])
    return run, json.loads((run / "results.json").read_text())


def test_seed_means_ratios_and_breakdown(run_copy):
    run, res = run_placement(run_copy)
    rows = {(r["geometry"], r["util_pct"]): r for r in res["rows"]}
    assert list(rows) == [("st19101", 30), ("st19101", 80)]
    r = rows[("st19101", 80)]
    assert (r["new_us"], r["old_us"], r["inplace_us"]) == (1000.0, 1250.0, 5000.0)
    assert r["inplace_seeds"] == 2  # the vld lines of table2 are not in place points
    assert r["ratio_new"] == pytest.approx(5.0)
    assert r["ratio_old"] == pytest.approx(4.0)
    assert r["new_vs_old"] == pytest.approx(0.8)
    assert r["new_head_switch_us"] == pytest.approx(300.0)
    assert (r["floor_us"], r["floor_seeds"]) == (625.0, 2)
    assert r["ratio_floor"] == pytest.approx(8.0)
    table = (run / "table.md").read_text()
    assert ("| st19101 | 80% | 5000 | 1250 | 1000 | 625 | 0.800 | 4.00x | 5.00x | 8.00x "
            "| 100 | 200 | 300 | 300 | 100 |") in table
    assert (run / "placement.png").read_bytes()[:8] == PNG


def test_a_point_without_in_place_has_no_ratio(run_copy):
    run, res = run_placement(run_copy)
    r = res["rows"][0]
    assert r["inplace_us"] is None and r["ratio_new"] is None and r["new_vs_old"] == pytest.approx(1.0)
    assert r["floor_us"] is None and r["ratio_floor"] is None
    assert "| st19101 | 30% | - | 400 | 400 | - | 1.000 | - | - | - |" in (run / "table.md").read_text()
