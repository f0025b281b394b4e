"""The disks the comparison benchmarks serve, by label: the nbdkit parameters
a label stands for, the spare= that gives every label the same simulated disk,
and what a Figure 8 point fills and warms up (scripts/bench-fig8, bench-fs).

Labels (MODES="vld inplace lld lld-nonvram"):
  vld          mode=vld: eager writing on the virtual log
  vld-1k       mode=vld block=1K: the same with 1 KiB blocks, for clients that
               write 1 KiB blocks (ext4 -b 1024); vld-512: block=512
  inplace      mode=inplace: update in place
  lld          mode=lld nvram=6100000: the log-structured logical disk with
               paper 001's 6.1 MB NVRAM buffer (section 4.4)
  lld-nonvram  mode=lld nvram=0: the same without NVRAM; each flush writes
               the open segment under the 75% partial-segment rule
  lld-1k, lld-nonvram-1k   the two with block=1K
The parameters are given on every nbdkit run of an image (the run-time ones,
such as cleaner_policy=, are not stored in it; the others must match it).

The disk of a label: the platters less mode=lld's NVRAM region (whole tracks
from the first track after the checkpoint slots; it stands for memory, the
paper's NVRAM buffer cache, and holds no disk block). Its utilization is
live blocks / the disk's blocks: the stats file's `utilization` for vld and
inplace, scaled up by platter / disk for lld.

usage: python3 -m vldbench.modes params LABEL
       python3 -m vldbench.modes spare GEOMETRY LABEL
           the spare= of LABEL's image: SPARE_<geometry>_<label> (a '-' in the
           label as '_'), SPARE_<geometry> or SPARE from the environment, else
           the table below
       python3 -m vldbench.modes point CREATE_STATS LABEL U IOS WARMUP_PCT LLD_WARM
           a Figure 8 point on the image CREATE_STATS describes: "REGION WARMUP
           MEASURED" (bytes to fill and update, random updates before the
           measured run, and in it) or "skip REASON"
"""
import argparse
import math
import os
import sys

from .common import load_json

MIB = 1 << 20
SECTOR = 512
DEFAULT_NVRAM_BYTES = 6100000  # the plugin's nvram= default (paper 001 section 4.4)

LABELS = {
    "vld": {"params": "mode=vld", "title": "vld (eager writing)"},
    "vld-1k": {"params": "mode=vld block=1K", "title": "vld, 1 KiB blocks"},
    "vld-512": {"params": "mode=vld block=512", "title": "vld, 512-byte blocks"},
    "inplace": {"params": "mode=inplace", "title": "in place"},
    "lld": {"params": "mode=lld nvram=6100000", "title": "LFS (lld), 6.1 MB NVRAM"},
    "lld-nonvram": {"params": "mode=lld nvram=0", "title": "LFS (lld), no NVRAM"},
    "lld-1k": {"params": "mode=lld nvram=6100000 block=1K", "title": "LFS (lld), 6.1 MB NVRAM, 1 KiB blocks"},
    "lld-nonvram-1k": {"params": "mode=lld nvram=0 block=1K", "title": "LFS (lld), no NVRAM, 1 KiB blocks"},
}

# spare= per (geometry, label) for a 256 MiB export: the same disk for every
# label (st19101: 135 cylinders, 270 MiB; hp97560: 402 cylinders, 268.5 MiB),
# the least that lets 95% of it fit the export. mode=lld's platters add its
# checkpoint slots (and NVRAM) to what spare= gives, hence 3 where the others
# have 4. vld on hp97560 refuses less than spare=13 (437 cylinders): its
# 72-sector tracks hold 8 blocks beside a map sector, 88.9% of the sectors.
SPARE_DEFAULTS = {
    ("st19101", "vld"): 4, ("st19101", "inplace"): 4, ("st19101", "lld"): 3,
    ("st19101", "lld-nonvram"): 3,
    ("hp97560", "vld"): 13, ("hp97560", "inplace"): 4, ("hp97560", "lld"): 3,
    ("hp97560", "lld-nonvram"): 3,
}
# hp97560-rw is the same drive (geometry/presets.cc): the same disk.
SPARE_DEFAULTS.update({("hp97560-rw", label): spare for (g, label), spare
                       in list(SPARE_DEFAULTS.items()) if g == "hp97560"})
SPARE_FALLBACK = 5
# A point whose region the export cannot hold is measured with the whole
# export instead if that is within this many points of U (the check fig8
# makes of the measured utilization); else it is skipped.
UTIL_TOLERANCE_PCT = 1.0


def label_info(label):
    if label not in LABELS:
        raise SystemExit(f"vldbench.modes: unknown mode label '{label}'; use one of {', '.join(LABELS)}")
    return LABELS[label]


def params(label):
    """LABEL's nbdkit parameters, as one string of words."""
    return label_info(label)["params"]


def param_dict(label):
    return dict(w.split("=", 1) for w in params(label).split())


def is_lld(label):
    return param_dict(label).get("mode") == "lld"


def nvram_bytes(label):
    """The NVRAM buffer LABEL asks for (0: none, or not mode=lld)."""
    if not is_lld(label):
        return 0
    return int(param_dict(label).get("nvram", DEFAULT_NVRAM_BYTES))


def nvram_region_bytes(label, sectors_per_track):
    """The platter bytes of LABEL's NVRAM region: whole tracks (core/lld/lld_layout.h)."""
    sectors = math.ceil(nvram_bytes(label) / SECTOR)
    return math.ceil(sectors / sectors_per_track) * sectors_per_track * SECTOR


def spare(geometry, label, env=None):
    """spare= for LABEL on GEOMETRY: the environment's override, else the table."""
    env = os.environ if env is None else env
    g = geometry.replace("-", "_")
    for var in (f"SPARE_{g}_{label.replace('-', '_')}", f"SPARE_{g}", "SPARE"):
        if env.get(var, "") != "":
            return int(env[var])
    return SPARE_DEFAULTS.get((geometry, label), SPARE_FALLBACK)


def sectors_per_track_by_zone(geometry):
    """A stats file's drive: its zones' sectors per track, outermost first (one
    entry on a single-zone drive)."""
    zones = geometry.get("zones")
    return [z["sectors_per_track"] for z in zones] if zones else [geometry["sectors_per_track"]]


def outer_sectors_per_track(geometry):
    """The outermost zone's sectors per track (mode=lld's system area, NVRAM
    region included, lies in that zone)."""
    return sectors_per_track_by_zone(geometry)[0]


def disk_bytes(stats, label):
    """The disk of LABEL's image (the stats file of any run on it)."""
    g = stats["geometry"]
    return g["platter_bytes"] - nvram_region_bytes(label, outer_sectors_per_track(g))


def disk_utilization(stats, label):
    """Live blocks / the disk's blocks (the stats file counts the NVRAM region as platter)."""
    return stats["utilization"] * stats["geometry"]["platter_bytes"] / disk_bytes(stats, label)


def region_bytes(stats, label, util_pct):
    """(bytes to fill and update for U = util_pct, None) or (None, why not)."""
    disk = disk_bytes(stats, label)
    export = stats["geometry"]["export_bytes"]
    region = (disk * util_pct // 100 + MIB // 2) // MIB * MIB
    if region <= export:
        return region, None
    most = 100 * export / disk
    if most >= util_pct - UTIL_TOLERANCE_PCT:
        return export, None
    return None, (f"{util_pct}% of the {disk / MIB:.0f} MiB disk is {region // MIB} MiB, more than the "
                  f"{export // MIB} MiB export: it holds at most {most:.1f}%")


def warmup_writes(stats, label, ios, warmup_pct, lld_warm):
    """Random updates before the measured run: vld WARMUP_PCT% of IOS (fragmented
    free space); lld LLD_WARM x the blocks its segments hold (the free space
    written through and the cleaner at work); in place none."""
    if is_lld(label):
        lld = stats["lld"]
        return math.ceil(lld_warm * lld["segment_count"] * lld["blocks_per_segment"])
    if param_dict(label).get("mode") == "vld":
        return ios * warmup_pct // 100
    return 0


def measured_writes(stats, ios):
    """IOS; with an NVRAM buffer, whole buffer cycles: a drain comes once per
    nvram_capacity_records writes (one record per 4 KiB write; the buffer is
    empty when a run starts), so IOS rounded up to whole cycles, plus the one
    write that triggers the last drain, holds as many drains as fills."""
    cap = stats.get("lld", {}).get("nvram_capacity_records", 0)
    return math.ceil(ios / cap) * cap + 1 if cap else ios


def point_line(stats, label, util_pct, ios, warmup_pct, lld_warm):
    region, why = region_bytes(stats, label, util_pct)
    if region is None:
        return f"skip {why}"
    return (f"{region} {warmup_writes(stats, label, ios, warmup_pct, lld_warm)} "
            f"{measured_writes(stats, ios)}")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="vldbench.modes", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("params").add_argument("label")
    s = sub.add_parser("spare")
    s.add_argument("geometry")
    s.add_argument("label")
    p = sub.add_parser("point")
    for name in ("create_stats", "label"):
        p.add_argument(name)
    for name in ("util", "ios", "warmup_pct"):
        p.add_argument(name, type=int)
    p.add_argument("lld_warm", type=float)
    a = ap.parse_args(argv)
    if a.cmd == "params":
        print(params(a.label))
    elif a.cmd == "spare":
        label_info(a.label)
        print(spare(a.geometry, a.label))
    else:
        print(point_line(load_json(a.create_stats), a.label, a.util, a.ios, a.warmup_pct, a.lld_warm))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
