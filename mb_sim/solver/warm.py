"""Warm starting (Mikhailyuk & Strashnov 2016, sequential impulses: p^(0)(t + h) = p(t)): each row
group's impulse is kept under a
stable integer key and handed to the same group next step.

A contact is named by its pair of geometries and its rank among that pair's points, a robot
joint row by its tag. Friction is kept as a world vector, since a contact's tangents turn with
its slip from step to step, and is projected on the new tangents.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, njit
from mb_sim.solver.rows import TANGENT


@helper
def row_groups(con: Any, work: Any, joint_start: int, joint_end: int, n_geoms: int) -> int:
    """Keys (work.group_key) and first rows (work.group_row) of the row groups kept between
    steps: the contacts in order, then the robot's joint rows (tags work.joint_tag).
    Returns their number."""
    keys, group_row, tag = work.group_key, work.group_row, work.joint_tag
    geom_a, geom_b, normal_row = con.geom_a, con.geom_b, con.normal_row
    k = con.count[0]
    nth = 0
    for c in range(k):
        pair = geom_a[c] * n_geoms + geom_b[c]
        if c > 0 and geom_a[c] == geom_a[c - 1] and geom_b[c] == geom_b[c - 1]:
            nth += 1
        else:
            nth = 0
        keys[c] = (pair * 64 + nth) * 2
        group_row[c] = normal_row[c]
    g = k
    for r in range(joint_start, joint_end):
        keys[g] = tag[r] * 2 + 1
        group_row[g] = r
        g += 1
    return g


@helper
def _has_friction(kind: np.ndarray, count: int, r: int) -> bool:
    return r + 2 < count and kind[r + 1] == TANGENT


@njit
def load(rows: Any, con: Any, work: Any, groups: int, s: Any) -> None:
    """lam of every group found among last step's sorted keys (s.warm_key)."""
    m = s.warm_count[0]
    if m == 0:
        return
    old_keys, values = s.warm_key[:m], s.warm_value
    t1, t2 = con.tangent1, con.tangent2
    n_contacts = con.count[0]
    keys, group_row, lam, kind, count = (work.group_key, work.group_row, rows.lam, rows.kind,
                                         rows.count[0])
    for g in range(groups):
        key = keys[g]
        i = np.searchsorted(old_keys, key)
        if i >= m or old_keys[i] != key:
            continue
        r = group_row[g]
        lam[r] = values[i, 0]
        if g < n_contacts and _has_friction(kind, count, r):
            lam[r + 1] = values[i, 1] * t1[g, 0] + values[i, 2] * t1[g, 1] + values[i, 3] * t1[g, 2]
            lam[r + 2] = values[i, 1] * t2[g, 0] + values[i, 2] * t2[g, 1] + values[i, 3] * t2[g, 2]


@helper
def save(rows: Any, con: Any, work: Any, groups: int, s: Any) -> None:
    """s.warm_key, warm_value: the sorted keys and [lambda, friction x, y, z] of the groups."""
    keys = work.group_key[:groups]
    order = np.argsort(keys, kind="mergesort")
    t1, t2 = con.tangent1, con.tangent2
    n_contacts = con.count[0]
    group_row, lam, kind, count = work.group_row, rows.lam, rows.kind, rows.count[0]
    warm_key, v = s.warm_key, s.warm_value
    for i in range(groups):
        g = order[i]
        r = group_row[g]
        warm_key[i] = keys[g]
        v[i, 0] = lam[r]
        for k in range(3):
            v[i, 1 + k] = 0.0
        if g < n_contacts and _has_friction(kind, count, r):
            for k in range(3):
                v[i, 1 + k] = lam[r + 1] * t1[g, k] + lam[r + 2] * t2[g, k]
    s.warm_count[0] = groups
