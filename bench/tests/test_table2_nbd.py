"""Table 2 through the plugin (vldbench.table2_nbd report) over files written
here with round numbers: the stats files of the two servers, what the
client saw, and vld-bench table2's two lines."""
import json

from vldbench import table2_nbd

META = {"date_utc": "2026-12-06T00:00:00Z", "commit": "abc1234", "worktree_modified": False}


def stats(mean, idle_steps, tracks):
    s = {"latency": "sleep", "requests": {"write": 1000}, "write_latency_us": {"mean": mean, "p99": 2 * mean},
         "idle_steps": idle_steps, "utilization": 0.78}
    if tracks is not None:
        s["compactor"] = {"tracks_compacted": tracks, "blocks_moved": 20 * tracks}
    return s


def test_report(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (tmp_path / "meta.json").write_text(json.dumps(META))
    client = {"idle_s": 20, "connect": "late", "writes": 1000, "connect_wall_s": 0.25}
    for mode, s in (("vld", stats(400.0, 2000, 80)), ("inplace", stats(4000.0, 0, None))):
        (raw / f"{mode}-1000.stats.json").write_text(json.dumps(s))
        (raw / f"{mode}-1000.client.json").write_text(json.dumps(client))
    bench = [{"mode": "vld", "mean_us": 350.0, "compaction_steps": 2500,
              "compactor_after": {"tracks_compacted": 100}},
             {"mode": "inplace", "mean_us": 4200.0}]
    (raw / "bench-1000.jsonl").write_text("".join(json.dumps(x) + "\n" for x in bench))
    assert table2_nbd.main(["report", str(tmp_path), "--run-id", "x", "--command", "c",
                            "--writes", "1000 5000"]) == 0
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert len(rows) == 1  # 5000: no run
    r = rows[0]
    assert r["ratio"] == 10.0 and r["bench_ratio"] == 12.0 and r["vld_idle_steps"] == 2000
    table = (tmp_path / "table.md").read_text()
    assert "| 1000 (sleep) | 20, late | 2000 | 80 | 400 | 4000 | **10.00x** | 100 | 350 | 4200 | **12.00x** |" in table
    assert "took 0.25 s of wall time" in table


def test_unknown_subcommand():
    assert table2_nbd.main(["nonsense"]) == 2


def test_writes_on_a_latency_none_server_take_the_idle_servers_work(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (tmp_path / "meta.json").write_text(json.dumps(META))
    client = {"idle_s": 20, "connect": "late", "writes": 0, "connect_wall_s": 0.1}
    for mode, s, idle in (("vld", stats(370.0, 0, 0), stats(0.0, 2000, 80)),
                          ("inplace", stats(4200.0, 0, None), stats(0.0, 0, None))):
        s["latency"] = "none"
        (raw / f"{mode}-1000.stats.json").write_text(json.dumps(s))
        (raw / f"{mode}-1000.idle.json").write_text(json.dumps(idle))
        (raw / f"{mode}-1000.client.json").write_text(json.dumps(client))
    table2_nbd.main(["report", str(tmp_path), "--run-id", "x", "--command", "c", "--writes", "1000"])
    r = json.loads((tmp_path / "results.json").read_text())["rows"][0]
    assert r["vld_idle_steps"] == 2000 and r["vld_tracks_compacted"] == 80
    assert r["writes_latency"] == "none" and "bench_ratio" not in r
    assert "| 1000 (none) | 20, late | 2000 | 80 | 370 | 4200 | **11.35x** | - | - | - | - |" in \
        (tmp_path / "table.md").read_text()
