"""vld-compare's report: DIR/report.md and DIR/report.html (the same
content; the PNGs in DIR/img, referenced by relative path from the
Markdown and inlined as base64 in the HTML, so report.html alone can be
sent), and DIR/report.json (the tables' numbers, unrounded).

Per workload and drive preset: a table of the modes' numbers, a paragraph
of facts read off that table (fastest mode by mean and by p99, the
biggest part of each mode's write time), the latency CDFs, the write-time
breakdown and latency over time (plots.py). Every number comes from the
runs' files (runs.py); nothing here knows which mode should win.
"""
import base64
import html
import json
import os

from vldcompare import plots
from vldcompare import runs as runsmod

# The table's columns: (heading, row key, digits after the point, or "ms":
# a latency in microseconds shown in milliseconds, to three figures or more).
COLUMNS = (
    ("requests", "requests", 0),
    ("mean ms", "mean_us", "ms"), ("p50 ms", "p50_us", "ms"), ("p99 ms", "p99_us", "ms"),
    ("write mean ms", "write_mean_us", "ms"), ("write p99 ms", "write_p99_us", "ms"),
    ("IOPS", "iops", 1), ("load", "load", 2),
    ("write ampl.", "write_amplification", 3),
    ("idle steps", "idle_steps", 0), ("idle busy ms", "idle_busy_ms", 1),
    ("compactor tracks", "vld_tracks_compacted", 0),
    ("compactor blocks moved", "vld_blocks_moved", 0),
    ("cleaner segments", "lld_segments_cleaned", 0),
    ("cleaner blocks moved", "lld_blocks_moved", 0),
    ("mean / inplace", "mean_vs_inplace", 2),
)
PICTURES = (("cdf", "Latency CDFs", plots.figure_cdf,
             "The share of requests (writes, reads, all) at or below a latency; a curve "
             "further left is faster, its top right end is the slowest requests."),
            ("breakdown", "Where a write's time goes", plots.figure_breakdown,
             "Each mode's mean time per write, stacked by part."),
            ("time", "Latency over time", plots.figure_over_time,
             "Mean latency per stats interval; shaded intervals are those in which the "
             "compactor (vld) or the cleaner (lld) did idle-time work."))


class Section:
    """One workload on one preset: its runs in mode order."""

    def __init__(self, workload, preset, runs):
        self.workload = workload
        self.preset = preset
        self.runs = runs

    def title(self):
        return f"{self.workload} on {self.preset}"

    def ok_runs(self):
        return [r for r in self.runs if r.status == runsmod.OK]

    def rows(self):
        """{mode: row} of the runs that finished, with mean_vs_inplace."""
        rows = {r.mode: runsmod.row(r) for r in self.ok_runs()}
        ratios = runsmod.ratios_to_inplace(rows)
        for mode, r in rows.items():
            r["mean_vs_inplace"] = ratios.get(mode)
        return rows


def fmt(value, digits):
    if value is None:
        return "–"
    if digits == "ms":
        return fmt_ms(value)
    if digits == 0:
        return f"{int(round(value))}"
    return f"{value:.{digits}f}"


def fmt_ms(value_us):
    """Microseconds as milliseconds: 0.020, 1.41, 14,063."""
    ms = value_us / 1000
    if ms >= 100:
        return f"{ms:,.0f}".replace(",", "")
    return f"{ms:.2f}" if ms >= 1 else f"{ms:.3f}"


def table_cells(section):
    """[heading row] + one row of strings per run (a run that did not
    finish says so in its first number's cell)."""
    rows = section.rows()
    out = [["mode"] + [h for h, _, _ in COLUMNS]]
    for run in section.runs:
        if run.status != runsmod.OK:
            out.append([run.mode, run.status + (f": {run.error}" if run.error else "")] +
                       [""] * (len(COLUMNS) - 1))
            continue
        r = rows[run.mode]
        out.append([run.mode] + [fmt(r[key], d) for _, key, d in COLUMNS])
    return out


def _fastest(rows, key):
    have = [(r[key], m) for m, r in rows.items() if r.get(key) is not None]
    return min(have) if have else None


def biggest_part(run):
    parts = runsmod.breakdown(run)
    if not parts or not any(parts.values()):
        return None
    name = max(parts, key=parts.get)
    return name.replace("_", " "), parts[name], sum(parts.values())


def paragraph(section):
    """A few sentences of facts from the section's runs."""
    rows = section.rows()
    out = []
    if len(rows) > 1:
        for key, what in (("mean_us", "mean latency"), ("p99_us", "p99 latency")):
            best = _fastest(rows, key)
            if best:
                others = ", ".join(f"{m} {fmt_ms(r[key])} ms" for m, r in rows.items()
                                   if m != best[1] and r.get(key) is not None)
                out.append(f"Fastest by {what}: {best[1]} ({fmt_ms(best[0])} ms; {others}).")
    elif rows:
        out.append(f"Only {next(iter(rows))} finished: nothing to compare it with.")
    parts = []
    for run in section.ok_runs():
        b = biggest_part(run)
        if b:
            parts.append(f"{run.mode} {b[0]} ({fmt_ms(b[1])} of {fmt_ms(b[2])} ms)")
    if parts:
        out.append("The biggest part of a write's time: " + "; ".join(parts) + ".")
    loaded = [(m, r["load"]) for m, r in rows.items() if (r.get("load") or 0) > 1]
    if loaded:
        out.append("Open loop, the drive needed more service time than the trace lasted "
                   "(load above 1) in " + ", ".join(f"{m} ({l:.1f})" for m, l in loaded) +
                   ": requests queued behind each other, and their latency is mostly that "
                   "wait; --closed-loop compares the service alone.")
    for run in section.runs:
        if run.status == runsmod.FAILED:
            out.append(f"{run.mode} failed: {run.error}")
        elif run.status == runsmod.MISSING:
            out.append(f"{run.mode} has no result (not run, or still running).")
    return " ".join(out)


def _slug(section):
    return f"{section.workload}-{section.preset}"


def draw(section, out_dir):
    """Saves the section's pictures in out_dir/img; [(key, heading, text,
    relative path or None)]. A picture the runs' files cannot give (a
    stats file without histogram_scheme, say) is None and its text says
    why. A section with no finished run has none."""
    ok = section.ok_runs()
    if not ok:
        return []
    os.makedirs(os.path.join(out_dir, "img"), exist_ok=True)
    drawn = []
    for key, heading, draw_one, text in PICTURES:
        rel = f"img/{_slug(section)}-{key}.png"
        try:
            draw_one(ok, section.title()).savefig(os.path.join(out_dir, rel), dpi=90)
        except ValueError as e:
            text, rel = f"Not drawn: {e}", None
        drawn.append((key, heading, text, rel))
    return drawn


def failures_lines(sections):
    return [f"{s.workload} {s.preset} {r.mode}: {r.status}" + (f": {r.error}" if r.error else "")
            + f" ({r.dir})" for s in sections for r in s.runs if r.status != runsmod.OK]


def md_table(section):
    """The section's table as Markdown lines."""
    cells = table_cells(section)
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + "---|" + "---:|" * (len(cells[0]) - 1)]
    return lines + ["| " + " | ".join(c.replace("|", "/") for c in row) + " |"
                    for row in cells[1:]]


def tables_markdown(sections, header):
    """table.md: each section's heading, paragraph and table, no pictures
    (what scripts/report's report quotes)."""
    lines = [header, ""]
    for s in sections:
        lines += [f"**{s.title()}.** {paragraph(s)}", ""] + md_table(s) + [""]
    return "\n".join(lines)


def markdown(sections, pictures, header):
    lines = ["# vld-compare report", "", header, ""]
    bad = failures_lines(sections)
    if bad:
        lines += ["## Jobs that did not finish", ""] + [f"- {b}" for b in bad] + [""]
    for s, pics in zip(sections, pictures):
        lines += [f"## {s.title()}", "", paragraph(s), ""]
        lines += md_table(s)
        lines.append("")
        for _, heading, text, rel in pics:
            lines += [f"### {heading}", "", text, ""] + ([f"![{heading}]({rel})", ""] if rel else [])
    return "\n".join(lines)


CSS = ("body{font-family:sans-serif;max-width:1200px;margin:1em auto;padding:0 1em}"
       "table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;"
       "padding:2px 6px}td{text-align:right}td:first-child{text-align:left}"
       "img{max-width:100%}.bad{color:#a00}")


def _img_tag(out_dir, rel, alt):
    with open(os.path.join(out_dir, rel), "rb") as f:
        data = base64.b64encode(f.read()).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def html_page(sections, pictures, header, out_dir):
    e = html.escape
    out = ["<!DOCTYPE html>", '<html><head><meta charset="utf-8">',
           f"<title>vld-compare report</title><style>{CSS}</style></head><body>",
           "<h1>vld-compare report</h1>", f"<p>{e(header)}</p>"]
    bad = failures_lines(sections)
    if bad:
        out.append("<h2>Jobs that did not finish</h2><ul class=\"bad\">" +
                   "".join(f"<li>{e(b)}</li>" for b in bad) + "</ul>")
    for s, pics in zip(sections, pictures):
        out += [f"<h2>{e(s.title())}</h2>", f"<p>{e(paragraph(s))}</p>"]
        cells = table_cells(s)
        out.append("<table><tr>" + "".join(f"<th>{e(c)}</th>" for c in cells[0]) + "</tr>")
        out += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in cells[1:]]
        out.append("</table>")
        for _, heading, text, rel in pics:
            out += [f"<h3>{e(heading)}</h3>", f"<p>{e(text)}</p>"]
            if rel:
                out.append(_img_tag(out_dir, rel, heading))
    out.append("</body></html>")
    return "\n".join(out)


def numbers(sections):
    """report.json: per section, the rows unrounded and each run's status."""
    return [{"workload": s.workload, "preset": s.preset, "rows": s.rows(),
             "status": {r.mode: {"status": r.status, "error": r.error, "dir": r.dir}
                        for r in s.runs}} for s in sections]


def write(out_dir, sections, header):
    """Writes report.md, report.html, report.json, table.md and img/ in out_dir;
    returns the paths of the two reports."""
    pictures = [draw(s, out_dir) for s in sections]
    md = os.path.join(out_dir, "report.md")
    page = os.path.join(out_dir, "report.html")
    with open(md, "w", encoding="utf-8") as f:
        f.write(markdown(sections, pictures, header) + "\n")
    with open(page, "w", encoding="utf-8") as f:
        f.write(html_page(sections, pictures, header, out_dir) + "\n")
    with open(os.path.join(out_dir, "report.json"), "w", encoding="utf-8") as f:
        json.dump(numbers(sections), f, indent=1)
    with open(os.path.join(out_dir, "table.md"), "w", encoding="utf-8") as f:
        f.write(tables_markdown(sections, header) + "\n")
    return md, page
