"""Rows that act on the robot's joints directly: limits, Coulomb friction, mimic coupling.

- Joint limits are impulse-based collisions (Holck 2005 ch. 4): a NORMAL row on J = +e_i at the
  lower limit and -e_i at the upper one, with K = e_i^T H^-1 e_i from the articulated response,
  gathered while the joint is within `envelope` of the limit or would pass it this step. Like a
  contact it holds the joint at the limit (speculatively while still apart), and it carries e
  for the restitution pass, which applies the frictionless Newton law j = -(1 + e) u / K33
  (eq. 4.3).
- Coulomb joint friction (Mikhailyuk & Strashnov 2016, joint friction-1.7): a SCALAR row J = e_i
with target 0 (static
  friction) and the accumulated impulse clamped to +-F_max h (Mikhailyuk & Strashnov 2016 eq. 12,
  16).
- URDF mimic: q_i = m q_j + offset kept by a SCALAR row J = e_i - m e_j whose target
  removes a fraction of the position error each step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, inline
from mb_sim.dynamics.impulse import joint_columns, unit_response
from mb_sim.solver.rows import NORMAL, SCALAR, clear_row


@inline
def _joint_row(lower: float, upper: float, friction: float, q: float, qd: float,
               envelope: float, h: float, side: int) -> tuple[bool, float, float]:
    """Whether a joint at q with velocity qd (after the free motion) has a row on `side` (0
    lower limit, 1 upper limit, 2 friction) this step, and the row's gap and sign: a limit
    within `envelope` or that the joint would pass this step, friction when the joint has
    some. Numbers only: arrays passed in a loop that calls compiled code cost reference
    counts."""
    gap, sign = 0.0, 1.0
    if side == 0:
        gap = q - lower
    elif side == 1:
        gap, sign = upper - q, -1.0
    if side == 2:
        active = friction > 0.0
    else:
        active = np.isfinite(gap) and gap - max(0.0, -sign * qd) * h <= envelope
    return active, gap, sign


@helper
def joint_row_responses(m: Any, d: Any, s: Any) -> None:
    """The columns of H^-1 (`unit_response`) that `robot_joint_rows` will use this step,
    computed ahead of the contact rows so that those find them ready."""
    tree, w, q, qd = m.tree, d.tree, s.q, d.work.qd_free
    lower, upper, friction = tree.lower, tree.upper, tree.friction
    envelope, h = m.options.limit_envelope, m.options.dt
    wanted = w.response_wanted
    for i in range(tree.parent.shape[0]):
        for side in range(3):
            if _joint_row(lower[i], upper[i], friction[i], q[i], qd[i], envelope, h, side)[0]:
                wanted[i] = True
                break
    joint_columns(tree, w)
    mimic = tree.mimic
    for k in range(mimic.shape[0]):
        unit_response(tree, w, int(mimic[k, 0]))
        unit_response(tree, w, int(mimic[k, 1]))


@helper
def robot_joint_rows(m: Any, d: Any, s: Any) -> None:
    """Append limit, friction and mimic rows to d.rows; d.work.joint_tag[r] receives
    3 i + (0 lower, 1 upper, 2 friction), or 3 n + k for mimic pair k. Velocities after the
    free motion: d.work.qd_free; at the start of the step: s.qd. The columns of H^-1 in
    d.tree.response (`unit_response`) must have been cleared since the last ABA."""
    tree, opt, rows, w = m.tree, m.options, d.rows, d.tree
    q, qd, qd0 = s.q, d.work.qd_free, s.qd
    tag = d.work.joint_tag
    lower, upper, friction = tree.lower, tree.upper, tree.friction
    h, envelope = opt.dt, opt.limit_envelope
    n = tree.parent.shape[0]
    nv = qd.shape[0]
    r = rows.count[0]
    for i in range(n):
        for side in range(3):
            active, gap, sign = _joint_row(lower[i], upper[i], friction[i], q[i], qd[i],
                                           envelope, h, side)
            if not active:
                continue
            unit_response(tree, w, i)
            if side < 2:
                clear_row(rows, r, NORMAL, -gap / h if gap > 0.0 else 0.0, 0.0, np.inf)
                rows.restitution[r] = tree.limit_restitution[i]
                rows.gap[r] = gap
                rows.accel[r] = sign * (qd[i] - qd0[i]) / h
            else:
                clear_row(rows, r, SCALAR, 0.0, -friction[i] * h, friction[i] * h)
            rows.J_r[r, i] = sign
            for k in range(nv):
                rows.W_r[r, k] = sign * w.response[i, k]
            tag[r] = 3 * i + side
            r += 1
    mimic = tree.mimic
    for k in range(mimic.shape[0]):
        i, j = int(mimic[k, 0]), int(mimic[k, 1])
        mult, offset = mimic[k, 2], mimic[k, 3]
        unit_response(tree, w, i)
        unit_response(tree, w, j)
        clear_row(rows, r, SCALAR, -opt.mimic_gain * (q[i] - mult * q[j] - offset) / h,
                  -np.inf, np.inf)
        rows.J_r[r, i] = 1.0
        rows.J_r[r, j] = -mult
        for c in range(nv):
            rows.W_r[r, c] = w.response[i, c] - mult * w.response[j, c]
        tag[r] = 3 * n + k
        r += 1
    rows.count[0] = r
