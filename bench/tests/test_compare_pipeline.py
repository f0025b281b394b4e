"""vld-compare end to end on a fake vld-bench (compare_fake.py): the jobs
run, the report's tables say the fixture's numbers, a failed job is named,
--print-jobs and --report-only give the same report."""
import json
import os
import re
import subprocess

import pytest

import compare_fake
from vldcompare import cli, report, runs

MODES = compare_fake.MODES


def run_cli(argv, capsys):
    status = cli.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def setup(tmp_path):
    fake = compare_fake.write_fake(str(tmp_path))
    trace = compare_fake.trace(str(tmp_path), "pgbench.log.gz")
    return fake, trace, str(tmp_path / "out")


def md_table(text, title):
    """{mode: [cells]} and the headings of the table under `## title`."""
    section = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in section.splitlines() if ln.startswith("|")]
    cells = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]
    return cells[0], {row[0]: row for row in cells[2:]}


def expected_row(s):
    """The table's numbers, as the fixture's summary has them."""
    lat, w = s["latency_us"], s["write_latency_us"]
    mr = s["mode_report"]
    ms = 1e-3
    return {"requests": s["requests"], "mean ms": lat["mean"] * ms, "p50 ms": lat["p50"] * ms,
            "p99 ms": lat["p99"] * ms, "write mean ms": w["mean"] * ms,
            "write p99 ms": w["p99"] * ms,
            "IOPS": s["iops"], "write ampl.": s["write_amplification"],
            "idle steps": s["idle_steps"], "idle busy ms": s["idle_busy_ms"],
            "compactor tracks": mr.get("compactor", {}).get("tracks_compacted"),
            "compactor blocks moved": mr.get("compactor", {}).get("blocks_moved"),
            "cleaner segments": mr.get("lld", {}).get("segments_cleaned"),
            "cleaner blocks moved": mr.get("lld", {}).get("cleaner_blocks_moved")}


def check_report(out, workload="pgbench"):
    with open(os.path.join(out, "report.md"), encoding="utf-8") as f:
        md = f.read()
    heads, rows = md_table(md, f"{workload} on st19101")
    assert list(rows) == list(MODES)
    inplace_mean = compare_fake.summary("inplace")["latency_us"]["mean"]
    for mode in MODES:
        s = compare_fake.summary(mode)
        cells = dict(zip(heads, rows[mode]))
        for head, value in expected_row(s).items():
            if value is None:
                assert cells[head] == "–", (mode, head)
            else:  # the cell is the fixture's number, rounded as printed
                digits = len(cells[head].split(".")[1]) if "." in cells[head] else 0
                assert abs(float(cells[head]) - value) <= 0.5 * 10 ** -digits, (mode, head)
        ratio = s["latency_us"]["mean"] / inplace_mean
        assert float(cells["mean / inplace"]) == pytest.approx(ratio, abs=0.005)
    # report.json has them unrounded
    with open(os.path.join(out, "report.json"), encoding="utf-8") as f:
        numbers = json.load(f)
    section = [x for x in numbers if x["workload"] == workload][0]
    for mode in MODES:
        s = compare_fake.summary(mode)
        assert section["rows"][mode]["mean_us"] == s["latency_us"]["mean"]
        assert section["rows"][mode]["p99_us"] == s["latency_us"]["p99"]
        assert section["rows"][mode]["iops"] == s["iops"]
    # pictures: next to the Markdown, inside the HTML
    for key in ("cdf", "breakdown", "time"):
        rel = f"img/{workload}-st19101-{key}.png"
        assert f"]({rel})" in md
        with open(os.path.join(out, rel), "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    with open(os.path.join(out, "report.html"), encoding="utf-8") as f:
        page = f.read()
    assert page.count("data:image/png;base64,") == 3 * len(numbers)  # 3 per section
    return md


def test_whole_pipeline_into_a_report(setup, capsys):
    fake, trace, out = setup
    status, _, err = run_cli([trace, "--vld-bench", fake, "--jobs", "2", "--out", out], capsys)
    assert status == 0, err
    md = check_report(out)
    # progress: a start and an end line per job
    for k, mode in enumerate(MODES, 1):
        assert f"[{k}/4] pgbench st19101 {mode}: started" in err
        assert re.search(rf"\[{k}/4\] pgbench st19101 {mode}: done in [0-9.]+ s", err)
    for mode in MODES:
        d = os.path.join(out, "runs", "pgbench", "st19101", mode)
        assert sorted(os.listdir(d)) == ["stats.json", "stats.json.jsonl", "stderr.txt",
                                         "summary.json"]
    # the paragraph: the fastest modes as the fixture has them
    by_mean = min(MODES, key=lambda m: compare_fake.summary(m)["latency_us"]["mean"])
    by_p99 = min(MODES, key=lambda m: compare_fake.summary(m)["latency_us"]["p99"])
    assert f"Fastest by mean latency: {by_mean} (" in md
    assert f"Fastest by p99 latency: {by_p99} (" in md
    assert "The biggest part of a write's time: vld " in md


def test_a_failed_job_is_named_and_the_status_is_nonzero(setup, capsys):
    fake, _, out = setup
    bad = compare_fake.trace(os.path.dirname(fake), "bad.log")
    status, _, err = run_cli([bad, "--vld-bench", fake, "--out", out], capsys)
    assert status == 1
    line = compare_fake.ERROR
    assert f"[3/4] bad st19101 lld: FAILED in" in err and line in err
    assert f"vld-compare: job 3 (bad st19101 lld) failed: {line}" in err
    with open(os.path.join(out, "report.md"), encoding="utf-8") as f:
        md = f.read()
    assert "## Jobs that did not finish" in md
    assert f"- bad st19101 lld: failed: {line}" in md
    assert f"lld failed: {line}" in md
    _, rows = md_table(md, "bad on st19101")
    assert rows["lld"][1] == f"failed: {line}"
    assert rows["vld"][1] == str(compare_fake.summary("vld")["requests"])


def test_print_jobs_then_report_only(setup, capsys):
    fake, trace, out = setup
    argv = [trace, "--vld-bench", fake, "--out", out, "--geometry", "st19101",
            "--util", "50", "--closed-loop", "--qd", "4", "--stats-interval", "0.25"]
    status, printed, _ = run_cli(argv + ["--print-jobs"], capsys)
    assert status == 0
    lines = printed.splitlines()
    assert len(lines) == 4
    assert not os.path.exists(os.path.join(out, "runs"))  # printed, not run
    for mode, line in zip(MODES, lines):
        d = os.path.join(os.path.abspath(out), "runs", "pgbench", "st19101", mode)
        assert line.startswith(f"mkdir -p {d} && {fake} replay {os.path.abspath(trace)} ")
        assert "--mode lld --nvram 0" in line if mode == "lld-nvram0" else \
            f"--mode {mode.split('-')[0]} --geometry" in line
        assert " --size 256M --util 50 --closed-loop --qd 4 " in line
        assert f"--stats {d}/stats.json --stats-interval 0.25 >{d}/summary.json.part" in line
        assert line.endswith(f"mv {d}/summary.json.part {d}/summary.json")
    for line in lines:  # as a cluster would: each line on its own
        subprocess.run(["sh", "-c", line], check=True)
    status, _, err = run_cli(["--report-only", "--out", out], capsys)
    assert status == 0, err
    check_report(out)


def test_report_only_without_the_manifest_walks_the_runs(setup, capsys):
    fake, trace, out = setup
    assert run_cli([trace, "--vld-bench", fake, "--out", out, "--no-report"], capsys)[0] == 0
    assert not os.path.exists(os.path.join(out, "report.md"))
    status, _, err = run_cli(["--report-only", "--out", out], capsys)
    assert status == 0, err
    check_report(out)


def test_report_only_names_a_job_without_result(setup, capsys):
    fake, trace, out = setup
    assert run_cli([trace, "--vld-bench", fake, "--out", out], capsys)[0] == 0
    os.remove(os.path.join(out, "runs", "pgbench", "st19101", "inplace", "summary.json"))
    status, _, err = run_cli(["--report-only", "--out", out], capsys)
    assert status == 1
    assert "pgbench st19101 inplace: missing" in err
    with open(os.path.join(out, "report.md"), encoding="utf-8") as f:
        md = f.read()
    assert "inplace has no result" in md
    _, rows = md_table(md, "pgbench on st19101")
    assert rows["vld"][-1] == "–"  # no inplace: no ratio


def fake_live(monkeypatch, calls):
    """A stand-in vldcompare.live whose run_fio copies the fixture."""
    import sys
    import types

    def run_fio(job_file, mode, preset, size, util, out_dir):
        calls.append((os.path.basename(job_file), mode, preset, size, util))
        for suffix in ("stats.json", "stats.json.jsonl"):
            with open(compare_fake.FIXTURE / f"{mode}.{suffix}", "rb") as src, \
                    open(os.path.join(out_dir, suffix), "wb") as dst:
                dst.write(src.read())
        return compare_fake.summary(mode)

    live = types.ModuleType("vldcompare.live")
    live.run_fio = run_fio
    live.run_fs = None
    monkeypatch.setitem(sys.modules, "vldcompare.live", live)
    import vldcompare
    monkeypatch.setattr(vldcompare, "live", live, raising=False)  # after another test's import


def test_live_workload_runs_through_the_live_module(capsys, monkeypatch, tmp_path):
    """--fio calls vldcompare.live.run_fio per mode (a stand-in here)."""
    calls = []
    fake_live(monkeypatch, calls)
    job = tmp_path / "randwrite.fio"
    job.write_text("[rw]\nrw=randwrite\n")
    out = str(tmp_path / "out")
    status, _, err = run_cli(["--fio", str(job), "--out", out, "--util", "50"], capsys)
    assert status == 0, err
    assert calls == [("randwrite.fio", m, "st19101", "256M", 50.0) for m in MODES]
    check_report(out, workload="randwrite")


def test_breakdown_shows_nvram_apart_from_transfer():
    run = runs.Run("d", "lld", runs.OK, summary={
        "breakdown_us": {"overhead": 0, "seek": 0, "head_switch": 0, "rotation": 0,
                         "transfer": 25.0},
        "nvram_us": 20.0})
    b = runs.breakdown(run)
    assert b["transfer"] == 5.0 and b["nvram"] == 20.0 and sum(b.values()) == 25.0
    assert report.biggest_part(run) == ("nvram", 20.0, 25.0)


def test_a_stats_file_without_histogram_scheme_leaves_its_picture_out(setup, capsys):
    fake, trace, out = setup
    assert run_cli([trace, "--vld-bench", fake, "--out", out, "--no-report"], capsys)[0] == 0
    path = os.path.join(out, "runs", "pgbench", "st19101", "vld", "stats.json")
    with open(path, encoding="utf-8") as f:
        stats = json.load(f)
    del stats["histogram_scheme"]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(stats, f)
    status, _, err = run_cli(["--report-only", "--out", out], capsys)
    assert status == 0, err
    with open(os.path.join(out, "report.md"), encoding="utf-8") as f:
        md = f.read()
    assert f"Not drawn: {path}: no histogram_scheme" in md
    assert "](img/pgbench-st19101-breakdown.png)" in md


def test_printed_live_jobs_run_one_job_each_into_the_planned_directory(
        capsys, monkeypatch, tmp_path):
    import shlex
    calls = []
    fake_live(monkeypatch, calls)
    for d in ("a", "b"):  # two job files of one name: workloads randwrite, randwrite-2
        (tmp_path / d).mkdir()
        (tmp_path / d / "randwrite.fio").write_text("[rw]\n")
    out = str(tmp_path / "out")
    argv = ["--fio", str(tmp_path / "a" / "randwrite.fio"), "--fio",
            str(tmp_path / "b" / "randwrite.fio"), "--out", out, "--util", "50"]
    status, printed, _ = run_cli(argv + ["--print-jobs"], capsys)
    lines = printed.splitlines()
    assert status == 0 and len(lines) == 8 and calls == []
    assert "--name randwrite-2 --modes lld-nvram0 --geometry st19101 --size 256M " \
           "--util 50 --out " in lines[7] and lines[7].endswith(" --no-report")
    for line in lines:
        words = shlex.split(line)
        assert words[0] == "vld-compare"
        assert run_cli(words[1:], capsys)[0] == 0
    assert len(calls) == 8
    status, _, err = run_cli(["--report-only", "--out", out], capsys)
    assert status == 0, err
    check_report(out, workload="randwrite")
    check_report(out, workload="randwrite-2")
