"""scripts/bench-fs sqlite: a database's synchronous commits on ext4 of each block size,
every mode side by side, and where the writes of part of a disk block come from.

A write that covers part of a DISK_BLOCK-byte block makes a disk that maps whole
blocks (mode=vld and mode=lld, block=4096 by default) read the rest of the block
first (read-modify-write); a drive of 512-byte sectors, or a vld image whose block
is the file system's, writes it as it is. The report counts such writes from
nbdkit's log filter, by where they land: ext4's journal (debugfs "blocks <8>"),
the database file (filefrag -e after the phase) or the rest (inodes, bitmaps,
directories, SQLite's rollback journal, which is deleted after every commit).

Subcommands (through `python3 -m vldbench.fs`):
  requests LOG FROM TO    the Write, Trim and Zero requests of nbdkit's log filter
                          between byte offsets FROM and TO of LOG, as "W offset
                          count" lines
  report sqlite RUN_DIR ... results.json, table.md and fs-sqlite.png
"""
import collections
import re

from .common import fmt, load_json, results_header, write_json, write_table
from .plotting import pyplot, save

DISK_BLOCK = 4096  # the block of mode=vld and mode=lld images by default (block=)
REGIONS = ("journal", "db", "other")
REGION_TITLE = {"journal": "ext4's journal (jbd2)", "db": "the database file",
                "other": "the rest (metadata, SQLite's rollback journal)"}
MODE_TITLE = {"vld": "vld", "vld-1k": "vld", "vld-512": "vld", "inplace": "in place",
              "lld": "lld (6.1 MB NVRAM)", "lld-1k": "lld (6.1 MB NVRAM)", "lld-nonvram": "lld (no NVRAM)",
              "lld-nonvram-1k": "lld (no NVRAM)"}
MODE_COLOR = {"inplace": "tab:red", "vld": "tab:blue", "vld-1k": "tab:cyan", "vld-512": "tab:purple",
              "lld": "tab:green", "lld-1k": "lime", "lld-nonvram": "tab:olive", "lld-nonvram-1k": "khaki"}

_REQUEST = re.compile(r"connection=\d+ (Write|Trim|Zero) id=\d+ offset=0x([0-9a-f]+) "
                      r"count=0x([0-9a-f]+)")


# ---------------------------------------------------------------- request log
def requests_in_log(text):
    """[(kind, offset, count)] of the Write (W), Trim (T) and Zero (Z) requests in TEXT,
    a piece of nbdkit's log filter output (each request's first line)."""
    return [(m.group(1)[0], int(m.group(2), 16), int(m.group(3), 16))
            for m in _REQUEST.finditer(text)]


def extract(log, start, end):
    """The requests logged between byte offsets START and END of LOG, one "K offset count"
    line each."""
    with open(log, "rb") as f:
        f.seek(int(start))
        text = f.read(int(end) - int(start)).decode("utf-8", "replace")
    return "".join(f"{k} {off} {n}\n" for k, off, n in requests_in_log(text))


def load_requests(path):
    out = []
    with open(path) as f:
        for line in f:
            k, off, n = line.split()
            out.append((k, int(off), int(n)))
    return out


# ---------------------------------------------------------------- where writes land
def journal_ranges(text, fs_block):
    """Byte ranges [lo, hi) of ext4's journal from debugfs "blocks <8>" (FS_BLOCK-byte
    block numbers), consecutive blocks merged."""
    ranges = []
    for b in sorted(int(w) for w in text.split()):
        lo = b * fs_block
        if ranges and ranges[-1][1] == lo:
            ranges[-1][1] = lo + fs_block
        else:
            ranges.append([lo, lo + fs_block])
    return [tuple(r) for r in ranges]


_EXTENT = re.compile(r"^\s*\d+:\s+\d+\.\.\s*\d+:\s+(\d+)\.\.\s*(\d+):", re.M)
_FS_BLOCK = re.compile(r"\((\d+) blocks of (\d+) bytes\)")


def file_ranges(text):
    """Byte ranges [lo, hi) of a file's extents from `filefrag -e` output."""
    m = _FS_BLOCK.search(text)
    bs = int(m.group(2)) if m else 4096
    return [(int(a) * bs, (int(b) + 1) * bs) for a, b in _EXTENT.findall(text)]


def region_of(offset, journal, db):
    for name, ranges in (("journal", journal), ("db", db)):
        if any(lo <= offset < hi for lo, hi in ranges):
            return name
    return "other"


def partial_blocks(offset, count, block=DISK_BLOCK):
    """How many BLOCK-byte blocks the write [offset, offset + count) covers only in part."""
    if count == 0:
        return 0
    first, last = offset // block, (offset + count - 1) // block
    head = offset % block != 0
    tail = (offset + count) % block != 0
    if first == last:
        return 1 if head or tail else 0
    return int(head) + int(tail)


def partial_writes(reqs, journal, db):
    """Per region: writes, writes of part of a disk block, such blocks; and the shapes
    (region, bytes, offset mod DISK_BLOCK) of the partial writes, most frequent first."""
    by = {r: collections.Counter() for r in REGIONS}
    shapes = collections.Counter()
    for kind, off, n in reqs:
        if kind != "W":
            continue
        region = region_of(off, journal, db)
        by[region]["writes"] += 1
        p = partial_blocks(off, n)
        if p:
            by[region]["partial_writes"] += 1
            by[region]["partial_blocks"] += p
            shapes[(region, n, off % DISK_BLOCK)] += 1
    return ({r: {k: c[k] for k in ("writes", "partial_writes", "partial_blocks")}
             for r, c in by.items()}, shapes.most_common())


# ---------------------------------------------------------------- rows
def phase(raw, key):
    """What the drive did in the run's measured phase (fs.diff of its snapshots)."""
    from .fs import diff
    before, after = load_json(f"{raw}/{key}.before.stats.json"), load_json(f"{raw}/{key}.after.stats.json")
    d = diff(before, after)
    rmw = None
    if "vld" in after and "vld" in before:
        rmw = after["vld"]["rmw_reads"] - before["vld"]["rmw_reads"]
    return d, rmw, after["geometry"]["block_bytes"]


def run_row(raw, blk, mode):
    key = f"b{blk}-{mode}"
    d, rmw, disk_block = phase(raw, key)
    op = load_json(f"{raw}/{key}.op.json")
    reqs = load_requests(f"{raw}/{key}.requests.tsv")
    journal = journal_ranges(open(f"{raw}/{key}.journal-blocks").read(), blk)
    db = file_ranges(open(f"{raw}/{key}.db-extents").read())
    regions, shapes = partial_writes(reqs, journal, db)
    logged = sum(1 for k, _, _ in reqs if k == "W")
    row = {"ext4_block": blk, "mode": mode, "disk_block": disk_block,
           "transactions": op["transactions"], "writes": d["write"], "flushes": d["flush"],
           "reads": d["read"], "logged_writes": logged,
           "write_mean_us": d["write_mean_us"], "flush_mean_us": d["flush_mean_us"],
           "busy_s": d["busy_us"] / 1e6, "busy_per_tx_us": d["busy_us"] / op["transactions"],
           "kib_written": d["bytes_written"] / 1024, "physical_reads": d["physical_reads"],
           "rmw_reads": rmw, "regions": regions,
           "partial_writes": sum(r["partial_writes"] for r in regions.values()),
           "partial_blocks": sum(r["partial_blocks"] for r in regions.values()),
           "shapes": [[r, n, o, c] for (r, n, o), c in shapes[:12]], "lld": d.get("lld"),
           "errors": d["errors"], "wall_s": op["elapsed_s"]}
    return row


def add_ratios(rows):
    """in place / this mode, in simulated busy time and in mean write, per ext4 block size
    (> 1: faster than in place)."""
    by = {(r["ext4_block"], r["mode"]): r for r in rows}
    for r in rows:
        ip = by.get((r["ext4_block"], "inplace"))
        r["speedup_busy"] = ip["busy_s"] / r["busy_s"] if ip and r["busy_s"] else None
        r["speedup_write"] = (ip["write_mean_us"] / r["write_mean_us"]
                              if ip and r["write_mean_us"] and ip["write_mean_us"] else None)
    return by


def problems_of(rows):
    out = []
    for r in rows:
        tag = f"ext4 -b {r['ext4_block']} {r['mode']}"
        if r["errors"]:
            out.append(f"{tag}: {r['errors']} plugin errors")
        if r["logged_writes"] != r["writes"]:
            out.append(f"{tag}: the log filter saw {r['logged_writes']} writes in the phase, "
                       f"the stats file {r['writes']}")
    return out


# ---------------------------------------------------------------- table
def mode_label(mode, row):
    """The mode's name and its image's block (in place writes sectors where they belong:
    its block= only counts live blocks)."""
    title = MODE_TITLE.get(mode, mode)
    return title if mode == "inplace" else f"{title} (block {row['disk_block']})"


def table(meta, p, by, rows, problems):
    md = [results_header(meta), "",
          f"{p.geometry}, {p.size} export, latency=none; python3's sqlite3 with journal_mode=DELETE "
          f"and synchronous=FULL, {p.sql_tx} transactions of one INSERT of {p.sql_rows[0]}-"
          f"{p.sql_rows[1]} bytes each, in ext4 (mkfs.ext4 -b B, lazy init off, mount noatime) on "
          f"a loop device of {p.loop_sector}-byte sectors (nbdfuse); a fresh image per row. "
          "Simulated, the phase only (stats file): mean write latency, the drive's busy time "
          "(requests, with what they waited for: lld's drains and cleaning), speed-up = in place "
          "/ this mode (> 1: faster). RMW reads: vld.rmw_reads. Partial: the writes that cover part "
          f"of a {DISK_BLOCK}-byte block (nbdkit's log filter), and such blocks.", "",
          "| ext4 block | mode | writes | flushes | mean sim. write µs | sim. busy s | "
          "busy / tx µs | speed-up busy | speed-up write | RMW reads | partial writes / blocks |",
          "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for blk in p.ext4_blocks:
        for m in p.modes:
            r = by.get((blk, m))
            if not r:
                continue
            md.append(f"| {blk} | {mode_label(m, r)} | {r['writes']} | "
                      f"{r['flushes']} | {fmt(r['write_mean_us'])} | {r['busy_s']:.1f} | "
                      f"{r['busy_per_tx_us']:.0f} | **{fmt(r['speedup_busy'], '.2f')}** | "
                      f"{fmt(r['speedup_write'], '.2f')} | {fmt(r['rmw_reads'])} | "
                      f"{r['partial_writes']} / {r['partial_blocks']} |")
    md += ["", "mode=lld nvram=0 writes nothing on a write but waits in the open segment, and "
           "writes it at the flush: its mean write is 0 and its time is in the flushes."]
    md += [""] + partial_table(p, by)
    return md + [""] + [f"problem: {x}" for x in problems]


def partial_table(p, by):
    """Where the partial writes land, per ext4 block size (the in-place run's requests, or the
    first mode's: the file system sends nearly the same to every mode)."""
    md = [f"Writes of part of a {DISK_BLOCK}-byte block, by where they land:", "",
          "| ext4 block | region | writes | of them partial | partial blocks | commonest partial "
          "shapes (bytes @ offset mod 4096: count) |", "|---:|---|---:|---:|---:|---|"]
    for blk in p.ext4_blocks:
        r = by.get((blk, "inplace")) or next((by[(blk, m)] for m in p.modes if (blk, m) in by), None)
        if not r:
            continue
        for reg in REGIONS:
            x = r["regions"][reg]
            shapes = ", ".join(f"{n} @ {o}: {c}" for rr, n, o, c in r["shapes"] if rr == reg)
            md.append(f"| {blk} | {REGION_TITLE[reg]} | {x['writes']} | {x['partial_writes']} | "
                      f"{x['partial_blocks']} | {shapes or '-'} |")
    return md


def plot(by, p, meta, path):
    """Simulated busy time per mode, one group per ext4 block size."""
    plt = pyplot("bench-fs")
    if not plt:
        return
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / max(1, len(p.modes))
    for k, m in enumerate(p.modes):
        xs = [j + (k - (len(p.modes) - 1) / 2) * width for j in range(len(p.ext4_blocks))]
        ys = [(by.get((blk, m)) or {}).get("busy_s") or 0 for blk in p.ext4_blocks]
        row = next((by[(blk, m)] for blk in p.ext4_blocks if (blk, m) in by), None)
        ax.bar(xs, ys, width, color=MODE_COLOR.get(m), label=mode_label(m, row) if row else m)
        for x, y in zip(xs, ys):
            ax.text(x, y, f"{y:.1f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(p.ext4_blocks)))
    ax.set_xticklabels([f"ext4 -b {b}" for b in p.ext4_blocks])
    ax.set_ylabel("simulated busy time, s")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"SQLite, {p.sql_tx} synchronous transactions, {p.geometry} {p.size}, latency=none "
                 f"(load at start {meta['loadavg'][0]})", fontsize=9)
    save(plt, fig, path)


def report(run_dir, p):
    from .fs import meta_for
    meta = meta_for(run_dir, p.command)
    raw = f"{run_dir}/raw"
    rows = [run_row(raw, blk, m) for blk in p.ext4_blocks for m in p.modes]
    by = add_ratios(rows)
    problems = problems_of(rows)
    write_json(f"{run_dir}/results.json", dict(meta, rows=rows, problems=problems))
    write_table(f"{run_dir}/table.md", table(meta, p, by, rows, problems))
    plot(by, p, meta, f"{run_dir}/fs-sqlite.png")
    print(f"results: {run_dir}/{{results.json,table.md,fs-sqlite.png}}")
