"""Checking a screenshot of the view by its pixels: where a world point appears on the page,
and whether a colour is there.

The page's camera is three.js's perspective camera at the view's `Camera` (eye, point looked
at, vertical field of view, z up) over the whole window, so a point projects as
    x_c = (p - eye) . right,  y_c = (p - eye) . up',  z_c = (p - eye) . forward
    u = W/2 (1 + x_c / (z_c tan(fov/2) W/H)),  v = H/2 (1 - y_c / (z_c tan(fov/2))).
A surface of colour c lit by the view's lights shows as about k c (k from shading and tone
mapping, 0.3 to 1.4, a little more saturated): a pixel `looks_like` c when its direction in RGB
space is within 0.3 rad of c's and it is not much darker or brighter.
"""

from __future__ import annotations

import math

import numpy as np

PANEL_LEFT = 674
"""Pixels right of this are the control panel (at 1024 px wide: it is 350 px wide)."""


def project(camera: object, point: np.ndarray, width: int, height: int) -> tuple[int, int]:
    """Pixel (column, row) of a world point."""
    eye = np.asarray(camera.position, dtype=float)  # type: ignore[attr-defined]
    forward = np.asarray(camera.look_at, dtype=float) - eye  # type: ignore[attr-defined]
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    d = np.asarray(point, dtype=float) - eye
    xc, yc, zc = d @ right, d @ up, d @ forward
    t = math.tan(camera.fov / 2)  # type: ignore[attr-defined]
    u = width / 2 * (1 + xc / (zc * t * width / height))
    v = height / 2 * (1 - yc / (zc * t))
    return round(u), round(v)


def looks_like(pixels: np.ndarray, rgb: tuple[float, float, float], angle: float = 0.3,
               dark: float = 0.3, bright: float = 1.4) -> np.ndarray:
    """Mask of the pixels (..., 3 uint8) whose colour is `rgb` (0..1) under shading."""
    c = np.asarray(rgb, dtype=float) * 255.0
    p = pixels.astype(float)
    norm_p = np.linalg.norm(p, axis=-1) + 1e-9
    cos = (p @ c) / (norm_p * np.linalg.norm(c))
    ratio = norm_p / np.linalg.norm(c)
    return (cos > math.cos(angle)) & (ratio > dark) & (ratio < bright)


def around(image: np.ndarray, pixel: tuple[int, int], radius: int = 6) -> np.ndarray:
    """The square of pixels around (column, row)."""
    u, v = pixel
    return image[max(v - radius, 0):v + radius + 1, max(u - radius, 0):u + radius + 1]


def share(image: np.ndarray, pixel: tuple[int, int], rgb: tuple[float, float, float],
          radius: int = 6) -> float:
    """Fraction of the pixels around `pixel` that look like `rgb`."""
    patch = around(image, pixel, radius)
    return float(looks_like(patch, rgb).mean()) if patch.size else 0.0


def visual_centre(sim: object, link: str) -> np.ndarray:
    """World position of the centre of a link's first visual shape (at the simulation's
    state), from the robot's URDF as the viewer reads it."""
    from mb_sim.rotations import quat_to_matrix
    from mb_sim.viewer.scene import robot_visuals

    visuals, _ = robot_visuals(sim.model.urdf_xml)  # type: ignore[attr-defined]
    visual = next(v for v in visuals if v.frame == link)
    xyz, quat = sim.link_pose(link)  # type: ignore[attr-defined]
    return xyz + np.asarray(quat_to_matrix(quat)) @ np.asarray(visual.xyz)


def centroid(image: np.ndarray, rgb: tuple[float, float, float], least: int = 20
             ) -> tuple[float, float] | None:
    """(column, row) of the middle of the pixels that look like `rgb` (within 0.15 rad: not
    its neighbours in hue) left of the panel (None: fewer than `least` of them). A shape partly
    hidden shows its middle off by up to half its size."""
    mask = looks_like(image[:, :PANEL_LEFT], rgb, angle=0.15)
    rows, cols = np.nonzero(mask)
    if len(rows) < least:
        return None
    return float(cols.mean()), float(rows.mean())
