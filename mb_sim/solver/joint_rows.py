"""Rows that act on the robot's joints directly: limits, Coulomb friction, mimic coupling.

- Joint limits are impulse-based collisions (000.md ch. 4): a NORMAL row on J = +e_i at the
  lower limit and -e_i at the upper one, with K = e_i^T H^-1 e_i from the articulated response,
  gathered while the joint is within `envelope` of the limit or would pass it this step. Like a
  contact it holds the joint at the limit (speculatively while still apart), and it carries e
  for the restitution pass, which applies the frictionless Newton law j = -(1 + e) u / K33
  (eq. 4.3).
- Coulomb joint friction (002.md 1.4-1.7): a SCALAR row J = e_i with target 0 (static
  friction) and the accumulated impulse clamped to +-F_max h (002.md eq. 12, 16).
- URDF mimic: q_i = m q_j + offset kept by a SCALAR row J = e_i - m e_j whose target
  removes a fraction of the position error each step.
"""

from __future__ import annotations

import numpy as np

from mb_sim._jit import njit
from mb_sim.dynamics.impulse import joint_impulse_response
from mb_sim.solver.rows import NORMAL, SCALAR


@njit
def joint_rows(
    q: np.ndarray,
    qd: np.ndarray,
    qd0: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    friction: np.ndarray,
    restitution: np.ndarray,
    mimic: np.ndarray,
    h: float,
    envelope: float,
    mimic_gain: float,
    parent: np.ndarray,
    X: np.ndarray,
    S: np.ndarray,
    U: np.ndarray,
    D: np.ndarray,
    start: int,
    kind: np.ndarray,
    J_r: np.ndarray,
    W_r: np.ndarray,
    body: np.ndarray,
    J_b: np.ndarray,
    W_b: np.ndarray,
    target: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    link: np.ndarray,
    lam: np.ndarray,
    rest: np.ndarray,
    gaps: np.ndarray,
    accel: np.ndarray,
    tag: np.ndarray,
) -> int:
    """Append limit, friction and mimic rows from row `start`; returns the next free row.
    tag[r] = 3 i + (0 lower, 1 upper, 2 friction), or 3 n + k for mimic pair k."""
    n = q.shape[0]
    response = np.zeros((n, n))
    have = np.zeros(n, dtype=np.bool_)
    r = start
    for i in range(n):
        for side in range(3):
            if side == 0:
                gap = q[i] - lower[i]
                sign = 1.0
            elif side == 1:
                gap = upper[i] - q[i]
                sign = -1.0
            else:
                gap = 0.0
                sign = 1.0
            if side < 2:
                if not np.isfinite(gap) or gap - max(0.0, -sign * qd[i]) * h > envelope:
                    continue
            elif friction[i] <= 0.0:
                continue
            if not have[i]:
                joint_impulse_response(parent, X, S, U, D, i, response[i])
                have[i] = True
            J_r[r] = 0.0
            J_r[r, i] = sign
            W_r[r] = sign * response[i]
            body[r] = -1
            J_b[r] = 0.0
            W_b[r] = 0.0
            link[r] = -1
            lam[r] = 0.0
            tag[r] = 3 * i + side
            rest[r] = 0.0
            if side < 2:
                kind[r] = NORMAL
                target[r] = -gap / h if gap > 0.0 else 0.0
                lo[r] = 0.0
                hi[r] = np.inf
                rest[r] = restitution[i]
                gaps[r] = gap
                accel[r] = sign * (qd[i] - qd0[i]) / h
            else:
                kind[r] = SCALAR
                target[r] = 0.0
                lo[r] = -friction[i] * h
                hi[r] = friction[i] * h
            r += 1
    for k in range(mimic.shape[0]):
        i, j = int(mimic[k, 0]), int(mimic[k, 1])
        m, offset = mimic[k, 2], mimic[k, 3]
        for a in (i, j):
            if not have[a]:
                joint_impulse_response(parent, X, S, U, D, a, response[a])
                have[a] = True
        J_r[r] = 0.0
        J_r[r, i] = 1.0
        J_r[r, j] = -m
        W_r[r] = response[i] - m * response[j]
        body[r] = -1
        J_b[r] = 0.0
        W_b[r] = 0.0
        link[r] = -1
        lam[r] = 0.0
        tag[r] = 3 * n + k
        rest[r] = 0.0
        kind[r] = SCALAR
        target[r] = -mimic_gain * (q[i] - m * q[j] - offset) / h
        lo[r] = -np.inf
        hi[r] = np.inf
        r += 1
    return r
