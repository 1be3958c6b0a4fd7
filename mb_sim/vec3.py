"""3-vectors as tuples of floats, so compiled kernels do not allocate per operation.

`row(a, i)` and `col(rot, i, k)` read vectors out of arrays, `put(a, i, v)` writes one back;
the rest is vector algebra, products with rotation matrices, and the orthonormal frame around
a unit vector. Rotations and quaternions themselves live in `mb_sim.rotations`.
"""

from __future__ import annotations

import math

import numpy as np

from mb_sim._jit import helper, njit
from mb_sim.rotations import quat_to_matrix  # noqa: F401 (still imported from here by model/world.py)

Vec = tuple[float, float, float]


@njit
def row(a: np.ndarray, i: int) -> Vec:
    """Row `i` of an (n, 3) array as a tuple."""
    return (a[i, 0], a[i, 1], a[i, 2])


@njit
def col(rot: np.ndarray, i: int, k: int) -> Vec:
    """Column `k` of the rotation `rot[i]` (its local axis `k` in world coordinates)."""
    return (rot[i, 0, k], rot[i, 1, k], rot[i, 2, k])


@njit
def add(a: Vec, b: Vec) -> Vec:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit
def sub(a: Vec, b: Vec) -> Vec:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit
def scale(a: Vec, s: float) -> Vec:
    return (a[0] * s, a[1] * s, a[2] * s)


@helper
def madd(a: Vec, s: float, b: Vec) -> Vec:
    """a + s b."""
    return (a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2])


@njit
def dot(a: Vec, b: Vec) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit
def cross(a: Vec, b: Vec) -> Vec:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit
def norm(a: Vec) -> float:
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@helper
def normalize(a: Vec) -> Vec:
    """a / |a|; the zero vector stays zero."""
    n = math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
    if n == 0.0:
        return (0.0, 0.0, 0.0)
    return (a[0] / n, a[1] / n, a[2] / n)


@helper
def rot_mul(rot: np.ndarray, i: int, v: Vec) -> Vec:
    """rot[i] @ v."""
    return (
        rot[i, 0, 0] * v[0] + rot[i, 0, 1] * v[1] + rot[i, 0, 2] * v[2],
        rot[i, 1, 0] * v[0] + rot[i, 1, 1] * v[1] + rot[i, 1, 2] * v[2],
        rot[i, 2, 0] * v[0] + rot[i, 2, 1] * v[1] + rot[i, 2, 2] * v[2],
    )


@helper
def rot_tmul(rot: np.ndarray, i: int, v: Vec) -> Vec:
    """rot[i].T @ v."""
    return (
        rot[i, 0, 0] * v[0] + rot[i, 1, 0] * v[1] + rot[i, 2, 0] * v[2],
        rot[i, 0, 1] * v[0] + rot[i, 1, 1] * v[1] + rot[i, 2, 1] * v[2],
        rot[i, 0, 2] * v[0] + rot[i, 1, 2] * v[1] + rot[i, 2, 2] * v[2],
    )


@helper
def any_perpendicular(a: Vec) -> Vec:
    """A unit vector perpendicular to the unit vector `a` (deterministic)."""
    ax = abs(a[0])
    ay = abs(a[1])
    az = abs(a[2])
    if ax <= ay and ax <= az:
        e = (1.0, 0.0, 0.0)
    elif ay <= az:
        e = (0.0, 1.0, 0.0)
    else:
        e = (0.0, 0.0, 1.0)
    return normalize(cross(a, e))


@njit
def put(a: np.ndarray, i: int, v: Vec) -> None:
    a[i, 0] = v[0]
    a[i, 1] = v[1]
    a[i, 2] = v[2]


@njit
def frame_around(n: Vec) -> tuple[Vec, Vec]:
    """Unit t1, t2 completing the unit vector n to a right-handed orthonormal frame
    (n, t1, t2): t1 = n x e_x normalised, or n x e_y when n is close to e_x; t2 = n x t1."""
    if abs(n[0]) < 0.6:
        t = (0.0, n[2], -n[1])
    else:
        t = (-n[2], 0.0, n[0])
    t1 = scale(t, 1.0 / norm(t))
    return t1, cross(n, t1)
