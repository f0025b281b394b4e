"""vldbench.report on a fixture OUT: a plot and our table per benchmark."""
import re

from vldbench import fig8, report
from test_figures import FIG8_ARGS


def test_report_html_and_markdown(run_copy, tmp_path):
    out = tmp_path / "out"
    (out / "runs/fig8").mkdir(parents=True)
    run = run_copy("fig8")
    fig8.main([str(run)] + FIG8_ARGS)
    run.rename(out / "runs/fig8/20261125T000000Z")
    (out / "runs/fig8/latest").symlink_to("20261125T000000Z")
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
