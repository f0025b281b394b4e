"""vldbench.aru over data/aru (hand-made, round numbers): rows in mode order whatever the
order of the lines; vld's ARU writes each block once and syncs once; the lld row syncs as
often as the journal, which the module must call out; inplace's ARU is a journal of its own,
two syncs and no problem."""
import json

import pytest

from vldbench import aru

PNG = b"\x89PNG\r\n\x1a\n"


def run_aru(run_copy):
    run = run_copy("aru")
    aru.main([str(run), "--run-id", "fixture", "--command", "scripts/bench-aru"])
    return run, json.loads((run / "results.json").read_text())


def test_ratios_rows_and_the_empty_aru(run_copy):
    run, res = run_aru(run_copy)
    rows = {(r["mode"], r["record_blocks"]): r for r in res["rows"]}
    assert list(rows) == [("vld", 1), ("vld", 4), ("lld", 4), ("inplace", 1)]
    assert rows[("vld", 1)]["ratio"] == pytest.approx(3.0)
    assert rows[("inplace", 1)]["ratio"] == pytest.approx(2.0)
    assert res["empty_aru_us"] == {"inplace": 100.0, "vld": 100.0, "lld": 20.0}
    table = (run / "table.md").read_text()
    assert "| vld | 1 | 1200 (2400) | 400 (800) | 3.00x | 3.0, 1.0 | 2.00, 1.00 |" in table
    assert "simulated µs: vld 100, lld 20, inplace 100." in table
    assert (run / "aru.png").read_bytes()[:8] == PNG


def test_problems_name_what_the_aru_did_not_save(run_copy):
    _, res = run_aru(run_copy)
    assert res["problems"] == ["lld R=4: the ARU synced as often as the journal"]
