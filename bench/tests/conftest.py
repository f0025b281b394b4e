"""Fixtures: small stored outputs of real runs (bench/tests/data), copied to
a temporary directory so that a module may write its results beside them."""
import pathlib
import shutil
import sys

import pytest

DATA = pathlib.Path(__file__).parent / "data"
sys.path.insert(0, str(DATA.parent.parent))  # bench/: import vldbench


@pytest.fixture
def run_copy(tmp_path):
    """run_copy(NAME) -> a copy of data/NAME under tmp_path."""
    def copy(name):
        dst = tmp_path / name
        shutil.copytree(DATA / name, dst)
        return dst
    return copy
