"""Recursive Newton-Euler inverse dynamics (Valášek 2011 ch. 11; Featherstone's RNEA).

Forward pass: v_i = X_i v_p + S_i qd_i, a_i = X_i a_p + S_i qdd_i + v_i x S_i qd_i,
f_i = I_i a_i + v_i x* I_i v_i. Backward pass: tau_i = S_i^T f_i, f_p += X_i^T f_i.
A ball joint's velocity-product term is `spatial.ball_bias` (docs/architecture.md, "Ball
joints in the tree"). Gravity is the base acceleration a_0 = [0; -g]. The viscous damping
torque damping * qd is
added, so that `rnea` is the exact inverse of `aba`: the torque the joints must apply.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper
from mb_sim.dynamics.floating import base_gravity
from mb_sim.dynamics.spatial import (
    ball_bias,
    body_force,
    joint_transform,
    subspace_half,
    transform_force_add,
    transform_motion,
)
from mb_sim.model.model import BALL_X


@helper
def inverse_dynamics(tree: Any, w: Any, k: int, q: np.ndarray, qd: np.ndarray,
                     qdd: np.ndarray, tau: np.ndarray) -> None:
    """tau of tree k of the forest (gravity tree.a0[k]) into `tau`, in qd's layout (the
    forest's vectors; tree k's entries are read and written); w is its work record. A
    floating base (slot n + k) moves with v_0 = its twist, a_0 = its qdd + [0; -R^T g]; its
    entries of tau are the wrench [moment; force] (base axes) it needs, f_0 with every
    subtree's force added."""
    up, inertia, damping, joint_type, vadr = (tree.up, tree.inertia, tree.damping,
                                              tree.joint_type, tree.vadr)
    X, S, v, a, f, bias = w.X, w.S, w.v, w.a, w.pA, w.c
    a0 = tree.a0[k]
    n = up.shape[0]
    base = n + k
    floating = tree.floating[k]
    if floating:
        vb = tree.tree_v[k + 1] - 6
        g = w.base_a0[k]
        base_gravity(tree, k, q, w.joint_rot, g)
        for c in range(6):
            v[base, c] = qd[vb + c]
            a[base, c] = qdd[vb + c] + g[c]
        body_force(tree.base_inertia, k, v, a, f, base)
    b0, b1 = tree.tree_body[k], tree.tree_body[k + 1]
    for i in range(b0, b1):
        joint_transform(tree, w, i, q)
        j = up[i]
        qdi, qddi = qd[vadr[i]], qdd[vadr[i]]
        o = subspace_half(joint_type, i)  # S_i's nonzero half
        if j < 0:
            transform_motion(X, i, a0[0], a0[1], a0[2], a0[3], a0[4], a0[5], a, i)
            for c in range(6):
                v[i, c] = 0.0
        else:
            transform_motion(X, i, v[j, 0], v[j, 1], v[j, 2], v[j, 3], v[j, 4], v[j, 5], v, i)
            transform_motion(X, i, a[j, 0], a[j, 1], a[j, 2], a[j, 3], a[j, 4], a[j, 5], a, i)
        s0, s1, s2 = S[i, o] * qdi, S[i, o + 1] * qdi, S[i, o + 2] * qdi
        if j >= 0 and joint_type[i] < BALL_X:  # a_i += v_i x (S_i qd_i), before v_i has
            # S_i qd_i (its own part is 0)
            w0, w1, w2, u0, u1, u2 = v[i, 0], v[i, 1], v[i, 2], v[i, 3], v[i, 4], v[i, 5]
            if o == 0:
                a[i, 0] += w1 * s2 - w2 * s1
                a[i, 1] += w2 * s0 - w0 * s2
                a[i, 2] += w0 * s1 - w1 * s0
                a[i, 3] += u1 * s2 - u2 * s1
                a[i, 4] += u2 * s0 - u0 * s2
                a[i, 5] += u0 * s1 - u1 * s0
            else:
                a[i, 3] += w1 * s2 - w2 * s1
                a[i, 4] += w2 * s0 - w0 * s2
                a[i, 5] += w0 * s1 - w1 * s0
        v[i, o] += s0
        v[i, o + 1] += s1
        v[i, o + 2] += s2
        if joint_type[i] >= BALL_X:
            ball_bias(joint_type, vadr, i, qd, v, bias, i)
            for r in range(6):
                a[i, r] += bias[i, r]
        a[i, o] += S[i, o] * qddi
        a[i, o + 1] += S[i, o + 1] * qddi
        a[i, o + 2] += S[i, o + 2] * qddi
        body_force(inertia, i, v, a, f, i)
    for i in range(b1 - 1, b0 - 1, -1):
        o = subspace_half(joint_type, i)
        tau[vadr[i]] = (S[i, o] * f[i, o] + S[i, o + 1] * f[i, o + 1] + S[i, o + 2] * f[i, o + 2]
                        + damping[i] * qd[vadr[i]])
        j = up[i]
        if j >= 0:
            transform_force_add(X, i, f[i], f, j)
    if floating:
        vb = tree.tree_v[k + 1] - 6
        for c in range(6):
            tau[vb + c] = f[base, c]
