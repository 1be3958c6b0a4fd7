"""Recursive Newton-Euler inverse dynamics (004.md ch. 11; Featherstone's RNEA).

Forward pass: v_i = X_i v_p + S_i qd_i, a_i = X_i a_p + S_i qdd_i + v_i x S_i qd_i,
f_i = I_i a_i + v_i x* I_i v_i. Backward pass: tau_i = S_i^T f_i, f_p += X_i^T f_i.
Gravity is the base acceleration a_0 = [0; -g]. The viscous damping torque damping * qd is
added, so that `rnea` is the exact inverse of `aba`: the torque the joints must apply.
"""

from __future__ import annotations

import numpy as np

from mb_sim._jit import njit
from mb_sim.dynamics.spatial import (
    cross_force,
    cross_motion,
    dot6,
    joint_pose,
    mtv6_add,
    mv6,
    plucker,
)


@njit
def rnea_kernel(
    parent: np.ndarray,
    joint_type: np.ndarray,
    axis: np.ndarray,
    tree_rot: np.ndarray,
    tree_pos: np.ndarray,
    inertia: np.ndarray,
    damping: np.ndarray,
    q: np.ndarray,
    qd: np.ndarray,
    qdd: np.ndarray,
    a0: np.ndarray,
) -> np.ndarray:
    n = parent.shape[0]
    X = np.empty((n, 6, 6))
    S = np.zeros((n, 6))
    v = np.zeros((n, 6))
    a = np.zeros((n, 6))
    f = np.zeros((n, 6))
    R = np.empty((3, 3))
    p = np.empty(3)
    t6 = np.empty(6)
    u6 = np.empty(6)
    for i in range(n):
        joint_pose(joint_type[i], axis[i], tree_rot[i], tree_pos[i], q[i], R, p)
        plucker(R, p, X[i])
        if joint_type[i] == 0:
            S[i, :3] = axis[i]
        else:
            S[i, 3:] = axis[i]
        j = parent[i]
        if j < 0:
            mv6(X[i], a0, a[i])
        else:
            mv6(X[i], v[j], v[i])
            mv6(X[i], a[j], a[i])
        for k in range(6):
            v[i, k] += S[i, k] * qd[i]
            a[i, k] += S[i, k] * qdd[i]
        if j >= 0:
            cross_motion(v[i], S[i], t6)
            for k in range(6):
                a[i, k] += t6[k] * qd[i]
        mv6(inertia[i], a[i], f[i])
        mv6(inertia[i], v[i], t6)
        cross_force(v[i], t6, u6)
        for k in range(6):
            f[i, k] += u6[k]
    tau = np.zeros(n)
    for i in range(n - 1, -1, -1):
        tau[i] = dot6(S[i], f[i]) + damping[i] * qd[i]
        j = parent[i]
        if j >= 0:
            mtv6_add(X[i], f[i], f[j])
    return tau
