"""Velocity constraint rows, the common currency of the impulse solver.

A row r constrains one velocity component u_r = J_r . u of the system velocity
u = [qd (robot joints); v_1, w_1; v_2, w_2; ... (free bodies, world frame)] and carries its
response W_r = M^-1 J_r^T: an impulse lambda on the row changes u by W_r lambda (000.md 2.5:
the articulated response for robot links, eq. 2.16's 1/m and I^-1 terms for free bodies).
Rows are stored sparsely: a robot part (nv entries) and up to two free bodies (6 entries each).

Row kinds:
- SCALAR: lo <= lambda <= hi (joint limits, joint friction, mimic coupling, joint axes);
- NORMAL: lambda >= 0 (contact normal);
- TANGENT: two consecutive rows, the friction pair of the NORMAL row `link`, whose impulse is
  kept in the disc |lambda_t| <= mu lambda_n (Coulomb, 000.md 2.1 law 4);
- BALL: three consecutive rows whose impulse vector is kept in the ball |lambda| <= hi
  (friction of a ball joint, 002.md eq. 16).
Each row tries to reach u_r = target (speculative contact, friction at rest). Bouncing rows
(contact normals and joint limits) also carry their restitution e, their gap and the
acceleration the smooth forces gave them this step, for the restitution pass that runs before
the solve (`mb_sim.solver.pgs.restitution_pass`); its impulses are kept in `bounce`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import njit, record

SCALAR = 0
NORMAL = 1
TANGENT = 2
BALL = 3
FOLLOWER = 4
"""Second/third row of a TANGENT or BALL group (solved with its first row)."""


ROW_FIELDS = (
    "kind", "J_r", "W_r", "body", "J_b", "W_b", "target", "lo", "hi", "mu", "link", "lam",
    "restitution", "gap", "accel", "bounce", "reflect", "Kinv", "count",
)
"""Columns of the row table; `count[0]` is the number of rows in use, `Kinv[r]` the solver's
K^+ of the row or group starting at r."""

Rows, RowsRecord = record("Rows", ROW_FIELDS)


@njit
def new_rows(values: Rows) -> Any:
    return RowsRecord(*values)


def allocate_rows(capacity: int, nv: int) -> Rows:
    """An empty row table for `capacity` rows on a robot of nv joints."""
    return Rows(
        kind=np.zeros(capacity, dtype=np.int64), J_r=np.zeros((capacity, nv)),
        W_r=np.zeros((capacity, nv)), body=np.full((capacity, 2), -1, dtype=np.int64),
        J_b=np.zeros((capacity, 2, 6)), W_b=np.zeros((capacity, 2, 6)),
        target=np.zeros(capacity), lo=np.zeros(capacity), hi=np.zeros(capacity),
        mu=np.zeros(capacity), link=np.full(capacity, -1, dtype=np.int64),
        lam=np.zeros(capacity), restitution=np.zeros(capacity), gap=np.zeros(capacity),
        accel=np.zeros(capacity), bounce=np.zeros(capacity), reflect=np.zeros(capacity),
        Kinv=np.zeros((capacity, 3, 3)), count=np.zeros(1, dtype=np.int64),
    )


@njit
def clear_row(rows: Any, r: int, kind: int, target: float, lo: float, hi: float) -> None:
    """Row r with no Jacobian, no bodies, no impulse yet."""
    rows.kind[r] = kind
    rows.J_r[r, :] = 0.0
    rows.W_r[r, :] = 0.0
    rows.body[r, 0] = -1
    rows.body[r, 1] = -1
    rows.J_b[r] = 0.0
    rows.W_b[r] = 0.0
    rows.target[r] = target
    rows.lo[r] = lo
    rows.hi[r] = hi
    rows.mu[r] = 0.0
    rows.link[r] = -1
    rows.lam[r] = 0.0
    rows.restitution[r] = 0.0
    rows.gap[r] = 0.0
    rows.accel[r] = 0.0
    rows.bounce[r] = 0.0
    rows.reflect[r] = 0.0
