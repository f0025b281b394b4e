"""vld-bench's refusals: one line on stderr, a nonzero exit, nothing on stdout."""
import subprocess

import pytest

from built import vld_bench

pytestmark = pytest.mark.skipif(vld_bench() is None, reason="no vld-bench built (scripts/build)")


def test_a_band_too_large_for_memory_is_refused_in_one_line():
    # 25% of the hc310 is 1.7 TB: more than half of any machine's memory here.
    r = subprocess.run([vld_bench(), "table2", "--geometry", "hc310", "--span", "0%-25%",
                        "--writes", "10"], capture_output=True, text=True)
    assert r.returncode == 1
    (line,) = r.stderr.splitlines()
    assert "vld-bench holds it in memory; choose a narrower --span or a smaller --size" in line
    assert r.stdout == ""
