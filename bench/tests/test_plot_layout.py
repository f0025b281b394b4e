"""vld-plot layout (bench/vldplot): the picture of an image's platters from
vld-inspect --json. Fixtures (data/layout/) are real vld-inspect outputs of
64 MiB st19101 images: inspect-vld.json the whole report of a mode=vld image,
layout-lld.json the layout section alone of a mode=lld one."""
import json
import subprocess
import sys

import pytest

from conftest import DATA
from vldplot import cli, layout

LAYOUT = DATA / "layout"


def load(name):
    with open(LAYOUT / name, encoding="utf-8") as f:
        return layout.load(f)


@pytest.mark.parametrize("name", ["inspect-vld.json", "layout-lld.json"])
def test_the_legend_names_every_colour_drawn_and_every_mark(name):
    section = load(name)
    fig = layout.figure(section)
    labels = layout.legend_labels(fig)
    drawn = [e for e in section["legend"] if e["cells"]]
    assert len(labels) == len(drawn) + len(section["marks"])
    for entry, label in zip(drawn, labels):
        assert label.startswith(f"{entry['name']}: {entry['sectors']} sectors (")
    for mark, label in zip(section["marks"], labels[len(drawn):]):
        assert label.startswith(mark["name"])
    ax = fig.axes[0]
    assert ax.get_title() == section["title"]["text"]
    assert ax.get_xlabel().startswith("cylinder (1 column = ")
    assert ax.get_ylabel() == "head"


def test_vld_fixture_has_the_classes_and_marks_of_a_vld_image():
    section = load("inspect-vld.json")
    labels = " | ".join(layout.legend_labels(layout.figure(section)))
    for name in ("free", "data", "map sector", "log record", "head's last position",
                 "log tail", "log record's window"):
        assert name in labels


def test_notes_name_classes_drawn_in_no_cell():
    section = load("layout-lld.json")  # 2 sectors of NVRAM records, the most of no cell
    fig = layout.figure(section)
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert any("Present but the most of no cell: NVRAM records (2 sectors)" in t for t in texts)
    assert any("superblock" in t for t in texts)


def test_cell_colours_are_the_classes_colours_paler_for_smaller_shares():
    section = load("inspect-vld.json")
    rgb = layout.cell_colours(section)
    grid = section["grid"]
    assert rgb.shape == (grid["rows"], grid["columns"], 3)
    for entry in section["legend"]:
        colour = layout._rgb(entry["colour"])
        cells = [(grid["percent"][r][c], r, c) for r in range(grid["rows"])
                 for c in range(grid["columns"]) if grid["class"][r][c] == entry["index"]]
        for percent, r, c in cells:
            strength = 1.0 if entry["background"] else 0.35 + 0.65 * percent / 100
            want = [x * strength + 1 - strength for x in colour]
            assert list(rgb[r][c]) == pytest.approx(want)
    data = next(e for e in section["legend"] if e["name"] == "data")
    shares = {grid["percent"][r][c] for r in range(grid["rows"]) for c in range(grid["columns"])
              if grid["class"][r][c] == data["index"]}
    assert len(shares) > 1, "data cells of several shares: some paler than others"


def test_draws_a_png(tmp_path):
    out = tmp_path / "vld.png"
    assert cli.main(["layout", str(LAYOUT / "inspect-vld.json"), "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_refusals_are_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"mode": "vld"}))
    assert cli.main(["layout", str(bad), "-o", str(tmp_path / "x.png")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'no "layout" section' in err
    out = tmp_path / "no" / "such" / "dir" / "x.png"
    assert cli.main(["layout", str(LAYOUT / "inspect-vld.json"), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err == f"vld-plot: {out}: cannot create it (No such file or directory)\n"


def test_help_and_version_for_help2man():
    run = [sys.executable, "-m", "vldplot"]
    env_path = str(DATA.parent.parent)
    env = {"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"}
    out = subprocess.run(run + ["--help"], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.startswith("Usage: vld-plot ")
    assert "layout" in out.stdout
    out = subprocess.run(run + ["--version"], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.startswith("vld-plot ")


def test_every_usage_line_says_usage_once():
    from vldplot import cli
    top = cli.parser()
    helps = [top.format_help()] + [
        p.format_help() for p in top._subparsers._group_actions[0].choices.values()]
    for text in helps:
        assert text.startswith("Usage: vld-plot") and "Usage: Usage:" not in text, text[:60]


def test_each_subcommand_is_listed_with_its_description_on_its_line():
    # help2man (tools/man/make-man) reads an item as a name, two spaces,
    # and its description: a name alone on its line made two items.
    from vldplot import cli
    listed = cli.parser().format_help().split("positional arguments:")[1]
    for name in ("layout", "latency", "cdf", "histogram", "breakdown", "show"):
        line = next(ln for ln in listed.splitlines() if ln.strip().startswith(name))
        assert len(line.split()) > 1, line
