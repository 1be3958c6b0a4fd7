"""Free rigid bodies: quaternion kinematics and torque-free rotation (Bender et al. n.d., the step,
Mikhailyuk & Strashnov 2016, body dynamics).

Quaternions are (x, y, z, w). Orientation is advanced by the exact rotation of the angular
velocity over the step, q(t+h) = exp(w h / 2) q(t). The gyroscopic term of Euler's equation
I dw/dt + w x I w = 0 is integrated implicitly (one Newton step in body axes), which keeps
the rotational energy from growing.
"""

from __future__ import annotations

import numpy as np

from mb_sim._jit import helper, njit
from mb_sim.rotations import quat_advance, quat_rotation


@helper
def gyroscopic_step(w: np.ndarray, R: np.ndarray, J: np.ndarray, inertia: np.ndarray,
                    h: float, out: np.ndarray) -> None:
    """Angular velocity (world) after h of torque-free rotation, implicit in the gyroscopic
    term: one Newton step on f(w) = I (w - w0) + h w x I w in body axes from w0, with the
    Jacobian I + h (w~ I - (I w)~) (J: its 3x3 scratch); written into out."""
    b0 = R[0, 0] * w[0] + R[1, 0] * w[1] + R[2, 0] * w[2]
    b1 = R[0, 1] * w[0] + R[1, 1] * w[1] + R[2, 1] * w[2]
    b2 = R[0, 2] * w[0] + R[1, 2] * w[1] + R[2, 2] * w[2]
    I = inertia
    L0 = I[0, 0] * b0 + I[0, 1] * b1 + I[0, 2] * b2
    L1 = I[1, 0] * b0 + I[1, 1] * b1 + I[1, 2] * b2
    L2 = I[2, 0] * b0 + I[2, 1] * b1 + I[2, 2] * b2
    f0 = h * (b1 * L2 - b2 * L1)
    f1 = h * (b2 * L0 - b0 * L2)
    f2 = h * (b0 * L1 - b1 * L0)
    wx = ((0.0, -b2, b1), (b2, 0.0, -b0), (-b1, b0, 0.0))
    Lx = ((0.0, -L2, L1), (L2, 0.0, -L0), (-L1, L0, 0.0))
    for r in range(3):
        for c in range(3):
            J[r, c] = I[r, c] + h * (wx[r][0] * I[0, c] + wx[r][1] * I[1, c]
                                     + wx[r][2] * I[2, c] - Lx[r][c])
    # Cramer's rule for J x = f
    c00 = J[1, 1] * J[2, 2] - J[1, 2] * J[2, 1]
    c01 = J[1, 2] * J[2, 0] - J[1, 0] * J[2, 2]
    c02 = J[1, 0] * J[2, 1] - J[1, 1] * J[2, 0]
    det = J[0, 0] * c00 + J[0, 1] * c01 + J[0, 2] * c02
    x0 = (f0 * c00 + J[0, 1] * (f2 * J[1, 2] - f1 * J[2, 2])
          + J[0, 2] * (f1 * J[2, 1] - f2 * J[1, 1])) / det
    x1 = (J[0, 0] * (f1 * J[2, 2] - f2 * J[1, 2]) + f0 * c01
          + J[0, 2] * (f2 * J[1, 0] - f1 * J[2, 0])) / det
    x2 = (J[0, 0] * (f2 * J[1, 1] - f1 * J[2, 1]) + J[0, 1] * (f1 * J[2, 0] - f2 * J[1, 0])
          + f0 * c02) / det
    b0, b1, b2 = b0 - x0, b1 - x1, b2 - x2
    for k in range(3):
        out[k] = R[k, 0] * b0 + R[k, 1] * b1 + R[k, 2] * b2


@njit
def free_motion(vel: np.ndarray, quat: np.ndarray, inertia: np.ndarray, dynamic: np.ndarray,
                gravity: np.ndarray, h: float, out: np.ndarray) -> None:
    """Velocities of all free bodies after h of gravity and torque-free rotation, into out."""
    out[:, :] = vel
    R, J = np.empty((3, 3)), np.empty((3, 3))
    for b in range(vel.shape[0]):
        if dynamic[b]:
            for k in range(3):
                out[b, k] += h * gravity[k]
            quat_rotation(quat[b], R)
            gyroscopic_step(vel[b, 3:], R, J, inertia[b], h, out[b, 3:])


@helper
def advance_poses(pos: np.ndarray, quat: np.ndarray, vel: np.ndarray, dynamic: np.ndarray,
                  h: float) -> None:
    """x += h v, q = exp(w h / 2) q, for every dynamic body (in place)."""
    for b in range(pos.shape[0]):
        if dynamic[b]:
            for k in range(3):
                pos[b, k] += h * vel[b, k]
            quat_advance(quat[b], (vel[b, 3], vel[b, 4], vel[b, 5]), h)
