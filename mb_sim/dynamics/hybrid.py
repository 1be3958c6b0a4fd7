"""Hybrid dynamics: some joints have prescribed accelerations, the rest given torques.

This is the tree form of the "active joints" of 001.md Part II (Secs. 9-11): a prescribed
joint transmits its subtree's articulated inertia rigidly to its parent,
    I^a = I^A_i,  p^a = p^A_i + I^A_i (c_i + S_i qdd_i),
and, on the way out, its torque is the force the subtree needs, tau_i = S_i^T (I^A_i a_i + p^A_i)
(plus the damping torque). Free joints follow ABA (000.md 2.4).
"""

from __future__ import annotations

import numpy as np

from mb_sim._jit import njit
from mb_sim.dynamics.spatial import (
    congruence_add,
    cross_force,
    cross_motion,
    dot6,
    joint_pose,
    mtv6_add,
    mv6,
    plucker,
)


@njit
def hybrid_kernel(
    parent: np.ndarray,
    joint_type: np.ndarray,
    axis: np.ndarray,
    tree_rot: np.ndarray,
    tree_pos: np.ndarray,
    inertia: np.ndarray,
    damping: np.ndarray,
    q: np.ndarray,
    qd: np.ndarray,
    tau: np.ndarray,
    qdd_prescribed: np.ndarray,
    prescribed: np.ndarray,
    a0: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    n = parent.shape[0]
    X = np.zeros((n, 6, 6))
    S = np.zeros((n, 6))
    v = np.zeros((n, 6))
    c = np.zeros((n, 6))
    IA = np.zeros((n, 6, 6))
    pA = np.zeros((n, 6))
    U = np.zeros((n, 6))
    D = np.zeros(n)
    u = np.zeros(n)
    R, p = np.empty((3, 3)), np.empty(3)
    t6, u6, Ia, tmp = np.empty(6), np.empty(6), np.empty((6, 6)), np.empty((6, 6))
    for i in range(n):
        joint_pose(joint_type[i], axis[i], tree_rot[i], tree_pos[i], q[i], R, p)
        plucker(R, p, X[i])
        if joint_type[i] == 0:
            S[i, :3] = axis[i]
        else:
            S[i, 3:] = axis[i]
        j = parent[i]
        if j >= 0:
            mv6(X[i], v[j], v[i])
        v[i] += S[i] * qd[i]
        if j >= 0:
            cross_motion(v[i], S[i], c[i])
            c[i] *= qd[i]
        IA[i] = inertia[i]
        mv6(inertia[i], v[i], t6)
        cross_force(v[i], t6, pA[i])
    for i in range(n - 1, -1, -1):
        j = parent[i]
        if prescribed[i]:
            Ia[:] = IA[i]
            mv6(IA[i], c[i] + S[i] * qdd_prescribed[i], t6)
            t6 += pA[i]
        else:
            mv6(IA[i], S[i], U[i])
            D[i] = dot6(S[i], U[i])
            u[i] = tau[i] - damping[i] * qd[i] - dot6(S[i], pA[i])
            Ia[:] = IA[i] - np.outer(U[i], U[i]) / D[i]
            mv6(Ia, c[i], t6)
            t6 += pA[i] + U[i] * (u[i] / D[i])
        if j >= 0:
            congruence_add(X[i], Ia, IA[j], tmp)
            mtv6_add(X[i], t6, pA[j])
    qdd = np.zeros(n)
    tau_out = tau.copy()
    a = np.zeros((n, 6))
    for i in range(n):
        j = parent[i]
        mv6(X[i], a0 if j < 0 else a[j], t6)
        t6 += c[i]
        if prescribed[i]:
            qdd[i] = qdd_prescribed[i]
            a[i] = t6 + S[i] * qdd[i]
            mv6(IA[i], a[i], u6)
            tau_out[i] = dot6(S[i], u6 + pA[i]) + damping[i] * qd[i]
        else:
            qdd[i] = (u[i] - dot6(U[i], t6)) / D[i]
            a[i] = t6 + S[i] * qdd[i]
    return qdd, tau_out
