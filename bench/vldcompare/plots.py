"""The report's pictures of one workload on one drive preset, every mode
in its own colour (the same colour in every picture): latency CDFs,
where a write's time goes, latency over time. Each function takes the
loaded runs (runs.Run, mode order) and returns a matplotlib Figure (Agg,
no display: vldplot.canvas), so the tests can read what it says; report.py
saves it.
"""
from vldcompare import runs as runsmod
from vldplot.canvas import new_figure

# Colours by mode, fixed so that a mode looks the same in every picture.
MODE_COLOURS = {"vld": "C0", "inplace": "C1", "lld": "C2", "lld-nvram0": "C3"}
PART_COLOURS = {"overhead": "#9e9e9e", "seek": "#d62728", "head_switch": "#ff7f0e",
                "rotation": "#1f77b4", "transfer": "#2ca02c", "nvram": "#9467bd"}
CDF_PANELS = (("write", "writes"), ("read", "reads"), ("all", "all requests"))


def colour(mode, i=0):
    return MODE_COLOURS.get(mode, f"C{4 + i}")


def figure_cdf(runs, title):
    """Three panels side by side: the CDF of write, read and all latencies
    of each run, from its stats file's histograms. A panel with no
    requests of its kind in any run says so."""
    fig = new_figure(figsize=(13, 4.2), layout="constrained")
    axes = fig.subplots(1, len(CDF_PANELS), sharey=True)
    fig.suptitle(f"{title}: latency CDF (simulated, from the stats files' histograms)")
    for ax, (op, what) in zip(axes, CDF_PANELS):
        drawn = 0
        for i, run in enumerate(runs):
            points = runsmod.cdf_points(runsmod.histogram_of(run, op))
            if not points:
                continue
            xs, ys = zip(*points)
            n = sum(b[2] for b in runsmod.histogram_of(run, op))
            ax.step(xs, ys, where="post", color=colour(run.mode, i), label=f"{run.mode} ({n})")
            drawn += 1
        ax.set_title(what)
        ax.set_xlabel("latency (µs, log scale)")
        ax.grid(True, alpha=0.3)
        if drawn:
            ax.set_xscale("log")
            ax.legend(fontsize="small", loc="lower right")
        else:
            ax.text(0.5, 0.5, f"no {what}", transform=ax.transAxes, ha="center")
    axes[0].set_ylabel("fraction of requests at or below")
    axes[0].set_ylim(0, 1.02)
    return fig


def figure_breakdown(runs, title):
    """One stacked bar per run: its mean write time split into overhead,
    seek, head switch, rotation, transfer and NVRAM (paper 001, Figure 9,
    and mode=lld's NVRAM copy)."""
    fig = new_figure(figsize=(1.8 * len(runs) + 4, 4.5), layout="constrained")
    ax = fig.subplots()
    fig.suptitle(f"{title}: where a write's time goes (mean per write, simulated)")
    labels = []
    for x, run in enumerate(runs):
        parts = runsmod.breakdown(run)
        bottom = 0.0
        for part in runsmod.PARTS:
            v = parts.get(part, 0.0)
            ax.bar(x, v, bottom=bottom, color=PART_COLOURS[part], width=0.6,
                   label=part.replace("_", " ") if x == 0 else None)
            bottom += v
        ax.text(x, bottom, f"{bottom:.0f} µs" if parts else "no breakdown", ha="center",
                va="bottom", fontsize="small")
        labels.append(run.mode)
    ax.set_xticks(range(len(runs)), labels)
    ax.set_ylabel("µs per write")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def figure_over_time(runs, title):
    """One panel per run, on one time axis: the mean latency of all
    requests and of writes per interval of its time series, the intervals
    in which the compactor or cleaner worked shaded."""
    fig = new_figure(figsize=(11, 1.9 * len(runs) + 1.4), layout="constrained")
    axes = fig.subplots(len(runs), 1, sharex=True, squeeze=False)[:, 0]
    fig.suptitle(f"{title}: mean latency per interval (shaded: the compactor or cleaner "
                 "worked)")
    for i, (ax, run) in enumerate(zip(axes, runs)):
        points = runsmod.series_points(run)
        c = colour(run.mode, i)
        for start, end, _, _, idle in points:
            if idle:
                ax.axvspan(start, end, color=c, alpha=0.15, linewidth=0)
        busy = [(end, m) for _, end, m, _, _ in points if m is not None]
        writes = [(end, w) for _, end, _, w, _ in points if w is not None]
        if busy:
            ax.plot(*zip(*busy), color=c, marker=".", label="all requests")
        if writes:
            ax.plot(*zip(*writes), color=c, marker=".", linestyle="--", label="writes")
        if busy or writes:
            ax.set_yscale("log")
            ax.legend(fontsize="small", loc="upper right")
        else:
            ax.text(0.5, 0.5, "no time series (stats.json.jsonl)", transform=ax.transAxes,
                    ha="center")
        ax.set_ylabel(f"{run.mode}\nµs")
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("simulated time at the interval's end (s)")
    return fig
