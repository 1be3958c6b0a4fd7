"""How a unit impulse on a point changes the system velocity: one row's J and W = M^-1 J^T.

- Robot link (Holck 2005, ch. 3, Table 3.4): J is the point Jacobian row along the direction, W the
  articulated impulse response of a unit impulse at the point (O(n), no mass matrix).
- Free rigid body (Holck 2005 eq. 2.16): J = [d, r x d], W = [d / m, I_w^-1 (r x d)] for
  u = [v; w] with r from the centre of mass to the point.
The row of a contact between A and B is J_A - J_B: the impulse acts +d on A and -d on B.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper
from mb_sim.dynamics.impulse import impulse_response, point_impulse
from mb_sim.dynamics.kinematics import point_jacobian_row


@helper
def add_robot_point(tree: Any, w: Any, J_r: np.ndarray, W_r: np.ndarray, r: int, body: int,
                    sign: float, point: np.ndarray, direction: np.ndarray) -> None:
    """Add sign x (J and W along `direction` of the world point fixed to robot body `body`)
    to row r of the robot columns J_r, W_r; w (`mb_sim.dynamics.work.TreeWork`) must hold the
    poses and articulated inertias of q."""
    scratch = w.row
    point_jacobian_row(tree.parent, tree.joint_type, w.rot, w.pos, tree.axis, body, point,
                       direction, scratch)
    for k in range(scratch.shape[0]):
        J_r[r, k] += sign * scratch[k]
    point_impulse(w.rot[body], w.pos[body], point, direction, w.vec6b)
    impulse_response(tree, w, body, w.vec6b, scratch)
    for k in range(scratch.shape[0]):
        W_r[r, k] += sign * scratch[k]


@helper
def body_point(J: np.ndarray, W: np.ndarray, sign: float, point: np.ndarray,
               direction: np.ndarray, com: np.ndarray, inv_mass: float,
               inv_inertia: np.ndarray) -> None:
    """J = sign [d, r x d] and W = sign [d / m, I_w^-1 (r x d)] of a point of a free body
    (Holck 2005 eq. 2.16), r from its centre of mass `com`, into the 6-vectors J and W."""
    rx, ry, rz = point[0] - com[0], point[1] - com[1], point[2] - com[2]
    d0, d1, d2 = direction[0], direction[1], direction[2]
    a0, a1, a2 = ry * d2 - rz * d1, rz * d0 - rx * d2, rx * d1 - ry * d0
    Ii = inv_inertia
    J[0], J[1], J[2] = sign * d0, sign * d1, sign * d2
    J[3], J[4], J[5] = sign * a0, sign * a1, sign * a2
    W[0], W[1], W[2] = sign * d0 * inv_mass, sign * d1 * inv_mass, sign * d2 * inv_mass
    for k in range(3):
        W[3 + k] = sign * (Ii[k, 0] * a0 + Ii[k, 1] * a1 + Ii[k, 2] * a2)
