"""What scripts/demo prints about its runs: fio's view of each, the
simulated latencies of the modes side by side (the README's "What
scripts/demo shows"; the ratio is paper 001's point, Figure 8 at low
utilization), and one atomic recovery unit committed through the `aru`
export (docs/aru.md).

usage: python3 -m vldbench.demo fio FIO.json
       python3 -m vldbench.demo table NAME=STATS.json...
       python3 -m vldbench.demo aru SOCKET
"""
import sys

from .common import fio_job, fio_mean_us, load_json


def fio_line(job):
    w, s = job["write"], job["sync"]
    return (f"   fio: {w['total_ios']} writes, {w['iops']:.0f} IOPS, write latency mean "
            f"{fio_mean_us(w['clat_ns']):.0f} us, fsync mean {fio_mean_us(s['lat_ns']):.0f} us")


TABLE_HEADER = ("   simulated (us)    write mean    p50    p99    max   flush mean"
                "   drive busy per write")


NOTES = {
    "vld": "   vld writes each block, and its map sector, in free sectors near the head",
    "inplace": "   inplace seeks to each block's home and waits for it to come round "
               "(half a revolution on average)",
    "lld": "   lld acknowledges from its NVRAM and pays when the NVRAM fills: max is a write "
           "that waited for the NVRAM's drain into a segment",
}


def table_row(name, stats):
    w, f = stats["write_latency_us"], stats["flush_latency_us"]
    busy = stats.get("busy_us", 0.0) / w["count"] if w["count"] else 0.0
    return (f"   {name:<16} {w['mean']:11.0f} {w['p50']:6.0f} {w['p99']:6.0f} {w['max']:6.0f}"
            f" {f['mean']:12.0f} {busy:22.0f}")


def ratio_line(named_stats, base="inplace"):
    """How many times the mean write and flush of `base` each other mode's is."""
    def per_update(stats):
        return stats["write_latency_us"]["mean"] + stats["flush_latency_us"]["mean"]
    stats = dict(named_stats)
    if base not in stats or len(stats) < 2:
        return None
    parts = [f"{name} {per_update(stats[base]) / per_update(s):.1f}x"
             for name, s in named_stats if name != base and per_update(s) > 0]
    return "== in place / each mode, mean write + flush: " + ", ".join(parts)


def table(named_stats):
    """The modes' simulated latencies, one row each, then the ratios."""
    lines = [TABLE_HEADER] + [table_row(name, s) for name, s in named_stats]
    ratio = ratio_line(named_stats)
    notes = [NOTES[name] for name, _ in named_stats if name in NOTES]
    return lines + ([ratio] if ratio else []) + notes


def aru(socket):
    """One ARU on the server at SOCKET: two writes that another connection
    does not see until the ARU's flush commits both at once, then an ARU
    dropped by disconnecting without a flush. Returns the lines to print."""
    import nbd  # python3-libnbd; only this subcommand needs it

    def connect(export):
        h = nbd.NBD()
        h.set_export_name(export)
        h.connect_unix(socket)
        return h

    def sees(h, data):
        return all(h.pread(4096, off) == data for off in (0, 1 << 20))

    def expect(ok, what):
        if not ok:
            raise SystemExit(f"vldbench.demo aru: {what}: not what the aru export promises")

    new, old, dropped = b"A" * 4096, bytes(4096), b"B" * 4096
    disk, unit = connect(""), connect("aru")
    for off in (0, 1 << 20):
        unit.pwrite(new, off)
    expect(sees(unit, new), "the aru does not read its own writes")
    expect(sees(disk, old), "another connection sees the aru's writes before its flush")
    lines = ["   2 blocks written through export aru (at 0 and 1 MiB): the aru reads them, "
             "another connection still reads the old ones"]
    unit.flush()
    expect(sees(disk, new), "the flush did not commit the aru")
    lines.append("   its flush commits both at once: the other connection reads both")
    for off in (0, 1 << 20):
        unit.pwrite(dropped, off)
    unit.shutdown()  # a disconnect without a flush aborts the aru
    expect(sees(disk, new), "a disconnect without a flush kept the aru's writes")
    lines.append("   2 more writes, then a disconnect without a flush: both dropped")
    disk.shutdown()
    return lines


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[0] == "fio":
        print(fio_line(fio_job(argv[1])))
    elif argv[0] == "table":
        named = [(arg.split("=", 1)[0], load_json(arg.split("=", 1)[1])) for arg in argv[1:]]
        print("\n".join(table(named)))
    elif argv[0] == "aru":
        print("\n".join(aru(argv[1])))
    else:
        sys.exit(f"vldbench.demo: unknown subcommand {argv[0]!r}")


if __name__ == "__main__":
    main()
