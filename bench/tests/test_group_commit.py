"""Group commit (vldbench.group_commit) over files written here: two queue
depths' stats files and fio outputs."""
import json

from vldbench import group_commit

META = {"date_utc": "2026-12-06T00:00:00Z", "commit": "abc1234", "worktree_modified": False}


def test_report(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (tmp_path / "meta.json").write_text(json.dumps(META))
    for qd, syncs, iops in ((1, 3000, 4000.0), (16, 600, 12000.0)):
        (raw / f"qd{qd}.stats.json").write_text(json.dumps(
            {"requests": {"write": 3000, "errors": 0}, "backing_syncs": syncs}))
        (raw / f"qd{qd}.fio.json").write_text(json.dumps({"jobs": [{"write": {"iops": iops}}]}))
    assert group_commit.main([str(tmp_path), "--run-id", "x", "--command", "c", "--qds", "1 16"]) == 0
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert [r["syncs_per_write"] for r in rows] == [1.0, 0.2]
    assert "| 16 | 3000 | 600 | 0.200 | 12000 |" in (tmp_path / "table.md").read_text()
