"""Command queueing (sched=): random 4 KiB writes and reads at queue depth 1, 4 and 16,
the drive ordering its queue by fifo or sptf, per disk mode. IOPS (simulated), mean and p99
latency (queueing included), and the gain sptf / fifo.
Input: RUN_DIR/raw/qd.jsonl (vld-bench qd) and meta.json.
Output: results.json, results.csv, table.md, qd.png in RUN_DIR.

usage: python3 -m vldbench.qd RUN_DIR --run-id ID --command CMD
"""
from .common import fmt, load_jsonl, load_run_meta, results_header, run_parser, write_csv, write_json, write_table
from .plotting import pyplot, save

MODE_ORDER = ["inplace", "vld"]
RW_ORDER = ["write", "read"]
# The target: mode=inplace random writes, sptf at queue depth 16 at least twice fifo's IOPS.
TARGET = ("inplace", "write", 16, 2.0)


def rows_of(lines):
    """One row per (mode, rw, qd): both policies side by side, and the gain sptf / fifo."""
    points = {}
    for j in lines:
        key = (j["mode"], j["rw"], j["qd"])
        points.setdefault(key, {})[j["policy"]] = j
    rows = []
    for (mode, rw, qd), by in points.items():
        row = {"mode": mode, "rw": rw, "qd": qd}
        for p in ("fifo", "sptf"):
            j = by.get(p, {})
            row[f"{p}_iops"] = j.get("iops")
            row[f"{p}_mean_us"] = j.get("mean_us")
            row[f"{p}_p99_us"] = j.get("p99_us")
        row["sptf_reordered"] = by.get("sptf", {}).get("reordered")
        f, s = row["fifo_iops"], row["sptf_iops"]
        row["gain"] = s / f if f and s is not None else None
        rows.append(row)
    mo = {m: i for i, m in enumerate(MODE_ORDER)}
    ro = {r: i for i, r in enumerate(RW_ORDER)}
    rows.sort(key=lambda r: (mo.get(r["mode"], 99), ro.get(r["rw"], 99), r["qd"]))
    return rows


def problems_of(rows):
    """The target missed (or not measured), and sptf slower than fifo anywhere (it should never
    lose much: with nothing to choose between, at queue depth 1, it is fifo)."""
    mode, rw, qd, gain = TARGET
    problems = []
    hit = [r for r in rows if (r["mode"], r["rw"], r["qd"]) == (mode, rw, qd)]
    if not hit or hit[0]["gain"] is None:
        problems.append(f"{mode} {rw} QD{qd}: not measured with both policies")
    elif hit[0]["gain"] < gain:
        problems.append(f"{mode} {rw} QD{qd}: sptf {hit[0]['gain']:.2f}x fifo's IOPS, target {gain:.0f}x")
    for r in rows:
        if r["gain"] is not None and r["gain"] < 0.95:
            problems.append(f"{r['mode']} {r['rw']} QD{r['qd']}: sptf {r['gain']:.2f}x fifo's IOPS")
    return problems


def table_lines(meta, rows, problems):
    lines = [results_header(meta), "",
             "Simulated IOPS, and latency from arrival to completion (queueing included) in µs: "
             "mean (p99).", "",
             "| mode | rw | QD | fifo IOPS | sptf IOPS | sptf / fifo | fifo µs | sptf µs |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        gain = f"{r['gain']:.2f}x" if r["gain"] is not None else "-"
        lines.append(f"| {r['mode']} | {r['rw']} | {r['qd']} | {fmt(r['fifo_iops'])} | {fmt(r['sptf_iops'])} "
                     f"| {gain} | {fmt(r['fifo_mean_us'])} ({fmt(r['fifo_p99_us'])}) "
                     f"| {fmt(r['sptf_mean_us'])} ({fmt(r['sptf_p99_us'])}) |")
    if problems:
        lines += ["", "Problems:"] + [f"- {p}" for p in problems]
    return lines


def plot(rows, path):
    plt = pyplot("vldbench.qd")
    if plt is None:
        return
    panels = [(m, rw) for m in MODE_ORDER for rw in RW_ORDER if any(r["mode"] == m and r["rw"] == rw for r in rows)]
    if not panels:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 3.4), squeeze=False)
    for ax, (m, rw) in zip(axes[0], panels):
        rs = [r for r in rows if r["mode"] == m and r["rw"] == rw]
        x = [r["qd"] for r in rs]
        for p, marker in (("fifo", "o-"), ("sptf", "s-")):
            ax.plot(x, [r[f"{p}_iops"] or 0 for r in rs], marker, label=p)
        ax.set_xscale("log", base=2)
        ax.set_xticks(x, [str(v) for v in x])
        ax.set_ylim(bottom=0)
        ax.set_title(f"mode={m}, random 4 KiB {rw}s")
        ax.set_xlabel("queue depth")
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("simulated IOPS")
    axes[0][0].legend()
    save(plt, fig, path)


def main(argv=None):
    a = run_parser("vldbench.qd", "queue depth, fifo vs sptf").parse_args(argv)
    meta = load_run_meta(a)
    rows = rows_of(load_jsonl(f"{a.run_dir}/raw/qd.jsonl"))
    problems = problems_of(rows)
    write_json(f"{a.run_dir}/results.json", dict(meta, rows=rows, problems=problems))
    write_csv(f"{a.run_dir}/results.csv", rows)
    write_table(f"{a.run_dir}/table.md", table_lines(meta, rows, problems))
    plot(rows, f"{a.run_dir}/qd.png")


if __name__ == "__main__":
    main()
