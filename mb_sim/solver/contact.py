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
from mb_sim.model.compile import BODY, ROBOT
from mb_sim.solver.pgs import velocity
from mb_sim.solver.response import add_robot_point, body_point
from mb_sim.solver.rows import FOLLOWER, NORMAL, SCALAR, TANGENT
from mb_sim.vec3 import frame_around


@njit
def tangent_basis(n: np.ndarray, dirs: np.ndarray) -> None:
    """dirs = [n, t1, t2], a right-handed orthonormal frame around the normal n."""
    t1, t2 = frame_around((n[0], n[1], n[2]))
    for k in range(3):
        dirs[0, k] = n[k]
        dirs[1, k] = t1[k]
        dirs[2, k] = t2[k]


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
    (normal_row, tangent1, tangent2). (Columns are bound once: reading a record's field
    costs a reference count, too much per row.)"""
    rows, con, work, g = d.rows, d.contacts, d.work, m.geoms
    kind, J_r, W_r, body, J_b, W_b = rows.kind, rows.J_r, rows.W_r, rows.body, rows.J_b, rows.W_b
    target, lo, hi, mu, link, lam = rows.target, rows.lo, rows.hi, rows.mu, rows.link, rows.lam
    what, index = g.what, g.index
    body_pos, inv_mass, Iw = s.body_pos, m.bodies.inv_mass, d.frames.Iw
    tree, w = m.tree, d.tree
    qd, vb, qd0, vb0 = work.qd_free, work.vb, s.qd, s.body_vel
    h = m.options.dt
    directions = np.empty((3, 3))
    J_b2 = J_b.reshape(J_b.shape[0], 12)
    W_b2 = W_b.reshape(W_b.shape[0], 12)
    restitution, gaps, accel, bounce, reflect = (rows.restitution, rows.gap, rows.accel,
                                                 rows.bounce, rows.reflect)
    geom_a, geom_b, points, normals, depth = (con.geom_a, con.geom_b, con.point, con.normal,
                                              con.depth)
    normal_row, tangent1, tangent2 = con.normal_row, con.tangent1, con.tangent2
    g_friction, g_restitution = g.friction, g.restitution
    r = rows.count[0]
    for c in range(con.count[1]):
        ga, gb = geom_a[c], geom_b[c]
        friction = np.sqrt(g_friction[ga] * g_friction[gb])  # mb_sim.model.world
        e = max(g_restitution[ga], g_restitution[gb])  # combine_friction, combine_restitution
        point = points[c]
        tangent_basis(normals[c], directions)
        n_dirs = 3 if friction > 0.0 else 1
        for k in range(n_dirs):
            rk = r + k
            kind[rk] = SCALAR
            J_r[rk, :] = 0.0
            W_r[rk, :] = 0.0
            J_b[rk] = 0.0
            W_b[rk] = 0.0
            target[rk] = 0.0
            lo[rk] = -np.inf
            hi[rk] = np.inf
            mu[rk] = 0.0
            link[rk] = -1
            lam[rk] = 0.0
            for slot in range(2):
                geom = ga if slot == 0 else gb
                sign = 1.0 if slot == 0 else -1.0
                i = index[geom]
                body[rk, slot] = -1
                if what[geom] == ROBOT:
                    add_robot_point(tree, w, J_r, W_r, rk, i, sign, point, directions[k])
                elif what[geom] == BODY:
                    body[rk, slot] = i
                    body_point(J_b[rk, slot], W_b[rk, slot], sign, point, directions[k],
                               body_pos[i], inv_mass[i], Iw[i])
        un = velocity(J_r, body, J_b, r, qd, vb)
        u0 = velocity(J_r, body, J_b, r, qd0, vb0)
        gap = -depth[c]
        kind[r] = NORMAL
        target[r] = -gap / h if gap > 0.0 else 0.0
        lo[r] = 0.0
        for k in range(n_dirs):  # only normal rows bounce
            restitution[r + k] = e if k == 0 else 0.0
            gaps[r + k] = gap if k == 0 else 0.0
            accel[r + k] = (un - u0) / h if k == 0 else 0.0
            bounce[r + k] = 0.0
            reflect[r + k] = 0.0
        normal_row[c] = r
        if n_dirs == 3:
            ut1 = velocity(J_r, body, J_b, r + 1, qd, vb)
            ut2 = velocity(J_r, body, J_b, r + 2, qd, vb)
            slip = np.sqrt(ut1 * ut1 + ut2 * ut2)
            if slip > 1e-9:  # turn the pair so that t1 lies along the slip
                ca, sa = ut1 / slip, ut2 / slip
                _turn(J_r, r + 1, ca, sa)
                _turn(W_r, r + 1, ca, sa)
                _turn(J_b2, r + 1, ca, sa)
                _turn(W_b2, r + 1, ca, sa)
                _turn(directions, 1, ca, sa)
            kind[r + 1] = TANGENT
            kind[r + 2] = FOLLOWER
            mu[r + 1] = friction
            link[r + 1] = r
        for k in range(3):
            tangent1[c, k] = directions[1, k]
            tangent2[c, k] = directions[2, k]
        r += n_dirs
    rows.count[0] = r
