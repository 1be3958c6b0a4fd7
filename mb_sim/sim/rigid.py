"""Free rigid bodies: quaternion kinematics and torque-free rotation (003.md 1.5, 002.md 1.2).

Quaternions are (x, y, z, w). Orientation is advanced by the exact rotation of the angular
velocity over the step, q(t+h) = exp(w h / 2) q(t). The gyroscopic term of Euler's equation
I dw/dt + w x I w = 0 is integrated implicitly (one Newton step in body axes), which keeps
the rotational energy from growing.
"""

from __future__ import annotations

import numpy as np

from mb_sim._jit import njit
from mb_sim.dynamics.spatial import quat_integrate, quat_to_matrix


@njit
def gyroscopic_step(w_world: np.ndarray, R: np.ndarray, inertia: np.ndarray, h: float) -> np.ndarray:
    """Angular velocity after h of torque-free rotation, implicit in the gyroscopic term."""
    wb = R.T @ w_world
    Iw = inertia @ wb
    f = h * np.cross(wb, Iw)
    # Jacobian of f(w) = I (w - w0) + h w x I w at w0: I + h (w~ I - (I w)~)
    wx = np.array([[0.0, -wb[2], wb[1]], [wb[2], 0.0, -wb[0]], [-wb[1], wb[0], 0.0]])
    Iwx = np.array([[0.0, -Iw[2], Iw[1]], [Iw[2], 0.0, -Iw[0]], [-Iw[1], Iw[0], 0.0]])
    Jac = inertia + h * (wx @ inertia - Iwx)
    wb = wb - np.linalg.solve(Jac, f)
    return R @ wb


@njit
def world_inverse_inertia(R: np.ndarray, inv_inertia: np.ndarray) -> np.ndarray:
    """I_w^-1 = R I_body^-1 R^T (003.md 1.5)."""
    return R @ inv_inertia @ R.T


@njit
def free_motion(vel: np.ndarray, quat: np.ndarray, inertia: np.ndarray, dynamic: np.ndarray,
                gravity: np.ndarray, h: float, out: np.ndarray) -> None:
    """Velocities of all free bodies after h of gravity and torque-free rotation, into out."""
    out[:, :] = vel
    for b in range(vel.shape[0]):
        if dynamic[b]:
            for k in range(3):
                out[b, k] += h * gravity[k]
            out[b, 3:] = gyroscopic_step(vel[b, 3:], quat_to_matrix(quat[b]), inertia[b], h)


@njit
def advance_poses(pos: np.ndarray, quat: np.ndarray, vel: np.ndarray, dynamic: np.ndarray,
                  h: float) -> None:
    """x += h v, q = exp(w h / 2) q, for every dynamic body (in place)."""
    for b in range(pos.shape[0]):
        if dynamic[b]:
            for k in range(3):
                pos[b, k] += h * vel[b, k]
            quat[b] = quat_integrate(quat[b], vel[b, 3:], h)
