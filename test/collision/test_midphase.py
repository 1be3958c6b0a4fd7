"""The midphase's oriented-box test against the distance between the boxes, found by a
bounded least-squares problem over points of both."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import lsq_linear
from scipy.spatial.transform import Rotation

from mb_sim.collision.midphase import boxes_apart

MARGIN = 0.005


def _distance(ca, ra, ha, cb, rb, hb) -> float:
    """min |ca + Ra u - cb - Rb v| over |u| <= ha, |v| <= hb: a linear least-squares problem
    with bounds on (u, v), solved exactly (bounded-variable least squares)."""
    a = np.hstack([ra, -rb])
    result = lsq_linear(a, cb - ca, bounds=(-np.concatenate([ha, hb]), np.concatenate([ha, hb])),
                        method="bvls", tol=1e-14)
    residual = a @ result.x - (cb - ca)
    return float(np.sqrt(residual @ residual))


def test_boxes_apart_only_when_farther_than_the_margin() -> None:
    rng = np.random.default_rng(3)
    apart = 0
    for _ in range(400):
        ha, hb = rng.uniform(0.01, 0.3, 3), rng.uniform(0.01, 0.3, 3)
        ra, rb = Rotation.random(2, random_state=rng).as_matrix()
        if rng.random() < 0.3:  # edges parallel: the skipped cross axes
            rb = ra @ Rotation.from_euler("z", rng.choice([0.0, 90.0]), degrees=True).as_matrix()
        ca, cb = np.zeros(3), rng.normal(size=3) * 0.4
        cen = rng.normal(size=(2, 3)) * 0.05  # box centres off the geometry origins
        half = np.array([ha, hb])
        pos, rot = np.array([ca - ra @ cen[0], cb - rb @ cen[1]]), np.array([ra, rb])
        dist = _distance(ca, ra, ha, cb, rb, hb)
        if boxes_apart(cen, half, pos, rot, 0, 1, MARGIN):
            apart += 1
            assert dist > MARGIN - 1e-9
        elif dist > MARGIN + 1e-6:
            pass  # apart, but along a direction none of the fifteen axes is: kept
        if dist < MARGIN - 1e-6:
            assert not boxes_apart(cen, half, pos, rot, 0, 1, MARGIN)
    assert apart > 100


@pytest.mark.parametrize("margin", [0.0, MARGIN])
def test_touching_boxes_are_never_apart(margin: float) -> None:
    """Boxes face to face, edge to edge and corner in face, touching exactly."""
    h = np.array([0.1, 0.2, 0.3])
    eye = np.eye(3)
    turned = Rotation.from_euler("xyz", [0.3, 0.5, 0.7]).as_matrix()
    cen, half = np.zeros((2, 3)), np.array([h, h])
    for rb, cb in ((eye, np.array([0.2, 0.0, 0.0])), (eye, np.array([0.2, 0.4, 0.6])),
                   (turned, np.array([0.0, 0.0, 0.3 + np.abs(turned.T[:, 2]) @ h]))):
        pos, rot = np.array([np.zeros(3), cb]), np.array([eye, rb])
        assert not boxes_apart(cen, half, pos, rot, 0, 1, margin)
