"""What mode=lld's checkpoints cost as the disk grows (scripts/bench-checkpoints):
per disk size, sessions of random 4 KiB FUA writes each ended by a clean
stop, whose checkpoints write the map and usage table sectors the session
changed (appended to the slot's journal, or in place when it is full: a
fold, format_version 4; always in place, version 3) or the whole tables
(version 2, 16 bytes a block). Per 1000 writes: checkpoint sectors written
and their simulated time (the stats file's lld.checkpoint_sectors_written,
lld.checkpoint_ms); the folds (lld.checkpoint_folds; "-" from a plugin
that does not count them); and the mean simulated time of the sessions'
opens (recovery.simulated_ms), which read the journals.

usage: python3 -m vldbench.checkpoints RUN_DIR --run-id ID --command CMD --sizes "1G 4G" --rounds N
  reads raw/SIZE-ROUND.stats.json -> results.json, results.csv, table.md
"""
import sys

from .common import load_json, load_run_meta, results_header, run_parser, write_csv, write_json, write_table


def row(run_dir, size, rounds):
    """One size: the sessions' checkpoint totals per 1000 client writes."""
    sessions = [load_json(f"{run_dir}/raw/{size}-{i}.stats.json") for i in range(rounds)]
    writes = sum(s["requests"]["write"] for s in sessions)
    lld = [s["lld"] for s in sessions]
    per_k = 1000 / writes
    folds = sum(x["checkpoint_folds"] for x in lld) if all("checkpoint_folds" in x for x in lld) else None
    return {"size": size, "writes": writes, "checkpoints": sum(x["checkpoints"] for x in lld),
            "checkpoint_folds": folds,
            "checkpoint_sectors_per_1000_writes": per_k * sum(x["checkpoint_sectors_written"] for x in lld),
            "checkpoint_ms_per_1000_writes": per_k * sum(x["checkpoint_ms"] for x in lld),
            "open_ms_mean": sum(s["recovery"]["simulated_ms"] for s in sessions) / len(sessions)}


def main(argv=None):
    ap = run_parser("vldbench.checkpoints", __doc__)
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--rounds", type=int, required=True)
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    meta = load_run_meta(args)
    rows = [row(args.run_dir, s, args.rounds) for s in args.sizes.split()]
    write_json(f"{args.run_dir}/results.json", {"meta": meta, "rows": rows})
    write_csv(f"{args.run_dir}/results.csv", rows)
    md = [results_header(meta), "",
          "mode=lld, sessions of random 4 KiB FUA writes each ended by a clean stop: the "
          "checkpoints' sectors and simulated time per 1000 writes.", "",
          "| size | writes | checkpoints | folds | checkpoint sectors / 1000 writes | "
          "checkpoint ms / 1000 writes | open ms (mean) |",
          "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        folds = "-" if r["checkpoint_folds"] is None else r["checkpoint_folds"]
        md.append(f"| {r['size']} | {r['writes']} | {r['checkpoints']} | {folds} | "
                  f"{r['checkpoint_sectors_per_1000_writes']:,.0f} | {r['checkpoint_ms_per_1000_writes']:,.1f} | "
                  f"{r['open_ms_mean']:,.1f} |")
    write_table(f"{args.run_dir}/table.md", md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
