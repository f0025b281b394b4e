"""vld-plot layout: the platters of a vld image, drawn from the "layout"
section of ``vld-inspect --json`` (schema: docs/inspect-layout.md).

vld-inspect does the counting (tools/inspect/layout_grid.cc): the grid of
cells, each with its dominant sector class and that class's share, the
title's fields, the axes' labels and units, the scale and the legend. This
module only draws them: no number on the picture is computed here.
"""
import json

from vldplot.canvas import new_figure

SCHEMA = "vld-inspect layout 1"


def load(f):
    """The layout section from an open file of vld-inspect --json output (or
    of the section alone); ValueError says what is wrong with it."""
    try:
        obj = json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON ({e})") from e
    if isinstance(obj, dict) and "layout" in obj:
        obj = obj["layout"]
    if not isinstance(obj, dict) or obj.get("schema") != SCHEMA:
        raise ValueError(f'no "layout" section of schema "{SCHEMA}": '
                         "is it the output of vld-inspect --json?")
    return obj


def _rgb(colour):
    return tuple(int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))


def cell_colours(section):
    """rows x columns x 3 floats: each cell's dominant class's colour, paler
    the smaller its share (a background class is drawn flat)."""
    import numpy as np
    legend = section["legend"]
    colours = np.array([_rgb(e["colour"]) for e in legend])
    flat = np.array([e["background"] for e in legend])
    cls = np.array(section["grid"]["class"], dtype=int)
    share = np.array(section["grid"]["percent"], dtype=float) / 100.0
    strength = np.where(flat[cls], 1.0, 0.35 + 0.65 * share)[..., None]
    return colours[cls] * strength + (1.0 - strength)


def _legend_handles(section):
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    total = sum(e["sectors"] for e in section["legend"]) or 1
    handles = []
    for e in section["legend"]:
        if e["cells"]:
            label = f"{e['name']}: {e['sectors']} sectors ({100 * e['sectors'] / total:.1f}%)"
            handles.append(Patch(facecolor=e["colour"], edgecolor="#808080", label=label))
    for m in section["marks"]:
        if m["kind"] == "cell":
            handles.append(Line2D([], [], color=m["colour"], marker="s", markersize=10,
                                  markerfacecolor="none", linestyle="none", label=m["name"]))
        else:
            handles.append(Patch(facecolor=m["colour"], label=m["name"] + " (bar above the grid)"))
    return handles


def _draw_marks(ax, section):
    from matplotlib.patches import Rectangle
    cpc = section["scale"]["cylinders_per_column"]
    for m in section["marks"]:
        if m["kind"] == "cell":
            x, rows = m["column"] * cpc, m.get("rows", 1)
            ax.add_patch(Rectangle((x, m["row"]), cpc, rows, fill=False, edgecolor=m["colour"],
                                   linewidth=2))
            ax.plot([x + cpc / 2], [m["row"] + rows / 2], marker="s", markersize=10,
                    markerfacecolor="none", markeredgecolor=m["colour"], markeredgewidth=2)
        else:
            for first, end in m["ranges"]:
                ax.add_patch(Rectangle((first, 1.005), end - first, 0.025, color=m["colour"],
                                       transform=ax.get_xaxis_transform(), clip_on=False))


def _set_axes(ax, section):
    axes, grid = section["axes"], section["grid"]
    heads, bands = axes["y"]["heads"], axes["y"]["bands_per_head"]
    ax.set_xlim(axes["x"]["min"], axes["x"]["max"])
    ax.set_ylim(grid["rows"], 0)
    ax.set_xlabel(f"{axes['x']['label']} ({section['scale']['text']})")
    ax.set_ylabel(axes["y"]["label"] if len(axes["y"]["label"]) < 40 else "head")
    step = max(1, heads // 16)
    ax.set_yticks([h * bands + bands / 2 for h in range(0, heads, step)])
    ax.set_yticklabels([str(h) for h in range(0, heads, step)])
    if bands > 1:
        for h in range(1, heads):
            ax.axhline(h * bands, color="white", linewidth=0.6)


def _notes(section):
    """The cell rule, the y axis in full, classes present but dominant in no
    cell, and vld-inspect's own notes."""
    lines = ["Cell colour: " + section["cell_rule"] + ".",
             "Down: " + section["axes"]["y"]["label"] + "."]
    hidden = [f"{e['name']} ({e['sectors']} sectors)" for e in section["legend"]
              if e["sectors"] and not e["cells"]]
    if hidden:
        lines.append("Present but the most of no cell: " + ", ".join(hidden) + ".")
    lines += [n[0].upper() + n[1:] + "." for n in section.get("notes", [])]
    return "\n".join(lines)


def figure(section):
    """The matplotlib Figure of the layout section (tests read its texts):
    the grid on top, the legend and the notes in a text panel below it."""
    grid, scale = section["grid"], section["scale"]
    grid_in = 2.2 + min(4.0, grid["rows"] * 0.035)
    fig = new_figure(figsize=(12, grid_in + 1.9))
    ax, panel = fig.subplots(2, 1, gridspec_kw={"height_ratios": [grid_in, 1.3]})
    width = grid["columns"] * scale["cylinders_per_column"]
    ax.imshow(cell_colours(section), aspect="auto", interpolation="nearest",
              extent=(0, width, grid["rows"], 0))
    _set_axes(ax, section)
    _draw_marks(ax, section)
    ax.set_title(section["title"]["text"], pad=14)
    panel.axis("off")
    handles = _legend_handles(section)
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 1.0),
              bbox_transform=panel.transAxes, ncol=min(3, len(handles)), fontsize=8,
              frameon=False)
    panel.text(0.0, 0.0, _notes(section), fontsize=7, va="bottom", transform=panel.transAxes)
    fig.tight_layout()
    return fig


def legend_labels(fig):
    """The texts of the figure's legend, in order."""
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def draw(section, path, dpi=100):
    """Writes the picture of SECTION to PATH (PNG); OSError if it cannot."""
    figure(section).savefig(path, dpi=dpi, bbox_inches="tight")
