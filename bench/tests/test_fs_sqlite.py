"""scripts/bench-fs sqlite's report (vldbench.fs_sqlite) on the synthetic run data/fs-sqlite
(make_synthetic.py), and the pieces that find where writes of part of a block land."""
import json

import pytest

from vldbench import fs, fs_sqlite

PNG = b"\x89PNG\r\n\x1a\n"
ARGS = ["--command", "scripts/bench-fs sqlite", "--modes", "vld inplace", "--geometry", "st19101",
        "--size", "256M", "--compactor", "off", "--sql-tx", "100", "--sql-rows", "100", "3000",
        "--ext4-blocks", "1024 4096", "--loop-sector", "512"]


def test_partial_blocks_counts_the_blocks_a_write_covers_in_part():
    assert fs_sqlite.partial_blocks(0, 4096) == 0
    assert fs_sqlite.partial_blocks(0, 8192) == 0
    assert fs_sqlite.partial_blocks(1024, 1024) == 1       # inside one block
    assert fs_sqlite.partial_blocks(3072, 1024) == 1       # ends at a boundary
    assert fs_sqlite.partial_blocks(1024, 4096) == 2       # a page straddling two blocks
    assert fs_sqlite.partial_blocks(1024, 3 * 4096) == 2   # whole blocks between
    assert fs_sqlite.partial_blocks(4096, 1024) == 1
    assert fs_sqlite.partial_blocks(0, 0) == 0


def test_request_log_lines_and_layout_parsers(tmp_path):
    text = ("2026-12-06 04:40:55.316732 connection=1 Connect export=\"\" size=0x10000000\n"
            "2026-12-06 04:41:05.1 connection=2 Write id=42 offset=0x44000 count=0x2000 fua=0 ...\n"
            "2026-12-06 04:41:05.2 connection=2 ...Write id=42 return=0\n"
            "2026-12-06 04:41:05.3 connection=1 Flush id=43 ...\n"
            "2026-12-06 04:41:05.4 connection=1 Trim id=44 offset=0x1000 count=0x400 fua=0 ...\n")
    assert fs_sqlite.requests_in_log(text) == [("W", 0x44000, 0x2000), ("T", 0x1000, 0x400)]
    log = tmp_path / "requests.log"
    log.write_text(text)
    start = text.index("2026-12-06 04:41:05.3")
    assert fs_sqlite.extract(str(log), start, len(text)) == f"T {0x1000} {0x400}\n"
    assert fs_sqlite.journal_ranges("5 3 4\n9", 1024) == [(3072, 6144), (9216, 10240)]
    frag = ("File size of x is 3190784 (3116 blocks of 1024 bytes)\n"
            "   0:        0..       7:       9217..      9224:      8:            \n"
            "   1:        8..      15:       9261..      9268:      8:       9225: last,eof\n")
    assert fs_sqlite.file_ranges(frag) == [(9217 * 1024, 9225 * 1024), (9261 * 1024, 9269 * 1024)]


def test_report_rows_ratios_and_where_partial_writes_land(run_copy):
    run = run_copy("fs-sqlite")
    fs.main(["report", "sqlite", str(run)] + ARGS)
    res = json.loads((run / "results.json").read_text())
    by = {(r["ext4_block"], r["mode"]): r for r in res["rows"]}
    v1, i1, v4 = by[(1024, "vld")], by[(1024, "inplace")], by[(4096, "vld")]
    # 400 writes and 200 flushes of 100 us: vld 4000 us a write at 1 KiB, 500 at 4 KiB, in place 5000
    assert i1["busy_s"] == pytest.approx(2.02) and v1["busy_s"] == pytest.approx(1.62)
    assert v1["speedup_busy"] == pytest.approx(2.02 / 1.62) and v1["speedup_write"] == pytest.approx(1.25)
    assert v4["speedup_busy"] == pytest.approx(2.02 / 0.22) and v4["speedup_write"] == pytest.approx(10.0)
    assert (v1["rmw_reads"], v4["rmw_reads"], i1["rmw_reads"]) == (300, 0, None)
    assert v1["busy_per_tx_us"] == pytest.approx(16200.0)
    # per 4 writes: journal 1 KiB (1 partial block), a database page at 1 KiB (2), a whole block, 1 KiB
    assert v1["regions"] == {"journal": {"writes": 100, "partial_writes": 100, "partial_blocks": 100},
                             "db": {"writes": 100, "partial_writes": 100, "partial_blocks": 200},
                             "other": {"writes": 200, "partial_writes": 100, "partial_blocks": 100}}
    assert (v1["partial_writes"], v1["partial_blocks"]) == (300, 400)
    assert (v4["partial_writes"], v4["partial_blocks"]) == (0, 0)
    assert v4["regions"]["db"]["writes"] == 100 and v4["regions"]["other"]["writes"] == 200
    assert res["problems"] == []
    table = (run / "table.md").read_text()
    assert ("| 1024 | vld (block 4096) | 400 | 200 | 4000 | 1.6 | 16200 | **1.25** | 1.25 | 300 | "
            "300 / 400 |") in table
    assert "| 1024 | in place | 400 | 200 | 5000 | 2.0 | 20200 | **1.00** | 1.00 | - | 300 / 400 |" in table
    assert "| 1024 | the database file | 100 | 100 | 200 | 4096 @ 1024: 100 |" in table
    assert "| 4096 | ext4's journal (jbd2) | 100 | 0 | 0 | - |" in table
    assert (run / "fs-sqlite.png").read_bytes()[:8] == PNG


def test_report_flags_a_log_that_missed_writes(run_copy):
    run = run_copy("fs-sqlite")
    tsv = run / "raw" / "b4096-vld.requests.tsv"
    tsv.write_text("".join(tsv.read_text().splitlines(keepends=True)[1:]))
    fs.main(["report", "sqlite", str(run)] + ARGS)
    res = json.loads((run / "results.json").read_text())
    assert res["problems"] == ["ext4 -b 4096 vld: the log filter saw 399 writes in the phase, "
                               "the stats file 400"]


def test_sqlite_op_commits_every_row(tmp_path):
    out = fs.op_sqlite(str(tmp_path / "db.sqlite"), "20", "100", "300", "1")
    assert out["transactions"] == 20 and out["rows"] == 20 and 2000 <= out["bytes"] <= 6000
    again = fs.op_sqlite(str(tmp_path / "other.sqlite"), "20", "100", "300", "1")
    assert again["bytes"] == out["bytes"]  # seeded
