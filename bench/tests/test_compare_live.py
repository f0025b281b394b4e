"""vldcompare.live against a real nbdkit: the summary counts what the
workload sent. Skipped where nbdkit, fio or the plugin build is missing;
the file-system run also needs root and FUSE."""
import json
import os
import shutil

import pytest

from vldcompare import live

WHY_NOT = live.missing_tools()
needs_live = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")

RANDWRITES = 200
JOB = f"""[global]
ioengine=libaio
filename=/dev/null
[randwrite]
rw=randwrite
bs=4k
size=16M
number_ios={RANDWRITES}
fsync=1
randrepeat=1
"""


@needs_live
def test_fio_summary_counts_what_fio_did(tmp_path):
    job = tmp_path / "randwrite.fio"
    job.write_text(JOB)  # its ioengine and filename are replaced
    out = tmp_path / "run"
    summary = live.run_fio(job, "vld", "st19101", "64M", 0, out, latency="none")

    fio = json.loads((out / "fio.json").read_text())["jobs"][0]
    assert fio["write"]["total_ios"] == RANDWRITES
    assert summary["writes"] == RANDWRITES
    # fio's fsync=1 syncs after every write but the last (fio counts 199 of 200).
    assert summary["flushes"] == fio["sync"]["total_ios"] >= RANDWRITES - 1
    assert summary["reads"] == fio["read"]["total_ios"] == 0
    assert summary["requests"] == RANDWRITES + fio["sync"]["total_ios"]
    assert summary["client_bytes_written"] == RANDWRITES * 4096
    assert summary["timing"] == "live" and summary["mode"] == "vld"
    assert summary["disk"]["export_bytes"] == 64 << 20
    lat = summary["latency_us"]
    assert 0 < lat["p50"] <= lat["p99"] <= lat["max"] * 1.07
    assert summary["write_latency_us"]["mean"] > 0
    assert set(summary["breakdown_us"]) >= {"seek", "rotation", "transfer", "locate"}
    assert json.loads((out / "summary.json").read_text()) == summary


def test_mode_names():
    assert live.mode_params("lld-nvram0") == (["mode=lld", "nvram=0"], 0)
    assert live.mode_params("lld")[1] == 1 << 20
    with pytest.raises(ValueError):
        live.mode_params("ssd")


def test_merged_latency_adds_histograms():
    stats = {"read_latency_us": {"count": 1, "mean": 10, "p50": 10, "p99": 10, "max": 10,
                                 "histogram": [[10, 11, 1]]},
             "write_latency_us": {"count": 3, "mean": 100, "p50": 100, "p99": 100, "max": 101,
                                  "histogram": [[100, 104, 3]]},
             "flush_latency_us": {"count": 0}}
    lat = live.merged_latency(stats)
    assert lat["mean"] == pytest.approx(77.5)
    assert lat["max"] == 101
    assert 100 <= lat["p50"] <= 104 and 100 <= lat["p99"] <= 104


fs_ok = (os.geteuid() == 0 and os.path.exists("/dev/fuse") and shutil.which("nbdfuse")
         and shutil.which("mkfs.ext4"))


@needs_live
@pytest.mark.skipif(not fs_ok, reason="needs root, /dev/fuse, nbdfuse and mkfs.ext4")
def test_fs_run_measures_the_command(tmp_path):
    summary = live.run_fs("ext4", "dd if=/dev/zero of=f bs=4k count=16 oflag=sync status=none",
                          "vld", "st19101", "64M", 25, tmp_path / "run", latency="none")
    assert summary["experiment"] == "live-fs" and summary["disk"]["util"] == 25
    # 16 synchronous 4 KiB writes: at least their data and their flushes.
    assert summary["writes"] >= 16 and summary["flushes"] >= 16
    assert summary["client_bytes_written"] >= 16 * 4096
