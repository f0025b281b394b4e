"""A clean restart (vldbench.restart report) over files written here: each
mode's stats file of the read-only restart and the bytes it changed."""
import json

from vldbench import restart

META = {"date_utc": "2026-12-06T00:00:00Z", "commit": "abc1234", "worktree_modified": False}


def test_report(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (tmp_path / "meta.json").write_text(json.dumps(META))
    opens = {"vld": ({"clean": True, "method": "clean", "sectors_read": 2050, "simulated_ms": 95.5}, 0),
             "lld": ({"clean": True, "method": "checkpoint", "sectors_read": 2066, "simulated_ms": 64.5}, 12)}
    for mode, (recovery, changed) in opens.items():
        (raw / f"{mode}.open.stats.json").write_text(json.dumps({"recovery": recovery}))
        (raw / f"{mode}.changed").write_text(f"{changed}\n")
    assert restart.main(["report", str(tmp_path), "--run-id", "x", "--command", "c",
                         "--modes", "vld lld"]) == 0
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert [r["mode"] for r in rows] == ["vld", "lld"]
    assert rows[1]["restart_bytes_changed"] == 12 and rows[1]["open_simulated_ms"] == 64.5
    table = (tmp_path / "table.md").read_text()
    assert "| vld | True | 2050 | 95.5 | 0 |" in table
    assert "| lld | True | 2066 | 64.5 | 12 |" in table


def test_unknown_subcommand():
    assert restart.main(["nonsense"]) == 2
