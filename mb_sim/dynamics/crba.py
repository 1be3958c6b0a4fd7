"""Composite-rigid-body algorithm: the joint-space mass matrix H(q) (004.md 8(A)).

I^C_i = I_i + sum over children X_c^T I^C_c X_c (tips -> base); then for each i,
F = I^C_i S_i, H_ii = S_i^T F, and walking to the root, F = X_j^T F, H_ij = H_ji = S_j^T F.
"""

from __future__ import annotations

import numpy as np

from mb_sim._jit import njit
from mb_sim.dynamics.spatial import (
    congruence_add,
    dot6,
    joint_pose,
    mtv6_add,
    mv6,
    plucker,
)


@njit
def crba_kernel(
    parent: np.ndarray,
    joint_type: np.ndarray,
    axis: np.ndarray,
    tree_rot: np.ndarray,
    tree_pos: np.ndarray,
    inertia: np.ndarray,
    q: np.ndarray,
) -> np.ndarray:
    n = parent.shape[0]
    X = np.empty((n, 6, 6))
    S = np.zeros((n, 6))
    Ic = inertia.copy()
    R = np.empty((3, 3))
    p = np.empty(3)
    tmp = np.empty((6, 6))
    for i in range(n):
        joint_pose(joint_type[i], axis[i], tree_rot[i], tree_pos[i], q[i], R, p)
        plucker(R, p, X[i])
        if joint_type[i] == 0:
            S[i, :3] = axis[i]
        else:
            S[i, 3:] = axis[i]
    for i in range(n - 1, -1, -1):
        j = parent[i]
        if j >= 0:
            congruence_add(X[i], Ic[i], Ic[j], tmp)
    H = np.zeros((n, n))
    F = np.empty(6)
    G = np.empty(6)
    for i in range(n):
        mv6(Ic[i], S[i], F)
        H[i, i] = dot6(S[i], F)
        k = i
        while parent[k] >= 0:
            G[:] = 0.0
            mtv6_add(X[k], F, G)
            F[:] = G
            k = parent[k]
            H[i, k] = dot6(S[k], F)
            H[k, i] = H[i, k]
    return H
