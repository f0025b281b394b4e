"""What scripts/demo prints about a run: fio's view of the writes, and the
simulated mean write of two modes side by side (the README's "What
scripts/demo shows"; the ratio is paper 001's point, Figure 8 at low
utilization).

usage: python3 -m vldbench.demo fio FIO.json
       python3 -m vldbench.demo compare STATS_A STATS_B NAME_A NAME_B
"""
import sys

from .common import fio_job, fio_mean_us, load_json


def fio_line(job):
    w, s = job["write"], job["sync"]
    return (f"   fio: {w['total_ios']} writes, {w['iops']:.0f} IOPS, write latency mean "
            f"{fio_mean_us(w['clat_ns']):.0f} us, fsync mean {fio_mean_us(s['lat_ns']):.0f} us")


def compare_line(stats_a, stats_b, name_a, name_b):
    a, b = (s["write_latency_us"]["mean"] for s in (stats_a, stats_b))
    return (f"== simulated mean 4 KiB synchronous write: {name_a} {a:.0f} us, "
            f"{name_b} {b:.0f} us: {b / a:.1f}x")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[0] == "fio":
        print(fio_line(fio_job(argv[1])))
    elif argv[0] == "compare":
        print(compare_line(load_json(argv[1]), load_json(argv[2]), argv[3], argv[4]))
    else:
        sys.exit(f"vldbench.demo: unknown subcommand {argv[0]!r}")


if __name__ == "__main__":
    main()
