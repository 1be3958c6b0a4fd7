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
from mb_sim.solver.rows import NORMAL, SCALAR, clear_row, tree_slot


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
    qadr, vadr = tree.qadr, tree.vadr
    envelope, h = m.options.limit_envelope, m.options.dt
    wanted = w.response_wanted
    for i in range(tree.parent.shape[0]):
        for side in range(3):
            if _joint_row(lower[i], upper[i], friction[i], q[qadr[i]], qd[vadr[i]], envelope,
                          h, side)[0]:
                wanted[vadr[i]] = True
                break
    mimic = tree.mimic
    for c in range(mimic.shape[0]):
        wanted[vadr[int(mimic[c, 0])]] = True
        wanted[vadr[int(mimic[c, 1])]] = True
    joint_columns(tree, w)


@helper
def robot_joint_rows(m: Any, d: Any, s: Any) -> None:
    """Append limit, friction and mimic rows to d.rows, each on its joint's tree;
    d.work.joint_tag[r] receives 3 i + (0 lower, 1 upper, 2 friction) for joint (body) i, or
    3 n + c for mimic pair c. Velocities after the free motion: d.work.qd_free; at the start
    of the step: s.qd. The columns of H^-1 in d.tree.response (`unit_response`) must have
    been cleared since the last ABA."""
    tree, opt, rows, w = m.tree, m.options, d.rows, d.tree
    q, qd, qd0 = s.q, d.work.qd_free, s.qd
    tag = d.work.joint_tag
    lower, upper, friction = tree.lower, tree.upper, tree.friction
    qadr, vadr, body_tree, tree_body, tree_v = (tree.qadr, tree.vadr, tree.body_tree,
                                                tree.tree_body, tree.tree_v)
    J_t, W_t, response = rows.J_t, rows.W_t, w.response
    h, envelope = opt.dt, opt.limit_envelope
    n = tree.parent.shape[0]
    r = rows.count[0]
    for i in range(n):
        v = vadr[i]
        for side in range(3):
            active, gap, sign = _joint_row(lower[i], upper[i], friction[i], q[qadr[i]], qd[v],
                                           envelope, h, side)
            if not active:
                continue
            k = body_tree[i]
            unit_response(tree, w, k, i - tree_body[k])
            if side < 2:
                clear_row(rows, r, NORMAL, -gap / h if gap > 0.0 else 0.0, 0.0, np.inf)
                rows.restitution[r] = tree.limit_restitution[i]
                rows.gap[r] = gap
                rows.accel[r] = sign * (qd[v] - qd0[v]) / h
            else:
                clear_row(rows, r, SCALAR, 0.0, -friction[i] * h, friction[i] * h)
            nv = tree_v[k + 1] - tree_v[k]
            slot = tree_slot(rows, r, k, tree_v[k], nv)
            J_t[r, slot, i - tree_body[k]] = sign
            for c in range(nv):
                W_t[r, slot, c] = sign * response[v, c]
            tag[r] = 3 * i + side
            r += 1
    mimic = tree.mimic
    for c in range(mimic.shape[0]):
        i, j = int(mimic[c, 0]), int(mimic[c, 1])
        mult, offset = mimic[c, 2], mimic[c, 3]
        k = body_tree[i]
        b0, nv = tree_body[k], tree_v[k + 1] - tree_v[k]
        unit_response(tree, w, k, i - b0)
        unit_response(tree, w, k, j - b0)
        clear_row(rows, r, SCALAR,
                  -opt.mimic_gain * (q[qadr[i]] - mult * q[qadr[j]] - offset) / h,
                  -np.inf, np.inf)
        slot = tree_slot(rows, r, k, tree_v[k], nv)
        J_t[r, slot, i - b0] = 1.0
        J_t[r, slot, j - b0] = -mult
        for col in range(nv):
            W_t[r, slot, col] = response[vadr[i], col] - mult * response[vadr[j], col]
        tag[r] = 3 * n + c
        r += 1
    rows.count[0] = r
