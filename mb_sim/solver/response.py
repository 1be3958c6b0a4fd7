"""How a unit impulse on a point changes the system velocity: one row's J and W = M^-1 J^T.

- Robot link (000.md 2.5, Table 3.4): J is the point Jacobian row along the direction, W the
  articulated impulse response of a unit impulse at the point (O(n), no mass matrix).
- Free rigid body (000.md eq. 2.16): J = [d, r x d], W = [d / m, I_w^-1 (r x d)] for
  u = [v; w] with r from the centre of mass to the point.
The row of a contact between A and B is J_A - J_B: the impulse acts +d on A and -d on B.
"""

from __future__ import annotations

import numpy as np

from mb_sim._jit import njit
from mb_sim.dynamics.impulse import impulse_response_into, point_impulse
from mb_sim.dynamics.kinematics import point_jacobian_row

ROBOT = 0
BODY = 1
STATIC = 2


@njit
def add_point(
    kind: int,
    index: int,
    sign: float,
    point: np.ndarray,
    direction: np.ndarray,
    r: int,
    slot: int,
    J_r: np.ndarray,
    W_r: np.ndarray,
    body: np.ndarray,
    J_b: np.ndarray,
    W_b: np.ndarray,
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
    scratch: np.ndarray,
    work: tuple,
) -> None:
    """Add sign x (the point's J and W along `direction`) to row r (free bodies go in `slot`).
    `work` holds the articulated response's scratch arrays (`response_work`)."""
    if kind == ROBOT:
        point_jacobian_row(parent, joint_type, rot, pos, axis, index, point, direction, scratch)
        for k in range(scratch.shape[0]):
            J_r[r, k] += sign * scratch[k]
        YA, u, dv, t6, f6 = work
        point_impulse(rot[index], pos[index], point, direction, f6)
        impulse_response_into(parent, X, S, U, D, index, f6, scratch, YA, u, dv, t6)
        for k in range(scratch.shape[0]):
            W_r[r, k] += sign * scratch[k]
    elif kind == BODY:
        c = body_pos[index]
        rx, ry, rz = point[0] - c[0], point[1] - c[1], point[2] - c[2]
        d0, d1, d2 = direction[0], direction[1], direction[2]
        arm = (ry * d2 - rz * d1, rz * d0 - rx * d2, rx * d1 - ry * d0)
        body[r, slot] = index
        m = inv_mass[index]
        Ii = inv_inertia[index]
        for k in range(3):
            J_b[r, slot, k] = sign * direction[k]
            J_b[r, slot, 3 + k] = sign * arm[k]
            W_b[r, slot, k] = sign * direction[k] * m
            W_b[r, slot, 3 + k] = sign * (Ii[k, 0] * arm[0] + Ii[k, 1] * arm[1] + Ii[k, 2] * arm[2])


@njit
def response_work(n: int) -> tuple:
    """Scratch arrays for `add_point` on a robot of n bodies."""
    return np.zeros((n, 6)), np.zeros(n), np.zeros((n, 6)), np.zeros(6), np.zeros(6)
