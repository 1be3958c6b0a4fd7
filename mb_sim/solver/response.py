"""How a unit impulse on a point changes the system velocity: one row's J and W = M^-1 J^T.

- Robot link (000.md 2.5, Table 3.4): J is the point Jacobian row along the direction, W the
  articulated impulse response of a unit impulse at the point (O(n), no mass matrix).
- Free rigid body (000.md eq. 2.16): J = [d, r x d], W = [d / m, I_w^-1 (r x d)] for
  u = [v; w] with r from the centre of mass to the point.
The row of a contact between A and B is J_A - J_B: the impulse acts +d on A and -d on B.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import njit
from mb_sim.dynamics.impulse import impulse_response_into, point_impulse
from mb_sim.dynamics.kinematics import point_jacobian_row
from mb_sim.model.compile import BODY, ROBOT


@njit
def add_point(m: Any, d: Any, s: Any, r: int, slot: int, geom: int, sign: float,
              point: np.ndarray, direction: np.ndarray) -> None:
    """Add sign x (the point's J and W along `direction`) to row r of d.rows, for a point
    of what geometry `geom` moves with: a robot body (m.geoms.what ROBOT) or a free body
    (BODY; it goes in `slot`); static geometries add nothing. d.tree must hold the
    articulated inertias of q."""
    rows = d.rows
    kind = m.geoms.what[geom]
    index = m.geoms.index[geom]
    if kind == ROBOT:
        w = d.tree
        scratch = w.scratch
        point_jacobian_row(m.tree.parent, m.tree.joint_type, w.rot, w.pos, m.tree.axis, index,
                           point, direction, scratch)
        for k in range(scratch.shape[0]):
            rows.J_r[r, k] += sign * scratch[k]
        point_impulse(w.rot[index], w.pos[index], point, direction, w.f6)
        impulse_response_into(m.tree.parent, w.X, w.S, w.U, w.D, index, w.f6, scratch, w.YA,
                              w.uu, w.dv, w.t6)
        for k in range(scratch.shape[0]):
            rows.W_r[r, k] += sign * scratch[k]
    elif kind == BODY:
        c = s.body_pos[index]
        rx, ry, rz = point[0] - c[0], point[1] - c[1], point[2] - c[2]
        d0, d1, d2 = direction[0], direction[1], direction[2]
        arm = (ry * d2 - rz * d1, rz * d0 - rx * d2, rx * d1 - ry * d0)
        rows.body[r, slot] = index
        im = m.bodies.inv_mass[index]
        Ii = d.frames.Iw[index]
        for k in range(3):
            rows.J_b[r, slot, k] = sign * direction[k]
            rows.J_b[r, slot, 3 + k] = sign * arm[k]
            rows.W_b[r, slot, k] = sign * direction[k] * im
            rows.W_b[r, slot, 3 + k] = sign * (Ii[k, 0] * arm[0] + Ii[k, 1] * arm[1]
                                               + Ii[k, 2] * arm[2])
