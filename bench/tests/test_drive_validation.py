"""The validated presets against DiskSim 4.0's validated models.

vld-bench drive runs the drive model alone (random 4 KiB reads and writes
one at a time, and each zone's sequential rate); data/disksim-validation.json
holds what DiskSim's own model of the same drive gives for the same
workload (its provenance is in the file and in docs/geometry.md). Targets:
mean and p90 within 5%; every zone's sequential rate within 2% of its zone
table's. Runs the build's vld-bench ($VLD_BENCH, else build/ then
build-dev/)."""
import json
import pathlib
import subprocess

import pytest

from built import vld_bench

REFERENCE = json.loads((pathlib.Path(__file__).parent / "data" /
                        "disksim-validation.json").read_text())

pytestmark = pytest.mark.skipif(vld_bench() is None, reason="no vld-bench built (scripts/build)")


def drive(geometry):
    out = subprocess.run([vld_bench(), "drive", "--geometry", geometry], capture_output=True,
                         text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("geometry", sorted(REFERENCE["drives"]))
@pytest.mark.parametrize("workload", ["random-read", "random-write"])
def test_random_4k_within_5_percent_of_disksim(geometry, workload):
    ref = REFERENCE["drives"][geometry][workload]
    (got,) = [r for r in drive(geometry) if r["workload"] == workload]
    assert got["requests"] == 10000
    for stat in ("mean", "p90"):
        ours, theirs = got[f"{stat}_us"] / 1e3, ref[stat]
        assert abs(ours / theirs - 1) <= 0.05, f"{stat}: vld {ours:.3f} ms, DiskSim {theirs:.3f} ms"


@pytest.mark.parametrize("geometry", sorted(REFERENCE["drives"]) + ["st19101", "savvio10k4", "hc310"])
@pytest.mark.parametrize("direction", ["read", "write"])
def test_sequential_rate_of_every_zone_within_2_percent_of_its_table(geometry, direction):
    zones = [r for r in drive(geometry) if r["workload"] == f"sequential-{direction}"]
    assert zones, "no zone measured"
    for z in zones:
        assert abs(z["mb_per_s"] / z["table_mb_per_s"] - 1) <= 0.02, z
    # Outer zones hold at least as many sectors per track as inner ones.
    spt = [z["sectors_per_track"] for z in zones]
    assert spt == sorted(spt, reverse=True)


def test_the_zoned_presets_have_their_disksim_zone_count():
    counts = {g: len([r for r in drive(g) if r["workload"] == "sequential-read"])
              for g in REFERENCE["drives"]}
    assert counts == {"atlas10k": 24, "cheetah9lp": 11}


# hc310 comes from a data sheet, not a validated model: what it publishes is
# the average seek (read 7.4 ms, write 8.2 ms, without command overhead),
# the average latency (4.16 ms) and, as assumed in docs/geometry.md, the
# sustained rate at the outer and inner diameter (255 and 127.5 MB/s). A
# random 4 KiB request then costs overhead + average seek + average latency
# + the transfer of 8 sectors of the middle zone.
HC310_DATASHEET = {"seek_ms": {"random-read": 7.4, "random-write": 8.2}, "latency_ms": 4.16,
                   "overhead_ms": 0.2, "od_mb_s": 255.0, "id_mb_s": 127.5}


@pytest.mark.parametrize("workload", ["random-read", "random-write"])
def test_hc310_random_4k_within_5_percent_of_its_data_sheet(workload):
    ds = HC310_DATASHEET
    (got,) = [r for r in drive("hc310") if r["workload"] == workload]
    transfer_ms = 4096 / (((ds["od_mb_s"] + ds["id_mb_s"]) / 2) * 1e3)
    sheet_ms = ds["overhead_ms"] + ds["seek_ms"][workload] + ds["latency_ms"] + transfer_ms
    assert abs(got["mean_us"] / 1e3 / sheet_ms - 1) <= 0.05, (got["mean_us"], sheet_ms)
    assert abs(got["breakdown_us"]["seek"] / 1e3 / ds["seek_ms"][workload] - 1) <= 0.05


def test_hc310_outer_and_inner_zones_stream_at_its_data_sheet_rates():
    zones = [r for r in drive("hc310") if r["workload"] == "sequential-read"]
    assert abs(zones[0]["mb_per_s"] / HC310_DATASHEET["od_mb_s"] - 1) <= 0.02, zones[0]
    assert abs(zones[-1]["mb_per_s"] / HC310_DATASHEET["id_mb_s"] - 1) <= 0.02, zones[-1]

