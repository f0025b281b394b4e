"""Figure 10 beside Figure 11 (vldbench.fig10) over data/fig10, written by
make_synthetic.py with round numbers: at no idle time the cleaner cleans 10
segments of 100 blocks in 500 ms with 600 blocks live (t_clean 50 ms, u 0.6);
in the longest pauses 200 blocks are drained in 40 ms (t_block 0.2 ms)."""
import json

import pytest

from vldbench import fig10

PNG = b"\x89PNG\r\n\x1a\n"
ARGS = ["--burst-sizes", "32 256", "--idles", "0 100 1000", "--run-id", "fixture",
        "--command", "scripts/bench-fig10 --quick"]


def run_fig10(run_copy):
    run = run_copy("fig10")
    fig10.main([str(run)] + ARGS)
    return run, json.loads((run / "results.json").read_text())


def test_marks_from_the_measured_costs(run_copy):
    _, res = run_fig10(run_copy)
    c, m = res["costs"], res["marks"]
    assert c["t_clean_ms"] == pytest.approx(50.0) and c["u"] == pytest.approx(0.6)
    assert c["t_block_ms"] == pytest.approx(0.2)
    assert m["B"] == pytest.approx(50.0) and m["C"] == pytest.approx(100.0)
    # D = b x 0.2 + b / (0.4 x 100) x 50 = 1.45 b
    assert m["D"]["32"] == pytest.approx(46.4) and m["D"]["256"] == pytest.approx(371.2)


def test_continuum_and_the_claim(run_copy):
    run, res = run_fig10(run_copy)
    c = {x["burst"]: x for x in res["continuum"]}
    assert c[32]["lld_share_100"] == pytest.approx(1000 / 1980)
    assert c[32]["vld-on_share_100"] == pytest.approx(500 / 600)
    assert c[32]["vld-on_half_idle_ms"] == pytest.approx(60.0)
    assert c[256]["lld_half_idle_ms"] == pytest.approx(100 + 900 * (0.5 - 100 / 1980) / (1 - 100 / 1980))
    assert c[256]["vld-on_share_20"] is None   # 20 ms is not one of the pauses
    table = (run / "table.md").read_text()
    assert "for 2 of 2 burst sizes" in table
    assert "| 100 | 1000 | 1900 |" in table                 # lld means, B=32 and B=256
    assert "| 100 | 500 | 900 | 1000 | 1000 |" in table     # vld on, then off
    assert "B (one segment cleaned) = 50 ms, C (two) = 100 ms" in table
    assert (run / "fig10.png").read_bytes()[:8] == PNG


def test_half_idle_cases():
    by = {("s", 1, i): {"mean_us": m} for i, m in ((0.0, 100.0), (10.0, 40.0), (20.0, 10.0))}
    assert fig10.half_idle(by, "s", 1, [0.0, 10.0, 20.0]) == 10 * 0.5 / (60 / 90)
    # not monotonic: 10 ms buys most, 20 ms almost nothing (a step overran the pause), 40 ms all
    bumpy = {("s", 1, i): {"mean_us": m} for i, m in ((0.0, 100.0), (10.0, 20.0), (20.0, 90.0), (40.0, 0.0))}
    assert fig10.half_idle(bumpy, "s", 1, [0.0, 10.0, 20.0, 40.0]) == 20 + 20 * (0.5 - 0.1) / 0.9
    flat = {("s", 1, i): {"mean_us": 50.0} for i in (0.0, 10.0)}
    assert fig10.improvement_share(flat, "s", 1, [0.0, 10.0], 10.0) is None   # idle time buys nothing
    assert fig10.half_idle(flat, "s", 1, [0.0, 10.0]) is None
    assert fig10.claim([]).startswith("The claim cannot be checked")


def test_a_failed_run_is_a_problem_and_lld_alone_plots(run_copy):
    run = run_copy("fig10")
    (run / "raw/lld-burst256.jsonl").write_text("")
    (run / "raw/lld-burst256.err").write_text("vld-bench: mode=lld has no clean segment left\n")
    for f in run.glob("raw/vld-*"):
        f.unlink()
    fig10.main([str(run)] + ARGS[:-2] + ["--vld", "0", "--command", "x"])
    res = json.loads((run / "results.json").read_text())
    assert res["failures"] == {"lld-burst256": "vld-bench: mode=lld has no clean segment left"}
    table = (run / "table.md").read_text()
    assert "problem: lld-burst256 failed: vld-bench: mode=lld has no clean segment left" in table
    assert "vld-on" not in table
    assert (run / "fig10.png").read_bytes()[:8] == PNG
