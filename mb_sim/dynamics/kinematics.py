"""Forward kinematics of the tree (Holck 2005, ch. 3, `jointstobodies`; Valášek 2011 ch. 8
recursive kinematics).

Body poses are composed base to tips: T_i = T_parent(i) T_tree,i T_joint(q_i).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import njit
from mb_sim.dynamics.floating import is_floating, parent_slot
from mb_sim.dynamics.spatial import joint_pose, joint_transform, transform_motion


@njit
def body_poses(
    parent: np.ndarray,
    joint_type: np.ndarray,
    axis: np.ndarray,
    tree_rot: np.ndarray,
    tree_pos: np.ndarray,
    q: np.ndarray,
    base_rot: np.ndarray,
    base_pos: np.ndarray,
    rot: np.ndarray,
    pos: np.ndarray,
) -> None:
    """World pose (rot[i], pos[i]) of every body, given the base pose."""
    R, p = np.empty((3, 3)), np.empty(3)
    for i in range(parent.shape[0]):
        joint_pose(joint_type, axis, tree_rot, tree_pos, i, q[i], R, p)
        j = parent[i]
        Rp = base_rot if j < 0 else rot[j]
        pp = base_pos if j < 0 else pos[j]
        for r in range(3):
            a0, a1, a2 = Rp[r, 0], Rp[r, 1], Rp[r, 2]
            pos[i, r] = pp[r] + a0 * p[0] + a1 * p[1] + a2 * p[2]
            for c in range(3):
                rot[i, r, c] = a0 * R[0, c] + a1 * R[1, c] + a2 * R[2, c]


@njit
def point_jacobian_row(
    parent: np.ndarray,
    joint_type: np.ndarray,
    rot: np.ndarray,
    pos: np.ndarray,
    axis: np.ndarray,
    body: int,
    point: np.ndarray,
    direction: np.ndarray,
    row: np.ndarray,
) -> None:
    """row . qd = direction . (velocity of the world point fixed to `body`).

    Revolute joint j on the path: d . (a_j x (x - o_j)); prismatic: d . a_j (world axes).
    A row with six more entries than joints has a floating base (slot n of rot, pos; body n
    is the base itself): its twist [omega; v] in base axes moves the point by
    R (v + omega x r), so its entries are [r x d'; d'] with d' = R^T d, r = R^T (x - p).
    """
    n = parent.shape[0]
    row[:] = 0.0
    d0, d1, d2 = direction[0], direction[1], direction[2]
    i = body if body < n else -1
    while i >= 0:
        R = rot[i]
        ax, ay, az = axis[i, 0], axis[i, 1], axis[i, 2]
        a0 = R[0, 0] * ax + R[0, 1] * ay + R[0, 2] * az
        a1 = R[1, 0] * ax + R[1, 1] * ay + R[1, 2] * az
        a2 = R[2, 0] * ax + R[2, 1] * ay + R[2, 2] * az
        if joint_type[i] == 0:
            r0, r1, r2 = point[0] - pos[i, 0], point[1] - pos[i, 1], point[2] - pos[i, 2]
            row[i] = (d0 * (a1 * r2 - a2 * r1) + d1 * (a2 * r0 - a0 * r2)
                      + d2 * (a0 * r1 - a1 * r0))
        else:
            row[i] = d0 * a0 + d1 * a1 + d2 * a2
        i = parent[i]
    if row.shape[0] > n:
        R = rot[n]
        x0, x1, x2 = point[0] - pos[n, 0], point[1] - pos[n, 1], point[2] - pos[n, 2]
        e0 = R[0, 0] * d0 + R[1, 0] * d1 + R[2, 0] * d2
        e1 = R[0, 1] * d0 + R[1, 1] * d1 + R[2, 1] * d2
        e2 = R[0, 2] * d0 + R[1, 2] * d1 + R[2, 2] * d2
        r0 = R[0, 0] * x0 + R[1, 0] * x1 + R[2, 0] * x2
        r1 = R[0, 1] * x0 + R[1, 1] * x1 + R[2, 1] * x2
        r2 = R[0, 2] * x0 + R[1, 2] * x1 + R[2, 2] * x2
        row[n], row[n + 1], row[n + 2] = r1 * e2 - r2 * e1, r2 * e0 - r0 * e2, r0 * e1 - r1 * e0
        row[n + 3], row[n + 4], row[n + 5] = e0, e1, e2


@njit
def body_velocities(tree: Any, w: Any, q: np.ndarray, qd: np.ndarray, v: np.ndarray) -> None:
    """Spatial velocity [omega; v] of every body (slot n: a floating base) at its origin, in
    body axes: v_i = X_i v_parent + S_i qd_i (Valášek 2011 ch. 8 recursive kinematics)."""
    parent = tree.parent
    n = parent.shape[0]
    floating = is_floating(tree)
    v[n, :] = 0.0
    if floating:
        for k in range(6):
            v[n, k] = qd[n + k]
    for i in range(n):
        joint_transform(tree, w, i, q[i])
        j = parent_slot(parent, i, floating)
        if j >= 0:
            transform_motion(w.X, i, v[j, 0], v[j, 1], v[j, 2], v[j, 3], v[j, 4], v[j, 5], v, i)
        else:
            v[i, :] = 0.0
        for k in range(6):
            v[i, k] += w.S[i, k] * qd[i]
