"""Figure 2 of paper 001 (section 2.3, appendix A.2): mean locate time against the track-switch
threshold, vld-bench's simulation (strict and as-built) beside models (13), (11) and a Monte Carlo.
Input: RUN_DIR/raw/GEOMETRY-SECTORS-POLICY.jsonl and meta.json.
Output: results.json, results.csv, table.md, fig2.png in RUN_DIR.

usage: python3 -m vldbench.fig2 RUN_DIR --geometries "G ..." --sectors "S ..." --mc-writes N
           --seed N --run-id ID --command CMD
"""
import json, math, random, sys

from .common import fmt as fmt_or_dash
from .common import ints, load_run_meta, results_header, run_parser, words, write_csv, write_json, write_table
from .plotting import pyplot, save

DEFAULT_THRESHOLD = 25  # the plugin's fill=75
POLICIES = ("strict", "as-built")
SIM = {"strict": "strict_mean_locate_us", "as-built": "as_built_mean_locate_us"}
KEYS = (SIM["strict"], SIM["as-built"], "model13_us", "model11_us", "mc_strict_us")


def fmt(value, spec=".1f"):
    """VALUE formatted with SPEC (.1f unless said), or '-'."""
    return fmt_or_dash(value, spec)


# ---------------------------------------------------------------- the models
def model13(n, m, s, r):
    """Paper (13) = (5); None where eps is undefined (8 - n/96 <= 0)."""
    if 8 - n / 96 <= 0 or n - m <= 0:
        return None
    p = 1 + n / 36
    # (n-m-0.5)^(p+2) / n^p, in logs: n^p overflows nothing here, but be safe
    eps = math.exp((p + 2) * math.log(n - m - 0.5) - p * math.log(n)) / ((8 - n / 96) * (p + 2))
    return (s + r * ((n + 1) * math.log((n + 2) / (m + 2)) - (n - m) + eps)) / (n - m)


def model11(n, m, s, r):
    """Paper (11): the un-approximated sum, random free space, no eps."""
    return (s + r * sum((n - i) / (1 + i) for i in range(m + 1, n + 1))) / (n - m)


def monte_carlo(n, m, s, r, writes, seed):
    """The model's own assumptions: a strict threshold (n-m writes per track,
    then a switch costing s to an empty track); each write arrives at a
    uniformly random slot and takes the first free slot from there on, paying
    r per occupied slot passed."""
    rnd = random.Random(seed)
    per_track = n - m
    writes = max(writes, 20 * per_track)
    total, k = 0.0, 0
    while k < writes:
        occ = bytearray(n)  # 0 free, 1 used
        total += s
        for _ in range(per_track):
            u = rnd.randrange(n)
            j = occ.find(0, u)
            if j < 0:
                j = occ.find(0)
                d = n - u + j
            else:
                d = j - u
            occ[j] = 1
            total += d * r
            k += 1
    return total / k


# ---------------------------------------------------------------- loading
def load_sims(run_dir, geos, sectors):
    """{(geometry, sectors): {threshold_pct: {policy: vld-bench line}}}."""
    sims = {}
    for g in geos:
        for S in sectors:
            by_th = sims.setdefault((g, S), {})
            for pol in POLICIES:
                for line in open(f"{run_dir}/raw/{g}-{S}-{pol}.jsonl"):
                    j = json.loads(line)
                    if j["policy"] != pol:
                        sys.exit(f"bench-fig2: raw/{g}-{S}-{pol}.jsonl reports policy {j['policy']!r}")
                    by_th.setdefault(j["threshold_pct"], {})[pol] = j
    return sims


# ---------------------------------------------------------------- computing
def point_row(g, S, th_pct, js, mc_writes, seed):
    """One threshold's row: both simulations beside the models for its n, m, s, r."""
    j = js["strict"]
    spt, sec_us, hs = j["sectors_per_track"], j["sector_us"], j["head_switch_us"]
    n = spt // S                      # slots per track
    r = S * sec_us                    # one slot's rotation
    w = min(n, max(1, math.ceil((1 - th_pct / 100) * spt / S - 1e-9)))
    m = n - w
    row = {"geometry": g, "sectors_per_write": S, "threshold_pct": th_pct,
           "fill": j["fill"], "writes": j["writes"]}
    for pol in POLICIES:
        p = pol.replace("-", "_")
        x = js[pol]
        row.update({f"{p}_mean_locate_us": x["mean_locate_us"],
                    f"{p}_track_switches": x["track_switches"],
                    f"{p}_writes_per_track": x["writes"] / max(1, x["track_switches"]),
                    f"{p}_mean_switch_us": x["mean_switch_us"]})
    row.update({
        "sectors_per_track": spt, "sector_us": sec_us, "head_switch_us": hs,
        "model_n": n, "model_m": m, "model_writes_per_track": w, "model_r_us": r,
        "model_s_us": hs,
        "model13_us": model13(n, m, hs, r), "model11_us": model11(n, m, hs, r),
        "mc_strict_us": monte_carlo(n, m, hs, r, mc_writes, seed),
        "half_sector_us": sec_us / 2,
    })
    return row


def compute_rows(sims, geos, sectors, mc_writes, seed):
    """Every (geometry, sectors, threshold) row, in that order."""
    return [point_row(g, S, th_pct, sims[(g, S)][th_pct], mc_writes, seed)
            for g in geos for S in sectors for th_pct in sorted(sims[(g, S)])]


def curve(rows, g, S):
    """The rows of one (geometry, sectors) curve, by threshold."""
    return [r for r in rows if r["geometry"] == g and r["sectors_per_write"] == S]


def best(rs, key):
    """(threshold of the minimum of KEY, the minimum, the thresholds within 2% of it)."""
    rs = [r for r in rs if r[key] is not None]
    if not rs:
        return None, None, []
    lo = min(r[key] for r in rs)
    b = min(rs, key=lambda r: (r[key], r["threshold_pct"]))
    near = [r["threshold_pct"] for r in rs if r[key] <= lo * 1.02]
    return b["threshold_pct"], lo, near


def curve_shape(rs, bs):
    """Each simulated curve's ends against its minimum, and whether it is U-shaped."""
    shape = {}
    for pol, k in SIM.items():
        lo = bs[k][1]
        left, right = rs[0][k] / lo, rs[-1][k] / lo
        interior = rs[0]["threshold_pct"] < bs[k][0] < rs[-1]["threshold_pct"]
        shape[pol] = {"left_over_min": left, "right_over_min": right,
                      "u_shaped": interior and left >= 1.1 and right >= 1.1}
    return shape


def policies_agree_from(rs):
    """From which threshold up the two policies give the same (within 0.5%), or None."""
    agree = None
    for r in reversed(rs):
        if abs(r[SIM["as-built"]] - r[SIM["strict"]]) > 0.005 * r[SIM["strict"]]:
            break
        agree = r["threshold_pct"]
    return agree


def curve_summary(g, S, rs, default_row):
    """The minima, shape and agreement of one curve (results.json's summary)."""
    bs = {k: best(rs, k) for k in KEYS}
    shape = curve_shape(rs, bs)
    d = default_row
    return {"geometry": g, "sectors_per_write": S,
            **{f"best_{p.replace('-', '_')}_threshold_pct": bs[k][0] for p, k in SIM.items()},
            **{f"best_{p.replace('-', '_')}_us": bs[k][1] for p, k in SIM.items()},
            **{f"{p.replace('-', '_')}_within_2pct": bs[k][2] for p, k in SIM.items()},
            **{f"{p.replace('-', '_')}_shape": shape[p] for p in SIM},
            "policies_agree_from_pct": policies_agree_from(rs),
            "best_model13_threshold_pct": bs["model13_us"][0],
            "best_model13_us": bs["model13_us"][1],
            "best_model11_threshold_pct": bs["model11_us"][0],
            "best_model11_us": bs["model11_us"][1],
            "best_mc_threshold_pct": bs["mc_strict_us"][0],
            "best_mc_us": bs["mc_strict_us"][1],
            "default_strict_us": d[SIM["strict"]] if d else None,
            "default_as_built_us": d[SIM["as-built"]] if d else None}


def compute_summary(rows, geos, sectors):
    """One curve_summary per (geometry, sectors) that has rows."""
    by = {(r["geometry"], r["sectors_per_write"], r["threshold_pct"]): r for r in rows}
    return [curve_summary(g, S, curve(rows, g, S), by.get((g, S, DEFAULT_THRESHOLD)))
            for g in geos for S in sectors if curve(rows, g, S)]


# ---------------------------------------------------------------- table.md
def th(x):
    return f"{x:g}"


def spans(xs, grid):
    """[50, 55, 60, 70] -> '50-60, 70' on the thresholds GRID."""
    out, run = [], []
    for x in xs:
        if run and grid.index(x) != grid.index(run[-1]) + 1:
            out.append(run)
            run = []
        run.append(x)
    if run:
        out.append(run)
    return ", ".join(th(r[0]) if len(r) == 1 else f"{th(r[0])}-{th(r[-1])}" for r in out)


def wname(S):
    return f"{S} sector{'s' if S > 1 else ''}"


def curve_table(g, S, rs):
    """One curve's heading and table, the minimum of each column in bold."""
    r0 = rs[0]
    md = [f"**{g}, {wname(S)} per write** "
          f"({r0['sectors_per_track']} sectors/track, sector {r0['sector_us']:.2f} µs, "
          f"head switch s = {r0['head_switch_us']:.0f} µs; model: n = {r0['model_n']} "
          f"{'sectors' if S == 1 else 'slots of 8 sectors'}, r = {r0['model_r_us']:.2f} µs); "
          "µs per write", "",
          "| threshold | fill | model n-m | strict locate | strict writes/track | "
          "as-built locate | as-built writes/track | switch µs | (13) | (11) | MC strict | "
          "strict - (13) |",
          "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    bs = {k: best(rs, k) for k in KEYS}

    def c(r, k):
        v = fmt(r[k])
        return f"**{v}**" if r[k] is not None and r["threshold_pct"] == bs[k][0] else v

    for r in rs:
        md.append("| " + " | ".join([
            f"{th(r['threshold_pct'])}%", f"{r['fill']:.3f}", str(r["model_writes_per_track"]),
            c(r, SIM["strict"]), f"{r['strict_writes_per_track']:.1f}",
            c(r, SIM["as-built"]), f"{r['as_built_writes_per_track']:.1f}",
            f"{r['strict_mean_switch_us']:.0f}",
            c(r, "model13_us"), c(r, "model11_us"), c(r, "mc_strict_us"),
            fmt(None if r["model13_us"] is None else r[SIM["strict"]] - r["model13_us"])]) + " |")
    if any(x["model13_us"] is None for x in rs):
        md.append("")
        md.append(f"(13) undefined: n = {r0['model_n']} gives 8 - n/96 = "
                  f"{8 - r0['model_n'] / 96:.2f} <= 0 in eps's denominator.")
    return md


def curve_line(s, rs, grid):
    """One curve's summary in a sentence (S: its curve_summary)."""
    def where(p):
        q = p.replace("-", "_")
        return (f"{th(s[f'best_{q}_threshold_pct'])}% ({s[f'best_{q}_us']:.1f} µs; "
                f"within 2%: {spans(s[f'{q}_within_2pct'], grid)})")

    st, ab, agree = s["strict_shape"], s["as_built_shape"], s["policies_agree_from_pct"]
    line = (f"{s['geometry']}, {wname(s['sectors_per_write'])}: minimum strict {where('strict')}, "
            f"as-built {where('as-built')}; "
            "model (13) " + (f"{th(s['best_model13_threshold_pct'])}% ({s['best_model13_us']:.1f} µs)"
                             if s["best_model13_threshold_pct"] is not None else "undefined")
            + f", (11) {th(s['best_model11_threshold_pct'])}% ({s['best_model11_us']:.1f} µs), MC "
            f"{th(s['best_mc_threshold_pct'])}% ({s['best_mc_us']:.1f} µs). "
            f"Strict: {th(rs[0]['threshold_pct'])}% costs {st['left_over_min']:.2f}x "
            f"the minimum, {th(rs[-1]['threshold_pct'])}% {st['right_over_min']:.2f}x"
            f" ({'U-shaped' if st['u_shaped'] else 'not U-shaped'}); as-built: "
            f"{ab['left_over_min']:.2f}x and {ab['right_over_min']:.2f}x. "
            + (f"The policies agree (within 0.5%) from {th(agree)}% up." if agree is not None
               else "The policies differ at every threshold."))
    if s["default_strict_us"] is not None:
        line += (f" At the default 25% (fill=75): strict {s['default_strict_us']:.1f} µs, "
                 f"as-built {s['default_as_built_us']:.1f} µs.")
    return line


def minima_table(summary, grid):
    """The minimum per preset, policy and write size, one row per curve."""
    md = ["**Minimum per preset, policy and write size** (threshold of the lowest mean locate; "
          "in parentheses the thresholds within 2% of it; the plugin's default is fill=75, "
          "i.e. threshold 25%)", "",
          "| preset | write | strict | as-built | model (13) | sum (11) | MC strict | strict U-shaped | "
          "at 25%: strict / as-built (µs) |",
          "|---|---|---|---|---|---|---|---|---|"]
    for s in summary:
        md.append("| " + " | ".join([
            s["geometry"], "1 sector" if s["sectors_per_write"] == 1 else f"{s['sectors_per_write']} sectors",
            f"{th(s['best_strict_threshold_pct'])}% ({spans(s['strict_within_2pct'], grid)}), "
            f"{s['best_strict_us']:.1f} µs",
            f"{th(s['best_as_built_threshold_pct'])}% ({spans(s['as_built_within_2pct'], grid)}), "
            f"{s['best_as_built_us']:.1f} µs",
            "undefined" if s["best_model13_threshold_pct"] is None
            else f"{th(s['best_model13_threshold_pct'])}%, {s['best_model13_us']:.1f} µs",
            f"{th(s['best_model11_threshold_pct'])}%, {s['best_model11_us']:.1f} µs",
            f"{th(s['best_mc_threshold_pct'])}%, {s['best_mc_us']:.1f} µs",
            "yes" if s["strict_shape"]["u_shaped"] else "no",
            "-" if s["default_strict_us"] is None
            else f"{s['default_strict_us']:.1f} / {s['default_as_built_us']:.1f}"]) + " |")
    md.append("")
    return md


def table_lines(meta, rows, summary):
    """table.md: a table and a sentence per curve, then the minima."""
    grid = sorted({r["threshold_pct"] for r in rows})
    md = [results_header(meta), ""]
    for s in summary:
        rs = curve(rows, s["geometry"], s["sectors_per_write"])
        md += curve_table(s["geometry"], s["sectors_per_write"], rs)
        md += ["", curve_line(s, rs, grid), ""]
    return md + minima_table(summary, grid)


# ---------------------------------------------------------------- the plot
def plot_curve(ax, rs):
    """Both simulations (stars at their minima), the models and the Monte Carlo."""
    from matplotlib.ticker import FuncFormatter
    x = [r["threshold_pct"] for r in rs]
    # Stars at the minima: the strict one larger, so both show where they coincide.
    for pol, color, mk, star in (("strict", "tab:green", "s", 15), ("as-built", "tab:blue", "o", 9)):
        k = SIM[pol]
        ax.plot(x, [r[k] for r in rs], mk + "-", color=color, ms=3.5, label=f"simulation, {pol}")
        b = min(rs, key=lambda r: (r[k], r["threshold_pct"]))
        ax.plot([b["threshold_pct"]], [b[k]], "*", color=color, ms=star, mec="k", mew=0.5, zorder=5)
    pts = [(r["threshold_pct"], r["model13_us"]) for r in rs if r["model13_us"] is not None]
    if pts:
        ax.plot(*zip(*pts), "--", color="tab:red", label="model (13)")
    ax.plot(x, [r["model11_us"] for r in rs], ":", color="tab:orange", lw=1.6, label="sum (11)")
    ax.plot(x, [r["mc_strict_us"] for r in rs], "x", color="tab:gray", ms=4, label="MC of the model")
    ax.axvline(DEFAULT_THRESHOLD, color="k", lw=0.6, alpha=0.4)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if f"{v:.0e}"[0] in "25" else ""))
    ax.grid(True, which="both", alpha=0.3)


def plot(rows, geos, sectors, path):
    """One panel per (write size, geometry): locate time against the threshold."""
    plt = pyplot("bench-fig2")
    if plt is None:
        return
    fig, axes = plt.subplots(len(sectors), len(geos), figsize=(3.8 * len(geos), 3.3 * len(sectors)),
                             squeeze=False)
    for col, g in enumerate(geos):
        for row_i, S in enumerate(sectors):
            ax = axes[row_i][col]
            rs = curve(rows, g, S)
            if not rs:
                ax.set_visible(False)
                continue
            plot_curve(ax, rs)
            ax.set_title(f"{g}, {wname(S)}/write", fontsize=9)
            if row_i == len(sectors) - 1:
                ax.set_xlabel("track switch threshold (% reserved free)")
            if col == 0:
                ax.set_ylabel("mean locate per write (µs, log)")
            if row_i == 0 and col == 0:
                ax.legend(fontsize=7)
    fig.suptitle("Locating free sectors while filling empty tracks (Fig. 2); star: minimum; "
                 "line: the default 25% (fill=75)", fontsize=10)
    save(plt, fig, path)


def parse_args(argv):
    ap = run_parser("vldbench.fig2", "Figure 2: locate time against the track-switch threshold")
    ap.add_argument("--geometries", type=words, required=True)
    ap.add_argument("--sectors", type=ints, required=True, help="sectors per write, e.g. '1 8'")
    ap.add_argument("--mc-writes", type=int, required=True, help="writes of the Monte Carlo")
    ap.add_argument("--seed", type=int, required=True, help="the Monte Carlo's seed")
    return ap.parse_args(argv)


def main(argv=None):
    a = parse_args(argv)
    meta = load_run_meta(a)
    rows = compute_rows(load_sims(a.run_dir, a.geometries, a.sectors), a.geometries, a.sectors,
                        a.mc_writes, a.seed)
    summary = compute_summary(rows, a.geometries, a.sectors)
    write_json(f"{a.run_dir}/results.json", dict(meta, rows=rows, summary=summary))
    write_csv(f"{a.run_dir}/results.csv", rows)
    write_table(f"{a.run_dir}/table.md", table_lines(meta, rows, summary))
    plot(rows, a.geometries, a.sectors, f"{a.run_dir}/fig2.png")
    print(f"results: {a.run_dir}/{{results.json,results.csv,table.md,fig2.png}}")


if __name__ == "__main__":
    main()
