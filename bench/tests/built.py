"""The build's tools, for tests that run them: $VLD_BENCH, else build/ then
build-dev/ of this clone (scripts/build makes build/)."""
import os
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]


def vld_bench():
    """vld-bench's path, or None if none is built."""
    env = os.environ.get("VLD_BENCH")
    if env:
        return env
    for build in ("build", "build-dev"):
        p = REPO / build / "tools" / "vld-bench"
        if p.exists():
            return str(p)
    return None
