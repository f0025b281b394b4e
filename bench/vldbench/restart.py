"""What a clean stop leaves for the next open (scripts/bench-restart): per
mode, an image filled and then updated by random synchronous writes is
stopped cleanly (SIGTERM) and served again to a client that only reads every
block. The restart should write (next to) nothing and open quickly: an lld
open no slower than a vld open of the same writes.

Subcommands (the bash script serves the image between them):
  readall URI                 read the whole export in 1 MiB reads
  report RUN_DIR --run-id ID --command CMD --modes "vld lld ..."
                              raw/MODE.{open,reopen}.stats.json (the stats
                              of the read-only restart and of the open after
                              it) and raw/MODE.changed (bytes of the image
                              the read-only restart changed) -> results.json,
                              results.csv, table.md
"""
import sys

from .common import fmt, load_json, load_run_meta, results_header, run_parser, write_csv, write_json, \
    write_table


def readall(uri):
    from .table2_nbd import connect
    h = connect(uri)
    size = h.get_size()
    for off in range(0, size, 1 << 20):
        h.pread(min(1 << 20, size - off), off)
    h.shutdown()


def row(run_dir, mode):
    """One mode's numbers: the read-only restart's open and what it changed."""
    raw = f"{run_dir}/raw/{mode}"
    opened = load_json(f"{raw}.open.stats.json")["recovery"]
    with open(f"{raw}.changed") as f:
        changed = int(f.read().split()[0])
    return {"mode": mode, "clean": opened.get("clean"), "method": opened.get("method"),
            "open_sectors_read": opened.get("sectors_read"), "open_simulated_ms": opened.get("simulated_ms"),
            "restart_bytes_changed": changed}


def table(rows):
    md = ["| mode | clean | open: sectors read | open: simulated ms | bytes the read-only restart changed |",
          "|---|---|---:|---:|---:|"]
    for r in rows:
        md.append(f"| {r['mode']} | {r['clean']} | {fmt(r['open_sectors_read'])} | "
                  f"{fmt(r['open_simulated_ms'], '.1f')} | {r['restart_bytes_changed']:,} |")
    return md


def report(argv):
    ap = run_parser("vldbench.restart report", __doc__)
    ap.add_argument("--modes", required=True, help="the modes measured, e.g. \"vld lld inplace\"")
    args = ap.parse_args(argv)
    meta = load_run_meta(args)
    rows = [row(args.run_dir, m) for m in args.modes.split()]
    write_json(f"{args.run_dir}/results.json", {"meta": meta, "rows": rows})
    write_csv(f"{args.run_dir}/results.csv", rows)
    md = [results_header(meta), "",
          "The open after a clean stop (SIGTERM) of a filled image updated by random synchronous "
          "writes, when its only client reads every block and disconnects: what the open read "
          "and cost in simulated time, and how many bytes of the image the whole restart changed "
          "(`cmp -l`).", ""]
    write_table(f"{args.run_dir}/table.md", md + table(rows))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in ("readall", "report"):
        print("usage: python3 -m vldbench.restart readall|report ... (see the module's doc)", file=sys.stderr)
        return 2
    if argv[0] == "readall":
        readall(argv[1])
    else:
        report(argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
