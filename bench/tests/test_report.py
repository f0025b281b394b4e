"""vldbench.report on a fixture OUT: a plot and our table per benchmark."""
import re

from vldbench import fig8, report
from test_figures import FIG8_ARGS

RUN_ID = "20261125T000000Z"


def as_latest(run, runs_dir):
    """Moves the run directory RUN into RUNS_DIR (under OUT/runs) as its latest run, as
    scripts/report leaves each benchmark's."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    run.rename(runs_dir / RUN_ID)
    (runs_dir / "latest").symlink_to(RUN_ID)


def test_report_html_and_markdown(run_copy, tmp_path):
    out = tmp_path / "out"
    run = run_copy("fig8")
    fig8.main([str(run)] + FIG8_ARGS)
    as_latest(run, out / "runs/fig8")
    (out / "steps.tsv").write_text("fig8\tok\t12\tOUT=runs/fig8 scripts/bench-fig8 --quick\n"
                                   "kernel-fsync\tskipped\t0\tleft out of --quick: boots a qemu guest\n")
    sections = report.write_report(str(out))
    page = (out / "report.html").read_text()
    md = (out / "report.md").read_text()
    imgs = re.findall(r'<img src="([^"]+)"', page)
    assert imgs == ["img/fig8.png"]
    assert (out / "img/fig8.png").read_bytes()[:4] == b"\x89PNG"
    assert "6.71x (target &gt;= 5x: met)" in page
    assert "Section 5.3, Figure 8" in page
    assert "![Figure 8: random synchronous 4 KiB updates as the disk fills](img/fig8.png)" in md
    assert "skipped, 0 s: `left out of --quick: boots a qemu guest`" in md
    assert "commit " + (out / "runs/fig8/latest/meta.json").read_text().split('"commit": "')[1][:7] in md
    assert sum(1 for s in sections if s["table"]) == 1


def test_report_has_fig10_and_the_file_system_figures(run_copy, tmp_path):
    from test_fig10 import ARGS as FIG10_ARGS
    from test_synthetic import FS_COMMON
    from vldbench import fig10, fs
    out = tmp_path / "out"
    run = run_copy("fig10")
    fig10.main([str(run)] + FIG10_ARGS)
    as_latest(run, out / "runs/fig10")
    small = run_copy("fs-smallfile")
    fs.main(["report", "smallfile", str(small), "--command", "scripts/bench-fs smallfile", *FS_COMMON,
             "--compactor", "off", "--fs-list", "ext4", "--files", "100", "--file-kb", "1"])
    as_latest(small, out / "runs/fs-smallfile/fs-smallfile")
    (out / "steps.tsv").write_text("fig10\tok\t30\tOUT=runs/fig10 scripts/bench-fig10 --quick\n"
                                   "fs-smallfile\tok\t60\tOUT_BASE=runs/fs-smallfile scripts/bench-fs smallfile\n")
    report.write_report(str(out))
    md = (out / "report.md").read_text()
    assert "![Figure 10 beside Figure 11" in md and "(img/fig10.png)" in md
    assert "![Figure 6: small files on ext4, in place, vld and lld](img/fs-smallfile.png)" in md
    assert "B (one segment cleaned) = 50 ms" in md
    assert (out / "img/fs-smallfile.png").read_bytes()[:4] == b"\x89PNG"
