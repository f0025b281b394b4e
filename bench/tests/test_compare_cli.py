"""vld-compare's command line: the jobs it plans, and the bad command
lines it refuses in one line that says what to do."""
import os
import sys

import pytest

from vldcompare import cli, jobs


def refused(argv, capsys):
    status = cli.main(argv)
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    return status, err.strip()


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "t.msr.gz"
    path.write_text("")
    return str(path)


def test_workload_names_lose_suffixes_and_stay_unique():
    taken = set()
    assert jobs.workload_name("/x/pgbench.log.gz", taken) == "pgbench"
    assert jobs.workload_name("/y/pgbench.csv", taken) == "pgbench-2"
    assert jobs.workload_name("src1_2.blktrace.xz", taken) == "src1_2"
    assert jobs.workload_name("a b.txt", taken) == "a_b"


def test_plan_is_workload_then_preset_then_mode(tmp_path):
    w = [jobs.Workload("a", "replay", "a.log"), jobs.Workload("b", "replay", "b.log")]
    plan = jobs.plan(w, ["st19101", "hp97560"], ["vld", "lld"], str(tmp_path))
    assert [(j.number, j.title()) for j in plan] == [
        (1, "a st19101 vld"), (2, "a st19101 lld"), (3, "a hp97560 vld"), (4, "a hp97560 lld"),
        (5, "b st19101 vld"), (6, "b st19101 lld"), (7, "b hp97560 vld"), (8, "b hp97560 lld")]
    assert plan[3].dir == os.path.join(str(tmp_path), "runs", "a", "hp97560", "lld")


def test_print_jobs_one_line_per_job(trace, tmp_path, capsys):
    fake = tmp_path / "vld-bench"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    out = str(tmp_path / "o")
    status = cli.main([trace, "--print-jobs", "--vld-bench", str(fake), "--out", out,
                       "--modes", "inplace,lld-nvram0", "--geometry", "st19101,hp97560",
                       "--sync", "every=8", "--map", "fold", "--format", "msr"])
    lines = capsys.readouterr().out.splitlines()
    assert status == 0 and len(lines) == 4
    modes = ["--mode inplace --geometry st19101", "--mode lld --nvram 0 --geometry st19101",
             "--mode inplace --geometry hp97560", "--mode lld --nvram 0 --geometry hp97560"]
    for line, mode in zip(lines, modes):
        assert f"{fake} replay {trace} {mode} --size 256M --util 80 --sync every=8 " \
               "--map fold --format msr --stats " in line
        assert "--closed-loop" not in line and "--stats-interval" not in line
    assert "/runs/t/hp97560/lld-nvram0/stats.json " in lines[3]


@pytest.mark.parametrize("argv, says", [
    (["--modes", "vld,ssd"], "unknown mode 'ssd' in --modes: choose from vld, inplace, lld, "
                             "lld-nvram0"),
    (["--jobs", "0"], "--jobs 0: give at least 1"),
    (["--util", "96"], "--util 96.0: give a percent"),
    (["--qd", "4"], "--qd applies to --closed-loop: add --closed-loop"),
    (["--fs", "ext4"], "--fs and --run go together"),
    (["--modes", "vld,vld"], "--modes names one twice"),
    (["--jobs", "x"], "argument --jobs: invalid int value: 'x' (see vld-compare --help)"),
    (["--name", "a/b"], "--name names one workload: give one TRACE, --fio or --fs, and a "
                        "name without '/'"),
])
def test_bad_options_are_one_line_usage_errors(trace, argv, says, capsys):
    status, err = refused([trace] + argv, capsys)
    assert status == 2 and err.startswith("vld-compare: ") and says in err


def test_a_missing_trace_is_named(tmp_path, capsys):
    status, err = refused([str(tmp_path / "nope.log")], capsys)
    assert status == 2
    assert err == f"vld-compare: {tmp_path}/nope.log: no such file (give a trace or fio job " \
                  "file that exists)"


def test_an_out_dir_that_is_a_file_is_refused(trace, tmp_path, capsys):
    f = tmp_path / "report"
    f.write_text("")
    status, err = refused([trace, "--out", str(f)], capsys)
    assert status == 2 and f"--out {f} is a file, not a directory: give another --out" in err


def test_nothing_to_run(capsys):
    status, err = refused([], capsys)
    assert status == 2 and "nothing to run: give a TRACE" in err


def test_report_only_needs_runs(tmp_path, capsys):
    status, err = refused(["--report-only", "--out", str(tmp_path)], capsys)
    assert status == 2 and "has no runs/: run the jobs first" in err


def test_no_vld_bench_says_to_give_one(trace, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    status, err = refused([trace, "--out", str(tmp_path / "o")], capsys)
    assert status == 2 and err.endswith("give --vld-bench PATH")


def test_live_workloads_without_their_module(tmp_path, capsys, monkeypatch):
    import vldcompare
    monkeypatch.setitem(sys.modules, "vldcompare.live", None)  # import fails
    monkeypatch.delattr(vldcompare, "live", raising=False)  # ... even after another test's import
    job = tmp_path / "j.fio"
    job.write_text("[j]\n")
    status, err = refused(["--fio", str(job), "--out", str(tmp_path / "o")], capsys)
    assert status == 1
    assert err.startswith("vld-compare: --fio and --fs need vldcompare.live")
    assert not os.path.exists(tmp_path / "o")
