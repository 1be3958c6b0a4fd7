"""Where example-robot-data keeps its robots (a test dependency): shared by the tests that
compare with Pinocchio."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest


def robots_dir() -> Path:
    """The example-robot-data robots folder; an error (not a skip) if the package is missing."""
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.fail("example-robot-data is not installed (pip install example-robot-data)")
    path = Path(str(dist.locate_file("cmeel.prefix/share/example-robot-data/robots")))
    assert path.is_dir(), f"example-robot-data is installed but {path} does not exist"
    return path
