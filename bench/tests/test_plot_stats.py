"""vld-plot's pictures of a run (vldplot.stats): the numbers they draw,
checked by hand on small stats files written here in the schema of
docs/stats.md."""
import json

import pytest

from vldplot import stats


def latency(hist, mean=0.0, p50=0.0, p99=0.0):
    count = sum(n for _, _, n in hist)
    peak = float(hist[-1][1]) if hist else 0.0
    return {"count": count, "mean": mean, "p50": p50, "p99": p99, "max": peak,
            "histogram": hist}


EMPTY = latency([])
BY_SIZE = {"4k": EMPTY, "64k": EMPTY, "larger": EMPTY}


# Each mode's recovery as the plugin writes it: the common keys, then its own.
RECOVERY = {
    "vld": {"clean": False, "method": "record+window", "sectors_read": 5000,
            "simulated_ms": 812.3, "wall_ms": 40.5, "damage": "", "map_sectors_walked": 400},
    "lld": {"clean": True, "method": "checkpoint+roll-forward+nvram", "sectors_read": 262,
            "simulated_ms": 21.07, "wall_ms": 18.4, "damage": "", "checkpoint_generation": 3,
            "writes_rolled_forward": 0, "writes_discarded": 0, "nvram_records_replayed": 0,
            "stopped_because": "no whole write of seq 1 at segment 0 sector 0"},
    "inplace": {"clean": None, "method": "redo-journal", "sectors_read": 1,
                "simulated_ms": 6.02, "wall_ms": 0.0, "damage": "", "records_replayed": 0,
                "blocks_replayed": 0},
}


def stats_file(mode, write_hist, breakdown):
    return {"mode": mode, "latency": "none",
            "recovery": RECOVERY[mode], "checksum_failures": None if mode == "inplace" else 0,
            "geometry": {"name": "st19101", "sectors_per_track": 256,
                         "tracks_per_cylinder": 16, "rpm": 10000, "simulated_cylinders": 10,
                         "cylinders": 6962},
            "requests": {"write": sum(n for _, _, n in write_hist), "write_fua": 0, "read": 0,
                         "flush": 0, "trim": 0, "zero": 0, "errors": 0},
            "write_latency_us": latency(write_hist, mean=300.0, p50=300.0, p99=500.0),
            "read_latency_us": EMPTY, "flush_latency_us": EMPTY,
            "write_by_size_us": dict(BY_SIZE, **{"4k": latency(write_hist)}),
            "read_by_size_us": BY_SIZE,
            "breakdown_us": breakdown, "utilization": 0.5, "physical_writes": 10,
            "backing_syncs": 2}


def interval(k, write_hist, busy_us, idle_busy_us):
    return {"interval": k, "sim_start_us": (k - 1) * 1e6, "sim_end_us": k * 1e6,
            "write_latency_us": latency(write_hist, mean=200.0 * k, p99=400.0 * k),
            "read_latency_us": EMPTY, "flush_latency_us": EMPTY,
            "write_by_size_us": BY_SIZE, "read_by_size_us": BY_SIZE,
            "busy_us": busy_us, "idle_busy_us": idle_busy_us}


VLD_BREAKDOWN = {"overhead": 100, "seek": 20, "head_switch": 12, "rotation": 30, "transfer": 211}
INPLACE_BREAKDOWN = {"overhead": 100, "seek": 1500, "head_switch": 5, "rotation": 3000,
                     "transfer": 188}


@pytest.fixture
def two_runs(tmp_path):
    vld = tmp_path / "vld.json"
    vld.write_text(json.dumps(stats_file("vld", [[320, 336, 3], [512, 544, 1]], VLD_BREAKDOWN)))
    (tmp_path / "vld.json.jsonl").write_text(
        json.dumps(interval(1, [[320, 336, 2]], 250000.0, 750000.0)) + "\n" +
        json.dumps(interval(2, [[320, 336, 1], [512, 544, 1]], 500000.0, 0.0)) + "\n")
    inplace = tmp_path / "inplace.json"
    inplace.write_text(json.dumps(stats_file("inplace", [[4608, 4864, 2]], INPLACE_BREAKDOWN)))
    return [stats.load_run(str(vld)), stats.load_run(str(inplace))]


def test_cdf_steps_at_each_buckets_high_bound():
    # 3 samples in [320, 336), none in the gap, 1 in [512, 544).
    assert stats.cdf_points([[320, 336, 3], [512, 544, 1]]) == [
        (320, 0.0), (336, 0.75), (544, 1.0)]
    assert stats.cdf_points([]) == []


def test_stairs_put_a_zero_step_over_a_gap():
    values, edges = stats.stairs([[320, 336, 3], [336, 352, 2], [512, 544, 1]])
    assert values == [3, 2, 0, 1]
    assert edges == [320, 336, 352, 512, 544]


def test_merging_intervals_adds_buckets_and_weights_the_mean():
    merged = stats.merge_latency([latency([[320, 336, 2]], mean=330.0),
                                  latency([[320, 336, 1], [512, 544, 1]], mean=420.0)])
    assert merged["count"] == 4
    assert merged["histogram"] == [[320, 336, 3], [512, 544, 1]]
    assert merged["mean"] == pytest.approx((2 * 330.0 + 2 * 420.0) / 4)
    assert merged["max"] == 544.0


def test_a_run_reads_its_series_and_is_labelled_by_mode_and_drive(two_runs):
    vld, inplace = two_runs
    assert [len(r.series) for r in two_runs] == [2, 0]
    assert vld.label == "vld on st19101" and inplace.label == "inplace on st19101"


def test_a_series_alone_stands_for_its_run(tmp_path, two_runs):
    run = stats.load_run(two_runs[0].path + ".jsonl")
    assert stats.latency_section(run, "write")["histogram"] == [[320, 336, 3], [512, 544, 1]]


def test_vld_bench_label_wins(tmp_path):
    s = stats_file("vld", [[320, 336, 1]], VLD_BREAKDOWN)
    s["bench"] = {"command": "table2", "label": "mode=vld", "disk": 1}
    p = tmp_path / "t2.json"
    p.write_text(json.dumps(s))
    assert stats.load_run(str(p)).label == "mode=vld"


def test_not_a_stats_file_is_refused_in_one_line(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"schema": "vld-inspect layout 1"}')
    with pytest.raises(ValueError, match="x.json: no write_latency_us"):
        stats.load_run(str(p))
    p.write_text("{")
    with pytest.raises(ValueError, match="not a JSON stats file"):
        stats.load_run(str(p))


def legend_texts(fig):
    return [t.get_text() for ax in fig.axes if ax.get_legend()
            for t in ax.get_legend().get_texts()]


def test_cdf_and_histogram_name_each_run_and_its_count(two_runs):
    for fig in (stats.figure_cdf(two_runs), stats.figure_histogram(two_runs)):
        assert legend_texts(fig) == ["vld on st19101 (4 requests)",
                                     "inplace on st19101 (2 requests)"]
        assert "µs" in fig.axes[0].get_xlabel()


def test_a_size_class_with_no_requests_is_refused(two_runs):
    with pytest.raises(ValueError, match="no writes of size class larger"):
        stats.figure_cdf(two_runs, size="larger")


def test_breakdown_stacks_the_five_parts_to_the_mean_write(two_runs):
    fig = stats.figure_breakdown(two_runs)
    ax = fig.axes[0]
    assert legend_texts(fig) == ["overhead", "seek", "head switch", "rotation", "transfer"]
    tops = {}
    for bar in ax.patches:
        x = round(bar.get_x() + bar.get_width() / 2)
        tops[x] = max(tops.get(x, 0), bar.get_y() + bar.get_height())
    assert tops == {0: sum(VLD_BREAKDOWN.values()), 1: sum(INPLACE_BREAKDOWN.values())}
    assert [t.get_text() for t in ax.get_xticklabels()] == ["vld on st19101",
                                                             "inplace on st19101"]


def test_over_time_draws_each_interval_and_the_busy_share(two_runs):
    fig = stats.figure_over_time(two_runs)
    lat, busy = fig.axes
    mean = lat.get_lines()[0]
    assert list(mean.get_xdata()) == [1.0, 2.0]   # seconds at each interval's end
    assert list(mean.get_ydata()) == [200.0, 400.0]
    requests, idle = busy.get_lines()
    assert list(requests.get_ydata()) == [25.0, 50.0]  # busy_us / 1 s interval, in %
    assert list(idle.get_ydata()) == [75.0, 0.0]


def test_over_time_needs_a_series(two_runs):
    with pytest.raises(ValueError, match="no time series"):
        stats.figure_over_time(two_runs[1:])


def test_describe_says_what_a_person_reads(two_runs):
    text = stats.describe(two_runs[0])
    assert "mode=vld geometry=st19101" in text
    assert "write latency (simulated): mean 300 us, p50 300, p99 500, max 544 (4 requests)" in text
    assert "time series: 2 intervals" in text


def test_describe_prints_every_modes_recovery_in_one_form(tmp_path):
    lines = {}
    for mode in ("vld", "lld", "inplace"):
        path = tmp_path / f"{mode}.json"
        path.write_text(json.dumps(stats_file(mode, [[320, 336, 1]], VLD_BREAKDOWN)))
        lines[mode] = stats.describe(stats.load_run(str(path))).splitlines()
    assert ("  recovery: unclean, record+window, sectors read 5000, 812.3 ms simulated, "
            "40.5 ms wall") in lines["vld"]
    assert ("  recovery: clean, checkpoint+roll-forward+nvram, sectors read 262, "
            "21.1 ms simulated, 18.4 ms wall") in lines["lld"]
    assert ("  recovery: clean or not: not known, redo-journal, sectors read 1, "
            "6.0 ms simulated, 0.0 ms wall") in lines["inplace"]
    assert "  checksum failures: 0" in lines["vld"]
    assert "  checksum failures: 0" in lines["lld"]
    assert ("  checksum failures: none checked (the mode keeps no checksums)"
            in lines["inplace"])


def test_describe_names_damage_and_what_a_file_lacks(tmp_path):
    s = stats_file("vld", [[320, 336, 1]], VLD_BREAKDOWN)
    s["recovery"] = dict(RECOVERY["vld"], method="full-scan", damage="log record slot 0")
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(s))
    assert "; damage: log record slot 0" in stats.describe(stats.load_run(str(path)))
    del s["recovery"], s["checksum_failures"]
    path.write_text(json.dumps(s))
    text = stats.describe(stats.load_run(str(path)))
    assert "  recovery: not in this file" in text
    assert "  checksum failures: not in this file" in text


# ------------------------------------------------------------ the command line

def test_each_picture_is_a_png_and_show_prints(two_runs, tmp_path, capsys):
    from vldplot import cli
    paths = [r.path for r in two_runs]
    for name in ("latency", "cdf", "histogram", "breakdown"):
        out = tmp_path / f"{name}.png"
        assert cli.main([name, *paths, "-o", str(out)]) == 0, name
        assert out.read_bytes()[1:4] == b"PNG", name
    assert cli.main(["show", *paths]) == 0
    assert "mode=inplace geometry=st19101" in capsys.readouterr().out


def test_bad_inputs_are_one_line_and_exit_1(two_runs, tmp_path, capsys):
    from vldplot import cli
    out = str(tmp_path / "x.png")
    cases = [
        (["cdf", str(tmp_path / "missing.json"), "-o", out], "missing.json: cannot read it"),
        (["cdf", two_runs[0].path, "--op", "flush", "--size", "4k", "-o", out],
         "--size applies to reads and writes"),
        (["latency", two_runs[1].path, "-o", out], "no time series"),
        (["breakdown", two_runs[0].path, "--label", "a", "--label", "b", "-o", out],
         "2 --label for 1 stats files"),
        (["cdf", two_runs[0].path, "-o", str(tmp_path / "no" / "x.png")], "cannot create it"),
    ]
    for argv, says in cases:
        assert cli.main(argv) == 1, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and says in err, (argv, err)


def test_over_time_draws_bursts_between_empty_intervals(tmp_path):
    # A bursty run: writes in intervals 1 and 4 only. Each burst stands
    # alone between intervals with no writes; it must still be drawn.
    run = tmp_path / "bursts.json"
    run.write_text(json.dumps(stats_file("vld", [[320, 336, 4]], VLD_BREAKDOWN)))
    lines = [interval(k, [[320, 336, 2]] if k in (1, 4) else [], 1000.0, 0.0)
             for k in range(1, 6)]
    (tmp_path / "bursts.json.jsonl").write_text("".join(json.dumps(ln) + "\n" for ln in lines))
    fig = stats.figure_over_time([stats.load_run(str(run))])
    lat, busy = fig.axes
    mean = lat.get_lines()[0]
    assert list(mean.get_xdata()) == [1.0, 4.0]
    assert mean.get_marker() not in (None, "", "None")   # a lone point shows
    assert all(ln.get_marker() not in (None, "", "None") for ln in busy.get_lines())


def test_over_time_panels_share_their_time_axis(two_runs):
    lat, busy = stats.figure_over_time(two_runs).axes
    assert lat.get_shared_x_axes().joined(lat, busy)
    assert lat.get_xlim() == busy.get_xlim()


def test_a_run_without_series_says_how_to_get_one(two_runs):
    with pytest.raises(ValueError) as e:
        stats.figure_over_time(two_runs[1:])
    says = str(e.value)
    assert "inplace.json.jsonl" in says and "stats_interval=0" in says
    assert "run with stats_interval=" not in says
