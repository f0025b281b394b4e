"""vldbench.qd over data/qd (hand-made, round numbers): rows in mode, rw, queue depth order
whatever the order of the lines, both policies side by side; inplace writes at QD16 gain
500 / 200 = 2.50x (the target, 2x, is met); inplace reads at QD4 lose (225 / 250 = 0.90x),
which the module must call out."""
import json

import pytest

from vldbench import qd

PNG = b"\x89PNG\r\n\x1a\n"


def run_qd(run_copy):
    run = run_copy("qd")
    qd.main([str(run), "--run-id", "fixture", "--command", "scripts/bench-qd"])
    return run, json.loads((run / "results.json").read_text())


def test_rows_gains_and_table(run_copy):
    run, res = run_qd(run_copy)
    rows = {(r["mode"], r["rw"], r["qd"]): r for r in res["rows"]}
    assert list(rows) == [("inplace", "write", 1), ("inplace", "write", 16), ("inplace", "read", 4),
                          ("vld", "write", 16)]
    assert rows[("inplace", "write", 16)]["gain"] == pytest.approx(2.5)
    assert rows[("inplace", "write", 1)]["gain"] == pytest.approx(1.0)
    assert rows[("inplace", "read", 4)]["gain"] == pytest.approx(0.9)
    assert rows[("inplace", "write", 16)]["sptf_reordered"] == 900
    table = (run / "table.md").read_text()
    assert "| inplace | write | 16 | 200 | 500 | 2.50x | 80000 (90000) | 32000 (100000) |" in table
    assert (run / "qd.png").read_bytes()[:8] == PNG


def test_problems_name_a_loss_and_a_missed_target(run_copy):
    _, res = run_qd(run_copy)
    assert res["problems"] == ["inplace read QD4: sptf 0.90x fifo's IOPS"]
    rows = [dict(r) for r in res["rows"]]
    for r in rows:
        if (r["mode"], r["rw"], r["qd"]) == ("inplace", "write", 16):
            r["sptf_iops"], r["gain"] = 300.0, 1.5
    assert qd.problems_of(rows)[0] == "inplace write QD16: sptf 1.50x fifo's IOPS, target 2x"
