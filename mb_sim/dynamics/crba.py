"""Composite-rigid-body algorithm: the joint-space mass matrix H(q) (Valášek 2011, ch. 8(A)),
in the base's coordinates.

Every body's inertia is carried to the base frame as a rigid-body inertia of ten numbers: mass
m, first moment h = m c and rotational inertia I about the base origin (RBDA's rigid-body
inertia). A body posed at (R, p) in the base, with (m, h_b, I_b) about its own origin in its own
axes, has h = R h_b + m p and, with h' = R h_b, I' = R I_b R^T,

    I = I' - (p h'^T + h' p^T) + 2 (h'.p) 1 + m ((p.p) 1 - p p^T)

(the parallel-axis theorem for a point offset p). Composite inertias I^C_i (tips -> base) are
then sums, and joint i's motion subspace in base coordinates, s_i = [a; p_i x a] for a revolute
joint (or a ball joint's dof) with world axis a through p_i and [0; a] for a prismatic one,
gives

    F_i = I^C_i s_i = [I w + h x v; m v - h x w],   H_ii = s_i . F_i,   H_ij = s_j . F_i

for every ancestor j of i: no transform of F along the path.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, inline, njit
from mb_sim.dynamics.spatial import joint_pose
from mb_sim.model.model import PRISMATIC


@helper
def _composite_inertias(tree: Any, w: Any, k: int, q: np.ndarray) -> None:
    """Tree k's bodies posed relative to its base (w.rot, w.pos), their motion subspaces in
    base coordinates (w.S) and composite inertias (w.composite; slot n + k: a floating
    base's, with every subtree's)."""
    parent, joint_type, axis, inertia = tree.parent, tree.joint_type, tree.axis, tree.inertia
    rot, pos, S, comp, qadr = w.rot, w.pos, w.S, w.composite, tree.qadr
    R, p = w.joint_rot, w.joint_pos
    b0, b1 = tree.tree_body[k], tree.tree_body[k + 1]
    base = parent.shape[0] + k
    for i in range(b0, b1):
        joint_pose(joint_type, axis, tree.tree_rot, tree.tree_pos, i, q, qadr[i], R, p)
        j = parent[i]
        if j < 0:
            for r in range(3):
                pos[i, r] = p[r]
                for c in range(3):
                    rot[i, r, c] = R[r, c]
        else:
            for r in range(3):
                pos[i, r] = pos[j, r] + rot[j, r, 0] * p[0] + rot[j, r, 1] * p[1] \
                    + rot[j, r, 2] * p[2]
                for c in range(3):
                    rot[i, r, c] = rot[j, r, 0] * R[0, c] + rot[j, r, 1] * R[1, c] \
                        + rot[j, r, 2] * R[2, c]
        ax0, ax1, ax2 = axis[i, 0], axis[i, 1], axis[i, 2]
        a0 = rot[i, 0, 0] * ax0 + rot[i, 0, 1] * ax1 + rot[i, 0, 2] * ax2
        a1 = rot[i, 1, 0] * ax0 + rot[i, 1, 1] * ax1 + rot[i, 1, 2] * ax2
        a2 = rot[i, 2, 0] * ax0 + rot[i, 2, 1] * ax1 + rot[i, 2, 2] * ax2
        if joint_type[i] != PRISMATIC:
            x0, x1, x2 = pos[i, 0], pos[i, 1], pos[i, 2]
            S[i, 0], S[i, 1], S[i, 2] = a0, a1, a2
            S[i, 3], S[i, 4], S[i, 5] = x1 * a2 - x2 * a1, x2 * a0 - x0 * a2, x0 * a1 - x1 * a0
        else:
            S[i, 0], S[i, 1], S[i, 2] = 0.0, 0.0, 0.0
            S[i, 3], S[i, 4], S[i, 5] = a0, a1, a2
        _body_inertia(inertia, rot, pos, i, comp)
    if tree.floating[k]:
        B = tree.base_inertia[k]
        comp[base, 0] = B[3, 3]
        comp[base, 1], comp[base, 2], comp[base, 3] = B[2, 4], B[0, 5], B[1, 3]
        comp[base, 4], comp[base, 5], comp[base, 6] = B[0, 0], B[1, 1], B[2, 2]
        comp[base, 7], comp[base, 8], comp[base, 9] = B[0, 1], B[0, 2], B[1, 2]
    for i in range(b1 - 1, b0 - 1, -1):
        j = tree.up[i]
        if j >= 0:
            for c in range(10):
                comp[j, c] += comp[i, c]


@njit
def mass_matrix(tree: Any, w: Any, k: int, q: np.ndarray, H: np.ndarray) -> None:
    """H(q) of tree k of the forest into H (nv_k, nv_k; local: joint i at i - tree_body[k],
    a floating base's twist last); w is the work record (poses relative to the base in rot,
    pos; motion subspaces in S; composite inertias in `composite`). A floating base (slot
    n + k, S = 1) adds H_00 = I^C_0 and H_0i = F_i."""
    _composite_inertias(tree, w, k, q)
    parent, S, comp = tree.parent, w.S, w.composite
    b0, b1 = tree.tree_body[k], tree.tree_body[k + 1]
    nj = b1 - b0
    base = parent.shape[0] + k
    floating = tree.floating[k]
    H[:, :] = 0.0
    for i in range(b0, b1):
        m, h0, h1, h2 = comp[i, 0], comp[i, 1], comp[i, 2], comp[i, 3]
        ixx, iyy, izz, ixy, ixz, iyz = (comp[i, 4], comp[i, 5], comp[i, 6], comp[i, 7],
                                        comp[i, 8], comp[i, 9])
        w0, w1, w2, v0, v1, v2 = S[i, 0], S[i, 1], S[i, 2], S[i, 3], S[i, 4], S[i, 5]
        f0 = ixx * w0 + ixy * w1 + ixz * w2 + h1 * v2 - h2 * v1
        f1 = ixy * w0 + iyy * w1 + iyz * w2 + h2 * v0 - h0 * v2
        f2 = ixz * w0 + iyz * w1 + izz * w2 + h0 * v1 - h1 * v0
        f3 = m * v0 - (h1 * w2 - h2 * w1)
        f4 = m * v1 - (h2 * w0 - h0 * w2)
        f5 = m * v2 - (h0 * w1 - h1 * w0)
        c = i
        while c >= 0:
            H[i - b0, c - b0] = (S[c, 0] * f0 + S[c, 1] * f1 + S[c, 2] * f2 + S[c, 3] * f3
                                 + S[c, 4] * f4 + S[c, 5] * f5)
            H[c - b0, i - b0] = H[i - b0, c - b0]
            c = parent[c]
        if floating:
            r = i - b0
            H[r, nj], H[r, nj + 1], H[r, nj + 2] = f0, f1, f2
            H[r, nj + 3], H[r, nj + 4], H[r, nj + 5] = f3, f4, f5
            for c in range(6):
                H[nj + c, r] = H[r, nj + c]
    if floating:
        m, h0, h1, h2 = comp[base, 0], comp[base, 1], comp[base, 2], comp[base, 3]
        top = ((comp[base, 4], comp[base, 7], comp[base, 8]),
               (comp[base, 7], comp[base, 5], comp[base, 9]),
               (comp[base, 8], comp[base, 9], comp[base, 6]))
        hx = ((0.0, -h2, h1), (h2, 0.0, -h0), (-h1, h0, 0.0))
        for r in range(3):
            for c in range(3):
                H[nj + r, nj + c] = top[r][c]
                H[nj + r, nj + 3 + c] = hx[r][c]
                H[nj + 3 + r, nj + c] = -hx[r][c]
                H[nj + 3 + r, nj + 3 + c] = m if r == c else 0.0


@inline
def _body_inertia(I6: np.ndarray, R: np.ndarray, p: np.ndarray, i: int, out: np.ndarray
                  ) -> None:
    """out[i] = the ten numbers of body i's spatial inertia I6[i] (about its origin, body
    axes) about the base origin in base axes, for the body posed at (R[i], p[i]) (module
    docstring; arrays and an index rather than row views, which numba reference-counts)."""
    m = I6[i, 3, 3]
    b0, b1, b2 = I6[i, 2, 4], I6[i, 0, 5], I6[i, 1, 3]  # h in body axes: I6[i, 0:3, 3:6] = h~
    g0 = R[i, 0, 0] * b0 + R[i, 0, 1] * b1 + R[i, 0, 2] * b2
    g1 = R[i, 1, 0] * b0 + R[i, 1, 1] * b1 + R[i, 1, 2] * b2
    g2 = R[i, 2, 0] * b0 + R[i, 2, 1] * b1 + R[i, 2, 2] * b2
    # R I_b R^T: T = R I_b, then its products with the rows of R
    t00 = R[i, 0, 0] * I6[i, 0, 0] + R[i, 0, 1] * I6[i, 1, 0] + R[i, 0, 2] * I6[i, 2, 0]
    t01 = R[i, 0, 0] * I6[i, 0, 1] + R[i, 0, 1] * I6[i, 1, 1] + R[i, 0, 2] * I6[i, 2, 1]
    t02 = R[i, 0, 0] * I6[i, 0, 2] + R[i, 0, 1] * I6[i, 1, 2] + R[i, 0, 2] * I6[i, 2, 2]
    t10 = R[i, 1, 0] * I6[i, 0, 0] + R[i, 1, 1] * I6[i, 1, 0] + R[i, 1, 2] * I6[i, 2, 0]
    t11 = R[i, 1, 0] * I6[i, 0, 1] + R[i, 1, 1] * I6[i, 1, 1] + R[i, 1, 2] * I6[i, 2, 1]
    t12 = R[i, 1, 0] * I6[i, 0, 2] + R[i, 1, 1] * I6[i, 1, 2] + R[i, 1, 2] * I6[i, 2, 2]
    t20 = R[i, 2, 0] * I6[i, 0, 0] + R[i, 2, 1] * I6[i, 1, 0] + R[i, 2, 2] * I6[i, 2, 0]
    t21 = R[i, 2, 0] * I6[i, 0, 1] + R[i, 2, 1] * I6[i, 1, 1] + R[i, 2, 2] * I6[i, 2, 1]
    t22 = R[i, 2, 0] * I6[i, 0, 2] + R[i, 2, 1] * I6[i, 1, 2] + R[i, 2, 2] * I6[i, 2, 2]
    xx = t00 * R[i, 0, 0] + t01 * R[i, 0, 1] + t02 * R[i, 0, 2]
    yy = t10 * R[i, 1, 0] + t11 * R[i, 1, 1] + t12 * R[i, 1, 2]
    zz = t20 * R[i, 2, 0] + t21 * R[i, 2, 1] + t22 * R[i, 2, 2]
    xy = t00 * R[i, 1, 0] + t01 * R[i, 1, 1] + t02 * R[i, 1, 2]
    xz = t00 * R[i, 2, 0] + t01 * R[i, 2, 1] + t02 * R[i, 2, 2]
    yz = t10 * R[i, 2, 0] + t11 * R[i, 2, 1] + t12 * R[i, 2, 2]
    p0, p1, p2 = p[i, 0], p[i, 1], p[i, 2]
    d = 2.0 * (g0 * p0 + g1 * p1 + g2 * p2) + m * (p0 * p0 + p1 * p1 + p2 * p2)
    out[i, 0] = m
    out[i, 1], out[i, 2], out[i, 3] = g0 + m * p0, g1 + m * p1, g2 + m * p2
    out[i, 4] = xx + d - 2.0 * p0 * g0 - m * p0 * p0
    out[i, 5] = yy + d - 2.0 * p1 * g1 - m * p1 * p1
    out[i, 6] = zz + d - 2.0 * p2 * g2 - m * p2 * p2
    out[i, 7] = xy - (p0 * g1 + g0 * p1) - m * p0 * p1
    out[i, 8] = xz - (p0 * g2 + g0 * p2) - m * p0 * p2
    out[i, 9] = yz - (p1 * g2 + g1 * p2) - m * p1 * p2
