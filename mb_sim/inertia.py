"""Inertia transforms in one place: the parallel-axis theorem, rotation of an inertia tensor,
lumping rigidly joined parts into one body, the 6x6 spatial inertia (Holck 2005, ch. 3).

Inertia tensors are 3x3 about a stated point, in stated axes; `parallel_axis` is the term that
moves one from the centre of mass to a point at `offset` from it (or back, subtracted).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def parallel_axis(mass: float, offset: np.ndarray) -> np.ndarray:
    """m (|c|^2 1 - c c^T): I_about_point = I_com + parallel_axis(m, c), c from the point to
    the centre of mass."""
    c = np.asarray(offset, dtype=float)
    return mass * (c @ c * np.eye(3) - np.outer(c, c))


def rotated(R: np.ndarray, inertia: np.ndarray) -> np.ndarray:
    """R I R^T: an inertia tensor of a part rotated by R into the body's axes."""
    return R @ inertia @ R.T


def lump(parts: Iterable[tuple[float, np.ndarray, np.ndarray, np.ndarray]]
         ) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, centre of mass, inertia about it) of rigidly joined parts, each (mass, rotation
    R and centre c of its frame in the body frame, inertia about c in the part's axes):
    I = sum (R_i I_i R_i^T + parallel_axis(m_i, c_i)) - parallel_axis(m, c), symmetrised."""
    mass = 0.0
    first = np.zeros(3)
    inertia = np.zeros((3, 3))
    for m, R, c, I_part in parts:
        c = np.asarray(c, dtype=float)
        mass += m
        first += m * c
        inertia += rotated(np.asarray(R, dtype=float), np.asarray(I_part, dtype=float)) + \
            parallel_axis(m, c)
    com = first / mass if mass > 0 else np.zeros(3)
    if mass > 0:
        inertia -= parallel_axis(mass, com)
    return mass, com, 0.5 * (inertia + inertia.T)


def skew(c: np.ndarray) -> np.ndarray:
    """c~, the cross-product matrix: c~ x = c x x."""
    return np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])


def spatial_inertia(mass: float, com: np.ndarray, inertia_com: np.ndarray) -> np.ndarray:
    """6x6 rigid-body inertia about the frame origin for motion vectors [omega; v] (Holck 2005,
    ch. 3): I_O = [[I_c + m c~ c~^T, m c~], [m c~^T, m 1]]."""
    cx = skew(np.asarray(com, dtype=float))
    out = np.zeros((6, 6))
    out[:3, :3] = inertia_com + mass * cx @ cx.T
    out[:3, 3:] = mass * cx
    out[3:, :3] = mass * cx.T
    out[3:, 3:] = mass * np.eye(3)
    return out
