"""Featherstone's articulated-body algorithm, O(n) forward dynamics (Holck 2005, ch. 3; Valášek
2011, ch. 8(B)).

Three passes over the tree:
1. base -> tips: X_i, v_i = X_i v_p + S_i qd_i, c_i = v_i x S_i qd_i, I^A_i = I_i,
   p^A_i = v_i x* I_i v_i - f_ext,i;
2. tips -> base: U_i = I^A_i S_i, D_i = S_i^T U_i, u_i = tau_i - S_i^T p^A_i,
   I^A_p += X_i^T (I^A_i - U_i U_i^T / D_i) X_i   (eq. 3.33),
   p^A_p += X_i^T (p^A_i + I^A_i c_i + U_i u_i / D_i)   (eq. 3.34);
3. base -> tips: a'_i = X_i a_p + c_i, qdd_i = (u_i - U_i^T a'_i) / D_i,
   a_i = a'_i + S_i qdd_i   (eqs. 3.28, 3.31).
Gravity enters as a fictitious base acceleration a_0 = [0; -g]. Viscous joint damping is a
torque -damping * qd added to tau; an armature a_i (work record) adds to D_i, i.e. to H_ii
(an implicit servo's stiffness and damping over one step, mb_sim.sim.servo). A floating base
is the root body of the same passes, its acceleration solved from its articulated inertia
(RBDA's floating-base ABA). The passes run over one tree of the forest (mb_sim.model.forest).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, njit
from mb_sim.dynamics.floating import base_gravity, cholesky6, cholesky_solve6
from mb_sim.dynamics.spatial import (
    ball_bias,
    congruence_add,
    joint_transform,
    subspace_half,
    transform_force_add,
    transform_motion,
    velocity_force,
)
from mb_sim.model.model import BALL_X


@helper
def _outward(tree: Any, w: Any, k: int, q: np.ndarray, qd: np.ndarray) -> None:
    """Pass 1 over tree k, base -> tips: X_i, S_i, v_i, c_i, I^A_i = I_i and p^A_i = v_i x*
    I_i v_i - f_ext,i (a floating base first, from its own twist). A ball joint's c is
    `spatial.ball_bias`."""
    up, inertia, joint_type, vadr = tree.up, tree.inertia, tree.joint_type, tree.vadr
    X, S, IA, v, c, pA, f_ext = w.X, w.S, w.IA, w.v, w.c, w.pA, w.f_ext
    if tree.floating[k]:
        base, vb = up.shape[0] + k, tree.tree_v[k + 1] - 6
        for r in range(6):
            v[base, r] = qd[vb + r]
        IA[base] = tree.base_inertia[k]
        velocity_force(tree.base_inertia, k, v, base, pA)
        for r in range(6):
            pA[base, r] -= f_ext[base, r]
    for i in range(tree.tree_body[k], tree.tree_body[k + 1]):
        joint_transform(tree, w, i, q)
        j = up[i]
        qdi = qd[vadr[i]]
        o = subspace_half(joint_type, i)  # S_i's nonzero half: [axis; 0] or [0; axis]
        s0, s1, s2 = S[i, o] * qdi, S[i, o + 1] * qdi, S[i, o + 2] * qdi
        for r in range(6):
            c[i, r] = 0.0
        if j >= 0 and joint_type[i] < BALL_X:
            transform_motion(X, i, v[j, 0], v[j, 1], v[j, 2], v[j, 3], v[j, 4], v[j, 5], v, i)
            # c_i = v_i x S_i qd_i (v_i's own S_i qd_i drops out of the product)
            w0, w1, w2, u0, u1, u2 = v[i, 0], v[i, 1], v[i, 2], v[i, 3], v[i, 4], v[i, 5]
            if o == 0:
                c[i, 0], c[i, 1], c[i, 2] = w1 * s2 - w2 * s1, w2 * s0 - w0 * s2, w0 * s1 - w1 * s0
                c[i, 3], c[i, 4], c[i, 5] = u1 * s2 - u2 * s1, u2 * s0 - u0 * s2, u0 * s1 - u1 * s0
            else:
                c[i, 3], c[i, 4], c[i, 5] = w1 * s2 - w2 * s1, w2 * s0 - w0 * s2, w0 * s1 - w1 * s0
        elif j >= 0:
            transform_motion(X, i, v[j, 0], v[j, 1], v[j, 2], v[j, 3], v[j, 4], v[j, 5], v, i)
        else:
            for r in range(6):
                v[i, r] = 0.0
        v[i, o] += s0
        v[i, o + 1] += s1
        v[i, o + 2] += s2
        if joint_type[i] >= BALL_X:
            ball_bias(joint_type, vadr, i, qd, v, c, i)
        for r in range(6):
            for col in range(6):
                IA[i, r, col] = inertia[i, r, col]
        velocity_force(inertia, i, v, i, pA)
        for r in range(6):
            pA[i, r] -= f_ext[i, r]


@helper
def _inward(tree: Any, w: Any, k: int, qd: np.ndarray, tau: np.ndarray) -> None:
    """Pass 2 over tree k, tips -> base: U_i, D_i, u_i, and each body's I^a_i and bias
    passed to its parent (eqs. 3.33, 3.34)."""
    up, damping, joint_type, vadr = tree.up, tree.damping, tree.joint_type, tree.vadr
    X, S, U, D, IA, c, pA, u = w.X, w.S, w.U, w.D, w.IA, w.c, w.pA, w.u
    t6, Ia, tmp = w.vec6, w.passed_inertia, w.mat6
    for i in range(tree.tree_body[k + 1] - 1, tree.tree_body[k] - 1, -1):
        o = subspace_half(joint_type, i)
        s0, s1, s2 = S[i, o], S[i, o + 1], S[i, o + 2]
        for r in range(6):
            U[i, r] = IA[i, r, o] * s0 + IA[i, r, o + 1] * s1 + IA[i, r, o + 2] * s2
        D[i] = s0 * U[i, o] + s1 * U[i, o + 1] + s2 * U[i, o + 2] + w.armature[i]
        u[i] = tau[i] - damping[i] * qd[vadr[i]] - (s0 * pA[i, o] + s1 * pA[i, o + 1]
                                                    + s2 * pA[i, o + 2])
        j = up[i]
        if j >= 0:
            d = 1.0 / D[i]
            ud = u[i] * d
            c0, c1, c2, c3, c4, c5 = c[i, 0], c[i, 1], c[i, 2], c[i, 3], c[i, 4], c[i, 5]
            for r in range(6):
                g = U[i, r] * d
                for col in range(6):
                    Ia[r, col] = IA[i, r, col] - g * U[i, col]
            for r in range(6):
                t6[r] = (Ia[r, 0] * c0 + Ia[r, 1] * c1 + Ia[r, 2] * c2 + Ia[r, 3] * c3
                         + Ia[r, 4] * c4 + Ia[r, 5] * c5 + pA[i, r] + U[i, r] * ud)
            congruence_add(X, i, Ia, IA, j, tmp)
            transform_force_add(X, i, t6, pA, j)


@helper
def _accelerations(tree: Any, w: Any, k: int, q: np.ndarray, qdd: np.ndarray) -> None:
    """Tree k's floating base's acceleration from its articulated inertia, then pass 3, base
    -> tips: a'_i = X_i a_p + c_i, qdd_i = (u_i - U_i^T a'_i) / D_i, a_i = a'_i + S_i
    qdd_i."""
    up, joint_type, vadr = tree.up, tree.joint_type, tree.vadr
    X, S, U, D, IA, c, pA, u, a = w.X, w.S, w.U, w.D, w.IA, w.c, w.pA, w.u, w.a
    g = w.base_a0[k]
    if tree.floating[k]:
        base, vb = up.shape[0] + k, tree.tree_v[k + 1] - 6
        cholesky6(IA[base], w.base_cholesky[k])
        cholesky_solve6(w.base_cholesky[k], pA[base], a[base])
        base_gravity(tree, k, q, w.joint_rot, g)
        for r in range(6):
            qdd[vb + r] = a[base, r] - g[r]
    else:
        for r in range(6):
            g[r] = tree.a0[k, r]
    for i in range(tree.tree_body[k], tree.tree_body[k + 1]):
        j = up[i]
        if j < 0:
            transform_motion(X, i, g[0], g[1], g[2], g[3], g[4], g[5], a, i)
        else:
            transform_motion(X, i, a[j, 0], a[j, 1], a[j, 2], a[j, 3], a[j, 4], a[j, 5], a, i)
        s = 0.0
        for r in range(6):
            a[i, r] += c[i, r]
            s += U[i, r] * a[i, r]
        qddi = (u[i] - s) / D[i]
        qdd[vadr[i]] = qddi
        o = subspace_half(joint_type, i)
        a[i, o] += S[i, o] * qddi
        a[i, o + 1] += S[i, o + 1] * qddi
        a[i, o + 2] += S[i, o + 2] * qddi


@njit
def articulated_accelerations(tree: Any, w: Any, k: int, q: np.ndarray, qd: np.ndarray,
                              tau: np.ndarray, qdd: np.ndarray) -> None:
    """qdd of tree k of the forest (a `mb_sim.model.forest.Tree`) with gravity tree.a0[k];
    leaves X, S, U, D, I^A of q in the work record w (`mb_sim.dynamics.work.TreeWork`) for the
    impulse response. External forces w.f_ext (body coordinates) enter the bias force. q, qd
    and qdd are the forest's vectors (tree k's entries are read and written), tau the joints'
    efforts (one per body).

    A floating base is the body in slot n + k: v_0 = its twist, I^A_0 = I_0 plus the
    articulated inertias of its subtrees; after pass 2, a'_0 = -I^A_0^-1 p^A_0 is its
    acceleration relative to free fall (all of pass 3 runs relative to free fall, as the
    fixed base's a_0 = [0; -g] does), and its qdd = a'_0 - a_0 with a_0 = [0; -R^T g].
    Tree k's factors of H (`mb_sim.dynamics.joint_space`) are then no longer those of its X
    (w.factored[k])."""
    _outward(tree, w, k, q, qd)
    _inward(tree, w, k, qd, tau)
    _accelerations(tree, w, k, q, qdd)
    w.factored[k] = False
