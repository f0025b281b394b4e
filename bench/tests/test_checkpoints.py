"""lld checkpoints per 1000 writes (vldbench.checkpoints) over stats files
written here: two sessions of one size."""
import json

from vldbench import checkpoints

META = {"date_utc": "2026-12-06T00:00:00Z", "commit": "abc1234", "worktree_modified": False}


def test_report(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (tmp_path / "meta.json").write_text(json.dumps(META))
    for i, (n, sectors, ms, folds) in enumerate(((2, 1900, 420.0, 0), (2, 1880, 424.0, 1))):
        stats = {"requests": {"write": 1000}, "recovery": {"simulated_ms": 200.0 + 20 * i},
                 "lld": {"checkpoints": n, "checkpoint_sectors_written": sectors, "checkpoint_ms": ms,
                         "checkpoint_folds": folds}}
        (raw / f"1G-{i}.stats.json").write_text(json.dumps(stats))
    assert checkpoints.main([str(tmp_path), "--run-id", "x", "--command", "c", "--sizes", "1G",
                             "--rounds", "2"]) == 0
    r = json.loads((tmp_path / "results.json").read_text())["rows"][0]
    assert r["writes"] == 2000 and r["checkpoints"] == 4 and r["checkpoint_folds"] == 1
    assert r["checkpoint_sectors_per_1000_writes"] == 1890 and r["checkpoint_ms_per_1000_writes"] == 422
    assert r["open_ms_mean"] == 210
    assert "| 1G | 2000 | 4 | 1 | 1,890 | 422.0 | 210.0 |" in (tmp_path / "table.md").read_text()


def test_folds_unknown_to_an_older_plugin(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (tmp_path / "meta.json").write_text(json.dumps(META))
    stats = {"requests": {"write": 500}, "recovery": {"simulated_ms": 50.0},
             "lld": {"checkpoints": 2, "checkpoint_sectors_written": 900, "checkpoint_ms": 100.0}}
    (raw / "4G-0.stats.json").write_text(json.dumps(stats))
    assert checkpoints.main([str(tmp_path), "--run-id", "x", "--command", "c", "--sizes", "4G",
                             "--rounds", "1"]) == 0
    assert json.loads((tmp_path / "results.json").read_text())["rows"][0]["checkpoint_folds"] is None
    assert "| 4G | 500 | 2 | - | 1,800 | 200.0 | 50.0 |" in (tmp_path / "table.md").read_text()
