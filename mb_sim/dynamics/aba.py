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
torque -damping * qd added to tau. A floating base is the root body of the same passes, its
acceleration solved from its articulated inertia (RBDA's floating-base ABA).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, njit
from mb_sim.dynamics.floating import (
    base_gravity,
    cholesky6,
    cholesky_solve6,
    is_floating,
    parent_slot,
)
from mb_sim.dynamics.spatial import (
    congruence_add,
    cross_force,
    cross_motion,
    dot6,
    joint_transform,
    mtv6_add,
    mv6,
)


@helper
def _outward(tree: Any, w: Any, q: np.ndarray, qd: np.ndarray, floating: bool) -> None:
    """Pass 1, base -> tips: X_i, S_i, v_i, c_i, I^A_i = I_i and p^A_i = v_i x* I_i v_i -
    f_ext,i (a floating base first, from its own twist)."""
    parent, inertia = tree.parent, tree.inertia
    X, S, IA, v, c, pA, f_ext = w.X, w.S, w.IA, w.v, w.c, w.pA, w.f_ext
    t6 = w.vec6
    n = parent.shape[0]
    if floating:
        for k in range(6):
            v[n, k] = qd[n + k]
        IA[n] = tree.base_inertia[0]
        mv6(IA[n], v[n], t6)
        cross_force(v[n], t6, pA[n])
        for k in range(6):
            pA[n, k] -= f_ext[n, k]
    for i in range(n):
        joint_transform(tree, w, i, q[i], X[i], S[i])
        j = parent_slot(parent, i, floating)
        if j >= 0:
            mv6(X[i], v[j], v[i])
        else:
            v[i, :] = 0.0
        for k in range(6):
            v[i, k] += S[i, k] * qd[i]
        if j >= 0:
            cross_motion(v[i], S[i], c[i])
            for k in range(6):
                c[i, k] *= qd[i]
        else:
            c[i, :] = 0.0
        IA[i] = inertia[i]
        mv6(inertia[i], v[i], t6)
        cross_force(v[i], t6, pA[i])
        for k in range(6):
            pA[i, k] -= f_ext[i, k]


@helper
def _inward(tree: Any, w: Any, qd: np.ndarray, tau: np.ndarray, floating: bool) -> None:
    """Pass 2, tips -> base: U_i, D_i, u_i, and each body's I^a_i and bias passed to its
    parent (eqs. 3.33, 3.34)."""
    parent, damping = tree.parent, tree.damping
    X, S, U, D, IA, c, pA, u = w.X, w.S, w.U, w.D, w.IA, w.c, w.pA, w.u
    t6, Ia, tmp = w.vec6, w.passed_inertia, w.mat6
    for i in range(parent.shape[0] - 1, -1, -1):
        mv6(IA[i], S[i], U[i])
        D[i] = dot6(S[i], U[i])
        u[i] = tau[i] - damping[i] * qd[i] - dot6(S[i], pA[i])
        j = parent_slot(parent, i, floating)
        if j >= 0:
            for r in range(6):
                for k in range(6):
                    Ia[r, k] = IA[i, r, k] - U[i, r] * U[i, k] / D[i]
            mv6(Ia, c[i], t6)
            for k in range(6):
                t6[k] += pA[i, k] + U[i, k] * (u[i] / D[i])
            congruence_add(X[i], Ia, IA[j], tmp)
            mtv6_add(X[i], t6, pA[j])


@helper
def _accelerations(tree: Any, w: Any, q: np.ndarray, qdd: np.ndarray, floating: bool) -> None:
    """A floating base's acceleration from its articulated inertia, then pass 3, base ->
    tips: a'_i = X_i a_p + c_i, qdd_i = (u_i - U_i^T a'_i) / D_i, a_i = a'_i + S_i qdd_i."""
    parent = tree.parent
    X, S, U, D, IA, c, pA, u, a = w.X, w.S, w.U, w.D, w.IA, w.c, w.pA, w.u, w.a
    t6 = w.vec6
    n = parent.shape[0]
    a0 = tree.a0
    if floating:
        cholesky6(IA[n], w.base_cholesky)
        cholesky_solve6(w.base_cholesky, pA[n], a[n])
        a0 = w.base_a0
        base_gravity(tree, q, w.joint_rot, a0)
        for k in range(6):
            qdd[n + k] = a[n, k] - a0[k]
    for i in range(n):
        j = parent_slot(parent, i, floating)
        mv6(X[i], a0 if j < 0 else a[j], t6)
        for k in range(6):
            t6[k] += c[i, k]
        qdd[i] = (u[i] - dot6(U[i], t6)) / D[i]
        for k in range(6):
            a[i, k] = t6[k] + S[i, k] * qdd[i]


@njit
def articulated_accelerations(tree: Any, w: Any, q: np.ndarray, qd: np.ndarray,
                              tau: np.ndarray, qdd: np.ndarray) -> None:
    """qdd of the tree (a `mb_sim.model.compile.Tree`) with gravity tree.a0; leaves X, S, U,
    D, I^A of q in the work record w (`mb_sim.dynamics.work.TreeWork`) for the impulse
    response. External forces w.f_ext (body coordinates) enter the bias force. tau: the
    joints' efforts (n).

    A floating base (mb_sim.dynamics.floating) is body n: v_0 = qd[n:], I^A_0 = I_0 plus the
    articulated inertias of its subtrees; after pass 2, a'_0 = -I^A_0^-1 p^A_0 is its
    acceleration relative to free fall (all of pass 3 runs relative to free fall, as the
    fixed base's a_0 = [0; -g] does), and qdd[n:] = a'_0 - a_0 with a_0 = [0; -R^T g]."""
    floating = is_floating(tree)
    _outward(tree, w, q, qd, floating)
    _inward(tree, w, qd, tau, floating)
    _accelerations(tree, w, q, qdd, floating)
