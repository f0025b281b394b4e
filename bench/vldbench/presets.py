"""The simulated latency of random 4 KiB synchronous writes on every drive
preset, with the paper's Figure 9 breakdown (paper 001, section 5.4), from
the stats files of scripts/bench-presets (OUT/PRESET.stats.json).

usage: python3 -m vldbench.presets OUT PRESET...
       -> OUT/presets.json, OUT/table.md, OUT/presets.png (the breakdown, as Figure 9)
"""
import sys

from .common import load_json, write_json
from .plotting import pyplot, save

PARTS = ("overhead", "seek", "head_switch", "rotation", "transfer")


def preset_row(preset, stats):
    """One preset's row of presets.json from its stats file."""
    return {"preset": preset, "mode": stats["mode"],
            "writes": stats["write_latency_us"]["count"],
            "latency_us": stats["write_latency_us"], "breakdown_us": stats["breakdown_us"],
            "utilization": stats["utilization"],
            "simulated_cylinders": stats["geometry"]["simulated_cylinders"]}


def table_lines(rows):
    """The fixed-width table bench-presets prints (simulated µs)."""
    lines = [f"{'preset':<11} {'writes':>6} {'mean':>8} {'p50':>8} {'p99':>8} | {'overhead':>8} "
             f"{'seek':>8} {'hd_switch':>9} {'rotation':>8} {'transfer':>8}   (simulated us)"]
    for r in rows:
        w, b = r["latency_us"], r["breakdown_us"]
        lines.append(f"{r['preset']:<11} {w['count']:>6} {w['mean']:>8.0f} {w['p50']:>8.0f} "
                     f"{w['p99']:>8.0f} | {b['overhead']:>8.0f} {b['seek']:>8.0f} "
                     f"{b['head_switch']:>9.1f} {b['rotation']:>8.0f} {b['transfer']:>8.1f}")
    return lines


def markdown_lines(rows):
    """The README's table: mean, p99 and the breakdown per preset (µs)."""
    md = ["| preset | mean | p99 | overhead | seek | head switch | rotation | transfer (µs) |",
          "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        w, b = r["latency_us"], r["breakdown_us"]
        md.append(f"| {r['preset']} | {w['mean']:.0f} | {w['p99']:.0f} | {b['overhead']:.0f} | "
                  f"{b['seek']:.0f} | {b['head_switch']:.1f} | {b['rotation']:.0f} | "
                  f"{b['transfer']:.1f} |")
    return md


def plot(rows, path):
    """Stacked bars of the breakdown per preset, ms per write."""
    plt = pyplot("bench-presets")
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(6, 3.6))
    names = [r["preset"] for r in rows]
    bottom = [0.0] * len(rows)
    for part in PARTS:
        h = [r["breakdown_us"][part] / 1e3 for r in rows]
        ax.bar(names, h, bottom=bottom, label=part.replace("_", " "))
        bottom = [b + x for b, x in zip(bottom, h)]
    ax.set_ylabel("ms per random 4 KiB write (simulated)")
    ax.set_title(f"In place on every preset ({rows[0]['mode']})", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    save(plt, fig, path)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    out, presets = argv[0], argv[1:]
    rows = [preset_row(g, load_json(f"{out}/{g}.stats.json")) for g in presets]
    print("\n".join(table_lines(rows)))
    write_json(f"{out}/presets.json", rows)
    with open(f"{out}/table.md", "w") as f:
        f.write("\n".join(markdown_lines(rows)) + "\n")
    plot(rows, f"{out}/presets.png")
    print(f"(results: {out}/presets.json)")


if __name__ == "__main__":
    main()
