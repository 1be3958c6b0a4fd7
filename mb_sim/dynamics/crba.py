"""Composite-rigid-body algorithm: the joint-space mass matrix H(q) (Valášek 2011, ch. 8(A)).

I^C_i = I_i + sum over children X_c^T I^C_c X_c (tips -> base); then for each i,
F = I^C_i S_i, H_ii = S_i^T F, and walking to the root, F = X_j^T F, H_ij = H_ji = S_j^T F.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import njit
from mb_sim.dynamics.floating import is_floating, parent_slot
from mb_sim.dynamics.spatial import congruence_add, dot6, joint_transform, mtv6_add, mv6


@njit
def mass_matrix(tree: Any, w: Any, q: np.ndarray, H: np.ndarray) -> None:
    """H(q) of the tree record into H (nv, nv); w is its work record. A floating base (body
    n, S = 1) adds H_00 = I^C_0 and, for each joint i, H_0i = F carried to the base."""
    parent = tree.parent
    X, S, Ic, F, G = w.X, w.S, w.IA, w.vec6, w.vec6b
    n = parent.shape[0]
    floating = is_floating(tree)
    tmp = w.mat6
    for i in range(n):
        joint_transform(tree, w, i, q[i], X[i], S[i])
        Ic[i] = tree.inertia[i]
    if floating:
        Ic[n] = tree.base_inertia[0]
    for i in range(n - 1, -1, -1):
        j = parent_slot(parent, i, floating)
        if j >= 0:
            congruence_add(X[i], Ic[i], Ic[j], tmp)
    H[:, :] = 0.0
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
        if floating:
            G[:] = 0.0
            mtv6_add(X[k], F, G)
            for r in range(6):
                H[i, n + r] = G[r]
                H[n + r, i] = G[r]
    if floating:
        for r in range(6):
            for c in range(6):
                H[n + r, n + c] = Ic[n, r, c]
