"""Where blocks go on a zoned drive: the same disk on bands of the drive's
outer, middle and inner cylinders (span=), in every mode, and the vld
compactor's fill threshold on each band.

scripts/bench-zones leaves, per drive G and band B (outer, middle, inner):
  DIR/raw/G-B.table2.jsonl          vld-bench table2 --uncompacted: vld after
                                    compaction and with no idle time, in place
  DIR/raw/G-B.table2.stats.json     its vld disk's stats (the log records)
  DIR/raw/G-B.fig10.jsonl           vld-bench fig10 --idle-ms 0: lld with NVRAM
  DIR/raw/G-B.fillF.table2.jsonl    table2 with --fill F, for each F

usage: python3 -m vldbench.zones DIR --drives "G ..." --bands "B ..." --fills "F ..."
       -> DIR/zones.json, DIR/table.md, DIR/zones.png
"""
import argparse
import os

from .common import load_json, load_jsonl, write_json
from .modes import sectors_per_track_by_zone
from .plotting import pyplot, save

SYSTEMS = (("inplace", "update in place"), ("vld_compacted", "vld after compaction"),
           ("vld", "vld, no idle time"), ("lld", "lld with NVRAM"))


def split_table2(rows):
    """{vld_compacted, vld, inplace} rows of one table2 run (vld without
    --uncompacted: only vld_compacted)."""
    out = {}
    for r in rows:
        if r["mode"] == "inplace":
            out["inplace"] = r
        else:
            out["vld_compacted" if r.get("compacted", True) else "vld"] = r
    return out


def band_row(raw, drive, band, fills):
    """One band's measurements: mean µs per update per system, the band's
    cylinders and sectors per track, vld's transfer and locate, and the fill
    sweep."""
    t2 = split_table2(load_jsonl(os.path.join(raw, f"{drive}-{band}.table2.jsonl")))
    (lld,) = load_jsonl(os.path.join(raw, f"{drive}-{band}.fig10.jsonl"))
    stats = load_json(os.path.join(raw, f"{drive}-{band}.table2.stats.json"))
    geo = stats["geometry"]
    spt = sectors_per_track_by_zone(geo)
    vld = stats["vld"]
    row = {"drive": drive, "band": band, "span": geo.get("span"),
           "sectors_per_track": [spt[0], spt[-1]],
           "utilization": t2["inplace"]["utilization"],
           "mean_us": {k: t2[k]["mean_us"] for k in ("inplace", "vld_compacted", "vld")},
           "vld_breakdown_us": t2["vld_compacted"]["breakdown_us"],
           "inplace_breakdown_us": t2["inplace"]["breakdown_us"],
           "log_records": vld["log_records_written"],
           "log_record_us_each": vld["log_record_us"] / max(1, vld["log_records_written"]),
           "fill_us": {}}
    row["mean_us"]["lld"] = lld["mean_us"]
    for f in fills:
        rows = split_table2(load_jsonl(os.path.join(raw, f"{drive}-{band}.fill{f}.table2.jsonl")))
        row["fill_us"][str(f)] = rows["vld_compacted"]["mean_us"]
    return row


def markdown_lines(rows, fills):
    md = ["| drive | band (cylinders) | sectors/track | in place | vld after compaction | "
          "vld, no idle | lld + NVRAM | vld transfer / locate | log record µs |",
          "|---|---|---|---:|---:|---:|---:|---|---:|"]
    for r in rows:
        s, m, b = r["span"], r["mean_us"], r["vld_breakdown_us"]
        band = f"{r['band']} ({s['first_cylinder']}–{s['last_cylinder']})" if s else r["band"]
        md.append(f"| {r['drive']} | {band} | {r['sectors_per_track'][0]}–"
                  f"{r['sectors_per_track'][1]} | {m['inplace']:.0f} | {m['vld_compacted']:.0f} | "
                  f"{m['vld']:.0f} | {m['lld']:.0f} | {b['transfer']:.0f} / {b['locate']:.0f} | "
                  f"{r['log_record_us_each']:.0f} |")
    md += ["", "vld after compaction by the compactor's fill threshold (fill=, µs):", "",
           "| drive | band | " + " | ".join(f"fill {f}%" for f in fills) + " | best |",
           "|---|---|" + "---:|" * (len(fills) + 1)]
    for r in rows:
        us = [r["fill_us"][str(f)] for f in fills]
        best = fills[us.index(min(us))]
        md.append(f"| {r['drive']} | {r['band']} | " + " | ".join(f"{u:.0f}" for u in us) +
                  f" | {best}% |")
    return md


def plot(rows, drives, path):
    """Per drive: each system's mean µs per update on each band (log scale)."""
    plt = pyplot("bench-zones")
    if plt is None:
        return
    fig, axes = plt.subplots(1, len(drives), figsize=(5.5 * len(drives), 3.8), squeeze=False)
    for ax, drive in zip(axes[0], drives):
        mine = [r for r in rows if r["drive"] == drive]
        xs = range(len(mine))
        for key, label in SYSTEMS:
            ax.plot(xs, [r["mean_us"][key] / 1e3 for r in mine], marker="o", label=label)
        ax.set_xticks(list(xs), [f"{r['band']}\n{r['sectors_per_track'][0]} spt" for r in mine])
        ax.set_yscale("log")
        ax.set_ylabel("ms per random 4 KiB update (simulated)")
        ax.set_title(f"{drive}: the same disk at 80% on each band", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    save(plt, fig, path)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="vldbench.zones", description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--drives", required=True)
    ap.add_argument("--bands", default="outer middle inner")
    ap.add_argument("--fills", default="50 75 90 100")
    ap.add_argument("--command", default="")
    a = ap.parse_args(argv)
    drives, fills = a.drives.split(), [int(f) for f in a.fills.split()]
    raw = os.path.join(a.dir, "raw")
    rows = [band_row(raw, d, b, fills) for d in drives for b in a.bands.split()]
    write_json(os.path.join(a.dir, "zones.json"), {"command": a.command, "rows": rows})
    md = markdown_lines(rows, fills)
    with open(os.path.join(a.dir, "table.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    plot(rows, drives, os.path.join(a.dir, "zones.png"))
    print("\n".join(md))
    print(f"(results: {a.dir}/zones.json, table.md, zones.png)")


if __name__ == "__main__":
    main()
