"""Articulated impulse response (Holck 2005, ch. 3; Mirtich): how an impulse on one link changes qd.

With the articulated inertias of the last ABA evaluation (X_i, S_i, U_i = I^A_i S_i, D_i, in
the work record `mb_sim.dynamics.work.TreeWork`),
a spatial impulse Y on link k gives, in O(n) over link k's tree (the other trees of the forest
do not move; mb_sim.model.forest):
- up the path k -> root (eqs. 3.43-3.45), with Y^A_k = -Y and u_i = -S_i^T Y^A_i:
  Y^A_p += X_i^T (Y^A_i + U_i u_i / D_i);
- down the whole tree (eqs. 3.46-3.48, `propagateimpulse`):
  dqd_i = (u_i - U_i^T X_i dv_p) / D_i,  dv_i = X_i dv_p + S_i dqd_i.
This equals H^-1 J^T Y, without forming H. (The sign of Y^A follows ABA's bias-force
convention, in which external forces enter with a minus sign.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, inline, njit
from mb_sim.dynamics.floating import cholesky_solve6, slot_tree
from mb_sim.dynamics.joint_space import factor_tree, many_columns, tree_column, tree_columns


@inline
def _clear(tree: Any, w: Any, k: int) -> None:
    """Y^A and u of tree k's bodies and base to zero (the other trees' are not touched)."""
    YA, u = w.YA, w.u_impulse
    for i in range(tree.tree_body[k], tree.tree_body[k + 1]):
        u[i] = 0.0
        for c in range(6):
            YA[i, c] = 0.0
    base = tree.parent.shape[0] + k
    for c in range(6):
        YA[base, c] = 0.0


@njit
def impulse_response(tree: Any, w: Any, body: int, impulse: np.ndarray, dqd: np.ndarray) -> None:
    """dqd = H^-1 J_body^T impulse, with `impulse` = [moment; force] in body coordinates
    (body: a body, or the base slot n + k of a floating tree k); dqd is local to body's tree
    (entry i - tree_body[k] for joint i, the base's twist last)."""
    k = slot_tree(tree, body)
    _clear(tree, w, k)
    for c in range(6):
        w.YA[body, c] = -impulse[c]
    _sweeps(tree, w, k, body, -1, dqd)


@njit
def joint_impulse_response(tree: Any, w: Any, joint: int, dqd: np.ndarray) -> None:
    """dqd = H^-1 e_joint: the response to a unit impulse of the joint's own actuator (joint:
    a body of the forest; dqd local to its tree). The same two sweeps as `impulse_response`,
    started from u_joint = 1 instead of a link impulse (a joint-space impulse acts on the
    joint's two links equally and oppositely)."""
    k = tree.body_tree[joint]
    _clear(tree, w, k)
    w.u_impulse[joint] = 1.0
    _sweeps(tree, w, k, joint, joint, dqd)


@helper
def unit_response(tree: Any, w: Any, k: int, c: int) -> None:
    """w.response[v] = H^-1 e_v for v = tree_v[k] + c (c: local to tree k), computed once
    per q (w.response_ready[v]; the step clears the flags when the articulated inertias
    change). H is symmetric, so these are also the rows of H^-1: a row J gets its response
    H^-1 J^T = sum_v J_v w.response[v] from the columns its nonzero entries name, each column
    shared by every row that needs it."""
    v = tree.tree_v[k] + c
    if w.response_ready[v]:
        return
    b0, b1 = tree.tree_body[k], tree.tree_body[k + 1]
    if w.factored[k]:  # the tree's H is factorised this step: two sparse solves
        tree_column(tree, w, k, c, w.response[v])
    elif c < b1 - b0:
        joint_impulse_response(tree, w, b0 + c, w.response[v])
    else:  # a base twist component: the unit spatial impulse on the base, base axes
        unit = w.vec6b
        for r in range(6):
            unit[r] = 1.0 if r == c - (b1 - b0) else 0.0
        impulse_response(tree, w, tree.parent.shape[0] + k, unit, w.response[v])
    w.response_ready[v] = True


@helper
def _sweeps(tree: Any, w: Any, k: int, start: int, joint: int, dqd: np.ndarray) -> None:
    """Up the path from `start` accumulating Y^A (eq. 3.45), then down tree k (eqs.
    3.46-3.48). u[joint] is given (a joint impulse); every other u comes from Y^A.
    A floating base (slot n + k) takes what reaches it: dv_0 = -I^A_0^-1 Y^A_0."""
    up = tree.up
    X, S, U, D, YA, u, dv, t6 = w.X, w.S, w.U, w.D, w.YA, w.u_impulse, w.dv, w.vec6
    n = up.shape[0]
    i = start
    while 0 <= i < n:
        if i != joint:
            s = 0.0
            for c in range(6):
                s += S[i, c] * YA[i, c]
            u[i] = -s
        j = up[i]
        if j >= 0:
            ui = u[i] / D[i]
            for c in range(6):
                t6[c] = YA[i, c] + U[i, c] * ui
            for c in range(6):  # Y^A_j += X_i^T t6
                s = 0.0
                for r in range(6):
                    s += X[i, r, c] * t6[r]
                YA[j, c] += s
        i = j
    if tree.floating[k]:
        cholesky_solve6(w.base_cholesky[k], YA[n + k], dv[n + k])
    _down(tree, w, k, dqd)


@helper
def joint_columns(tree: Any, w: Any) -> None:
    """`unit_response` for every joint flagged in w.response_wanted (by its velocity; the
    flags are cleared), in one pass over arrays bound once: a call per column costs about as
    much again as its arithmetic. A joint impulse's way up touches only the joint's path to
    the root, so one running 6-vector c = Y^A of the link reached carries it (eq. 3.45:
    Y^A_p = X_i^T (Y^A_i + U_i u_i / D_i), u_p = -S_p^T Y^A_p); the way down is `_down`.
    A tree whose rows reach many columns this step (`joint_space.many_columns`: the wanted
    ones and those of its contact rows, w.column_due, whose flags are cleared) is
    factorised first, and every column of it then comes from its factors, the contact rows'
    included (`unit_response`); so do those of a tree factorised already this step."""
    up, vadr, body_tree = tree.up, tree.vadr, tree.body_tree
    X, S, U, D, u, dv, c, t = w.X, w.S, w.U, w.D, w.u_impulse, w.dv, w.vec6, w.vec6b
    wanted, ready, response, reached = (w.response_wanted, w.response_ready, w.response,
                                        w.column_due)
    n = up.shape[0]
    for k in range(tree.floating.shape[0]):
        due = 0
        reach = 0
        for v in range(tree.tree_v[k], tree.tree_v[k + 1]):
            if not ready[v]:
                due += wanted[v]
                reach += wanted[v] or reached[v]
            reached[v] = False
        if not w.factored[k] and many_columns(tree.tree_v[k + 1] - tree.tree_v[k], reach):
            factor_tree(tree, w, k)
        if due > 0 and w.factored[k]:
            tree_columns(tree, w, k)
    for joint in range(n):
        v = vadr[joint]
        if not wanted[v]:
            continue
        wanted[v] = False
        if ready[v]:
            continue
        k = body_tree[joint]
        for i in range(tree.tree_body[k], tree.tree_body[k + 1]):
            u[i] = 0.0
        u[joint] = 1.0
        for r in range(6):
            c[r] = 0.0
        i = joint
        while 0 <= i < n:
            if i != joint:
                s = 0.0
                for r in range(6):
                    s += S[i, r] * c[r]
                u[i] = -s
            j = up[i]
            if j >= 0:
                ui = u[i] / D[i]
                for r in range(6):
                    t[r] = c[r] + U[i, r] * ui
                for col in range(6):
                    s = 0.0
                    for r in range(6):
                        s += X[i, r, col] * t[r]
                    c[col] = s
            i = j
        if tree.floating[k]:  # c is Y^A of the base
            cholesky_solve6(w.base_cholesky[k], c, dv[n + k])
        _down(tree, w, k, response[v])
        ready[v] = True


@inline
def _down(tree: Any, w: Any, k: int, dqd: np.ndarray) -> None:
    """Down tree k from its base's dv (eqs. 3.46-3.48), dqd local to the tree:
    dqd_i = (u_i - U_i^T X_i dv_p) / D_i,  dv_i = X_i dv_p + S_i dqd_i."""
    up, X, S, U, D, u, dv = tree.up, w.X, w.S, w.U, w.D, w.u_impulse, w.dv
    b0, b1 = tree.tree_body[k], tree.tree_body[k + 1]
    if tree.floating[k]:
        base = up.shape[0] + k
        for c in range(6):
            dqd[b1 - b0 + c] = dv[base, c]
    for i in range(b0, b1):
        j = up[i]
        if j >= 0:
            for r in range(6):  # dv_i = X_i dv_j
                s = 0.0
                for c in range(6):
                    s += X[i, r, c] * dv[j, c]
                dv[i, r] = s
        else:
            for r in range(6):
                dv[i, r] = 0.0
        s = 0.0
        for c in range(6):
            s += U[i, c] * dv[i, c]
        d = (u[i] - s) / D[i]
        dqd[i - b0] = d
        for c in range(6):
            dv[i, c] += S[i, c] * d


@njit
def point_impulse(
    rot: np.ndarray, pos: np.ndarray, point: np.ndarray, direction: np.ndarray, out: np.ndarray
) -> None:
    """A unit linear impulse along `direction` at world `point`, as [moment; force] in body
    axes, written into out."""
    rx, ry, rz = point[0] - pos[0], point[1] - pos[1], point[2] - pos[2]
    d0, d1, d2 = direction[0], direction[1], direction[2]
    m0, m1, m2 = ry * d2 - rz * d1, rz * d0 - rx * d2, rx * d1 - ry * d0
    for k in range(3):
        out[k] = rot[0, k] * m0 + rot[1, k] * m1 + rot[2, k] * m2
        out[3 + k] = rot[0, k] * d0 + rot[1, k] * d1 + rot[2, k] * d2
