"""Atomic record updates (docs/aru.md; paper 004's journal-vs-WriteAtomic comparison, paper 000's
ARU micro-benchmark): per disk mode and record size, a client's own redo journal on the default
export (journal, flush, home, flush) against an ARU (home, flush = commit).
Input: RUN_DIR/raw/aru.jsonl (vld-bench aru) and meta.json.
Output: results.json, results.csv, table.md, aru.png in RUN_DIR.

usage: python3 -m vldbench.aru RUN_DIR --run-id ID --command CMD
"""
from .common import fmt, load_jsonl, load_run_meta, results_header, run_parser, write_csv, write_json, write_table
from .plotting import pyplot, save

MODE_ORDER = ["vld", "lld", "lld_nvram0", "inplace"]


def rows_of(lines):
    """(point rows, {mode: empty ARU us}) of vld-bench aru's lines."""
    rows, empty = [], {}
    for j in lines:
        if "empty_aru_us" in j:
            empty[j["mode"]] = j["empty_aru_us"]
            continue
        jn, a = j["journal"], j["aru"]
        rows.append({"mode": j["mode"], "geometry": j["geometry"], "record_blocks": j["record_blocks"],
                     "journal_mean_us": jn["mean_us"], "journal_p99_us": jn["p99_us"],
                     "aru_mean_us": a["mean_us"], "aru_p99_us": a["p99_us"],
                     "journal_blocks_per_record": jn["physical_blocks_per_record"],
                     "aru_blocks_per_record": a["physical_blocks_per_record"],
                     "journal_syncs_per_record": jn["syncs_per_record"],
                     "aru_syncs_per_record": a["syncs_per_record"],
                     "ratio": jn["mean_us"] / a["mean_us"], "records": a["records"]})
    order = {m: i for i, m in enumerate(MODE_ORDER)}
    rows.sort(key=lambda r: (order.get(r["mode"], 99), r["record_blocks"]))
    return rows, empty


def problems_of(rows):
    """What the comparison expects and a run did not show: where the disk has an indirection map
    (vld, lld) the ARU writes fewer blocks and syncs less than the journal. mode=inplace has
    none: its ARU is a redo journal inside the disk, and syncs twice too."""
    problems = []
    for r in rows:
        if r["mode"] == "inplace":
            continue
        if r["aru_blocks_per_record"] > r["journal_blocks_per_record"]:
            problems.append(f"{r['mode']} R={r['record_blocks']}: the ARU wrote more blocks than the journal")
        if r["aru_syncs_per_record"] >= r["journal_syncs_per_record"]:
            problems.append(f"{r['mode']} R={r['record_blocks']}: the ARU synced as often as the journal")
    return problems


def table_lines(meta, rows, empty, problems):
    lines = [results_header(meta), "",
             "Simulated µs per record updated atomically (mean; p99 in brackets), physical blocks "
             "written and syncs per record, and the ratio journal / ARU.", "",
             "| mode | blocks per record | journal µs | ARU µs | journal / ARU | blocks written (journal, ARU) "
             "| syncs (journal, ARU) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['mode']} | {r['record_blocks']} | {fmt(r['journal_mean_us'])} ({fmt(r['journal_p99_us'])}) "
                     f"| {fmt(r['aru_mean_us'])} ({fmt(r['aru_p99_us'])}) | {r['ratio']:.2f}x "
                     f"| {fmt(r['journal_blocks_per_record'], '.1f')}, {fmt(r['aru_blocks_per_record'], '.1f')} "
                     f"| {fmt(r['journal_syncs_per_record'], '.2f')}, {fmt(r['aru_syncs_per_record'], '.2f')} |")
    lines += ["", "An empty ARU's commit (a flush on an open ARU with nothing in it; paper 000's empty "
              "begin/end pair), simulated µs: " +
              ", ".join(f"{m} {fmt(empty[m], '.0f')}" for m in MODE_ORDER if m in empty) + "."]
    if problems:
        lines += ["", "Problems:"] + [f"- {p}" for p in problems]
    return lines


def plot(rows, path):
    plt = pyplot("vldbench.aru")
    if plt is None:
        return
    modes = [m for m in MODE_ORDER if any(r["mode"] == m for r in rows)]
    fig, axes = plt.subplots(1, len(modes), figsize=(4 * len(modes), 3.6), sharey=True, squeeze=False)
    for ax, m in zip(axes[0], modes):
        rs = [r for r in rows if r["mode"] == m]
        x = [r["record_blocks"] for r in rs]
        ax.plot(x, [r["journal_mean_us"] / 1e3 for r in rs], "o-", label="own redo journal")
        ax.plot(x, [r["aru_mean_us"] / 1e3 for r in rs], "s-", label="ARU")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(x, [str(v) for v in x])
        ax.set_title(f"mode={m}")
        ax.set_xlabel("blocks per record (4 KiB)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("simulated ms per atomic record update")
    axes[0][0].legend()
    save(plt, fig, path)


def main(argv=None):
    a = run_parser("vldbench.aru", "journal vs ARU per mode").parse_args(argv)
    meta = load_run_meta(a)
    rows, empty = rows_of(load_jsonl(f"{a.run_dir}/raw/aru.jsonl"))
    problems = problems_of(rows)
    write_json(f"{a.run_dir}/results.json", dict(meta, rows=rows, empty_aru_us=empty, problems=problems))
    write_csv(f"{a.run_dir}/results.csv", rows)
    write_table(f"{a.run_dir}/table.md", table_lines(meta, rows, empty, problems))
    plot(rows, f"{a.run_dir}/aru.png")


if __name__ == "__main__":
    main()
