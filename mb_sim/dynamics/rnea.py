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
    motion_subspace,
    mtv6,
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
    X = np.zeros((n, 6, 6))
    S = np.zeros((n, 6))
    v = np.zeros((n, 6))
    a = np.zeros((n, 6))
    f = np.zeros((n, 6))
    for i in range(n):
        R, p = joint_pose(joint_type[i], axis[i], tree_rot[i], tree_pos[i], q[i])
        X[i] = plucker(R, p)
        S[i] = motion_subspace(joint_type[i], axis[i])
        vJ = S[i] * qd[i]
        j = parent[i]
        if j < 0:
            v[i] = vJ
            a[i] = mv6(X[i], a0) + S[i] * qdd[i]
        else:
            v[i] = mv6(X[i], v[j]) + vJ
            a[i] = mv6(X[i], a[j]) + S[i] * qdd[i] + cross_motion(v[i], vJ)
        f[i] = mv6(inertia[i], a[i]) + cross_force(v[i], mv6(inertia[i], v[i]))
    tau = np.zeros(n)
    for i in range(n - 1, -1, -1):
        tau[i] = dot6(S[i], f[i]) + damping[i] * qd[i]
        j = parent[i]
        if j >= 0:
            f[j] += mtv6(X[i], f[i])
    return tau
