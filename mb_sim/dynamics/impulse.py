"""Articulated impulse response (000.md 2.5; Mirtich): how an impulse on one link changes qd.

With the articulated inertias of the last ABA evaluation (X_i, S_i, U_i = I^A_i S_i, D_i),
a spatial impulse Y on link k gives, in O(n):
- up the path k -> root (eqs. 3.43-3.45), with Y^A_k = -Y and u_i = -S_i^T Y^A_i:
  Y^A_p += X_i^T (Y^A_i + U_i u_i / D_i);
- down the whole tree (eqs. 3.46-3.48, `propagateimpulse`):
  dqd_i = (u_i - U_i^T X_i dv_p) / D_i,  dv_i = X_i dv_p + S_i dqd_i.
This equals H^-1 J^T Y, without forming H. (The sign of Y^A follows ABA's bias-force
convention, in which external forces enter with a minus sign.)
"""

from __future__ import annotations

import numpy as np

from mb_sim._jit import njit


@njit
def impulse_response(
    parent: np.ndarray,
    X: np.ndarray,
    S: np.ndarray,
    U: np.ndarray,
    D: np.ndarray,
    body: int,
    impulse: np.ndarray,
    dqd: np.ndarray,
) -> None:
    """dqd = H^-1 J_body^T impulse, with `impulse` = [moment; force] in body coordinates."""
    n = parent.shape[0]
    impulse_response_into(parent, X, S, U, D, body, impulse, dqd, np.zeros((n, 6)),
                          np.zeros(n), np.zeros((n, 6)), np.zeros(6))


@njit
def impulse_response_into(
    parent: np.ndarray,
    X: np.ndarray,
    S: np.ndarray,
    U: np.ndarray,
    D: np.ndarray,
    body: int,
    impulse: np.ndarray,
    dqd: np.ndarray,
    YA: np.ndarray,
    u: np.ndarray,
    dv: np.ndarray,
    t6: np.ndarray,
) -> None:
    """`impulse_response` with its work arrays given (YA, dv: (n, 6), u: (n,), t6: (6,))."""
    YA[:] = 0.0
    u[:] = 0.0
    for k in range(6):
        YA[body, k] = -impulse[k]
    _sweeps(parent, X, S, U, D, body, -1, dqd, YA, u, dv, t6)


@njit
def _sweeps(
    parent: np.ndarray,
    X: np.ndarray,
    S: np.ndarray,
    U: np.ndarray,
    D: np.ndarray,
    start: int,
    joint: int,
    dqd: np.ndarray,
    YA: np.ndarray,
    u: np.ndarray,
    dv: np.ndarray,
    t6: np.ndarray,
) -> None:
    """Up the path from `start` accumulating Y^A (eq. 3.45), then down the whole tree
    (eqs. 3.46-3.48). u[joint] is given (a joint impulse); every other u comes from Y^A."""
    n = parent.shape[0]
    i = start
    while i >= 0:
        if i != joint:
            s = 0.0
            for k in range(6):
                s += S[i, k] * YA[i, k]
            u[i] = -s
        j = parent[i]
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
    for i in range(n):
        j = parent[i]
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


@njit
def joint_impulse_response(
    parent: np.ndarray,
    X: np.ndarray,
    S: np.ndarray,
    U: np.ndarray,
    D: np.ndarray,
    joint: int,
    dqd: np.ndarray,
) -> None:
    """dqd = H^-1 e_joint: the response to a unit impulse of the joint's own actuator."""
    n = parent.shape[0]
    joint_impulse_response_into(parent, X, S, U, D, joint, dqd, np.zeros((n, 6)), np.zeros(n),
                                np.zeros((n, 6)), np.zeros(6))


@njit
def joint_impulse_response_into(
    parent: np.ndarray,
    X: np.ndarray,
    S: np.ndarray,
    U: np.ndarray,
    D: np.ndarray,
    joint: int,
    dqd: np.ndarray,
    YA: np.ndarray,
    u: np.ndarray,
    dv: np.ndarray,
    t6: np.ndarray,
) -> None:
    """`joint_impulse_response` with its work arrays given: the same two sweeps as
    `impulse_response`, started from u_joint = 1 instead of a link impulse (a joint-space
    impulse acts on the joint's two links equally and oppositely)."""
    YA[:] = 0.0
    u[:] = 0.0
    u[joint] = 1.0
    _sweeps(parent, X, S, U, D, joint, joint, dqd, YA, u, dv, t6)
