"""vld-bench replay as a user meets it: one-line errors that name the file,
line and option; --skip-bad; a user's image left untouched; the same stats
twice; Ctrl-C writing what was measured. Runs the build's vld-bench
($VLD_BENCH, else build/ then build-dev/); skipped without one."""
import hashlib
import json
import pathlib
import signal
import subprocess

import pytest

from built import vld_bench

REPO = pathlib.Path(__file__).resolve().parents[2]



pytestmark = pytest.mark.skipif(vld_bench() is None, reason="no vld-bench built (scripts/build)")


def replay(*args, stdin=None):
    return subprocess.run([vld_bench(), "replay", *map(str, args)], capture_output=True,
                          text=True, input=stdin)


def fio_v3(path, lines):
    path.write_text("fio version 3 iolog\n" + "".join(f"{ln}\n" for ln in lines))
    return path


def one_line_error(r):
    assert r.returncode == 1, r
    assert r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    return r.stderr.strip()


def test_a_malformed_line_names_file_and_line_and_skip_bad_counts_it(tmp_path):
    t = fio_v3(tmp_path / "t.iolog", ["0 f write 0 4096", "10 f wirte 4096 4096",
                                      "20 f write 8192 4096"])
    err = one_line_error(replay(t, "--mode", "inplace", "--size", "16M"))
    assert err.startswith(f"vld-bench: {t}:3: 'wirte'"), err
    r = replay(t, "--mode", "inplace", "--size", "16M", "--skip-bad")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert (s["requests"], s["writes"], s["skipped_lines"]) == (2, 2, 1)


def test_a_request_beyond_the_export_names_map_and_fold_keeps_it(tmp_path):
    t = fio_v3(tmp_path / "t.iolog", ["0 f write 0 4096", "10 f write 17825792 4096"])
    err = one_line_error(replay(t, "--mode", "vld", "--size", "16M"))
    assert f"{t}:3: bytes 17825792+4096 lie beyond the export (16777216 bytes); give --map " \
           "fold or --map scale" in err, err
    for how in ("fold", "scale"):
        s = json.loads(replay(t, "--mode", "vld", "--size", "16M", "--map", how).stdout)
        assert (s["writes"], s["map"]) == (2, how)


@pytest.mark.parametrize("argv, says", [
    (["--map", "wrap"], "--map wrap: unknown; choose none, fold or scale"),
    (["--sync", "always"], "--sync always: unknown; choose writes, every=N"),
    (["--qd", "4"], "--qd 4 applies to --closed-loop only"),
    (["--mode", "lfs"], "--mode lfs: unknown; choose vld, inplace or lld"),
    (["--format", "csv"], "--format csv: unknown"),
])
def test_bad_options_are_one_line_errors(tmp_path, argv, says):
    t = fio_v3(tmp_path / "t.iolog", ["0 f write 0 4096"])
    # --sync matters only for a format without flushes: an MSR trace.
    if argv[0] == "--sync":
        t = tmp_path / "t.csv"
        t.write_text("128166372003061629,src1,0,Write,0,4096,1000\n")
    err = one_line_error(replay(t, "--size", "16M", *argv))
    assert says in err, err


def test_a_missing_trace_and_image_say_so(tmp_path):
    err = one_line_error(replay(tmp_path / "none.log"))
    assert "none.log: No such file or directory" in err, err
    t = fio_v3(tmp_path / "t.iolog", ["0 f write 0 4096"])
    err = one_line_error(replay(t, "--image", tmp_path / "none.img"))
    assert "--image" in err and "No such file or directory" in err, err


def test_the_users_image_is_never_written(tmp_path):
    t = fio_v3(tmp_path / "t.iolog", [f"{i * 100} f write {i * 4096} 4096" for i in range(50)])
    # vld-bench makes images only in memory: the plugin of the same build
    # makes one on disk.
    img = tmp_path / "disk.img"
    plugin = pathlib.Path(vld_bench()).resolve().parents[1] / "plugin" / "nbdkit-vld-plugin.so"
    if not plugin.exists():
        pytest.skip("no plugin built")
    subprocess.run(["nbdkit", "-U", "-", str(plugin), f"file={img}", "size=16M",
                    "latency=none", "--run", "true"], check=True, capture_output=True)
    before = hashlib.sha256(img.read_bytes()).hexdigest()
    r = replay(t, "--image", img, "--closed-loop")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["writes"] == 50
    assert hashlib.sha256(img.read_bytes()).hexdigest() == before


def test_two_replays_write_identical_stats(tmp_path):
    t = fio_v3(tmp_path / "t.iolog",
               [f"{i * 700} f {'write' if i % 3 else 'read'} {(i * 7919 % 4000) * 4096} 4096"
                for i in range(2000)] + ["1400000 f sync"])
    outs = []
    for k in (1, 2):
        r = replay(t, "--mode", "lld", "--size", "32M", "--util", "50",
                   "--stats", tmp_path / f"s{k}.json", "--stats-interval", "0.1")
        assert r.returncode == 0, r.stderr
        outs.append(((tmp_path / f"s{k}.json").read_bytes(),
                     (tmp_path / f"s{k}.json.jsonl").read_bytes()))
    assert outs[0] == outs[1]
    assert len(outs[0][1].splitlines()) > 1  # a time series, not one line


def sigint_caught(pid):
    """Whether the process has installed its SIGINT handler (/proc SigCgt)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("SigCgt:"):
                return int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)) != 0
    return False


def test_ctrl_c_writes_what_was_measured_and_exits_130(tmp_path):
    p = subprocess.Popen([vld_bench(), "replay", "-", "--format", "fio-v3", "--mode", "vld",
                          "--size", "16M", "--stats", str(tmp_path / "s.json")],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    p.stdin.write("fio version 3 iolog\n")
    p.stdin.flush()
    while not sigint_caught(p.pid):  # a condition, polled: the handler is set before replaying
        assert p.poll() is None, "vld-bench exited before replaying"
    p.send_signal(signal.SIGINT)
    p.stdin.write("".join(f"{i * 100} f write {i * 4096} 4096\n" for i in range(1000)))
    p.stdin.close()
    out = p.stdout.read()
    assert p.wait() == 130
    s = json.loads(out)
    assert s["interrupted"] is True
    assert s["requests"] <= 1  # the one being read when the signal came, at most
    assert json.loads((tmp_path / "s.json").read_text())["bench"]["command"] == "replay"


SHIPPED = sorted((REPO / "traces").glob("*.log.gz"))


def log_filter_counts(path):
    """Requests by kind in an nbdkit log filter trace, counted by a reader
    independent of vld-bench's (the one traces/README.md's table comes from)."""
    import gzip
    import re
    call = re.compile(r"^\S+ \S+ connection=\d+ (Read|Write|Flush|Trim|Zero) id=\d+")
    counts = {}
    with gzip.open(path, "rt") as f:
        for line in f:
            m = call.match(line)
            if m:
                counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return counts


@pytest.mark.parametrize("trace", SHIPPED, ids=[t.name for t in SHIPPED])
def test_each_shipped_trace_replays_whole_on_every_mode(trace):
    want = log_filter_counts(trace)
    for mode in ("vld", "inplace", "lld"):
        r = replay(trace, "--mode", mode, "--closed-loop")
        assert r.returncode == 0, r.stderr
        s = json.loads(r.stdout)
        got = {"Read": s["reads"], "Write": s["writes"], "Flush": s["flushes"],
               "Trim": s["trims"], "Zero": s["zeroes"]}
        assert {k: v for k, v in got.items() if v} == want, mode
        assert (s["format"], s["skipped_lines"], s["errors"]) == ("nbdkit-log", 0, {})
