"""One home for rotations (mb_sim.rotations) and inertia transforms (mb_sim.inertia): the same
numbers as transforms3d, and the closed forms."""

from __future__ import annotations

import numpy as np
from transforms3d.euler import euler2mat

from mb_sim import inertia, rotations


def test_rpy_and_quaternions_agree_everywhere() -> None:
    rng = np.random.default_rng(1)
    for rpy in rng.uniform(-np.pi, np.pi, (50, 3)):
        R = rotations.rpy_matrix(rpy)
        np.testing.assert_allclose(R, euler2mat(*rpy, axes="sxyz"), atol=1e-14)
        q = rotations.quat_from_rpy(rpy)
        np.testing.assert_allclose(rotations.matrix_from_quat(q), R, atol=1e-14)
        back = rotations.quat_from_matrix(R)
        np.testing.assert_allclose(back * np.sign(back[3]), q * np.sign(q[3]), atol=1e-12)


def test_exponential_and_logarithm() -> None:
    rng = np.random.default_rng(2)
    for w in rng.normal(size=(20, 3)):
        R0 = rotations.rpy_matrix(rng.uniform(-1, 1, 3))
        R = rotations.rotate_matrix(tuple(w), 0.1, R0)
        np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-13)
        np.testing.assert_allclose(rotations.rotation_vector(R @ R0.T), 0.1 * w, atol=1e-12)
        q = rotations.quat_from_matrix(R0)
        rotations.quat_advance(q, tuple(w), 0.1)
        np.testing.assert_allclose(rotations.matrix_from_quat(q), R, atol=1e-12)


def test_parallel_axis_and_lumping() -> None:
    rng = np.random.default_rng(3)
    points = rng.normal(size=(200, 3))
    masses = rng.uniform(0.1, 1.0, 200)
    about_origin = sum(m * (p @ p * np.eye(3) - np.outer(p, p)) for m, p in zip(masses, points))
    # the points as 4 parts, each lumped about its own centre in its own rotated axes
    parts = []
    for chunk in np.array_split(np.arange(200), 4):
        m, pts = masses[chunk], points[chunk]
        c = (m[:, None] * pts).sum(0) / m.sum()
        R = rotations.rpy_matrix(rng.uniform(-1, 1, 3))
        local = (pts - c) @ R  # coordinates in the part's axes
        I_part = sum(mi * (x @ x * np.eye(3) - np.outer(x, x)) for mi, x in zip(m, local))
        parts.append((m.sum(), R, c, I_part))
    mass, com, I_com = inertia.lump(parts)
    assert np.isclose(mass, masses.sum())
    np.testing.assert_allclose(com, (masses[:, None] * points).sum(0) / masses.sum(), atol=1e-12)
    np.testing.assert_allclose(I_com + inertia.parallel_axis(mass, com), about_origin,
                               rtol=1e-10, atol=1e-10)
    I6 = inertia.spatial_inertia(mass, com, I_com)
    np.testing.assert_allclose(I6[:3, :3], about_origin, rtol=1e-10, atol=1e-10)
