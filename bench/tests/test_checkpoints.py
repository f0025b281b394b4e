"""lld checkpoints per 1000 writes (vldbench.checkpoints) over stats files
written here: two sessions of one size."""
import json

from vldbench import checkpoints

META = {"date_utc": "2026-12-06T00:00:00Z", "commit": "abc1234", "worktree_modified": False}


def test_report(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (tmp_path / "meta.json").write_text(json.dumps(META))
    for i, (n, sectors, ms) in enumerate(((2, 1900, 420.0), (2, 1880, 424.0))):
        stats = {"requests": {"write": 1000},
                 "lld": {"checkpoints": n, "checkpoint_sectors_written": sectors, "checkpoint_ms": ms}}
        (raw / f"1G-{i}.stats.json").write_text(json.dumps(stats))
    assert checkpoints.main([str(tmp_path), "--run-id", "x", "--command", "c", "--sizes", "1G",
                             "--rounds", "2"]) == 0
    r = json.loads((tmp_path / "results.json").read_text())["rows"][0]
    assert r["writes"] == 2000 and r["checkpoints"] == 4
    assert r["checkpoint_sectors_per_1000_writes"] == 1890 and r["checkpoint_ms_per_1000_writes"] == 422
    assert "| 1G | 2000 | 4 | 1,890 | 422.0 |" in (tmp_path / "table.md").read_text()
