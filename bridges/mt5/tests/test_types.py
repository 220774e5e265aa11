from __future__ import annotations

import os

import pytest


def test_when_the_bridge_is_type_checked_strictly_then_mypy_finds_nothing() -> None:
    api = pytest.importorskip("mypy.api", reason="mypy is installed by scripts/ensure-python.sh for make test")
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    stdout, stderr, status = api.run(["--config-file", os.path.join(root, "pyproject.toml"), "--no-incremental", "--cache-dir", os.devnull,
                                      os.path.join(root, "src")])
    assert status == 0, stdout + stderr
