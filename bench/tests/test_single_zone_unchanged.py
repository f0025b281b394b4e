"""Single-zone drives give the same simulated results, bit for bit.

Every experiment of vld-bench runs small on the single-zone presets
(hp97560, st19101, savvio10k4) in every mode, and each simulated number, each
per-command CSV and each stats file is compared with the stored results in
data/single-zone-results.json. Host times (keys naming host or wall time) are
left out: they are the only numbers that may differ between two runs.

The stored results were written by this test with VLD_UPDATE_RESULTS=1 from
the build before drives had zones; rewrite them only for a change that is
meant to move a simulated number, and say so in docs/benchmarks.md.
Runs the build's vld-bench ($VLD_BENCH, else build/ then build-dev/)."""
import hashlib
import json
import os
import pathlib
import subprocess

import pytest

from built import vld_bench

REPO = pathlib.Path(__file__).resolve().parents[2]
RESULTS = pathlib.Path(__file__).parent / "data" / "single-zone-results.json"

SMALL = ["--size", "64M", "--spare", "25"]
BURSTS = ["--burst", "64", "--bursts", "3", "--warm-bursts", "1", "--idle-ms", "0", "50",
          "--warmup", "2000"]

# name -> vld-bench arguments. Replays also write a CSV and a stats file.
RUNS = {
    "table2-hp97560": ["table2", "--geometry", "hp97560", *SMALL, "--writes", "500"],
    "table2-st19101": ["table2", "--geometry", "st19101", *SMALL, "--writes", "500"],
    "table2-savvio10k4": ["table2", "--geometry", "savvio10k4", "--size", "256M",
                          "--spare", "25", "--writes", "500"],
    "fig11-st19101": ["fig11", "--geometry", "st19101", *SMALL, *BURSTS],
    "fig10-hp97560": ["fig10", "--geometry", "hp97560", "--size", "32M", "--spare", "25",
                      *BURSTS],
    "fig2-st19101": ["fig2", "--writes", "2000", "--threshold", "0", "50"],
    "fig2-hp97560-4k": ["fig2", "--geometry", "hp97560", "--writes", "2000", "--sectors", "8"],
    "qd-st19101": ["qd", "--size", "64M", "--modes", "inplace", "vld", "--depths", "1", "4",
                   "--requests", "300"],
    "best-case-savvio10k4": ["best-case", "--geometry", "savvio10k4", "--writes", "2000"],
    "aru-st19101": ["aru", "--size", "64M", "--records", "100", "--record-blocks", "1", "16"],
    "fill-st19101": ["fill", "--size", "32M", "--points", "3", "--flush-every", "8",
                     "--shuffled"],
    "recovery-st19101": ["recovery", "--size", "256M", "--warm", "3000",
                         "--crash-writes", "1000"],
}
for mode in ("vld", "inplace", "lld"):
    for geometry in ("hp97560", "st19101"):
        RUNS[f"replay-{mode}-{geometry}"] = [
            "replay", str(REPO / "traces" / "git-clone.log.gz"), "--mode", mode,
            "--geometry", geometry, "--size", "1G", "--util", "50"]
    RUNS[f"replay-closed-{mode}-savvio10k4"] = [
        "replay", str(REPO / "traces" / "untar.log.gz"), "--mode", mode,
        "--geometry", "savvio10k4", "--size", "1G", "--closed-loop", "--qd", "4"]



pytestmark = pytest.mark.skipif(vld_bench() is None, reason="no vld-bench built (scripts/build)")


def simulated(value):
    """The value without host times (keys that name host or wall time), and
    with the clone's own path as $REPO."""
    if isinstance(value, dict):
        return {k: simulated(v) for k, v in value.items()
                if not (k.startswith("host") or "_host_" in k or "wall" in k)}
    if isinstance(value, list):
        return [simulated(v) for v in value]
    if isinstance(value, str):
        return value.replace(str(REPO), "$REPO")
    return value


def sha256(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def run(name, tmp_path):
    args = list(RUNS[name])
    files = {}
    if args[0] == "replay":
        files = {"requests": tmp_path / f"{name}.csv", "stats": tmp_path / f"{name}.stats.json"}
        args += ["--requests", files["requests"], "--stats", files["stats"]]
    out = subprocess.run([vld_bench(), *map(str, args)], capture_output=True, text=True,
                         check=True).stdout
    result = {"lines": [simulated(json.loads(line)) for line in out.splitlines()]}
    for kind, path in files.items():
        result[kind + "_sha256"] = sha256(path)
    return result


@pytest.fixture(scope="module")
def stored():
    if os.environ.get("VLD_UPDATE_RESULTS"):
        return None
    return json.loads(RESULTS.read_text())


@pytest.fixture(scope="module", autouse=True)
def update(request):
    written = {}
    yield written
    if os.environ.get("VLD_UPDATE_RESULTS"):
        RESULTS.write_text(json.dumps(written, indent=1, sort_keys=True) + "\n")


@pytest.mark.parametrize("name", sorted(RUNS))
def test_simulated_results_unchanged(name, tmp_path, stored, update):
    result = run(name, tmp_path)
    if stored is None:
        update[name] = result
        return
    assert name in stored, f"no stored result for {name}: rerun with VLD_UPDATE_RESULTS=1"
    want = stored[name]
    assert len(result["lines"]) == len(want["lines"])
    for got_line, want_line in zip(result["lines"], want["lines"]):
        assert got_line == want_line
    for key in ("requests_sha256", "stats_sha256"):
        assert result.get(key) == want.get(key), key


def test_every_run_is_stored(stored):
    if stored is None:
        pytest.skip("writing the stored results")
    assert sorted(stored) == sorted(RUNS)
