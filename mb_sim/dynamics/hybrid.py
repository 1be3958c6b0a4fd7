"""Hybrid dynamics: some joints have prescribed accelerations, the rest given torques.

This is the tree form of the "active joints" of Wawrzyński 2009 Part II (Secs. 9-11): a prescribed
joint transmits its subtree's articulated inertia rigidly to its parent,
    I^a = I^A_i,  p^a = p^A_i + I^A_i (c_i + S_i qdd_i),
and, on the way out, its torque is the force the subtree needs, tau_i = S_i^T (I^A_i a_i + p^A_i)
(plus the damping torque). Free joints follow ABA (Holck 2005, ch. 3).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper
from mb_sim.dynamics.spatial import (
    ball_bias,
    congruence_add,
    cross_force,
    cross_motion,
    dot6,
    joint_transform,
    mv6,
    transform_force_add,
    transform_motion,
)
from mb_sim.model.model import BALL_X


@helper
def hybrid_dynamics(tree: Any, w: Any, q: np.ndarray, qd: np.ndarray, tau: np.ndarray,
                    qdd_prescribed: np.ndarray, prescribed: np.ndarray, qdd: np.ndarray,
                    tau_out: np.ndarray) -> None:
    """qdd of every joint and tau_out (tau, with the prescribed joints' needed torques) of
    a forest of one fixed-base tree (gravity tree.a0[0]); w is its work record. qd, tau
    and the accelerations have one entry per body; q is the tree's positions (`qadr`)."""
    parent, inertia, damping = tree.parent, tree.inertia, tree.damping
    X, S, v, c, IA, pA, U, D, u, a = w.X, w.S, w.v, w.c, w.IA, w.pA, w.U, w.D, w.u, w.a
    t6, u6 = w.vec6, w.vec6b
    n = parent.shape[0]
    Ia, tmp = w.passed_inertia, w.mat6
    for i in range(n):
        joint_transform(tree, w, i, q)
        j = parent[i]
        if j >= 0:
            transform_motion(X, i, v[j, 0], v[j, 1], v[j, 2], v[j, 3], v[j, 4], v[j, 5], v, i)
        else:
            v[i, :] = 0.0
        for k in range(6):
            v[i, k] += S[i, k] * qd[i]
        c[i, :] = 0.0
        if tree.joint_type[i] >= BALL_X:
            ball_bias(tree.joint_type, tree.vadr, i, qd, v, c, i)
        elif j >= 0:
            cross_motion(v[i], S[i], c[i])
            for k in range(6):
                c[i, k] *= qd[i]
        IA[i] = inertia[i]
        mv6(inertia[i], v[i], t6)
        cross_force(v[i], t6, pA[i])
    for i in range(n - 1, -1, -1):
        j = parent[i]
        if prescribed[i]:
            Ia[:] = IA[i]
            for k in range(6):
                u6[k] = c[i, k] + S[i, k] * qdd_prescribed[i]
            mv6(IA[i], u6, t6)
            for k in range(6):
                t6[k] += pA[i, k]
        else:
            mv6(IA[i], S[i], U[i])
            D[i] = dot6(S[i], U[i])
            u[i] = tau[i] - damping[i] * qd[i] - dot6(S[i], pA[i])
            for r in range(6):
                for k in range(6):
                    Ia[r, k] = IA[i, r, k] - U[i, r] * U[i, k] / D[i]
            mv6(Ia, c[i], t6)
            for k in range(6):
                t6[k] += pA[i, k] + U[i, k] * (u[i] / D[i])
        if j >= 0:
            congruence_add(X, i, Ia, IA, j, tmp)
            transform_force_add(X, i, t6, pA, j)
    tau_out[:] = tau
    for i in range(n):
        j = parent[i]
        g = tree.a0[0] if j < 0 else a[j]
        for r in range(6):  # X_i g (its zero block included)
            t6[r] = (X[i, r, 0] * g[0] + X[i, r, 1] * g[1] + X[i, r, 2] * g[2] + X[i, r, 3] * g[3]
                     + X[i, r, 4] * g[4] + X[i, r, 5] * g[5])
        for k in range(6):
            t6[k] += c[i, k]
        if prescribed[i]:
            qdd[i] = qdd_prescribed[i]
            for k in range(6):
                a[i, k] = t6[k] + S[i, k] * qdd[i]
            mv6(IA[i], a[i], u6)
            for k in range(6):
                u6[k] += pA[i, k]
            tau_out[i] = dot6(S[i], u6) + damping[i] * qd[i]
        else:
            qdd[i] = (u[i] - dot6(U[i], t6)) / D[i]
            for k in range(6):
                a[i, k] = t6[k] + S[i, k] * qdd[i]
