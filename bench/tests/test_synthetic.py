"""The modules without a stored real run, on synthetic run directories
(data/*, written by make_synthetic.py in the format each bench-* script
leaves), with results that can be worked out by hand."""
import json

import pytest

from vldbench import cli, largefile
from vldbench.common import load_json

PNG = b"\x89PNG\r\n\x1a\n"


def results(run):
    return json.loads((run / "results.json").read_text())


# ---------------------------------------------------------------- largefile
LARGEFILE_ARGS = ["--run-id", "fixture", "--command", "scripts/bench-largefile", "--geometry", "st19101",
                  "--size", "64M", "--spare", "5", "--file-bytes", str(4 << 20), "--overhead-us", "",
                  "--compact-quiet-ms", "0", "--compact-policy", "fewest-live", "--wall-s", "42"]


def test_largefile_throughput_and_ratios(run_copy):
    run = run_copy("largefile")
    largefile.main([str(run)] + LARGEFILE_ARGS)
    res = results(run)
    by = {(r["phase"], r["config"]): r for r in res["rows"]}
    assert len(by) == 15    # 6 phases x (in place, vld) + phase 4 buffer off x 2 + compacted
    assert by[("1", "inplace")]["mb_per_s"] == pytest.approx(2.0)
    assert by[("1", "vld")]["ratio_vs_inplace"] == pytest.approx(2.0)
    assert by[("4", "vld")]["ratio_vs_inplace"] == pytest.approx(0.5)
    assert by[("4", "vld-compacted")]["ratio_vs_inplace"] == pytest.approx(1.5)
    assert res["compaction"]["empty_tracks_without"] == 3 and res["compaction"]["empty_tracks_with"] == 40
    assert res["problems"] == [] and res["runs_wall_s"] == 42 and res["overhead_us"] is None
    table = (run / "table.md").read_text()
    assert "| 4 sequential read after random write (64 KiB) | 2.00 | 1.00 | 0.50x | 50 | 50 |" in table
    assert "| 2.00 (50) | 1.00 (50) | 1.00 (50) | 0.50 (50) | 3.00 (50) | 2.00x |" in table
    assert "settled after 2.5 s wall; 37 tracks emptied (1 abandoned)" in table
    assert (run / "largefile.png").read_bytes()[:8] == PNG


def test_largefile_flags_short_runs_and_unsettled_compaction(run_copy):
    run = run_copy("largefile")
    runs = largefile.load_runs(run)
    key, s, fio = runs[("2", "vld")]
    s["read_latency_us"]["count"] -= 1
    rows, problems = largefile.compute_rows(runs, 4 << 20)
    assert problems == [f"{key}: {4 << 20} bytes in 63 requests, expected {4 << 20} in 64",
                        f"{key}: the stats file counts 63 reads, fio 64"]
    poll, cs = largefile.load_compaction(run)
    cs["requests"]["write"] = 1
    c = largefile.compaction_summary(dict(poll, settled=False), cs, {})
    assert c["empty_tracks_without"] is None
    assert largefile.compaction_problems(c) == ["compaction did not settle within the time limit (2.5 s)",
                                                "the compaction run served client requests"]


def test_cli_compaction_line_and_kv_json(run_copy, tmp_path, capsys):
    run = run_copy("largefile")
    cli.main(["compaction-line", str(run / "raw/vld-compaction.poll.json"),
              str(run / "raw/vld-compaction.stats.json")])
    assert capsys.readouterr().out == \
        " settled after 2.5 s: 37 tracks emptied, 900 blocks and 120 map sectors moved in 50 steps;"
    cli.main(["kv-json", str(tmp_path / "loop.json"), "n=10 secs=1.50 writes=30 fs=ext4"])
    assert load_json(tmp_path / "loop.json") == {"n": 10, "secs": 1.5, "writes": 30, "fs": "ext4"}
