"""Paper 001 section 5.2 at the block level: sequential and random phases on a large file,
vld against in place, and vld after compaction (docs/large-file.md).
Input: RUN_DIR/raw/*.stats.json, *.fio.json; parameters from bench-largefile's environment.
"""
import json, os, sys

from .common import fmt as fmt_or_dash
from .common import fio_job, fio_mean_us, fio_percentile_us, load_json, load_jsonl, results_header, write_csv, write_json, write_table
from .plotting import pyplot


def fmt(value, spec=".2f"):
    """VALUE formatted with SPEC (.2f unless said), or '-'."""
    return fmt_or_dash(value, spec)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    run_dir = argv[0]
    e = os.environ
    file_bytes = int(e["FILE_BYTES"])
    meta = load_json(f"{run_dir}/meta.json")
    meta.update(run_id=e["RUN_ID"], command=e["COMMAND"], geometry=e["GEOMETRY"], size=e["SIZE"],
                spare=int(e["SPARE"]), file_bytes=file_bytes, overhead_us=e["OVERHEAD_US"] or None,
                compactor_quiet_ms=int(e["COMPACT_QUIET_MS"]), compactor_policy=e["COMPACT_POLICY"],
                runs_wall_s=int(e["WALL_S"]))


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

    rows, problems = [], []
    for ph, label, kind, req in PHASES:
        for cfg, (prefix, suffix) in CONFIGS.items():
            key = f"{prefix}-{ph}-{NAMES[ph]}{suffix}"
            path = f"{run_dir}/raw/{key}.stats.json"
            if not os.path.exists(path):
                continue
            s = load_json(path)
            fio = fio_job(f"{run_dir}/raw/{key}.fio.json")
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
            if fio["error"] or s["requests"]["errors"]:
                problems.append(f"{key}: fio error {fio['error']}, plugin errors {s['requests']['errors']}")
            if nbytes != file_bytes or lat["count"] != file_bytes // req:
                problems.append(f"{key}: {nbytes} bytes in {lat['count']} requests, expected "
                                f"{file_bytes} in {file_bytes // req}")
            if lat["count"] != fio[kind]["total_ios"]:  # a stale stats file
                problems.append(f"{key}: the stats file counts {lat['count']} {kind}s, fio "
                                f"{fio[kind]['total_ios']}")
            rows.append(r)

    by = {(r["phase"], r["config"]): r for r in rows}
    for r in rows:
        ip = by.get((r["phase"], "inplace"))
        r["ratio_vs_inplace"] = r["mb_per_s"] / ip["mb_per_s"] if ip and r["mb_per_s"] else None

    poll = load_json(f"{run_dir}/raw/vld-compaction.poll.json")
    cs = load_json(f"{run_dir}/raw/vld-compaction.stats.json")
    c = cs["compactor"]
    compaction = {"settled": poll["settled"], "wall_s": poll["wall_s"], "stats_writes": poll["writes"],
                  **{k: c[k] for k in ("policy", "tracks_compacted", "tracks_abandoned", "blocks_moved",
                                       "map_sectors_moved", "steps", "idle_steps", "busy_ms",
                                       "empty_tracks", "victim")},
                  # the vld phase-4 run opened the same image bytes without compaction
                  "empty_tracks_without": by[("4", "vld")]["empty_tracks"] if ("4", "vld") in by else None,
                  "empty_tracks_with": by[("4", "vld-compacted")]["empty_tracks"]
                  if ("4", "vld-compacted") in by else None,
                  "client_requests": sum(cs["requests"][k] for k in ("read", "write", "flush"))}
    if not poll["settled"]:
        problems.append(f"compaction did not settle within the time limit ({poll['wall_s']} s)")
    if compaction["client_requests"]:
        problems.append("the compaction run served client requests")

    with open(f"{run_dir}/results.json", "w") as f:
        json.dump(dict(meta, rows=rows, compaction=compaction, problems=problems), f, indent=1)


    def cell(ph, cfg, what="mb_per_s", f=".2f"):
        r = by.get((ph, cfg))
        return fmt(r and r[what], f)


    md = [results_header(meta), "",
          f"{e['GEOMETRY']}, {e['SIZE']} export, spare={e['SPARE']}, file = first "
          f"{file_bytes >> 20} MiB, latency=none, fio QD1; MB/s = bytes / simulated busy time "
          "(10^6 bytes/s); µs = mean simulated latency per request", "",
          "| phase | in place MB/s | vld MB/s | vld / in place | in place µs/req | vld µs/req |",
          "|---|---:|---:|---:|---:|---:|"]
    for ph, label, kind, req in PHASES:
        v = by.get((ph, "vld"))
        md.append(f"| {ph} {label} | {cell(ph, 'inplace')} | {cell(ph, 'vld')} | "
                  f"{fmt(v and v['ratio_vs_inplace'])}x | {cell(ph, 'inplace', 'mean_us', '.0f')} | "
                  f"{cell(ph, 'vld', 'mean_us', '.0f')} |")
    md += ["", "Track buffer and compaction (MB/s; µs/req in parentheses)", "",
           "| phase | in place | in place, buffer off | vld | vld, buffer off | vld after compaction | "
           "vld buffer on / off |", "|---|---:|---:|---:|---:|---:|---:|"]
    for ph, label, kind, req in PHASES:
        if not any((ph, cfg) in by for cfg in ("inplace-tboff", "vld-tboff", "vld-compacted")):
            continue
        cells = [f"{cell(ph, cfg)} ({cell(ph, cfg, 'mean_us', '.0f')})" if (ph, cfg) in by else "-"
                 for cfg in CONFIGS]
        on, off = by.get((ph, "vld")), by.get((ph, "vld-tboff"))
        gain = fmt(on["mb_per_s"] / off["mb_per_s"]) + "x" if on and off else "-"
        md.append(f"| {ph} {label} | " + " | ".join(cells) + f" | {gain} |")
    md += ["", f"Compaction ({c['policy']}, compactor_quiet_ms={e['COMPACT_QUIET_MS']}): "
           f"{'settled' if poll['settled'] else 'NOT settled'} after {poll['wall_s']} s wall; "
           f"{c['tracks_compacted']} tracks emptied ({c['tracks_abandoned']} abandoned), "
           f"{c['blocks_moved']} data blocks and {c['map_sectors_moved']} map sectors moved in "
           f"{c['steps']} steps, {c['busy_ms']:.1f} ms simulated; empty tracks (phase 4 runs) "
           f"{compaction['empty_tracks_without']} without, {compaction['empty_tracks_with']} after", ""]
    md += [f"problem: {p}" for p in problems]
    open(f"{run_dir}/table.md", "w").write("\n".join(md) + "\n")
    print("\n".join(md))

    plt = pyplot("bench-largefile")
    if plt is None:
        return
    styles = {"inplace": ("in place", "tab:red", None), "inplace-tboff": ("in place, buffer off", "tab:red", "//"),
              "vld": ("vld", "tab:blue", None), "vld-tboff": ("vld, buffer off", "tab:blue", "//"),
              "vld-compacted": ("vld after compaction", "tab:green", None)}
    short = {"1": "1 seq write\n64 KiB", "2": "2 seq read\n64 KiB", "3": "3 rand write\nsync 4 KiB",
             "4": "4 seq read\n64 KiB", "4k": "4 seq read\n4 KiB", "5": "5 rand read\n4 KiB"}
    fig, ax = plt.subplots(figsize=(10, 4.2))
    width = 0.16
    labelled = set()
    for j, (ph, *_rest) in enumerate(PHASES):
        here = [cfg for cfg in CONFIGS if (ph, cfg) in by]  # centred in the group
        for k, cfg in enumerate(here):
            x, y = j + (k - (len(here) - 1) / 2) * width, by[(ph, cfg)]["mb_per_s"]
            name, color, hatch = styles[cfg]
            ax.bar(x, y, width, label=None if cfg in labelled else name, color=color, hatch=hatch,
                   alpha=0.55 if hatch else 0.9, edgecolor=color)
            labelled.add(cfg)
            ax.text(x, y, f"{y:.1f}" if y >= 10 else f"{y:.2f}", ha="center", va="bottom", fontsize=7,
                    rotation=90)
    ax.set_xticks(range(len(PHASES)))
    ax.set_xticklabels([short[p[0]] for p in PHASES], fontsize=8)
    ax.set_ylabel("MB/s (bytes / simulated busy time)")
    ax.set_title(f"Large file ({file_bytes >> 20} MiB) on a raw {e['GEOMETRY']}, QD1, "
                 "simulated (paper 001, Fig. 7)", fontsize=10)
    ax.set_ylim(0, max(r["mb_per_s"] for r in rows) * 1.18)
    ax.grid(True, axis="y", alpha=0.3)
    handles, names = ax.get_legend_handles_labels()
    order = [styles[cfg][0] for cfg in CONFIGS]
    pairs = sorted(zip(handles, names), key=lambda hn: order.index(hn[1]))
    ax.legend([h for h, _ in pairs], [n for _, n in pairs], fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{run_dir}/largefile.png", dpi=90)
    print(f"results: {run_dir}/{{results.json,table.md,largefile.png}}")


if __name__ == "__main__":
    main()
