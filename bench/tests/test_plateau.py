"""vldbench.plateau over data/plateau (hand-made, round numbers, 1,000 updates a point on 100
segments of 100 blocks): "rising" at 60% (1,000 µs: nvram 20, segment writes 200, cleaning 580,
checkpoint 200; 10 segments cleaned at u = 0.4, 5 checkpoints) and 85% (3,000 µs: 20, 280,
1,700, 1,000; 40 cleaned at u = 0.75, 20 checkpoints); "flat" at 60%, 70% and 85% (1,000, 900,
1,000 µs; no checkpoint at 85%). One drain of an NVRAM of 1,000 records a point: whole cycles,
but at flat 70%, whose NVRAM holds 900."""
import json
import math

import pytest

from vldbench import plateau

PNG = b"\x89PNG\r\n\x1a\n"


def run_plateau(run_copy):
    run = run_copy("plateau")
    plateau.main([str(run), "--run-id", "fixture", "--command", "scripts/bench-plateau"])
    return run, json.loads((run / "results.json").read_text())


def test_parts_of_an_update_and_the_cleaner(run_copy):
    run, res = run_plateau(run_copy)
    rows = {(r["curve"], r["util_pct"]): r for r in res["rows"]}
    assert list(rows) == [("rising", 60), ("rising", 85), ("flat", 60), ("flat", 70), ("flat", 85)]
    r = rows[("rising", 60)]
    parts = [r[f"{p}_us"] for p in ("nvram", "segment_write", "cleaning", "checkpoint")]
    assert parts == pytest.approx([20, 200, 580, 200])
    assert r["other_us"] == pytest.approx(0)
    assert r["segment_util_pct"] == pytest.approx(60)
    assert r["cleaned_util"] == pytest.approx(0.4)
    assert r["victims_per_checkpoint"] == pytest.approx(2)
    assert r["checkpoint_ms_each"] == pytest.approx(40)
    assert r["write_cost"] == pytest.approx(2.4)  # (1000 client + 400 moved + 1000 read) / 1000
    assert r["lfs_write_cost"] == pytest.approx(2 / 0.6)
    assert rows[("flat", 85)]["victims_per_checkpoint"] is None
    assert [r["whole_cycles"] for r in rows.values()] == [True, True, True, False, True]
    table = (run / "table.md").read_text()
    assert ("| 60% | 60.0% | 1000 | 20 | 200 | 580 | 200 | 10 | 5 | 2.0 | 40.0 | 0.400 | "
            f"{r['model_util']:.3f} | 2.40 | 3.33 |") in table
    assert (run / "plateau.png").read_bytes()[:8] == PNG


def test_the_rise_and_each_parts_share_of_it(run_copy):
    run, res = run_plateau(run_copy)
    s = {c["curve"]: c for c in res["curves"]}
    assert s["rising"]["rise"] == pytest.approx(3.0)
    shares = [s["rising"][f"{p}_share"] for p in ("nvram", "segment_write", "cleaning", "checkpoint")]
    assert shares == pytest.approx([0, 0.04, 0.56, 0.40])
    assert s["rising"]["monotonic"]
    assert s["flat"]["rise"] == pytest.approx(1.0)
    assert s["flat"]["cleaning_share"] is None  # no rise to share out
    assert not s["flat"]["monotonic"]  # 900 µs at 70% after 1000 at 60%
    table = (run / "table.md").read_text()
    assert "| rising | 1000 | 3000 | 3.00x | 4% | 56% | 40% | yes |" in table
    assert "| flat | 1000 | 1000 | 1.00x | - | - | - | no |" in table
    assert "| 70% | 70.0% | 900* | 20 | 200 | 480 | 200 |" in table  # 1,000 updates, 1 drain of 900


@pytest.mark.parametrize("u", [0.01, 0.2, 0.5, 0.651, 0.9, 0.99])
def test_the_uniform_model_inverts_u_to_the_utilization(u):
    segment_util = (1 - u) / math.log(1 / u)
    assert plateau.uniform_cleaned_util(segment_util) == pytest.approx(u, abs=1e-9)


def test_the_uniform_model_rises_with_the_utilization_and_has_no_plateau():
    us = [plateau.uniform_cleaned_util(k / 100) for k in range(1, 100)]
    assert all(b > a for a, b in zip(us, us[1:]))
    assert plateau.uniform_cleaned_util(0.814) == pytest.approx(0.652, abs=1e-3)  # section 5's 80%
    assert plateau.uniform_cleaned_util(0) is None and plateau.uniform_cleaned_util(1) is None
