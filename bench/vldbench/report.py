"""One report of every figure and table this project reproduces from paper 001:
OUT/report.html and OUT/report.md, each figure's plot beside the paper's
numbers and ours, with the geometry, parameters, commit and machine.

Input: what scripts/report leaves in OUT: runs/NAME/ (each bench-* script's
OUT; its run directory is runs/NAME/latest, or runs/NAME itself for
bench-presets) and steps.tsv (name, status, seconds, command; one line per
step, status ok|failed|skipped, the command or why it was skipped).

usage: python3 -m vldbench.report OUT
"""
import html
import os
import shutil
import sys
from dataclasses import dataclass

from .common import load_json
from .meta import cpu_model, mem_gib


@dataclass
class Bench:
    name: str        # runs/NAME, the step's name in steps.tsv
    title: str
    paper: str       # what paper 001 reports (its text; the scanned tables are lost)
    png: str = ""    # the plot in the run directory, if the benchmark draws one
    subdir: str = ""  # the run directory below runs/NAME when not NAME/latest


BENCHES = [
    Bench("presets", "Update in place on every drive preset (the drives of Table 1)",
          "Section 2.2: an update-in-place disk may pay half a rotation per write, 7 ms on the "
          "HP97560 and 3 ms on the ST19101, plus a seek.", "presets.png"),
    Bench("fig8", "Figure 8: random synchronous 4 KiB updates as the disk fills",
          "Section 5.3, Figure 8: UFS on the VLD stays far below UFS on the regular disk at "
          "every utilization; the VLD latency rises with utilization, but not significantly "
          "against the other overheads. LFS with a 6.1 MB NVRAM is excellent while the file fits "
          "the NVRAM; as it outgrows it and utilization rises, the cleaner quickly dominates. "
          "(Our target: st19101 at 80% at least 5x, map update at most 10% of a vld write.)", "fig8.png"),
    Bench("locate", "Locate time against the analytical models (1), (2)-(4), (9)",
          "Sections 2.1-2.2 and appendix A.1: the models' mean time to locate a free sector "
          "(or a b-sector block, (9)) against utilization; it rises steeply near full.",
          "locate.png"),
    Bench("fig2", "Figure 2: locate time against the track-switch threshold",
          "Section 2.3, Figure 2 and model (5)/(13): a U-shaped curve; switching too often "
          "pays the switch cost, too rarely a crowded track; the model predicts the optimum.",
          "fig2.png"),
    Bench("table2", "Table 2 / Figure 9: three drive generations at 80%, after compaction",
          "Section 5.4, Table 2: the gap between update in place and virtual logging widens "
          "as disks and processors improve, to almost an order of magnitude; Figure 9: in place "
          "is dominated by locate (mechanical) time, vld is not.", "table2.png"),
    Bench("technology", "Table 2 carried to now: six drives from 1992 to 2018 at 80%",
          "Section 5.4, Table 2: the gap between update in place and virtual logging widens "
          "as disks improve. Here every preset by its year: in place, vld after compaction and "
          "with no idle time, lld with NVRAM, and Figure 9's breakdown per drive.",
          "technology.png"),
    Bench("zones", "Where blocks go on a zoned drive: outer, middle and inner bands",
          "Not in paper 001 (its drives are single-zone). The same disk on each band in every "
          "mode, and the compactor's fill threshold per band (docs/geometry.md).", "zones.png"),
    Bench("fig11", "Figure 11: bursts of synchronous updates with idle time, compactor on/off",
          "Section 5.5, Figure 11: on the VLD the latency improves along a continuum of "
          "relatively small idle intervals as the compactor uses them.", "fig11.png"),
    Bench("fig10", "Figure 10 beside Figure 11: bursts with idle time, the LFS cleaner and the vld compactor",
          "Section 5.5, Figure 10: LFS with NVRAM at 80%; A: no idle time, the NVRAM fills and is "
          "flushed with cleaning; B, C: pauses that clean one and two segments; D: a pause that "
          "flushes the whole burst, after which writes run at memory speed. LFS benefits only from "
          "relatively long idle intervals; the VLD compactor along a continuum of short ones.",
          "fig10.png"),
    Bench("aru", "Atomic record updates: a client's own journal against an ARU",
          "Paper 000 (ARUs in LLD; an empty begin/end pair costs 78 us there) and paper 004 "
          "(TxFlash's WriteAtomic against a journal): with the atomicity in the disk, the double "
          "write and one of the two flushes go away. Not in paper 001.", "aru.png"),
    Bench("qd", "Command queueing: fifo against sptf at queue depth 1, 4, 16",
          "Not in paper 001. Seltzer, Chen & Ousterhout 1990, Jacobson & Wilkes 1991 and "
          "Worthington, Ganger & Patt 1994: a drive that orders its queue by positioning time "
          "serves random requests faster the deeper the queue; FIFO does not.", "qd.png"),
    Bench("fill", "Filling a new disk once (this project: repacks, docs/compaction.md)",
          "Not in the paper (its section 4.2 is the background).", "fill.png"),
    Bench("largefile", "Large file at the block level (paper section 5.2)",
          "Section 5.2: sequential reads after random updates suffer on a VLD; the compactor "
          "restores them (docs/large-file.md).", "largefile.png"),
    Bench("fs", "fio on ext4 over the simulated drive (paper sections 5.1-5.2)",
          "Sections 5.1-5.2: small-file and large-file benchmarks on UFS; here fio's "
          "random 4 KiB writes with fsync on ext4 (docs/filesystems.md).", "fs-fio.png",
          "fs-fio/latest"),
    Bench("fs-smallfile", "Figure 6: small files on ext4, in place, vld and lld",
          "Section 5.1, Figure 6: 1500 files of 1 KB created, read after a cache flush, deleted; "
          "the VLD speeds up UFS's create and delete much, reads slightly slower; LFS (NVRAM-buffered, "
          "cleaner not triggered) is faster still, and the VLD speeds it up slightly.",
          "fs-smallfile.png", "fs-smallfile/latest"),
    Bench("fs-largefile", "Figure 7: a large file on ext4, in place, vld and lld",
          "Section 5.2, Figure 7: sequential write, read, random write (async, and sync on UFS), "
          "sequential read after it, random read; logging and eager writing both leave sequential "
          "reads after random writes poor; the VLD is fast on synchronous random writes.",
          "fs-largefile.png", "fs-largefile/latest"),
    Bench("hostcost", "Host cost: our plugin against nbdkit's file plugin",
          "Not in the paper. Target: mode=vld serves at least 0.9x the file plugin's IOPS, "
          "at QD 1 and 16 (median of the interleaved pairs)."),
    Bench("pacing", "Pacing fidelity: latency=sleep against latency=none",
          "Not in the paper (docs/pacing.md)."),
    Bench("recovery", "Memory per GiB and the cost of opening after a crash",
          "Section 3: recovery reads the log tail, not the whole disk."),
    Bench("traces", "The shipped traces on every mode (vld-compare, closed loop)",
          "Not in the paper: PostgreSQL pgbench, a git clone, an untar and a maildir loop on "
          "ext4, recorded with scripts/capture (traces/README.md), replayed on each mode at "
          "80% (docs/replay.md); the full report with its pictures is runs/traces/report.html."),
    Bench("kernel-fsync", "The kernel's fsync through NBD (qemu guest)",
          "Not in the paper (docs/filesystems.md)."),
]


def read_steps(out_dir):
    """{name: (status, seconds, command or reason)} from OUT/steps.tsv."""
    steps = {}
    path = os.path.join(out_dir, "steps.tsv")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                name, status, seconds, what = (line.rstrip("\n").split("\t") + [""] * 4)[:4]
                steps[name] = (status, float(seconds or 0), what)
    return steps


def run_dir(out_dir, bench):
    """The bench's run directory under OUT/runs, or None if it did not run."""
    base = os.path.join(out_dir, "runs", bench.name)
    for cand in (os.path.join(base, bench.subdir or "latest"), base):
        if os.path.exists(os.path.join(cand, "table.md")):
            return cand
    if os.path.isdir(base):  # bench-pacing: RUN_ID directories, no latest link
        subs = sorted(d for d in os.listdir(base) if os.path.exists(os.path.join(base, d, "table.md")))
        if subs:
            return os.path.join(base, subs[-1])
    return None


def section(out_dir, bench, steps):
    """The facts of one bench for both renderings: dict or None if absent."""
    status, seconds, what = steps.get(bench.name, ("not run", 0.0, ""))
    rd = run_dir(out_dir, bench)
    s = {"bench": bench, "status": status, "seconds": seconds, "what": what,
         "table": None, "img": None, "meta": {}}
    if rd:
        with open(os.path.join(rd, "table.md")) as f:
            s["table"] = f.read().strip()
        meta_path = os.path.join(rd, "meta.json")
        s["meta"] = load_json(meta_path) if os.path.exists(meta_path) else {}
        if bench.png and os.path.exists(os.path.join(rd, bench.png)):
            os.makedirs(os.path.join(out_dir, "img"), exist_ok=True)
            s["img"] = f"img/{bench.name}.png"
            shutil.copyfile(os.path.join(rd, bench.png), os.path.join(out_dir, s["img"]))
    return s


def machine_lines(sections):
    """Commit, date and machine, from the first run's meta.json (else this host)."""
    meta = next((s["meta"] for s in sections if s["meta"]), {})
    return [
        f"commit {meta.get('commit', '?')}"
        + (" (uncommitted changes)" if meta.get("worktree_modified") else "")
        + f", {meta.get('source', 'work tree')}",
        f"date {meta.get('date_utc', '?')}",
        f"machine: {meta.get('cpus', os.cpu_count())} CPUs ({meta.get('cpu_model', cpu_model())}), "
        f"{meta.get('mem_gib', mem_gib())} GiB, kernel {meta.get('kernel', os.uname().release)}, "
        f"{meta.get('nbdkit', '?')}, {meta.get('fio', '?')}, images on {meta.get('image_fs', '?')}",
        f"load average at the first run: {' '.join(meta.get('loadavg', ['?']))}",
    ]


def status_line(s):
    return f"{s['status']}, {s['seconds']:.0f} s" + (f": `{s['what']}`" if s["what"] else "")


def markdown(sections, title):
    md = [f"# {title}", ""] + [f"- {x}" for x in machine_lines(sections)] + [""]
    for s in sections:
        b = s["bench"]
        md += [f"## {b.title}", "", f"*Step:* {status_line(s)}", "", f"**Paper:** {b.paper}", ""]
        if s["img"]:
            md += [f"![{b.title}]({s['img']})", ""]
        md += ["**Ours:**", "", s["table"] or "(no results: the step did not run)", ""]
    return "\n".join(md) + "\n"


def html_page(sections, title):
    esc = html.escape
    out = ["<!doctype html>", "<meta charset=utf-8>", f"<title>{esc(title)}</title>",
           "<style>body{font-family:sans-serif;max-width:80em;margin:auto}"
           ".pair{display:flex;gap:1em;align-items:flex-start}.pair img{max-width:48%}"
           "pre{overflow-x:auto;font-size:80%;background:#f6f6f6;padding:.5em}</style>",
           f"<h1>{esc(title)}</h1>", "<ul>"]
    out += [f"<li>{esc(x)}</li>" for x in machine_lines(sections)] + ["</ul>"]
    for s in sections:
        b = s["bench"]
        out += [f"<h2 id={esc(b.name)}>{esc(b.title)}</h2>",
                f"<p><i>Step:</i> {esc(status_line(s))}</p>",
                f"<p><b>Paper:</b> {esc(b.paper)}</p>", "<div class=pair>"]
        if s["img"]:
            out.append(f"<img src=\"{esc(s['img'])}\" alt=\"{esc(b.title)}\">")
        out += ["<div><b>Ours:</b>",
                f"<pre>{esc(s['table'] or '(no results: the step did not run)')}</pre></div>",
                "</div>"]
    return "\n".join(out) + "\n"


def write_report(out_dir, title="vld: paper 001 reproduced"):
    """OUT/report.md and OUT/report.html; returns the sections."""
    steps = read_steps(out_dir)
    sections = [section(out_dir, b, steps) for b in BENCHES]
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write(markdown(sections, title))
    with open(os.path.join(out_dir, "report.html"), "w") as f:
        f.write(html_page(sections, title))
    return sections


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    out_dir = argv[0]
    title = argv[1] if len(argv) > 1 else "vld: paper 001 reproduced"
    sections = write_report(out_dir, title)
    shown = sum(1 for s in sections if s["table"])
    print(f"report: {out_dir}/report.html, {out_dir}/report.md "
          f"({shown} of {len(sections)} benchmarks, {sum(1 for s in sections if s['img'])} plots)")


if __name__ == "__main__":
    main()
