"""Forward kinematics of the tree (000.md 2.3, `jointstobodies`; 004.md ch. 8 recursive kinematics).

Body poses are composed base to tips: T_i = T_parent(i) T_tree,i T_joint(q_i).
"""

from __future__ import annotations

import numpy as np

from mb_sim._jit import njit
from mb_sim.dynamics.spatial import joint_pose


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
        joint_pose(joint_type[i], axis[i], tree_rot[i], tree_pos[i], q[i], R, p)
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
    """
    row[:] = 0.0
    d0, d1, d2 = direction[0], direction[1], direction[2]
    i = body
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
