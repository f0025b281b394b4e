"""Group commit of mode=lld's NVRAM appends (scripts/bench-group-commit): per
queue depth, random 4 KiB writes through nbdkit on an image on a real file
system (so that an fdatasync costs what it costs), and how many backing-file
syncs each write took (the stats file's backing_syncs) beside fio's IOPS.

usage: python3 -m vldbench.group_commit RUN_DIR --run-id ID --command CMD --qds "1 4 16"
  reads raw/qdN.stats.json and raw/qdN.fio.json -> results.json, results.csv, table.md
"""
import sys

from .common import fio_job, ints, load_json, load_run_meta, results_header, run_parser, write_csv, \
    write_json, write_table


def row(run_dir, qd):
    stats = load_json(f"{run_dir}/raw/qd{qd}.stats.json")
    job = fio_job(f"{run_dir}/raw/qd{qd}.fio.json")
    writes = stats["requests"]["write"]
    return {"qd": qd, "writes": writes, "backing_syncs": stats["backing_syncs"],
            "syncs_per_write": stats["backing_syncs"] / writes, "iops": job["write"]["iops"],
            "errors": stats["requests"]["errors"]}


def main(argv=None):
    ap = run_parser("vldbench.group_commit", __doc__)
    ap.add_argument("--qds", required=True, help="queue depths, e.g. \"1 4 16\"")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    meta = load_run_meta(args)
    rows = [row(args.run_dir, qd) for qd in ints(args.qds)]
    write_json(f"{args.run_dir}/results.json", {"meta": meta, "rows": rows})
    write_csv(f"{args.run_dir}/results.csv", rows)
    md = [results_header(meta), "",
          "mode=lld with NVRAM: random 4 KiB writes at each queue depth; backing-file syncs per "
          "write (the plugin's stats file) and IOPS (fio, wall time on this host).", "",
          "| QD | writes | backing syncs | syncs per write | IOPS |", "|---:|---:|---:|---:|---:|"]
    for r in rows:
        md.append(f"| {r['qd']} | {r['writes']} | {r['backing_syncs']} | {r['syncs_per_write']:.3f} | "
                  f"{r['iops']:.0f} |")
    write_table(f"{args.run_dir}/table.md", md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
