"""What the viewer tests share besides the browser (`browser.py`) and the picture checks
(`picture.py`)."""

from __future__ import annotations

import os
import re
import socket
import tempfile
from pathlib import Path
from typing import Any

import yaml

from mb_sim.viewer.scene import Camera

REPO = Path(__file__).resolve().parents[2]
DOCS_IMAGES = (REPO / "docs" / "images" if os.environ.get("MB_SIM_UPDATE_SCREENSHOTS")
               else Path(tempfile.gettempdir()) / "mb_sim_viewer_screenshots")
"""Where the tests leave their screenshots: docs/images (the README's) with
MB_SIM_UPDATE_SCREENSHOTS=1, else a temporary folder (a test run leaves the checkout as it
was)."""
WIDTH, HEIGHT = 1024, 640
"""The browser window, CSS pixels."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])

TABLE = REPO / "config" / "worlds" / "table.yaml"
ARM_URDF = REPO / "urdf" / "arm.urdf"
RESTING = {"joint1": -0.6, "joint2": 0.8, "joint4": 1.0, "joint6": 1.14}
"""A start from which the arm, with no effort, falls onto the table beside the boxes (front
right) and rests there, its hand pressing on the table."""
HAND = (0.95, 0.5, 0.1)
"""The arm's hand (urdf/arm.urdf, material orange)."""
ARROW = (1.0, 0.85, 0.1)
"""The contact arrows' colour (mb_sim.viewer.view.ARROW_COLOR)."""
DOT = (1.0, 0.15, 0.1)
"""The contact points' colour (mb_sim.viewer.view.POINT_COLOR)."""
_CAMERA = re.compile(r"camera at \(([^)]*)\) looking at \(([^)]*)\), vertical field of "
                     r"view ([0-9.]+) rad")


def arm_params(**overrides: Any) -> dict[str, Any]:
    """sim_node's parameters for the arm (config/arm.yaml) on the table, starting at RESTING."""
    params = yaml.safe_load((REPO / "config" / "arm.yaml").read_text())["/**/sim_node"][
        "ros__parameters"]
    params.update(urdf_file=str(ARM_URDF), world_file=str(TABLE), status_period=0.0,
                  initial_positions=RESTING)
    params.update(overrides)
    return params


def logged_camera(text: str) -> Camera | None:
    """The view's camera as the viewer logs it (`str(Camera)`) first, None when not logged
    yet."""
    m = _CAMERA.search(text)
    if m is None:
        return None
    return _camera(m)


def page_camera(text: str) -> Camera | None:
    """The camera the last page that opened started on, as the node's viewer logs it ("a page
    opened on the camera at ..."), None when no page opened yet."""
    found = [_CAMERA.search(line) for line in text.splitlines() if "a page opened on" in line]
    found = [m for m in found if m is not None]
    return _camera(found[-1]) if found else None


def _camera(m: re.Match[str]) -> Camera:
    position, look_at = (tuple(float(v) for v in g.split(",")) for g in m.groups()[:2])
    return Camera(position, look_at, float(m.group(3)))  # type: ignore[arg-type]
