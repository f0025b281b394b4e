"""What a vld-compare run left in its directory, loaded for the report.

A run's directory (DIR/runs/WORKLOAD/PRESET/MODE, see jobs.py) holds
`summary.json` (`vld-bench replay`'s one line of stdout, keys in
vld-bench's --help and /docs/compare.md), `stats.json` and its time series
`stats.json.jsonl` (the plugin's stats-file schema, docs/stats.md), and
`stderr.txt` (what the run printed on stderr). A run is "ok" when it has a
summary, "failed" when it has none and said why on stderr, "missing" when
it has neither (not run yet, or still running).

Histograms: every `histogram` is the fixed log-linear scheme the file's
`histogram_scheme` names (docs/stats.md, "Histograms"); bucket_bounds()
computes a bucket's bounds from the scheme, so a histogram is checked
against it and one given as [index, count] pairs is read too.

Nothing here draws or writes; the functions are pure but for load_run.
"""
import json
import os

from vldplot import stats as vldstats

OK, FAILED, MISSING = "ok", "failed", "missing"
# The parts of a write's mean time the report stacks, bottom to top:
# paper 001's Figure 9 (breakdown_us) and mode=lld's NVRAM copy (nvram_us).
PARTS = ("overhead", "seek", "head_switch", "rotation", "transfer", "nvram")
# The latency objects the report reads, by the name it gives them.
OPS = {"write": "write_latency_us", "read": "read_latency_us", "flush": "flush_latency_us"}


class Run:
    """One (workload, preset, mode) job's results: `status` (OK, FAILED,
    MISSING), `summary` (dict, {} unless OK), `stats` (a vldplot Run, or
    None without a stats file), `error` (the one line that says why it
    failed, or "")."""

    def __init__(self, run_dir, mode, status, summary=None, stats=None, error=""):
        self.dir = run_dir
        self.mode = mode
        self.status = status
        self.summary = summary or {}
        self.stats = stats
        self.error = error


def _read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def last_line(text):
    """The last non-empty line of a program's stderr: vld-bench's one-line
    error is its last line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def load_run(run_dir, mode):
    """The Run in run_dir. A summary that is not one JSON object makes the
    run FAILED, with that said as its error."""
    summary_path = os.path.join(run_dir, "summary.json")
    error = last_line(_read_text(os.path.join(run_dir, "stderr.txt")))
    if not os.path.exists(summary_path):
        return Run(run_dir, mode, FAILED if error else MISSING, error=error)
    try:
        with open(summary_path, encoding="utf-8") as f:
            summary = json.load(f)
        if not isinstance(summary, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as e:
        return Run(run_dir, mode, FAILED, error=f"{summary_path}: unreadable summary ({e})")
    stats_path = os.path.join(run_dir, "stats.json")
    stats = None
    if os.path.exists(stats_path):
        try:
            stats = vldstats.load_run(stats_path, label=mode)
        except (OSError, ValueError) as e:
            return Run(run_dir, mode, FAILED, summary, error=f"{stats_path}: {e}")
    return Run(run_dir, mode, OK, summary, stats, error)


# ---- histograms (docs/stats.md, "Histograms") ----

def check_scheme(scheme):
    """(sub_buckets, linear_below_us) of a histogram_scheme; ValueError for
    a scheme this reader does not know (not microseconds, or not the
    log-linear shape whose linear part is two powers of sub-buckets)."""
    if not isinstance(scheme, dict) or scheme.get("unit") != "us":
        raise ValueError(f"histogram_scheme {scheme!r}: not in microseconds")
    sub, linear = scheme.get("sub_buckets"), scheme.get("linear_below_us")
    if not isinstance(sub, int) or sub < 2 or sub & (sub - 1) or linear != 2 * sub:
        raise ValueError(f"histogram_scheme {scheme!r}: an unknown bucket scheme")
    return sub, linear


def bucket_bounds(index, scheme):
    """[low_us, high_us) of bucket `index`: 1 us wide below linear_below_us,
    then sub_buckets buckets per power of two."""
    sub, linear = check_scheme(scheme)
    if index < linear:
        return index, index + 1
    k = index - linear
    shift = (linear.bit_length() - 1) + k // sub - sub.bit_length() + 1  # e - log2(sub)
    m = sub + k % sub
    return m << shift, (m + 1) << shift


def bucket_index(us, scheme):
    """The bucket holding a sample of `us` whole microseconds."""
    sub, linear = check_scheme(scheme)
    u = max(int(us), 0)
    if u < linear:
        return u
    e = u.bit_length() - 1
    log_sub = sub.bit_length() - 1
    m = u >> (e - log_sub)
    return sub * (e - log_sub + 1) + m - sub


def normalise_histogram(histogram, scheme):
    """[[low_us, high_us, count], ...] from a histogram of such triples
    (each checked against the scheme) or of [index, count] pairs."""
    out = []
    for entry in histogram:
        if len(entry) == 2:
            low, high = bucket_bounds(int(entry[0]), scheme)
            out.append([low, high, entry[1]])
            continue
        low, high, n = entry
        if (low, high) != bucket_bounds(bucket_index(low, scheme), scheme):
            raise ValueError(f"bucket [{low}, {high}) is not one of histogram_scheme's")
        out.append([low, high, n])
    return out


def merge_histograms(histograms):
    """Histograms of one scheme added bucket by bucket, lowest first."""
    buckets = {}
    for hist in histograms:
        for low, high, n in hist:
            buckets[(low, high)] = buckets.get((low, high), 0) + n
    return [[low, high, n] for (low, high), n in sorted(buckets.items()) if n]


def cdf_points(histogram):
    """(x_us, fraction) of the CDF: 0 at the first bucket's low bound, then
    at each bucket's high bound the share of samples below it."""
    total = sum(n for _, _, n in histogram)
    if total == 0:
        return []
    points, seen = [(histogram[0][0], 0.0)], 0
    for _, high, n in histogram:
        seen += n
        points.append((high, seen / total))
    return points


def histogram_of(run, op):
    """The run's histogram of op ("write", "read", "flush", or "all": the
    three added), normalised; [] without a stats file."""
    if run.stats is None:
        return []
    s = run.stats.stats
    scheme = s.get("histogram_scheme")
    if scheme is None:
        raise ValueError(f"{run.stats.path}: no histogram_scheme (a stats file older than "
                         "histograms?)")
    ops = OPS.values() if op == "all" else (OPS[op],)
    return merge_histograms(normalise_histogram(s.get(key, {}).get("histogram", []), scheme)
                            for key in ops)


# ---- the table ----

def _get(d, *keys):
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def mode_section(run, section, key):
    """A counter of the mode's report (mode_report.SECTION.KEY in the
    summary, else the stats file's SECTION.KEY); None where the mode has
    no such section."""
    value = _get(run.summary, "mode_report", section, key)
    if value is None and run.stats is not None:
        value = _get(run.stats.stats, section, key)
    return value


def breakdown(run):
    """A write's mean time by part (PARTS), µs: the summary's breakdown_us
    and nvram_us, else the stats file's breakdown_us; {} if neither.
    breakdown_us counts mode=lld's copies into NVRAM as transfer (memory
    time, no mechanism: core/lld/lld_disk_impl.h), so that part is taken
    out of transfer and shown as NVRAM; the parts still add up to the
    write's mean time."""
    parts = run.summary.get("breakdown_us")
    if parts is None and run.stats is not None:
        parts = run.stats.stats.get("breakdown_us")
    if parts is None:
        return {}
    out = {p: float(parts.get(p) or 0.0) for p in PARTS if p != "nvram"}
    nvram = float(run.summary.get("nvram_us") or 0.0)
    out["nvram"] = min(nvram, out["transfer"]) if out["transfer"] else nvram
    out["transfer"] -= min(nvram, out["transfer"])
    return out


def row(run):
    """The table's numbers for one run (None where unknown)."""
    s = run.summary
    lat = s.get("latency_us", {})
    wlat = s.get("write_latency_us", {})
    return {
        "requests": s.get("requests"),
        "mean_us": lat.get("mean"), "p50_us": lat.get("p50"), "p99_us": lat.get("p99"),
        "write_mean_us": wlat.get("mean"), "write_p99_us": wlat.get("p99"),
        "iops": s.get("iops"),
        "load": (s["busy_s"] / s["trace_s"]) if s.get("busy_s") and s.get("trace_s") else None,
        "write_amplification": s.get("write_amplification"),
        "idle_steps": s.get("idle_steps"),
        "idle_busy_ms": s.get("idle_busy_ms"),
        "vld_tracks_compacted": mode_section(run, "compactor", "tracks_compacted"),
        "vld_blocks_moved": mode_section(run, "compactor", "blocks_moved"),
        "lld_segments_cleaned": mode_section(run, "lld", "segments_cleaned"),
        "lld_blocks_moved": mode_section(run, "lld", "cleaner_blocks_moved"),
    }


def ratios_to_inplace(rows):
    """{mode: mean / inplace's mean} for the rows (mode -> row) with a mean,
    when inplace has one; {} otherwise."""
    base = rows.get("inplace", {}).get("mean_us")
    if not base:
        return {}
    return {m: r["mean_us"] / base for m, r in rows.items() if r.get("mean_us") is not None}


# ---- the time series ----

def series_points(run):
    """Per interval of the run's PATH.jsonl: (start_s, end_s, mean latency
    of all requests in µs or None if it had none, mean write latency or
    None, whether the compactor or cleaner worked in it)."""
    if run.stats is None:
        return []
    points = []
    for line in run.stats.series:
        count = total = 0.0
        for key in OPS.values():
            sec = line.get(key, {})
            count += sec.get("count", 0)
            total += sec.get("mean", 0.0) * sec.get("count", 0)
        w = line.get("write_latency_us", {})
        idle = bool(line.get("idle_steps")) or bool(line.get("idle_busy_us"))
        points.append((line["sim_start_us"] / 1e6, line["sim_end_us"] / 1e6,
                       total / count if count else None,
                       w.get("mean") if w.get("count") else None, idle))
    return points
