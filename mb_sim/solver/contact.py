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

import numpy as np

from mb_sim._jit import njit
from mb_sim.solver.pgs import row_velocity
from mb_sim.solver.response import add_point, response_work
from mb_sim.solver.rows import FOLLOWER, NORMAL, TANGENT


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
def _clear(r: int, kind: np.ndarray, J_r: np.ndarray, W_r: np.ndarray, body: np.ndarray,
           J_b: np.ndarray, W_b: np.ndarray, link: np.ndarray, lam: np.ndarray) -> None:
    kind[r] = 0
    J_r[r] = 0.0
    W_r[r] = 0.0
    body[r] = -1
    J_b[r] = 0.0
    W_b[r] = 0.0
    link[r] = -1
    lam[r] = 0.0


@njit
def contact_rows(
    point: np.ndarray,
    normal: np.ndarray,
    depth: np.ndarray,
    kind_a: np.ndarray,
    index_a: np.ndarray,
    kind_b: np.ndarray,
    index_b: np.ndarray,
    friction: np.ndarray,
    restitution: np.ndarray,
    h: float,
    parent: np.ndarray,
    joint_type: np.ndarray,
    axis: np.ndarray,
    rot: np.ndarray,
    pos: np.ndarray,
    X: np.ndarray,
    S: np.ndarray,
    U: np.ndarray,
    D: np.ndarray,
    body_pos: np.ndarray,
    inv_mass: np.ndarray,
    inv_inertia: np.ndarray,
    qd: np.ndarray,
    vb: np.ndarray,
    qd0: np.ndarray,
    vb0: np.ndarray,
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
    mu: np.ndarray,
    link: np.ndarray,
    lam: np.ndarray,
    rest: np.ndarray,
    gaps: np.ndarray,
    accel: np.ndarray,
    contact_row: np.ndarray,
    tangent: np.ndarray,
    tangent2: np.ndarray,
) -> int:
    """Append the rows of every contact from row `start`; returns the next free row.
    qd, vb are the velocities after the free motion, qd0, vb0 those at the start of the step;
    tangent[c], tangent2[c] receive the friction directions of contact c.

    contact_row[c] is the normal row of contact c."""
    scratch = np.zeros(qd.shape[0])
    work = response_work(qd.shape[0])
    directions = np.empty((3, 3))
    J_b2 = J_b.reshape(J_b.shape[0], 12)
    W_b2 = W_b.reshape(W_b.shape[0], 12)
    r = start
    for c in range(point.shape[0]):
        tangent_basis(normal[c], directions)
        rows = 3 if friction[c] > 0.0 else 1
        for d in range(rows):
            _clear(r + d, kind, J_r, W_r, body, J_b, W_b, link, lam)
            add_point(kind_a[c], index_a[c], 1.0, point[c], directions[d], r + d, 0, J_r, W_r,
                      body, J_b, W_b, parent, joint_type, axis, rot, pos, X, S, U, D, body_pos,
                      inv_mass, inv_inertia, scratch, work)
            add_point(kind_b[c], index_b[c], -1.0, point[c], directions[d], r + d, 1, J_r, W_r,
                      body, J_b, W_b, parent, joint_type, axis, rot, pos, X, S, U, D, body_pos,
                      inv_mass, inv_inertia, scratch, work)
        un = row_velocity(r, J_r, body, J_b, qd, vb)
        u0 = row_velocity(r, J_r, body, J_b, qd0, vb0)
        gap = -depth[c]
        rest[r] = restitution[c]
        gaps[r] = gap
        accel[r] = (un - u0) / h
        goal = -gap / h if gap > 0.0 else 0.0
        kind[r] = NORMAL
        target[r] = goal
        lo[r] = 0.0
        hi[r] = np.inf
        contact_row[c] = r
        tangent[c] = directions[1]
        tangent2[c] = directions[2]
        if rows == 3:
            ut1 = row_velocity(r + 1, J_r, body, J_b, qd, vb)
            ut2 = row_velocity(r + 2, J_r, body, J_b, qd, vb)
            slip = np.sqrt(ut1 * ut1 + ut2 * ut2)
            if slip > 1e-9:  # turn the pair so that t1 lies along the slip
                ca, sa = ut1 / slip, ut2 / slip
                for arr in (J_r, W_r, J_b2, W_b2):
                    _turn(arr, r + 1, ca, sa)
                _turn(directions, 1, ca, sa)
                tangent[c] = directions[1]
                tangent2[c] = directions[2]
            kind[r + 1] = TANGENT
            kind[r + 2] = FOLLOWER
            for d in (1, 2):
                target[r + d] = 0.0
                lo[r + d] = -np.inf
                hi[r + d] = np.inf
            mu[r + 1] = friction[c]
            link[r + 1] = r
        r += rows
    return r
