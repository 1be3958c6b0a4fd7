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
from mb_sim.dynamics.spatial import cross3, dot6, matvec3, mtv6, mv6


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
    YA = np.zeros((n, 6))
    u = np.zeros(n)
    YA[body] = -impulse
    i = body
    while i >= 0:
        u[i] = -dot6(S[i], YA[i])
        j = parent[i]
        if j >= 0:
            YA[j] += mtv6(X[i], YA[i] + U[i] * (u[i] / D[i]))
        i = j
    dv = np.zeros((n, 6))
    for i in range(n):
        j = parent[i]
        ap = mv6(X[i], dv[j]) if j >= 0 else np.zeros(6)
        dqd[i] = (u[i] - dot6(U[i], ap)) / D[i]
        dv[i] = ap + S[i] * dqd[i]


@njit
def point_impulse(
    rot: np.ndarray, pos: np.ndarray, point: np.ndarray, direction: np.ndarray
) -> np.ndarray:
    """A unit linear impulse along `direction` at world `point`, as [moment; force] in body axes."""
    out = np.empty(6)
    Rt = rot.T.copy()
    out[:3] = matvec3(Rt, cross3(point - pos, direction))
    out[3:] = matvec3(Rt, direction)
    return out


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
    """dqd = H^-1 e_joint: the response to a unit impulse of the joint's own actuator.

    The same two sweeps as `impulse_response`, started from u_joint = 1 instead of a link
    impulse (a joint-space impulse acts on the joint's two links equally and oppositely).
    """
    n = parent.shape[0]
    YA = np.zeros((n, 6))
    u = np.zeros(n)
    u[joint] = 1.0
    i = joint
    while i >= 0:
        if i != joint:
            u[i] = -dot6(S[i], YA[i])
        j = parent[i]
        if j >= 0:
            YA[j] += mtv6(X[i], YA[i] + U[i] * (u[i] / D[i]))
        i = j
    dv = np.zeros((n, 6))
    for i in range(n):
        j = parent[i]
        ap = mv6(X[i], dv[j]) if j >= 0 else np.zeros(6)
        dqd[i] = (u[i] - dot6(U[i], ap)) / D[i]
        dv[i] = ap + S[i] * dqd[i]
