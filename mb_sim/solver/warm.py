"""Warm starting (002.md 1.7: p^(0)(t + h) = p(t)): each row group's impulse is kept under a
stable integer key and handed to the same group next step.

A contact is named by its pair of geometries and its rank among that pair's points, a robot
joint row by its tag. Friction is kept as a world vector, since a contact's tangents turn with
its slip from step to step, and is projected on the new tangents.
"""

from __future__ import annotations

import numpy as np

from mb_sim._jit import njit
from mb_sim.solver.rows import TANGENT


@njit
def row_keys(geom_a: np.ndarray, geom_b: np.ndarray, n_geoms: int,
             joint_tags: np.ndarray) -> np.ndarray:
    """Keys of the contacts (in order) then of the joint rows."""
    k = geom_a.shape[0]
    keys = np.empty(k + joint_tags.shape[0], dtype=np.int64)
    nth = 0
    for c in range(k):
        pair = geom_a[c] * n_geoms + geom_b[c]
        if c > 0 and geom_a[c] == geom_a[c - 1] and geom_b[c] == geom_b[c - 1]:
            nth += 1
        else:
            nth = 0
        keys[c] = (pair * 64 + nth) * 2
    for j in range(joint_tags.shape[0]):
        keys[k + j] = joint_tags[j] * 2 + 1
    return keys


@njit
def _has_friction(r: int, kind: np.ndarray, count: int) -> bool:
    return r + 2 < count and kind[r + 1] == TANGENT


@njit
def load(keys: np.ndarray, group_rows: np.ndarray, n_contacts: int, old_keys: np.ndarray,
         old_values: np.ndarray, kind: np.ndarray, count: int, t1: np.ndarray,
         t2: np.ndarray, lam: np.ndarray) -> None:
    """lam of every group found among last step's sorted keys."""
    m = old_keys.shape[0]
    if m == 0:
        return
    for g in range(keys.shape[0]):
        i = np.searchsorted(old_keys, keys[g])
        if i >= m or old_keys[i] != keys[g]:
            continue
        r = group_rows[g]
        lam[r] = old_values[i, 0]
        if g < n_contacts and _has_friction(r, kind, count):
            f = old_values[i, 1:]
            lam[r + 1] = f[0] * t1[g, 0] + f[1] * t1[g, 1] + f[2] * t1[g, 2]
            lam[r + 2] = f[0] * t2[g, 0] + f[1] * t2[g, 1] + f[2] * t2[g, 2]


@njit
def save(keys: np.ndarray, group_rows: np.ndarray, n_contacts: int, kind: np.ndarray,
         count: int, t1: np.ndarray, t2: np.ndarray,
         lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted keys, values [lambda, friction x, y, z]) to warm the next step."""
    order = np.argsort(keys, kind="mergesort")
    values = np.zeros((keys.shape[0], 4))
    for i in range(keys.shape[0]):
        g = order[i]
        r = group_rows[g]
        values[i, 0] = lam[r]
        if g < n_contacts and _has_friction(r, kind, count):
            for k in range(3):
                values[i, 1 + k] = lam[r + 1] * t1[g, k] + lam[r + 2] * t2[g, k]
    return keys[order], values
