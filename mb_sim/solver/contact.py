"""Contact rows: a normal row and a Coulomb friction pair per contact point (000.md 2.1).

Normal row: u+ >= 0 when touching (resting contact, inelastic); a contact still a gap g apart
(inside the envelope) only asks for u+ >= -g / h: the bodies may close the gap this step but
not pass it (speculative contact). Bounces (Newton's law with a threshold, 000.md eq. 2.18)
are the restitution pass's (`mb_sim.solver.pgs.restitution_pass`): the row carries e, the gap
and the smooth acceleration a = (u_f - u_0) / h of its normal velocity over the free motion.
Friction pair: tangents t1, t2 with |lambda_t| <= mu lambda_n and target 0 (sticking when the
cone allows it, sliding against the motion otherwise); t1 points along the slip velocity
after the free motion when there is one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import njit
from mb_sim.solver.pgs import row_velocity
from mb_sim.solver.response import add_point
from mb_sim.solver.rows import FOLLOWER, NORMAL, SCALAR, TANGENT, clear_row


@njit
def tangent_basis(n: np.ndarray, dirs: np.ndarray) -> None:
    """dirs = [n, t1, t2], a right-handed orthonormal frame around the normal n."""
    if abs(n[0]) < 0.6:  # t1 = n x e_x
        t = (0.0, n[2], -n[1])
    else:  # t1 = n x e_y
        t = (-n[2], 0.0, n[0])
    norm = np.sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2])
    for k in range(3):
        dirs[0, k] = n[k]
        dirs[1, k] = t[k] / norm
    dirs[2, 0] = n[1] * dirs[1, 2] - n[2] * dirs[1, 1]
    dirs[2, 1] = n[2] * dirs[1, 0] - n[0] * dirs[1, 2]
    dirs[2, 2] = n[0] * dirs[1, 1] - n[1] * dirs[1, 0]


@njit
def _turn(arr: np.ndarray, r: int, ca: float, sa: float) -> None:
    """Rotate rows r and r + 1 of a 2-D array by the angle (ca, sa) = (cos, sin)."""
    for k in range(arr.shape[1]):
        a1, a2 = arr[r, k], arr[r + 1, k]
        arr[r, k] = ca * a1 + sa * a2
        arr[r + 1, k] = -sa * a1 + ca * a2


@njit
def contact_rows(m: Any, d: Any, s: Any) -> None:
    """Append the rows of every contact in d.contacts to d.rows. The velocities after the
    free motion are d.work.qd_free, d.work.vb; those at the start of the step s.qd,
    s.body_vel. Each contact's normal row and friction directions go to d.contacts
    (normal_row, tangent1, tangent2)."""
    rows, con, work = d.rows, d.contacts, d.work
    g = m.geoms
    qd, vb, qd0, vb0 = work.qd_free, work.vb, s.qd, s.body_vel
    h = m.options.dt
    directions = np.empty((3, 3))
    J_b2 = rows.J_b.reshape(rows.J_b.shape[0], 12)
    W_b2 = rows.W_b.reshape(rows.W_b.shape[0], 12)
    r = rows.count[0]
    for c in range(con.count[1]):
        ga, gb = con.geom_a[c], con.geom_b[c]
        mu = np.sqrt(g.friction[ga] * g.friction[gb])  # mb_sim.model.world combine_friction
        e = max(g.restitution[ga], g.restitution[gb])  # and combine_restitution
        point = con.point[c]
        tangent_basis(con.normal[c], directions)
        n_dirs = 3 if mu > 0.0 else 1
        for k in range(n_dirs):
            clear_row(rows, r + k, SCALAR, 0.0, -np.inf, np.inf)
            add_point(m, d, s, r + k, 0, ga, 1.0, point, directions[k])
            add_point(m, d, s, r + k, 1, gb, -1.0, point, directions[k])
        un = row_velocity(rows, r, qd, vb)
        u0 = row_velocity(rows, r, qd0, vb0)
        gap = -con.depth[c]
        rows.kind[r] = NORMAL
        rows.target[r] = -gap / h if gap > 0.0 else 0.0
        rows.lo[r] = 0.0
        rows.restitution[r] = e
        rows.gap[r] = gap
        rows.accel[r] = (un - u0) / h
        con.normal_row[c] = r
        if n_dirs == 3:
            ut1 = row_velocity(rows, r + 1, qd, vb)
            ut2 = row_velocity(rows, r + 2, qd, vb)
            slip = np.sqrt(ut1 * ut1 + ut2 * ut2)
            if slip > 1e-9:  # turn the pair so that t1 lies along the slip
                ca, sa = ut1 / slip, ut2 / slip
                _turn(rows.J_r, r + 1, ca, sa)
                _turn(rows.W_r, r + 1, ca, sa)
                _turn(J_b2, r + 1, ca, sa)
                _turn(W_b2, r + 1, ca, sa)
                _turn(directions, 1, ca, sa)
            rows.kind[r + 1] = TANGENT
            rows.kind[r + 2] = FOLLOWER
            rows.mu[r + 1] = mu
            rows.link[r + 1] = r
        for k in range(3):
            con.tangent1[c, k] = directions[1, k]
            con.tangent2[c, k] = directions[2, k]
        r += n_dirs
    rows.count[0] = r
