"""The simulated latency of random 4 KiB synchronous writes on every drive
preset, with the paper's Figure 9 breakdown (paper 001, section 5.4), from
the stats files of scripts/bench-presets (OUT/PRESET.stats.json).

usage: python3 -m vldbench.presets OUT PRESET...   -> OUT/presets.json
"""
import sys

from .common import load_json, write_json


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


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    out, presets = argv[0], argv[1:]
    rows = [preset_row(g, load_json(f"{out}/{g}.stats.json")) for g in presets]
    print("\n".join(table_lines(rows)))
    write_json(f"{out}/presets.json", rows)
    print(f"(results: {out}/presets.json)")


if __name__ == "__main__":
    main()
