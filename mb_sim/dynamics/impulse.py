"""Articulated impulse response (Holck 2005, ch. 3; Mirtich): how an impulse on one link changes qd.

With the articulated inertias of the last ABA evaluation (X_i, S_i, U_i = I^A_i S_i, D_i, in
the work record `mb_sim.dynamics.work.TreeWork`),
a spatial impulse Y on link k gives, in O(n):
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
from mb_sim.dynamics.floating import cholesky_solve6, is_floating, parent_slot


@njit
def impulse_response(tree: Any, w: Any, body: int, impulse: np.ndarray, dqd: np.ndarray) -> None:
    """dqd = H^-1 J_body^T impulse, with `impulse` = [moment; force] in body coordinates
    (body n: the floating base)."""
    w.YA[:] = 0.0
    w.u_impulse[:] = 0.0
    for k in range(6):
        w.YA[body, k] = -impulse[k]
    _sweeps(tree, w, body, -1, dqd)


@njit
def joint_impulse_response(tree: Any, w: Any, joint: int, dqd: np.ndarray) -> None:
    """dqd = H^-1 e_joint: the response to a unit impulse of the joint's own actuator. The
    same two sweeps as `impulse_response`, started from u_joint = 1 instead of a link impulse
    (a joint-space impulse acts on the joint's two links equally and oppositely)."""
    w.YA[:] = 0.0
    w.u_impulse[:] = 0.0
    w.u_impulse[joint] = 1.0
    _sweeps(tree, w, joint, joint, dqd)


@helper
def unit_response(tree: Any, w: Any, i: int) -> None:
    """w.response[i] = H^-1 e_i, computed once per q (w.response_ready[i]; the step clears the
    flags when the articulated inertias change). H is symmetric, so these are also the rows of
    H^-1: a row J gets its response H^-1 J^T = sum_i J_i w.response[i] from the columns its
    nonzero entries name, each column shared by every row that needs it."""
    if w.response_ready[i]:
        return
    n = tree.parent.shape[0]
    if i < n:
        joint_impulse_response(tree, w, i, w.response[i])
    else:  # a base twist component: the unit spatial impulse on the base, base axes
        unit = w.vec6b
        for k in range(6):
            unit[k] = 1.0 if k == i - n else 0.0
        impulse_response(tree, w, n, unit, w.response[i])
    w.response_ready[i] = True


@helper
def _sweeps(tree: Any, w: Any, start: int, joint: int, dqd: np.ndarray) -> None:
    """Up the path from `start` accumulating Y^A (eq. 3.45), then down the whole tree
    (eqs. 3.46-3.48). u[joint] is given (a joint impulse); every other u comes from Y^A.
    A floating base (slot n) takes what reaches it: dv_0 = -I^A_0^-1 Y^A_0."""
    parent = tree.parent
    X, S, U, D, YA, u, dv, t6 = w.X, w.S, w.U, w.D, w.YA, w.u_impulse, w.dv, w.vec6
    n = parent.shape[0]
    floating = is_floating(tree)
    i = start
    while 0 <= i < n:
        if i != joint:
            s = 0.0
            for k in range(6):
                s += S[i, k] * YA[i, k]
            u[i] = -s
        j = parent_slot(parent, i, floating)
        if j >= 0:
            ui = u[i] / D[i]
            for k in range(6):
                t6[k] = YA[i, k] + U[i, k] * ui
            for c in range(6):  # Y^A_j += X_i^T t6
                s = 0.0
                for r in range(6):
                    s += X[i, r, c] * t6[r]
                YA[j, c] += s
        i = j
    if floating:
        cholesky_solve6(w.base_cholesky, YA[n], dv[n])
    _down(parent, X, S, U, D, u, dv, dqd, floating)


@helper
def joint_columns(tree: Any, w: Any) -> None:
    """`unit_response` for every joint i flagged in w.response_wanted (the flags are
    cleared), in one pass over arrays bound once: a call per column costs about as much again
    as its arithmetic. A joint impulse's way up touches only the joint's path to the root, so
    one running 6-vector c = Y^A of the link reached carries it (eq. 3.45:
    Y^A_p = X_i^T (Y^A_i + U_i u_i / D_i), u_p = -S_p^T Y^A_p); the way down is `_down`."""
    parent = tree.parent
    X, S, U, D, u, dv, c, t = w.X, w.S, w.U, w.D, w.u_impulse, w.dv, w.vec6, w.vec6b
    wanted, ready, response = w.response_wanted, w.response_ready, w.response
    n = parent.shape[0]
    floating = is_floating(tree)
    for joint in range(n):
        if not wanted[joint]:
            continue
        wanted[joint] = False
        if ready[joint]:
            continue
        for k in range(n):
            u[k] = 0.0
        u[joint] = 1.0
        for k in range(6):
            c[k] = 0.0
        i = joint
        while 0 <= i < n:
            if i != joint:
                s = 0.0
                for k in range(6):
                    s += S[i, k] * c[k]
                u[i] = -s
            j = parent_slot(parent, i, floating)
            if j >= 0:
                ui = u[i] / D[i]
                for k in range(6):
                    t[k] = c[k] + U[i, k] * ui
                for col in range(6):
                    s = 0.0
                    for r in range(6):
                        s += X[i, r, col] * t[r]
                    c[col] = s
            i = j
        if floating:  # c is Y^A of the base
            cholesky_solve6(w.base_cholesky, c, dv[n])
        _down(parent, X, S, U, D, u, dv, response[joint], floating)
        ready[joint] = True


@inline
def _down(parent: np.ndarray, X: np.ndarray, S: np.ndarray, U: np.ndarray, D: np.ndarray,
          u: np.ndarray, dv: np.ndarray, dqd: np.ndarray, floating: bool) -> None:
    """Down the whole tree from the base's dv (eqs. 3.46-3.48):
    dqd_i = (u_i - U_i^T X_i dv_p) / D_i,  dv_i = X_i dv_p + S_i dqd_i."""
    n = parent.shape[0]
    if floating:
        for k in range(6):
            dqd[n + k] = dv[n, k]
    for i in range(n):
        j = parent_slot(parent, i, floating)
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
        for k in range(6):
            s += U[i, k] * dv[i, k]
        dqd[i] = (u[i] - s) / D[i]
        for k in range(6):
            dv[i, k] += S[i, k] * dqd[i]


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
