"""The shared loaders: fio's notes before its JSON, percentiles, the header."""
import json

import pytest

from vldbench import common
from conftest import DATA


def test_load_json_skips_fio_notes(tmp_path):
    p = tmp_path / "fio.json"
    p.write_text('note: both iodepth >= 1 and synchronous I/O engine are selected\n'
                 'fio: warning\n{"jobs": [{"error": 0}]}\n')
    assert common.load_json(p) == {"jobs": [{"error": 0}]}


def test_load_json_without_an_object_fails(tmp_path):
    p = tmp_path / "empty.json"
    p.write_text("fio: no JSON here\n")
    with pytest.raises(ValueError):
        common.load_json(p)


def test_stored_fio_output_with_notes():
    # The fixture has two lines of notes before fio's JSON.
    path = DATA / "fig8/raw/st19101-vld-80.fio.json"
    assert not path.read_text().startswith("{")
    job = common.fio_job(path)
    assert job["jobname"] == "st19101-vld-80-measure"
    assert job["write"]["total_ios"] == 400


def test_percentile_reads_fio_keys_in_us():
    lat = {"mean": 2500.0, "percentile": {"50.000000": 2000, "99.000000": 9000}}
    assert common.fio_percentile_us(lat, 99) == 9.0
    assert common.fio_percentile_us(lat, 50.0) == 2.0
    assert common.fio_mean_us(lat) == 2.5
    assert common.fio_percentile_us({"mean": 0}, 99) == 0.0
    assert common.fio_percentile_us({"mean": 0}, 99, missing=None) is None


def test_percentile_of_a_stored_run():
    job = common.fio_job(DATA / "fig8/raw/st19101-vld-80.fio.json")
    p99 = common.fio_percentile_us(job["write"]["clat_ns"], 99)
    assert p99 == job["write"]["clat_ns"]["percentile"]["99.000000"] / 1e3
    assert 0 < common.fio_percentile_us(job["write"]["clat_ns"], 50) <= p99


def test_results_header():
    meta = {"command": "scripts/bench-fig8 --quick", "date_utc": "2026-11-22T14:42:00Z",
            "commit": "2f6c1d4", "worktree_modified": False}
    assert common.results_header(meta) == \
        "`scripts/bench-fig8 --quick` (2026-11-22T14:42:00Z, commit 2f6c1d4)"
    meta["worktree_modified"] = True
    assert common.results_header(meta, "X").endswith("commit 2f6c1d4, uncommitted changes)")
    assert common.results_header(meta, "X").startswith("`X` (")


def test_fmt():
    assert common.fmt(None) == "-"
    assert common.fmt(3.14159, ".2f") == "3.14"
    assert common.fmt(2.5) == "2"


def test_write_csv_takes_every_column(tmp_path):
    common.write_csv(tmp_path / "r.csv", [{"a": 1}, {"a": 2, "b": 3}])
    assert (tmp_path / "r.csv").read_text().splitlines() == ["a,b", "1,", "2,3"]


def test_jsonget():
    from vldbench.jsonget import get
    stats = json.loads((DATA / "fig8/raw/st19101-vld-80.stats.json").read_text())
    assert get(stats, "geometry.platter_bytes") == stats["geometry"]["platter_bytes"]
