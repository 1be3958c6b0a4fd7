"""Fixtures of the viewer tests: viser, one headless Chromium for the session, free ports,
and the ROS test helpers (test/ros) for the tests that run sim_node.

Without viser the tests skip (pip install 'mb_sim[viewer]'); without Debian's chromium the
browser tests skip (`make test` installs it when it may: tools/install_chromium.sh).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ros"))

from browser import Browser, chromium_path
from ros_helpers import keep_dds_on_this_machine
from viewer_helpers import HEIGHT, WIDTH

keep_dds_on_this_machine()


@pytest.fixture(scope="session")
def viser_installed() -> None:
    pytest.importorskip("viser", reason="the viewer needs viser: pip install 'mb_sim[viewer]'")


@pytest.fixture(scope="session")
def browser(viser_installed: None) -> Iterator[Browser]:
    """One headless Chromium for every viewer test of the session."""
    if chromium_path() is None:
        pytest.skip("Debian's chromium is not installed: sudo apt-get install chromium "
                    "(make test installs it when run as root)")
    b = Browser(WIDTH, HEIGHT)
    yield b
    b.close()
