"""Forward kinematics of the tree (Holck 2005, ch. 3, `jointstobodies`; Valášek 2011 ch. 8
recursive kinematics).

Body poses are composed base to tips: T_i = T_parent(i) T_tree,i T_joint(q_i).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import njit
from mb_sim.dynamics.floating import base_pose, slot_tree
from mb_sim.dynamics.spatial import joint_pose, joint_transform, transform_motion
from mb_sim.model.model import PRISMATIC


@njit
def tree_poses(tree: Any, k: int, q: np.ndarray, rot: np.ndarray, pos: np.ndarray) -> None:
    """World pose (rot[i], pos[i]) of every body of tree k of the forest, and of its base
    (slot n + k), at the forest's positions q."""
    parent, joint_type, axis, tree_rot, tree_pos, qadr = (
        tree.parent, tree.joint_type, tree.axis, tree.tree_rot, tree.tree_pos, tree.qadr)
    base = parent.shape[0] + k
    base_pose(tree, k, q, rot[base], pos[base])
    for i in range(tree.tree_body[k], tree.tree_body[k + 1]):
        # body i's pose in its parent into its own slot first, then composed in place
        joint_pose(joint_type, axis, tree_rot, tree_pos, i, q, qadr[i], rot[i], pos[i])
        j = parent[i]
        if j < 0:
            j = base
        p0, p1, p2 = pos[i, 0], pos[i, 1], pos[i, 2]
        for c in range(3):
            r0, r1, r2 = rot[i, 0, c], rot[i, 1, c], rot[i, 2, c]
            for r in range(3):
                rot[i, r, c] = rot[j, r, 0] * r0 + rot[j, r, 1] * r1 + rot[j, r, 2] * r2
        for r in range(3):
            pos[i, r] = pos[j, r] + rot[j, r, 0] * p0 + rot[j, r, 1] * p1 + rot[j, r, 2] * p2


@njit
def body_poses(tree: Any, q: np.ndarray, rot: np.ndarray, pos: np.ndarray) -> None:
    """World pose of every body and base of every tree (`tree_poses`, tree after tree)."""
    for k in range(tree.tree_body.shape[0] - 1):
        tree_poses(tree, k, q, rot, pos)


@njit
def point_jacobian_row(tree: Any, rot: np.ndarray, pos: np.ndarray, body: int,
                       point: np.ndarray, direction: np.ndarray, row: np.ndarray) -> int:
    """row . qd_k = direction . (velocity of the world point fixed to `body`), with qd_k the
    velocities of body's tree k (local: entry i - tree_body[k] for joint i, its last six a
    floating base's twist); body is a body or the base slot n + k. Returns nv_k, the entries
    written (row may be longer).

    Revolute joint j (or a ball joint's dof) on the path: d . (a_j x (x - o_j)); prismatic:
    d . a_j (world axes).
    A floating base (slot n + k of rot, pos) moves the point with its twist [omega; v] in base
    axes by R (v + omega x r), so its entries are [r x d'; d'] with d' = R^T d,
    r = R^T (x - p).
    """
    parent, joint_type, axis = tree.parent, tree.joint_type, tree.axis
    n = parent.shape[0]
    k = slot_tree(tree, body)
    b0 = tree.tree_body[k]
    nv = tree.tree_v[k + 1] - tree.tree_v[k]
    for c in range(nv):
        row[c] = 0.0
    d0, d1, d2 = direction[0], direction[1], direction[2]
    i = body if body < n else -1
    while i >= 0:
        R = rot[i]
        ax, ay, az = axis[i, 0], axis[i, 1], axis[i, 2]
        a0 = R[0, 0] * ax + R[0, 1] * ay + R[0, 2] * az
        a1 = R[1, 0] * ax + R[1, 1] * ay + R[1, 2] * az
        a2 = R[2, 0] * ax + R[2, 1] * ay + R[2, 2] * az
        if joint_type[i] != PRISMATIC:
            r0, r1, r2 = point[0] - pos[i, 0], point[1] - pos[i, 1], point[2] - pos[i, 2]
            row[i - b0] = (d0 * (a1 * r2 - a2 * r1) + d1 * (a2 * r0 - a0 * r2)
                           + d2 * (a0 * r1 - a1 * r0))
        else:
            row[i - b0] = d0 * a0 + d1 * a1 + d2 * a2
        i = parent[i]
    if tree.floating[k]:
        base, f = n + k, nv - 6
        R = rot[base]
        x0, x1, x2 = point[0] - pos[base, 0], point[1] - pos[base, 1], point[2] - pos[base, 2]
        e0 = R[0, 0] * d0 + R[1, 0] * d1 + R[2, 0] * d2
        e1 = R[0, 1] * d0 + R[1, 1] * d1 + R[2, 1] * d2
        e2 = R[0, 2] * d0 + R[1, 2] * d1 + R[2, 2] * d2
        r0 = R[0, 0] * x0 + R[1, 0] * x1 + R[2, 0] * x2
        r1 = R[0, 1] * x0 + R[1, 1] * x1 + R[2, 1] * x2
        r2 = R[0, 2] * x0 + R[1, 2] * x1 + R[2, 2] * x2
        row[f], row[f + 1], row[f + 2] = r1 * e2 - r2 * e1, r2 * e0 - r0 * e2, r0 * e1 - r1 * e0
        row[f + 3], row[f + 4], row[f + 5] = e0, e1, e2
    return nv


@njit
def shared_ancestor(parent: np.ndarray, a: int, b: int) -> int:
    """The deepest body that is a or an ancestor of a and also b or an ancestor of b; -1
    when their paths meet only at the root (or one is a base slot, n + k). Bodies come after
    their parents (parent[i] < i)."""
    n = parent.shape[0]
    if a >= n or b >= n:
        return -1
    while a != b and a >= 0 and b >= 0:
        if a > b:
            a = parent[a]
        else:
            b = parent[b]
    return a if a == b else -1


@njit
def point_jacobian(tree: Any, rot: np.ndarray, pos: np.ndarray, body: int, point: np.ndarray,
                   J: np.ndarray, path: np.ndarray, stop: int, with_base: bool) -> int:
    """J[:, c] = the velocity of the world point fixed to `body` (a body or the base slot
    n + k) per unit of velocity c of its tree k (local, as `point_jacobian_row`), for the
    velocities on its path only: the joints from body up to `stop` (a body, excluded; -1: to
    the root), then a floating base's twist when `with_base`; their local indices into
    path[:count]. Returns count (J's other columns are not written). A point's rows along
    several directions d are then d . J[:, path] (the three directions of a contact from one
    walk up the tree). A point between two links of one tree moves both alike through the
    joints from their shared ancestor up and through the base: those columns of J_a - J_b
    are zero, and the walks stop there (`stop`, `with_base` False)."""
    parent, joint_type, axis = tree.parent, tree.joint_type, tree.axis
    n = parent.shape[0]
    k = slot_tree(tree, body)
    b0 = tree.tree_body[k]
    count = 0
    i = body if body < n else -1
    while i >= 0 and i != stop:
        R = rot[i]
        ax, ay, az = axis[i, 0], axis[i, 1], axis[i, 2]
        a0 = R[0, 0] * ax + R[0, 1] * ay + R[0, 2] * az
        a1 = R[1, 0] * ax + R[1, 1] * ay + R[1, 2] * az
        a2 = R[2, 0] * ax + R[2, 1] * ay + R[2, 2] * az
        c = i - b0
        if joint_type[i] != PRISMATIC:
            r0, r1, r2 = point[0] - pos[i, 0], point[1] - pos[i, 1], point[2] - pos[i, 2]
            J[0, c], J[1, c], J[2, c] = a1 * r2 - a2 * r1, a2 * r0 - a0 * r2, a0 * r1 - a1 * r0
        else:
            J[0, c], J[1, c], J[2, c] = a0, a1, a2
        path[count] = c
        count += 1
        i = parent[i]
    if with_base and tree.floating[k]:  # R (v + omega x r): [R e_c x x'] for omega_c, R e_c for v_c
        base, f = n + k, tree.tree_v[k + 1] - tree.tree_v[k] - 6
        R = rot[base]
        x0, x1, x2 = point[0] - pos[base, 0], point[1] - pos[base, 1], point[2] - pos[base, 2]
        for c in range(3):
            e0, e1, e2 = R[0, c], R[1, c], R[2, c]
            J[0, f + c], J[1, f + c], J[2, f + c] = e1 * x2 - e2 * x1, e2 * x0 - e0 * x2, \
                e0 * x1 - e1 * x0
            J[0, f + 3 + c], J[1, f + 3 + c], J[2, f + 3 + c] = e0, e1, e2
            path[count + c] = f + c
            path[count + 3 + c] = f + 3 + c
        count += 6
    return count


@njit
def body_velocities(tree: Any, w: Any, k: int, q: np.ndarray, qd: np.ndarray,
                    v: np.ndarray) -> None:
    """Spatial velocity [omega; v] of every body of tree k (slot n + k: its base, zero when
    fixed) at its origin, in body axes: v_i = X_i v_parent + S_i qd_i (Valášek 2011 ch. 8
    recursive kinematics)."""
    up, vadr = tree.up, tree.vadr
    base = up.shape[0] + k
    v[base, :] = 0.0
    if tree.floating[k]:
        vb = tree.tree_v[k + 1] - 6
        for c in range(6):
            v[base, c] = qd[vb + c]
    for i in range(tree.tree_body[k], tree.tree_body[k + 1]):
        joint_transform(tree, w, i, q)
        j = up[i]
        if j >= 0:
            transform_motion(w.X, i, v[j, 0], v[j, 1], v[j, 2], v[j, 3], v[j, 4], v[j, 5], v, i)
        else:
            v[i, :] = 0.0
        for c in range(6):
            v[i, c] += w.S[i, c] * qd[vadr[i]]
