"""Idle time against none on several seeds (vldbench.fig10_seeds), over
`vld-bench fig10` lines written here with round numbers: two seeds, one
burst size, NVRAM and none; seed 2's 10 ms pause makes its p99 worse."""
import json

from vldbench import fig10_seeds

META = {"date_utc": "2026-12-06T00:00:00Z", "commit": "abc1234", "worktree_modified": False}


def line(nvram, seed, idle, mean, p99, sync_mean, sync_p99):
    return {"disk": {"nvram_bytes": nvram, "seed": seed}, "burst": 32, "idle_ms": idle, "mean_us": mean,
            "latency_us": {"p50": 20.0, "p99": p99, "max": p99}, "sync_mean_us": sync_mean,
            "sync_latency_us": {"p50": 20.0, "p99": sync_p99, "max": sync_p99}, "preempted_writes": 0}


def make_run(tmp_path, lines):
    (tmp_path / "raw").mkdir()
    (tmp_path / "meta.json").write_text(json.dumps(META))
    for name, ls in lines.items():
        (tmp_path / "raw" / f"{name}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in ls))
    return tmp_path


def run(tmp_path, lines):
    d = make_run(tmp_path, lines)
    status = fig10_seeds.main([str(d), "--run-id", "fixture", "--command", "scripts/bench-fig10-seeds"])
    return status, json.loads((d / "results.json").read_text()), (d / "table.md").read_text()


def test_every_point_no_worse_passes(tmp_path):
    status, res, table = run(tmp_path, {
        "a": [line(6100000, 1, 0.0, 1800, 20, 1900, 30), line(6100000, 1, 10.0, 1700, 20, 1800, 30)],
        "b": [line(0, 1, 0.0, 2900, 9000, 3000, 9000), line(0, 1, 10.0, 2900, 8000, 2990, 9000)]})
    assert status == 0
    assert [(r["nvram_bytes"], r["idle_ms"]) for r in res["rows"]] == [(6100000, 10.0), (0, 10.0)]
    assert res["rows"][0]["mean_us_worst_ratio"] == 1700 / 1800
    assert "| 6.1 MB | 32 | 10 | 1700 (1800) | 0.944 |" in table
    assert "| none | 32 | 10 |" in table
    assert "No point of 2 is worse than no idle time, on any seed." in table


def test_a_worse_p99_on_one_seed_fails(tmp_path):
    status, res, table = run(tmp_path, {"a": [
        line(6100000, 1, 0.0, 1800, 20, 1900, 30), line(6100000, 1, 10.0, 1700, 20, 1800, 30),
        line(6100000, 2, 0.0, 1800, 20, 1900, 30), line(6100000, 2, 10.0, 1700, 80000, 1800, 30)]})
    assert status == 4
    r = res["rows"][0]
    assert r["seeds"] == [1, 2] and r["p99_us_worse_seeds"] == [2] and r["mean_us_worse_seeds"] == []
    assert r["p99_us_worst_ratio"] == 4000.0
    assert r["mean_us"] == 1700 and r["p99_us"] == 40010
    assert "1 of 1 points are worse than no idle time on some seed." in table
    assert table.splitlines()[-1].endswith("seed.**")


def test_a_failed_run_is_listed(tmp_path):
    d = make_run(tmp_path, {"a": [line(0, 1, 0.0, 1, 1, 1, 1)]})
    (d / "raw" / "b.err").write_text("vld-bench: something broke\nmore\n")
    assert fig10_seeds.main([str(d), "--run-id", "x", "--command", "c"]) == 0
    assert "- run b failed: vld-bench: something broke" in (d / "table.md").read_text()
