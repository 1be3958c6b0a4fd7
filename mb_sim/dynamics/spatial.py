"""Spatial algebra in Featherstone's notation (Holck 2005, ch. 3), written out for 6-vectors.

Motion vectors are [omega; v] and force vectors [n; f], both at a frame origin and in that
frame's coordinates. A Plücker transform from frame A to frame B, with E the rotation from A
to B coordinates and r the origin of B in A coordinates, is (Holck 2005 eq. 3.16)

    B_X_A = [[E, 0], [-E r~, E]],     and forces transform with B_X_A^-T.

The helpers below are small loops so that numba compiles them into the kernels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import inline


@inline
def dot6(a: np.ndarray, b: np.ndarray) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@inline
def joint_pose(
    joint_type: int,
    axis: np.ndarray,
    tree_rot: np.ndarray,
    tree_pos: np.ndarray,
    q: float,
    R: np.ndarray,
    p: np.ndarray,
) -> None:
    """Pose (R, p) of a body in its parent's frame, written into R, p: the tree offset, then
    the joint's motion, a rotation about the axis (Rodrigues:
    R_J = cos q 1 + (1 - cos q) u u^T + sin q u~) or a translation along it."""
    if joint_type == 0:
        c, s = np.cos(q), np.sin(q)
        x, y, z = axis[0], axis[1], axis[2]
        t = 1.0 - c
        j00, j01, j02 = c + t * x * x, t * x * y - s * z, t * x * z + s * y
        j10, j11, j12 = t * x * y + s * z, c + t * y * y, t * y * z - s * x
        j20, j21, j22 = t * x * z - s * y, t * y * z + s * x, c + t * z * z
        for i in range(3):
            a0, a1, a2 = tree_rot[i, 0], tree_rot[i, 1], tree_rot[i, 2]
            R[i, 0] = a0 * j00 + a1 * j10 + a2 * j20
            R[i, 1] = a0 * j01 + a1 * j11 + a2 * j21
            R[i, 2] = a0 * j02 + a1 * j12 + a2 * j22
            p[i] = tree_pos[i]
    else:
        for i in range(3):
            R[i, 0], R[i, 1], R[i, 2] = tree_rot[i, 0], tree_rot[i, 1], tree_rot[i, 2]
            p[i] = tree_pos[i] + q * (
                tree_rot[i, 0] * axis[0] + tree_rot[i, 1] * axis[1] + tree_rot[i, 2] * axis[2]
            )


@inline
def joint_transform(tree: Any, w: Any, i: int, qi: float, X: np.ndarray, S: np.ndarray) -> None:
    """Body i's Plücker transform from its parent, X_i = X_J(q_i) X_T (Holck 2005 eq. 3.16), and
    its motion subspace S_i, for the tree record `tree` (mb_sim.model.compile.Tree) with the
    scratch of its work record w: the one joint step of ABA, RNEA, CRBA and hybrid dynamics."""
    R, p = w.joint_rot, w.joint_pos
    joint_pose(tree.joint_type[i], tree.axis[i], tree.tree_rot[i], tree.tree_pos[i], qi, R, p)
    plucker(R, p, X)
    motion_subspace(tree.joint_type[i], tree.axis[i], S)


@inline
def motion_subspace(joint_type: int, axis: np.ndarray, S: np.ndarray) -> None:
    """S = [axis; 0] for a revolute joint, [0; axis] for a prismatic one."""
    for k in range(6):
        S[k] = 0.0
    o = 0 if joint_type == 0 else 3
    for k in range(3):
        S[o + k] = axis[k]


@inline
def plucker(R: np.ndarray, p: np.ndarray, X: np.ndarray) -> None:
    """child_X_parent for a child posed at (R, p) in the parent, written into X: E = R^T
    (eq. 3.16)."""
    for i in range(3):
        e0, e1, e2 = R[0, i], R[1, i], R[2, i]
        X[i, 0], X[i, 1], X[i, 2] = e0, e1, e2
        X[i, 3], X[i, 4], X[i, 5] = 0.0, 0.0, 0.0
        X[i + 3, 3], X[i + 3, 4], X[i + 3, 5] = e0, e1, e2
        X[i + 3, 0] = -(e1 * p[2] - e2 * p[1])
        X[i + 3, 1] = -(e2 * p[0] - e0 * p[2])
        X[i + 3, 2] = -(e0 * p[1] - e1 * p[0])


@inline
def mv6(A: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    for i in range(6):
        s = 0.0
        for j in range(6):
            s += A[i, j] * x[j]
        out[i] = s


@inline
def mtv6_add(A: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """out += A^T x."""
    for j in range(6):
        s = 0.0
        for i in range(6):
            s += A[i, j] * x[i]
        out[j] += s


@inline
def congruence_add(X: np.ndarray, I: np.ndarray, out: np.ndarray, tmp: np.ndarray) -> None:
    """out += X^T I X, using the 6x6 scratch `tmp`."""
    for i in range(6):
        for j in range(6):
            s = 0.0
            for k in range(6):
                s += I[i, k] * X[k, j]
            tmp[i, j] = s
    for i in range(6):
        for j in range(6):
            s = 0.0
            for k in range(6):
                s += X[k, i] * tmp[k, j]
            out[i, j] += s


@inline
def cross_motion(v: np.ndarray, m: np.ndarray, out: np.ndarray) -> None:
    """out = v x m for motion vectors."""
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    out[0] = w1 * m[2] - w2 * m[1]
    out[1] = w2 * m[0] - w0 * m[2]
    out[2] = w0 * m[1] - w1 * m[0]
    out[3] = w1 * m[5] - w2 * m[4] + u1 * m[2] - u2 * m[1]
    out[4] = w2 * m[3] - w0 * m[5] + u2 * m[0] - u0 * m[2]
    out[5] = w0 * m[4] - w1 * m[3] + u0 * m[1] - u1 * m[0]


@inline
def cross_force(v: np.ndarray, f: np.ndarray, out: np.ndarray) -> None:
    """out = v x* f for force vectors."""
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    out[0] = w1 * f[2] - w2 * f[1] + u1 * f[5] - u2 * f[4]
    out[1] = w2 * f[0] - w0 * f[2] + u2 * f[3] - u0 * f[5]
    out[2] = w0 * f[1] - w1 * f[0] + u0 * f[4] - u1 * f[3]
    out[3] = w1 * f[5] - w2 * f[4]
    out[4] = w2 * f[3] - w0 * f[5]
    out[5] = w0 * f[4] - w1 * f[3]
