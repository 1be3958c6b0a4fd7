"""Forward kinematics of the tree (000.md 2.3, `jointstobodies`; 004.md ch. 8 recursive kinematics).

Body poses are composed base to tips: T_i = T_parent(i) T_tree,i T_joint(q_i).
"""

from __future__ import annotations

import numpy as np

from mb_sim._jit import njit
from mb_sim.dynamics.spatial import cross3, joint_pose, matmul3, matvec3


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
        if j < 0:
            rot[i] = matmul3(base_rot, R)
            pos[i] = base_pos + matvec3(base_rot, p)
        else:
            rot[i] = matmul3(rot[j], R)
            pos[i] = pos[j] + matvec3(rot[j], p)


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
    i = body
    while i >= 0:
        a = matvec3(rot[i], axis[i])
        if joint_type[i] == 0:
            row[i] = np.dot(direction, cross3(a, point - pos[i]))
        else:
            row[i] = np.dot(direction, a)
        i = parent[i]
