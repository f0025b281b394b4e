"""vld-bench hostcpu: one JSON line per mode, the phases and other summing to
the total, each phase nonzero where the mode's write path has it, and the
table on stderr. Counts and shape only: host times vary from run to run."""
import json
import subprocess

import pytest

from built import vld_bench

pytestmark = pytest.mark.skipif(vld_bench() is None, reason="no vld-bench built (scripts/build)")

PHASES = ["allocator", "map", "checksum", "store_io", "stats", "other"]
WRITES = 300


@pytest.fixture(scope="module")
def run():
    # A small NVRAM so that lld drains (and plans segment writes) while measured.
    r = subprocess.run([vld_bench(), "hostcpu", "--size", "16M", "--writes", str(WRITES),
                        "--nvram", "256K", "--warm-passes", "0.3"],
                       capture_output=True, text=True, check=True)
    return {j["mode"]: j for j in map(json.loads, r.stdout.splitlines())}, r.stderr


def test_one_line_per_mode_in_the_order_asked(run):
    rows, _ = run
    assert list(rows) == ["vld", "lld", "inplace"]
    for mode, j in rows.items():
        assert j["experiment"] == "hostcpu"
        assert j["writes"] == WRITES
        assert set(j["phases_us_per_write"]) == set(PHASES), mode
        assert "disk" in j


def test_the_phases_sum_to_no_more_than_the_total(run):
    rows, _ = run
    for mode, j in rows.items():
        p = j["phases_us_per_write"]
        assert all(v >= 0 for v in p.values()), mode
        assert sum(p[k] for k in PHASES if k != "other") <= j["host_us_per_write"] * (1 + 1e-9)
        assert sum(p.values()) == pytest.approx(j["host_us_per_write"], rel=1e-6), mode


def test_each_mode_charges_the_phases_its_write_path_has(run):
    rows, _ = run
    for mode in ("vld", "lld"):
        for k in ("allocator", "map", "checksum", "store_io", "stats"):
            assert rows[mode]["phases_us_per_write"][k] > 0, (mode, k)
    inplace = rows["inplace"]["phases_us_per_write"]
    assert inplace["store_io"] > 0 and inplace["stats"] > 0
    assert inplace["allocator"] == inplace["map"] == inplace["checksum"] == 0


def test_the_table_has_a_row_per_mode(run):
    _, table = run
    lines = table.splitlines()
    assert lines[1].split() == ["mode"] + PHASES + ["total"]
    assert [l.split()[0] for l in lines[2:]] == ["vld", "lld", "inplace"]
    assert all(len(l.split()) == len(PHASES) + 2 for l in lines[2:])


def test_an_unknown_mode_is_one_line_and_no_output():
    r = subprocess.run([vld_bench(), "hostcpu", "--size", "16M", "--writes", "10",
                        "--modes", "vld,zfs"], capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert "unknown mode 'zfs'" in line
