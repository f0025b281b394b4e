"""Paper 001's Table 2 carried to now (section 5.4): random 4 KiB synchronous
updates at 80% on every drive preset, by the drive's year.

Per drive, from scripts/bench-technology's raw files:
  DIR/raw/PRESET.table2.jsonl  vld-bench table2 --uncompacted: vld right
                               after its compactor ran, vld without it, and
                               update in place, with the paper's Figure 9
                               breakdown of each write
  DIR/raw/fig8/results.json    scripts/bench-fig8 MODES=lld UTILS=80: the
                               log-structured disk with NVRAM

usage: python3 -m vldbench.technology DIR --command CMD
       -> DIR/technology.json, DIR/table.md, DIR/technology.png
"""
import argparse
import os

from .common import load_json, load_jsonl, write_json
from .plotting import pyplot, save

# The year each preset's drive shipped (plugin/parameters.h, docs/geometry.md).
YEARS = {"hp97560": 1992, "hp97560-rw": 1992, "st19101": 1997, "cheetah9lp": 1998,
         "atlas10k": 1999, "savvio10k4": 2009, "hc310": 2018}
DEFAULT_PRESETS = ("hp97560", "st19101", "cheetah9lp", "atlas10k", "savvio10k4", "hc310")
PARTS = ("overhead", "seek", "head_switch", "rotation", "transfer")
SYSTEMS = (("inplace_us", "update in place"), ("vld_compacted_us", "vld, after compaction"),
           ("vld_us", "vld, no idle time"), ("lld_nvram_us", "lld with NVRAM"))


def table2_rows(path):
    """vld (compacted), vld (not compacted) and inplace rows of one table2 run."""
    rows = load_jsonl(path)
    vld = [r for r in rows if r["mode"] == "vld"]
    compacted = [r for r in vld if r.get("compacted", True)]
    plain = [r for r in vld if not r.get("compacted", True)]
    (inplace,) = [r for r in rows if r["mode"] == "inplace"]
    assert len(compacted) == 1 and len(plain) == 1, f"{path}: run table2 with --uncompacted"
    return compacted[0], plain[0], inplace


def lld_means(fig8_results):
    """Preset -> the mean update (write + flush) of lld with NVRAM at 80%."""
    if not fig8_results or not os.path.exists(fig8_results):
        return {}
    rows = load_json(fig8_results)["rows"]
    return {r["geometry"]: r["update_mean_us"] for r in rows
            if r["mode"] == "lld" and r.get("update_mean_us") is not None}


def drive_row(preset, compacted, plain, inplace, lld_us):
    """One drive's row of technology.json."""
    return {"preset": preset, "year": YEARS[preset],
            "utilization": inplace["utilization"], "writes": inplace["writes"],
            "inplace_us": inplace["mean_us"], "vld_compacted_us": compacted["mean_us"],
            "vld_us": plain["mean_us"], "lld_nvram_us": lld_us,
            "inplace_over_vld_compacted": inplace["mean_us"] / compacted["mean_us"],
            "inplace_over_vld": inplace["mean_us"] / plain["mean_us"],
            "breakdown_us": {"inplace": {p: inplace["breakdown_us"][p] for p in PARTS},
                             "vld_compacted": {p: compacted["breakdown_us"][p] for p in PARTS},
                             "vld": {p: plain["breakdown_us"][p] for p in PARTS}}}


def markdown_lines(rows):
    """The table docs/benchmarks.md quotes: latencies, ratios and the breakdowns."""
    md = ["| drive | year | in place | vld after compaction | vld, no idle | lld + NVRAM | "
          "in place / vld (compacted, not) |",
          "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lld = f"{r['lld_nvram_us']:.0f}" if r["lld_nvram_us"] is not None else "—"
        md.append(f"| {r['preset']} | {r['year']} | {r['inplace_us']:.0f} | "
                  f"{r['vld_compacted_us']:.0f} | {r['vld_us']:.0f} | {lld} | "
                  f"{r['inplace_over_vld_compacted']:.1f}x, {r['inplace_over_vld']:.1f}x |")
    md += ["", "Figure 9's breakdown of a write (µs): overhead / seek / head switch / rotation "
           "/ transfer", "", "| drive | in place | vld after compaction | vld, no idle |",
           "|---|---|---|---|"]
    for r in rows:
        cells = [" / ".join(f"{r['breakdown_us'][k][p]:.0f}" for p in PARTS)
                 for k in ("inplace", "vld_compacted", "vld")]
        md.append(f"| {r['preset']} | " + " | ".join(cells) + " |")
    return md


def plot(rows, path):
    """Latency by year (log scale), and each drive's breakdown, in one figure."""
    plt = pyplot("bench-technology")
    if plt is None:
        return
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4))
    years = [r["year"] for r in rows]
    for key, label in SYSTEMS:
        pts = [(r["year"], r[key] / 1e3) for r in rows if r[key] is not None]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    for r in rows:
        ax.annotate(r["preset"], (r["year"], r["inplace_us"] / 1e3), fontsize=7,
                    xytext=(2, 4), textcoords="offset points")
    ax.set_yscale("log")
    ax.set_xlabel("year the drive shipped")
    ax.set_ylabel("ms per random 4 KiB synchronous update (simulated)")
    ax.set_title("Table 2 carried to now: 80% full", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    width = 0.4
    for i, kind in enumerate(("inplace", "vld_compacted")):
        xs = [j + (i - 0.5) * width for j in range(len(rows))]
        bottom = [0.0] * len(rows)
        for n, part in enumerate(PARTS):
            h = [r["breakdown_us"][kind][part] / 1e3 for r in rows]
            bx.bar(xs, h, width, bottom=bottom, color=f"C{n}", hatch="//" if i else None,
                   label=part.replace("_", " ") if i == 0 else None)
            bottom = [b + x for b, x in zip(bottom, h)]
    bx.set_xticks(range(len(rows)), [f"{r['preset']}\n{y}" for r, y in zip(rows, years)],
                  fontsize=7)
    bx.set_ylabel("ms per write")
    bx.set_title("Figure 9 per drive: in place (plain), vld after compaction (hatched)",
                 fontsize=9)
    bx.legend(fontsize=7)
    bx.grid(True, axis="y", alpha=0.3)
    save(plt, fig, path)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="vldbench.technology", description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--presets", default=" ".join(DEFAULT_PRESETS))
    ap.add_argument("--command", default="")
    a = ap.parse_args(argv)
    lld = lld_means(os.path.join(a.dir, "raw", "fig8", "results.json"))
    rows = [drive_row(p, *table2_rows(os.path.join(a.dir, "raw", f"{p}.table2.jsonl")),
                      lld.get(p)) for p in a.presets.split()]
    rows.sort(key=lambda r: r["year"])
    write_json(os.path.join(a.dir, "technology.json"), {"command": a.command, "rows": rows})
    md = markdown_lines(rows)
    with open(os.path.join(a.dir, "table.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    plot(rows, os.path.join(a.dir, "technology.png"))
    print("\n".join(md))
    print(f"(results: {a.dir}/technology.json, table.md, technology.png)")


if __name__ == "__main__":
    main()
