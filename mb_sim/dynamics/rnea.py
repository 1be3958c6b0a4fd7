"""Recursive Newton-Euler inverse dynamics (Valášek 2011 ch. 11; Featherstone's RNEA).

Forward pass: v_i = X_i v_p + S_i qd_i, a_i = X_i a_p + S_i qdd_i + v_i x S_i qd_i,
f_i = I_i a_i + v_i x* I_i v_i. Backward pass: tau_i = S_i^T f_i, f_p += X_i^T f_i.
Gravity is the base acceleration a_0 = [0; -g]. The viscous damping torque damping * qd is
added, so that `rnea` is the exact inverse of `aba`: the torque the joints must apply.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, inline
from mb_sim.dynamics.floating import base_gravity, is_floating, parent_slot
from mb_sim.dynamics.spatial import (
    cross_force,
    cross_motion,
    dot6,
    joint_transform,
    mtv6_add,
    mv6,
)


@helper
def inverse_dynamics(tree: Any, w: Any, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                     tau: np.ndarray) -> None:
    """tau of the tree record (gravity tree.a0) into `tau`; w is its work record. A floating
    base (body n) moves with v_0 = qd[n:], a_0 = qdd[n:] + [0; -R^T g]; tau[n:] is the
    wrench [moment; force] (base axes) it needs, f_0 with every subtree's force added."""
    parent, inertia, damping = tree.parent, tree.inertia, tree.damping
    X, S, v, a, f, t6, u6 = w.X, w.S, w.v, w.a, w.pA, w.vec6, w.vec6b
    n = parent.shape[0]
    floating = is_floating(tree)
    if floating:
        base_gravity(tree, q, w.joint_rot, w.base_a0)
        for k in range(6):
            v[n, k] = qd[n + k]
            a[n, k] = qdd[n + k] + w.base_a0[k]
        _body_force(tree.base_inertia[0], v[n], a[n], f[n], t6, u6)
    for i in range(n):
        joint_transform(tree, w, i, q[i], X[i], S[i])
        j = parent_slot(parent, i, floating)
        if j < 0:
            mv6(X[i], tree.a0, a[i])
            v[i, :] = 0.0
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
        _body_force(inertia[i], v[i], a[i], f[i], t6, u6)
    for i in range(n - 1, -1, -1):
        tau[i] = dot6(S[i], f[i]) + damping[i] * qd[i]
        j = parent_slot(parent, i, floating)
        if j >= 0:
            mtv6_add(X[i], f[i], f[j])
    if floating:
        for k in range(6):
            tau[n + k] = f[n, k]


@inline
def _body_force(inertia: np.ndarray, v: np.ndarray, a: np.ndarray, f: np.ndarray,
                t6: np.ndarray, u6: np.ndarray) -> None:
    """f = I a + v x* I v (Newton-Euler of one body)."""
    mv6(inertia, a, f)
    mv6(inertia, v, t6)
    cross_force(v, t6, u6)
    for k in range(6):
        f[k] += u6[k]
