"""Figure 2 of paper 001 (section 2.3, appendix A.2): mean locate time against the track-switch
threshold, vld-bench's simulation (strict and as-built) beside models (13), (11) and a Monte Carlo.
Input: RUN_DIR/raw/GEOMETRY-SECTORS-POLICY.jsonl; parameters from bench-fig2's environment.
"""
import csv, json, math, os, random, sys

from .common import fmt as fmt_or_dash
from .common import fio_job, fio_mean_us, fio_percentile_us, load_json, load_jsonl, results_header, write_csv, write_json, write_table
from .plotting import pyplot


def fmt(value, spec=".1f"):
    """VALUE formatted with SPEC (.1f unless said), or '-'."""
    return fmt_or_dash(value, spec)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    run_dir = argv[0]
    e = os.environ
    geos, sectors = e["GEOMETRIES"].split(), [int(x) for x in e["SECTORS"].split()]
    mc_writes, seed = int(e["MC_WRITES"]), int(e["SEED"])
    meta = load_json(f"{run_dir}/meta.json")
    meta.update(run_id=e["RUN_ID"], command=e["COMMAND"])
    DEFAULT_THRESHOLD = 25  # the plugin's fill=75


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


    POLICIES = ("strict", "as-built")
    rows = []
    for g in geos:
        for S in sectors:
            sims = {}
            for pol in POLICIES:
                for line in open(f"{run_dir}/raw/{g}-{S}-{pol}.jsonl"):
                    j = json.loads(line)
                    if j["policy"] != pol:
                        sys.exit(f"bench-fig2: raw/{g}-{S}-{pol}.jsonl reports policy {j['policy']!r}")
                    sims.setdefault(j["threshold_pct"], {})[pol] = j
            for th_pct in sorted(sims):
                js = sims[th_pct]
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
                rows.append(row)

    by = {(r["geometry"], r["sectors_per_write"], r["threshold_pct"]): r for r in rows}
    SIM = {"strict": "strict_mean_locate_us", "as-built": "as_built_mean_locate_us"}
    KEYS = (SIM["strict"], SIM["as-built"], "model13_us", "model11_us", "mc_strict_us")


    def best(rs, key):
        rs = [r for r in rs if r[key] is not None]
        if not rs:
            return None, None, []
        lo = min(r[key] for r in rs)
        b = min(rs, key=lambda r: (r[key], r["threshold_pct"]))
        near = [r["threshold_pct"] for r in rs if r[key] <= lo * 1.02]
        return b["threshold_pct"], lo, near


    def th(x):
        return f"{x:g}"


    def spans(xs):
        """[50, 55, 60, 70] -> '50-60, 70' on the THRESHOLDS grid."""
        grid = sorted({r["threshold_pct"] for r in rows})
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


    summary = []
    md = [results_header(meta), ""]
    for g in geos:
        for S in sectors:
            rs = [r for r in rows if r["geometry"] == g and r["sectors_per_write"] == S]
            if not rs:
                continue
            r0 = rs[0]
            md += [f"**{g}, {wname(S)} per write** "
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
            # The shape of each simulated curve: its ends against its minimum.
            shape = {}
            for pol, k in SIM.items():
                lo = bs[k][1]
                left, right = rs[0][k] / lo, rs[-1][k] / lo
                interior = rs[0]["threshold_pct"] < bs[k][0] < rs[-1]["threshold_pct"]
                shape[pol] = {"left_over_min": left, "right_over_min": right,
                              "u_shaped": interior and left >= 1.1 and right >= 1.1}
            # From which threshold up the two policies give the same (within 0.5%).
            agree = None
            for r in reversed(rs):
                if abs(r[SIM["as-built"]] - r[SIM["strict"]]) > 0.005 * r[SIM["strict"]]:
                    break
                agree = r["threshold_pct"]
            d = by.get((g, S, DEFAULT_THRESHOLD))

            def where(k):
                b = bs[k]
                return f"{th(b[0])}% ({b[1]:.1f} µs; within 2%: {spans(b[2])})"

            line = (f"{g}, {wname(S)}: minimum strict {where(SIM['strict'])}, as-built {where(SIM['as-built'])}; "
                    "model (13) " + (f"{th(bs['model13_us'][0])}% ({bs['model13_us'][1]:.1f} µs)"
                                     if bs["model13_us"][0] is not None else "undefined")
                    + f", (11) {th(bs['model11_us'][0])}% ({bs['model11_us'][1]:.1f} µs), MC "
                    f"{th(bs['mc_strict_us'][0])}% ({bs['mc_strict_us'][1]:.1f} µs). "
                    f"Strict: {th(rs[0]['threshold_pct'])}% costs {shape['strict']['left_over_min']:.2f}x "
                    f"the minimum, {th(rs[-1]['threshold_pct'])}% {shape['strict']['right_over_min']:.2f}x"
                    f" ({'U-shaped' if shape['strict']['u_shaped'] else 'not U-shaped'}); as-built: "
                    f"{shape['as-built']['left_over_min']:.2f}x and {shape['as-built']['right_over_min']:.2f}x. "
                    + (f"The policies agree (within 0.5%) from {th(agree)}% up." if agree is not None
                       else "The policies differ at every threshold."))
            if d:
                line += (f" At the default 25% (fill=75): strict {d[SIM['strict']]:.1f} µs, "
                         f"as-built {d[SIM['as-built']]:.1f} µs.")
            summary.append({"geometry": g, "sectors_per_write": S,
                            **{f"best_{p.replace('-', '_')}_threshold_pct": bs[k][0] for p, k in SIM.items()},
                            **{f"best_{p.replace('-', '_')}_us": bs[k][1] for p, k in SIM.items()},
                            **{f"{p.replace('-', '_')}_within_2pct": bs[k][2] for p, k in SIM.items()},
                            **{f"{p.replace('-', '_')}_shape": shape[p] for p in SIM},
                            "policies_agree_from_pct": agree,
                            "best_model13_threshold_pct": bs["model13_us"][0],
                            "best_model13_us": bs["model13_us"][1],
                            "best_model11_threshold_pct": bs["model11_us"][0],
                            "best_model11_us": bs["model11_us"][1],
                            "best_mc_threshold_pct": bs["mc_strict_us"][0],
                            "best_mc_us": bs["mc_strict_us"][1],
                            "default_strict_us": d[SIM["strict"]] if d else None,
                            "default_as_built_us": d[SIM["as-built"]] if d else None})
            md += ["", line, ""]

    md += ["**Minimum per preset, policy and write size** (threshold of the lowest mean locate; "
           "in parentheses the thresholds within 2% of it; the plugin's default is fill=75, "
           "i.e. threshold 25%)", "",
           "| preset | write | strict | as-built | model (13) | sum (11) | MC strict | strict U-shaped | "
           "at 25%: strict / as-built (µs) |",
           "|---|---|---|---|---|---|---|---|---|"]
    for s in summary:
        md.append("| " + " | ".join([
            s["geometry"], "1 sector" if s["sectors_per_write"] == 1 else f"{s['sectors_per_write']} sectors",
            f"{th(s['best_strict_threshold_pct'])}% ({spans(s['strict_within_2pct'])}), {s['best_strict_us']:.1f} µs",
            f"{th(s['best_as_built_threshold_pct'])}% ({spans(s['as_built_within_2pct'])}), {s['best_as_built_us']:.1f} µs",
            "undefined" if s["best_model13_threshold_pct"] is None
            else f"{th(s['best_model13_threshold_pct'])}%, {s['best_model13_us']:.1f} µs",
            f"{th(s['best_model11_threshold_pct'])}%, {s['best_model11_us']:.1f} µs",
            f"{th(s['best_mc_threshold_pct'])}%, {s['best_mc_us']:.1f} µs",
            "yes" if s["strict_shape"]["u_shaped"] else "no",
            "-" if s["default_strict_us"] is None
            else f"{s['default_strict_us']:.1f} / {s['default_as_built_us']:.1f}"]) + " |")
    md.append("")

    with open(f"{run_dir}/results.json", "w") as f:
        json.dump(dict(meta, rows=rows, summary=summary), f, indent=1)
    with open(f"{run_dir}/results.csv", "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
    open(f"{run_dir}/table.md", "w").write("\n".join(md) + "\n")
    print("\n".join(md))

    from matplotlib.ticker import FuncFormatter
    plt = pyplot("bench-fig2")
    if plt is None:
        return
    fig, axes = plt.subplots(len(sectors), len(geos), figsize=(3.8 * len(geos), 3.3 * len(sectors)),
                             squeeze=False)
    for col, g in enumerate(geos):
        for row_i, S in enumerate(sectors):
            ax = axes[row_i][col]
            rs = [r for r in rows if r["geometry"] == g and r["sectors_per_write"] == S]
            if not rs:
                ax.set_visible(False)
                continue
            x = [r["threshold_pct"] for r in rs]
            # Stars at the minima: the strict one larger, so both show where they coincide.
            for pol, color, mk, star in (("strict", "tab:green", "s", 15), ("as-built", "tab:blue", "o", 9)):
                k = SIM[pol]
                ax.plot(x, [r[k] for r in rs], mk + "-", color=color, ms=3.5,
                        label=f"simulation, {pol}")
                b = min(rs, key=lambda r: (r[k], r["threshold_pct"]))
                ax.plot([b["threshold_pct"]], [b[k]], "*", color=color, ms=star, mec="k", mew=0.5,
                        zorder=5)
            pts = [(r["threshold_pct"], r["model13_us"]) for r in rs if r["model13_us"] is not None]
            if pts:
                ax.plot(*zip(*pts), "--", color="tab:red", label="model (13)")
            ax.plot(x, [r["model11_us"] for r in rs], ":", color="tab:orange", lw=1.6, label="sum (11)")
            ax.plot(x, [r["mc_strict_us"] for r in rs], "x", color="tab:gray", ms=4,
                    label="MC of the model")
            ax.axvline(DEFAULT_THRESHOLD, color="k", lw=0.6, alpha=0.4)
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_formatter(FuncFormatter(
                lambda v, _: f"{v:g}" if f"{v:.0e}"[0] in "25" else ""))
            ax.set_title(f"{g}, {wname(S)}/write", fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
            if row_i == len(sectors) - 1:
                ax.set_xlabel("track switch threshold (% reserved free)")
            if col == 0:
                ax.set_ylabel("mean locate per write (µs, log)")
            if row_i == 0 and col == 0:
                ax.legend(fontsize=7)
    fig.suptitle("Locating free sectors while filling empty tracks (Fig. 2); star: minimum; "
                 "line: the default 25% (fill=75)", fontsize=10)
    fig.tight_layout()
    fig.savefig(f"{run_dir}/fig2.png", dpi=90)
    print(f"results: {run_dir}/{{results.json,results.csv,table.md,fig2.png}}")


if __name__ == "__main__":
    main()
