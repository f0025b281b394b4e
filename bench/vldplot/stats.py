"""vld-plot's pictures of a run: the stats file and its time series
(schema: docs/stats.md), from the plugin (statsfile=, stats_interval=) or
from vld-bench --stats, which write the same keys.

Each function takes runs already loaded (load_run) and returns a matplotlib
Figure, so the tests can read what a figure says; cli.py saves it. Several
runs are drawn side by side (one colour per run, in the order given), which
is how modes are compared on one drive.
"""
import json
import os

from vldplot.canvas import new_figure

OPS = ("write", "read", "flush")
SIZE_CLASSES = ("4k", "64k", "larger")
# paper 001, Figure 9: the parts of a write's service time, bottom to top
BREAKDOWN_PARTS = ("overhead", "seek", "head_switch", "rotation", "transfer")
BREAKDOWN_COLOURS = ("#9e9e9e", "#d62728", "#ff7f0e", "#1f77b4", "#2ca02c")


class Run:
    """One disk's statistics: the stats file's object (`stats`), its time
    series (`series`, [] without a PATH.jsonl) and a label for legends."""

    def __init__(self, path, stats, series, label):
        self.path = path
        self.stats = stats
        self.series = series
        self.label = label


def default_label(stats, path):
    """vld-bench's own label, else the mode and the drive, else the file."""
    bench = stats.get("bench")
    if isinstance(bench, dict) and bench.get("label"):
        return str(bench["label"])
    if "mode" in stats and isinstance(stats.get("geometry"), dict):
        return f"{stats['mode']} on {stats['geometry'].get('name', '?')}"
    return os.path.basename(path)


def _load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a JSON stats file ({e})") from e


def load_series(path):
    """The lines of a PATH.jsonl time series, in order."""
    lines = []
    with open(path, encoding="utf-8") as f:
        for n, text in enumerate(f, 1):
            if not text.strip():
                continue
            try:
                lines.append(json.loads(text))
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}: line {n} is not JSON ({e})") from e
    return lines


def load_run(path, label=None):
    """A stats file and, if it exists, its PATH.jsonl companion. A .jsonl
    path alone is a run too (its last line's totals stand for the file).
    OSError if unreadable; ValueError (one line) if it is not a stats file."""
    if path.endswith(".jsonl"):
        series = load_series(path)
        if not series:
            raise ValueError(f"{path}: an empty time series")
        stats = {}
    else:
        stats = _load_json(path)
        if not isinstance(stats, dict) or "write_latency_us" not in stats:
            raise ValueError(f"{path}: no write_latency_us: is it a vld stats file "
                             "(statsfile= or vld-bench --stats)?")
        series = load_series(path + ".jsonl") if os.path.exists(path + ".jsonl") else []
    return Run(path, stats, series, label or default_label(stats, path))


def latency_section(run, op, size=None):
    """The latency object of op (and size class) from the stats file, or
    the time series' lines merged when there is only the series."""
    key = f"{op}_by_size_us" if size else f"{op}_latency_us"
    if run.stats:
        section = run.stats.get(key)
        if section is None:
            raise ValueError(f"{run.path}: no {key} (a stats file older than histograms?)")
        return section[size] if size else section
    return merge_latency([(ln[key][size] if size else ln[key]) for ln in run.series])


def merge_latency(sections):
    """Several intervals' latency objects as one: counts and histograms
    added bucket by bucket (one fixed scheme), the mean weighted, the max
    of maxima; percentiles are not additive and are left out."""
    buckets = {}
    count, total, peak = 0, 0.0, 0.0
    for s in sections:
        count += s["count"]
        total += s["mean"] * s["count"]
        peak = max(peak, s["max"])
        for low, high, n in s["histogram"]:
            buckets[(low, high)] = buckets.get((low, high), 0) + n
    hist = [[low, high, n] for (low, high), n in sorted(buckets.items())]
    return {"count": count, "mean": total / count if count else 0.0, "max": peak,
            "histogram": hist}


def cdf_points(histogram):
    """(x_us, fraction) steps of the CDF: at each bucket's high bound, the
    share of samples below it. [] for an empty histogram."""
    total = sum(n for _, _, n in histogram)
    if total == 0:
        return []
    xs, ys, seen = [histogram[0][0]], [0.0], 0
    for _, high, n in histogram:
        seen += n
        xs.append(high)
        ys.append(seen / total)
    return list(zip(xs, ys))


def _figure(title, nrows=1):
    """A figure of nrows panels, one above the other, on one x axis."""
    fig = new_figure(figsize=(9, 3.2 + 2.6 * nrows), layout="constrained")
    axes = fig.subplots(nrows, 1, squeeze=False, sharex=True)[:, 0]
    fig.suptitle(title)
    return fig, axes


def _what(op, size):
    return f"{op}s" + (f" of size class {size}" if size else "")


def figure_over_time(runs, op="write"):
    """Latency over time (mean and p99 per interval) above the drive's busy
    fraction and the idle work (compactor, cleaner) per interval, both
    panels on one time axis. Latency is drawn at the intervals that had
    requests of op, joined across those that had none, each a point: a
    burst between idle intervals shows."""
    with_series = [r for r in runs if r.series]
    if not with_series:
        missing = ", ".join(f"{r.path}.jsonl" for r in runs)
        raise ValueError(f"no time series to draw: no {missing} (the plugin writes PATH.jsonl "
                         "beside statsfile=PATH unless stats_interval=0; vld-bench with "
                         "--stats-interval)")
    fig, (lat, busy) = _figure(f"Simulated {op} latency over time, per interval", nrows=2)
    for i, run in enumerate(with_series):
        colour = f"C{i}"
        t_s = [ln["sim_end_us"] / 1e6 for ln in run.series]
        busy_t = [(t, ln[f"{op}_latency_us"]) for t, ln in zip(t_s, run.series)
                  if ln[f"{op}_latency_us"]["count"]]
        lat.plot([t for t, _ in busy_t], [s["mean"] for _, s in busy_t], color=colour,
                 marker=".", label=f"{run.label}: mean")
        lat.plot([t for t, _ in busy_t], [s["p99"] for _, s in busy_t], color=colour,
                 marker=".", linestyle="--", label=f"{run.label}: p99")
        span = [max(ln["sim_end_us"] - ln["sim_start_us"], 1e-9) for ln in run.series]
        busy.plot(t_s, [100 * ln["busy_us"] / d for ln, d in zip(run.series, span)],
                  color=colour, marker=".", label=f"{run.label}: requests")
        busy.plot(t_s, [100 * ln["idle_busy_us"] / d for ln, d in zip(run.series, span)],
                  color=colour, marker=".", linestyle=":", label=f"{run.label}: idle work")
    lat.set_ylabel(f"{op} latency (µs, simulated)")
    lat.set_yscale("log")
    busy.set_ylabel("drive busy (% of interval)")
    busy.set_xlabel("simulated time at the interval's end (s)")
    for ax in (lat, busy):
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", loc="best")
    return fig


def _draw_latencies(ax, runs, op, size, draw_one):
    """Calls draw_one(colour, label, histogram) for each run with requests
    of op (and size class); ValueError if none has any."""
    drawn = 0
    for i, run in enumerate(runs):
        section = latency_section(run, op, size)
        if section["histogram"]:
            draw_one(f"C{i}", f"{run.label} ({section['count']} requests)",
                     section["histogram"])
            drawn += 1
    if drawn == 0:
        raise ValueError(f"no {_what(op, size)} in any of the runs")
    ax.set_xscale("log")
    ax.set_xlabel(f"{op} latency (µs, simulated; buckets of 1/16 of a power of two)")
    ax.grid(True, alpha=0.3)


def figure_cdf(runs, op="write", size=None):
    """The latency CDF of each run, from its histogram."""
    fig, (ax,) = _figure(f"Simulated latency of {_what(op, size)}: CDF")

    def draw_one(colour, label, histogram):
        xs, ys = zip(*cdf_points(histogram))
        ax.step(xs, ys, where="post", color=colour, label=label)

    _draw_latencies(ax, runs, op, size, draw_one)
    ax.set_ylabel("fraction of requests at or below")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize="small", loc="lower right")
    return fig


def stairs(histogram):
    """(values, edges) for matplotlib's stairs(): the non-empty buckets,
    with a zero step wherever a gap of empty buckets lies between two."""
    values, edges = [], []
    for low, high, n in histogram:
        if edges and edges[-1] != low:
            values.append(0)
            edges.append(low)
        elif not edges:
            edges.append(low)
        values.append(n)
        edges.append(high)
    return values, edges


def figure_histogram(runs, op="write", size=None):
    """Each run's latency histogram, requests per bucket, as filled steps
    over a logarithmic time axis (the buckets are log-linear, so each is
    about as wide as the next on it)."""
    fig, (ax,) = _figure(f"Simulated latency of {_what(op, size)}: histogram")

    def draw_one(colour, label, histogram):
        values, edges = stairs(histogram)
        edges[0] = max(edges[0], 0.5)  # a [0, 1) bucket on a log axis
        ax.stairs(values, edges, fill=True, alpha=0.3, color=colour)
        ax.stairs(values, edges, color=colour, label=label)

    _draw_latencies(ax, runs, op, size, draw_one)
    ax.set_ylabel("requests in the bucket")
    ax.legend(fontsize="small", loc="upper right")
    return fig


def figure_breakdown(runs):
    """Paper 001's Figure 9: each run's mean write service time as stacked
    bars of overhead, seek, head switch, rotation and transfer."""
    fig, (ax,) = _figure("Where a write's time goes (mean per write, simulated; paper 001 Fig. 9)")
    labels = []
    for x, run in enumerate(runs):
        parts = run.stats.get("breakdown_us")
        if parts is None and run.series:
            parts = run.series[-1].get("breakdown_us")
        if parts is None:
            raise ValueError(f"{run.path}: no breakdown_us")
        bottom = 0.0
        for part, colour in zip(BREAKDOWN_PARTS, BREAKDOWN_COLOURS):
            v = parts.get(part, 0.0)
            ax.bar(x, v, bottom=bottom, color=colour, width=0.6,
                   label=part.replace("_", " ") if x == 0 else None)
            bottom += v
        ax.text(x, bottom, f"{bottom:.0f} µs", ha="center", va="bottom", fontsize="small")
        labels.append(run.label)
    ax.set_xticks(range(len(runs)), labels)
    ax.set_ylabel("µs per write")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left")
    return fig


# recovery.clean in words: null is mode=inplace's "cannot tell" (docs/stats.md)
CLEAN_WORDS = {True: "clean", False: "unclean", None: "clean or not: not known"}


def describe_recovery(rec):
    """The open's recovery in the keys every mode has (docs/stats.md,
    "Recovery and checksums in every mode"), one line, the same for each."""
    if not isinstance(rec, dict):
        return "recovery: not in this file"
    line = (f"recovery: {CLEAN_WORDS.get(rec.get('clean'), rec.get('clean'))}, "
            f"{rec.get('method')}, sectors read {rec.get('sectors_read')}, "
            f"{rec.get('simulated_ms', 0):.1f} ms simulated, {rec.get('wall_ms', 0):.1f} ms wall")
    return line + (f"; damage: {rec['damage']}" if rec.get("damage") else "")


def describe_checksums(s):
    """checksum_failures in words; null: the mode keeps no checksums."""
    if "checksum_failures" not in s:
        return "checksum failures: not in this file"
    n = s["checksum_failures"]
    if n is None:
        return "checksum failures: none checked (the mode keeps no checksums)"
    return f"checksum failures: {n}"


def describe(run):
    """A run's stats file as a few lines for a person (vld-plot show)."""
    s, out = run.stats, []
    g, r = s.get("geometry", {}), s.get("requests", {})
    out.append(f"{run.path}: mode={s.get('mode')} geometry={g.get('name')} "
               f"latency={s.get('latency')}")
    if g:
        out.append(f"  drive: {g['sectors_per_track']} sectors/track, "
                   f"{g['tracks_per_cylinder']} heads, {g['rpm']} rpm, "
                   f"{g['simulated_cylinders']} of {g['cylinders']} cylinders simulated")
    if r:
        out.append(f"  requests: {r['write']} writes ({r['write_fua']} FUA), {r['read']} reads, "
                   f"{r['flush']} flushes, {r['trim']} trims, {r['zero']} zeroes, "
                   f"{r['errors']} errors")
    for op in OPS:
        w = s.get(f"{op}_latency_us", {})
        if w.get("count"):
            out.append(f"  {op} latency (simulated): mean {w['mean']:.0f} us, p50 "
                       f"{w['p50']:.0f}, p99 {w['p99']:.0f}, max {w['max']:.0f} "
                       f"({w['count']} requests)")
    b = s.get("breakdown_us")
    if b and s.get("write_latency_us", {}).get("count"):
        out.append("  per write (us): " + ", ".join(
            f"{k.replace('_', ' ')} {b[k]:.0f}" for k in BREAKDOWN_PARTS))
    if "utilization" in s:
        out.append(f"  utilization {100 * s['utilization']:.1f}%, {s.get('physical_writes')} "
                   f"physical writes, {s.get('backing_syncs')} backing syncs")
    if s:
        out.append("  " + describe_recovery(s.get("recovery")))
        out.append("  " + describe_checksums(s))
    if run.series:
        n = len(run.series)
        out.append(f"  time series: {n} interval{'' if n == 1 else 's'} in {run.path}.jsonl")
    return "\n".join(out)
