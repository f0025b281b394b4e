"""Paper 001 section 5.2 at the block level: sequential and random phases on a large file,
vld against in place, and vld after compaction (docs/large-file.md).
Input: RUN_DIR/raw/*.stats.json, *.fio.json, vld-compaction.{poll,stats}.json and meta.json.
Output: results.json, table.md, largefile.png in RUN_DIR.

usage: python3 -m vldbench.largefile RUN_DIR --geometry G --size SIZE --spare N --file-bytes N
           [--overhead-us US] --compact-quiet-ms MS --compact-policy P --wall-s S --run-id ID --command CMD
"""
import os

from .common import fmt as fmt_or_dash
from .common import fio_job, load_json, load_run_meta, results_header, run_parser, write_json, write_table
from .plotting import pyplot, save

# (phase, label, kind, request bytes)
PHASES = [("1", "sequential write (64 KiB)", "write", 65536),
          ("2", "sequential read (64 KiB)", "read", 65536),
          ("3", "random write, sync (4 KiB)", "write", 4096),
          ("4", "sequential read after random write (64 KiB)", "read", 65536),
          ("4k", "sequential read after random write (4 KiB)", "read", 4096),
          ("5", "random read (4 KiB)", "read", 4096)]
NAMES = {"1": "seqwrite", "2": "seqread", "3": "randwrite", "4": "seqread", "4k": "seqread",
         "5": "randread"}
# configuration -> (raw file prefix, suffix)
CONFIGS = {"inplace": ("inplace", ""), "inplace-tboff": ("inplace", "-tboff"),
           "vld": ("vld", ""), "vld-tboff": ("vld", "-tboff"),
           "vld-compacted": ("vld-compacted", "")}
STYLES = {"inplace": ("in place", "tab:red", None), "inplace-tboff": ("in place, buffer off", "tab:red", "//"),
          "vld": ("vld", "tab:blue", None), "vld-tboff": ("vld, buffer off", "tab:blue", "//"),
          "vld-compacted": ("vld after compaction", "tab:green", None)}
SHORT = {"1": "1 seq write\n64 KiB", "2": "2 seq read\n64 KiB", "3": "3 rand write\nsync 4 KiB",
         "4": "4 seq read\n64 KiB", "4k": "4 seq read\n4 KiB", "5": "5 rand read\n4 KiB"}


def fmt(value, spec=".2f"):
    """VALUE formatted with SPEC (.2f unless said), or '-'."""
    return fmt_or_dash(value, spec)


# ---------------------------------------------------------------- loading
def load_runs(run_dir):
    """{(phase, config): (key, stats, fio job)} for each run that left a stats file."""
    runs = {}
    for ph, *_ in PHASES:
        for cfg, (prefix, suffix) in CONFIGS.items():
            key = f"{prefix}-{ph}-{NAMES[ph]}{suffix}"
            path = f"{run_dir}/raw/{key}.stats.json"
            if os.path.exists(path):
                runs[(ph, cfg)] = (key, load_json(path), fio_job(f"{run_dir}/raw/{key}.fio.json"))
    return runs


def load_compaction(run_dir):
    """(the poll's verdict, the compaction run's stats file)."""
    return (load_json(f"{run_dir}/raw/vld-compaction.poll.json"),
            load_json(f"{run_dir}/raw/vld-compaction.stats.json"))


# ---------------------------------------------------------------- computing
def phase_row(ph, label, kind, req, cfg, s, fio):
    """One run's row: MB/s over the simulated busy time, latency, the drive's counts."""
    lat = s[f"{kind}_latency_us"]
    nbytes = s["bytes_written"] if kind == "write" else s["bytes_read"]
    r = {"phase": ph, "label": label, "config": cfg, "mode": s["mode"],
         "track_buffer": not cfg.endswith("tboff"), "compacted": cfg == "vld-compacted",
         "request_bytes": req, "requests": lat["count"], "flushes": s["requests"]["flush"],
         "bytes": nbytes, "busy_us": s["busy_us"],
         "mb_per_s": nbytes / s["busy_us"] if s["busy_us"] else None,
         "mean_us": lat["mean"], "p50_us": lat["p50"], "p99_us": lat["p99"], "max_us": lat["max"],
         "flush_mean_us": s["flush_latency_us"]["mean"],
         "physical_reads": s["physical_reads"], "physical_writes": s["physical_writes"],
         "fio_errors": fio["error"]}
    if kind == "write":
        r["breakdown_us"] = s["breakdown_us"]
    if s["mode"] == "vld":
        r["empty_tracks"] = s["vld"]["empty_tracks"]
        r["map_update_us"] = s["vld"]["map_update_us"]
    return r


def phase_problems(key, r, kind, s, fio, file_bytes):
    """Errors, a run that did not move the whole file, a stale stats file."""
    problems = []
    if fio["error"] or s["requests"]["errors"]:
        problems.append(f"{key}: fio error {fio['error']}, plugin errors {s['requests']['errors']}")
    req = r["request_bytes"]
    if r["bytes"] != file_bytes or r["requests"] != file_bytes // req:
        problems.append(f"{key}: {r['bytes']} bytes in {r['requests']} requests, expected "
                        f"{file_bytes} in {file_bytes // req}")
    if r["requests"] != fio[kind]["total_ios"]:  # a stale stats file
        problems.append(f"{key}: the stats file counts {r['requests']} {kind}s, fio "
                        f"{fio[kind]['total_ios']}")
    return problems


def compute_rows(runs, file_bytes):
    """(rows in PHASES x CONFIGS order, each with its ratio to in place; problems)."""
    rows, problems = [], []
    for ph, label, kind, req in PHASES:
        for cfg in CONFIGS:
            if (ph, cfg) not in runs:
                continue
            key, s, fio = runs[(ph, cfg)]
            r = phase_row(ph, label, kind, req, cfg, s, fio)
            problems += phase_problems(key, r, kind, s, fio, file_bytes)
            rows.append(r)
    by = {(r["phase"], r["config"]): r for r in rows}
    for r in rows:
        ip = by.get((r["phase"], "inplace"))
        r["ratio_vs_inplace"] = r["mb_per_s"] / ip["mb_per_s"] if ip and r["mb_per_s"] else None
    return rows, problems


def compaction_summary(poll, cs, by):
    """What the compactor did, and the empty tracks of phase 4 without and after it."""
    c = cs["compactor"]
    return {"settled": poll["settled"], "wall_s": poll["wall_s"], "stats_writes": poll["writes"],
            **{k: c[k] for k in ("policy", "tracks_compacted", "tracks_abandoned", "blocks_moved",
                                 "map_sectors_moved", "steps", "idle_steps", "busy_ms",
                                 "empty_tracks", "victim")},
            # the vld phase-4 run opened the same image bytes without compaction
            "empty_tracks_without": by[("4", "vld")]["empty_tracks"] if ("4", "vld") in by else None,
            "empty_tracks_with": by[("4", "vld-compacted")]["empty_tracks"]
            if ("4", "vld-compacted") in by else None,
            "client_requests": sum(cs["requests"][k] for k in ("read", "write", "flush"))}


def compaction_problems(compaction):
    problems = []
    if not compaction["settled"]:
        problems.append(f"compaction did not settle within the time limit ({compaction['wall_s']} s)")
    if compaction["client_requests"]:
        problems.append("the compaction run served client requests")
    return problems


# ---------------------------------------------------------------- table.md
def cell(by, ph, cfg, what="mb_per_s", f=".2f"):
    r = by.get((ph, cfg))
    return fmt(r and r[what], f)


def phase_table(by):
    md = ["| phase | in place MB/s | vld MB/s | vld / in place | in place µs/req | vld µs/req |",
          "|---|---:|---:|---:|---:|---:|"]
    for ph, label, *_ in PHASES:
        v = by.get((ph, "vld"))
        md.append(f"| {ph} {label} | {cell(by, ph, 'inplace')} | {cell(by, ph, 'vld')} | "
                  f"{fmt(v and v['ratio_vs_inplace'])}x | {cell(by, ph, 'inplace', 'mean_us', '.0f')} | "
                  f"{cell(by, ph, 'vld', 'mean_us', '.0f')} |")
    return md


def buffer_table(by):
    md = ["", "Track buffer and compaction (MB/s; µs/req in parentheses)", "",
          "| phase | in place | in place, buffer off | vld | vld, buffer off | vld after compaction | "
          "vld buffer on / off |", "|---|---:|---:|---:|---:|---:|---:|"]
    for ph, label, *_ in PHASES:
        if not any((ph, cfg) in by for cfg in ("inplace-tboff", "vld-tboff", "vld-compacted")):
            continue
        cells = [f"{cell(by, ph, cfg)} ({cell(by, ph, cfg, 'mean_us', '.0f')})" if (ph, cfg) in by else "-"
                 for cfg in CONFIGS]
        on, off = by.get((ph, "vld")), by.get((ph, "vld-tboff"))
        gain = fmt(on["mb_per_s"] / off["mb_per_s"]) + "x" if on and off else "-"
        md.append(f"| {ph} {label} | " + " | ".join(cells) + f" | {gain} |")
    return md


def table_lines(meta, by, compaction, problems):
    """table.md: the phases, the track buffer and compaction, the compactor's work."""
    c = compaction
    md = [results_header(meta), "",
          f"{meta['geometry']}, {meta['size']} export, spare={meta['spare']}, file = first "
          f"{meta['file_bytes'] >> 20} MiB, latency=none, fio QD1; MB/s = bytes / simulated busy time "
          "(10^6 bytes/s); µs = mean simulated latency per request", ""]
    md += phase_table(by) + buffer_table(by)
    md += ["", f"Compaction ({c['policy']}, compactor_quiet_ms={meta['compactor_quiet_ms']}): "
           f"{'settled' if c['settled'] else 'NOT settled'} after {c['wall_s']} s wall; "
           f"{c['tracks_compacted']} tracks emptied ({c['tracks_abandoned']} abandoned), "
           f"{c['blocks_moved']} data blocks and {c['map_sectors_moved']} map sectors moved in "
           f"{c['steps']} steps, {c['busy_ms']:.1f} ms simulated; empty tracks (phase 4 runs) "
           f"{c['empty_tracks_without']} without, {c['empty_tracks_with']} after", ""]
    return md + [f"problem: {p}" for p in problems]


def compaction_line(poll, stats):
    """bench-largefile's progress line after the compaction run."""
    s = stats["compactor"]
    return (" %s after %.1f s: %d tracks emptied, %d blocks and %d map sectors moved in %d steps;"
            % ("settled" if poll["settled"] else "NOT SETTLED", poll["wall_s"], s["tracks_compacted"],
               s["blocks_moved"], s["map_sectors_moved"], s["steps"]))


# ---------------------------------------------------------------- the plot
def plot(rows, by, meta, path):
    """MB/s per phase, one bar per configuration that ran it."""
    plt = pyplot("bench-largefile")
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(10, 4.2))
    width = 0.16
    labelled = set()
    for j, (ph, *_rest) in enumerate(PHASES):
        here = [cfg for cfg in CONFIGS if (ph, cfg) in by]  # centred in the group
        for k, cfg in enumerate(here):
            x, y = j + (k - (len(here) - 1) / 2) * width, by[(ph, cfg)]["mb_per_s"]
            name, color, hatch = STYLES[cfg]
            ax.bar(x, y, width, label=None if cfg in labelled else name, color=color, hatch=hatch,
                   alpha=0.55 if hatch else 0.9, edgecolor=color)
            labelled.add(cfg)
            ax.text(x, y, f"{y:.1f}" if y >= 10 else f"{y:.2f}", ha="center", va="bottom", fontsize=7,
                    rotation=90)
    ax.set_xticks(range(len(PHASES)))
    ax.set_xticklabels([SHORT[p[0]] for p in PHASES], fontsize=8)
    ax.set_ylabel("MB/s (bytes / simulated busy time)")
    ax.set_title(f"Large file ({meta['file_bytes'] >> 20} MiB) on a raw {meta['geometry']}, QD1, "
                 "simulated (paper 001, Fig. 7)", fontsize=10)
    ax.set_ylim(0, max(r["mb_per_s"] for r in rows) * 1.18)
    ax.grid(True, axis="y", alpha=0.3)
    handles, names = ax.get_legend_handles_labels()
    order = [STYLES[cfg][0] for cfg in CONFIGS]
    pairs = sorted(zip(handles, names), key=lambda hn: order.index(hn[1]))
    ax.legend([h for h, _ in pairs], [n for _, n in pairs], fontsize=8)
    save(plt, fig, path)


def parse_args(argv):
    ap = run_parser("vldbench.largefile", "Section 5.2 at the block level: a large file's phases")
    ap.add_argument("--geometry", required=True)
    ap.add_argument("--size", required=True, help="the export's size, as given to the plugin")
    ap.add_argument("--spare", type=int, required=True)
    ap.add_argument("--file-bytes", type=int, required=True)
    ap.add_argument("--overhead-us", default="", help="the plugin's overhead_us, if set")
    ap.add_argument("--compact-quiet-ms", type=int, required=True)
    ap.add_argument("--compact-policy", required=True)
    ap.add_argument("--wall-s", type=int, required=True, help="wall time of the runs")
    return ap.parse_args(argv)


def main(argv=None):
    a = parse_args(argv)
    meta = load_run_meta(a, geometry=a.geometry, size=a.size, spare=a.spare,
                file_bytes=a.file_bytes, overhead_us=a.overhead_us or None,
                compactor_quiet_ms=a.compact_quiet_ms, compactor_policy=a.compact_policy,
                runs_wall_s=a.wall_s)
    rows, problems = compute_rows(load_runs(a.run_dir), a.file_bytes)
    by = {(r["phase"], r["config"]): r for r in rows}
    compaction = compaction_summary(*load_compaction(a.run_dir), by)
    problems += compaction_problems(compaction)
    write_json(f"{a.run_dir}/results.json", dict(meta, rows=rows, compaction=compaction, problems=problems))
    write_table(f"{a.run_dir}/table.md", table_lines(meta, by, compaction, problems))
    plot(rows, by, meta, f"{a.run_dir}/largefile.png")
    print(f"results: {a.run_dir}/{{results.json,table.md,largefile.png}}")


if __name__ == "__main__":
    main()
