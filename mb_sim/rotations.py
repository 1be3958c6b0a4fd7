"""Rotations and unit quaternions in one place. Quaternions are (x, y, z, w) (ROS, Pinocchio);
roll-pitch-yaw is URDF's fixed-axis convention, R = Rz(yaw) Ry(pitch) Rx(roll).

Python: `rpy_matrix`, `quat_from_rpy`, `quat_from_matrix`, `matrix_from_quat`. Compiled
(`mb_sim._jit.njit`): `quat_rotation` (the matrix of a quaternion, into an array), `matrix_quat`
(the quaternion of a matrix, into an array), `quat_advance`
(a quaternion moved by an angular velocity), `rotate` and `rotate_matrix` (the exponential
map exp(h w~) on a vector and on a matrix, Rodrigues), `rotation_vector` (its inverse, the
logarithm of a rotation matrix).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from mb_sim._jit import helper, njit

Vec = tuple[float, float, float]


def rpy_matrix(rpy: Sequence[float]) -> np.ndarray:
    """URDF roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = (float(v) for v in rpy)
    cr, sr = math.cos(r), math.sin(r)
    cp, sp = math.cos(p), math.sin(p)
    cy, sy = math.cos(y), math.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def quat_from_rpy(rpy: Sequence[float]) -> np.ndarray:
    """The quaternion (x, y, z, w) of `rpy_matrix(rpy)`."""
    hr, hp, hy = (0.5 * float(a) for a in rpy)
    cr, sr, cp, sp, cy, sy = (math.cos(hr), math.sin(hr), math.cos(hp), math.sin(hp),
                              math.cos(hy), math.sin(hy))
    return np.array([
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
        cr * cp * cy + sr * sp * sy,
    ])


def quat_from_matrix(R: np.ndarray) -> np.ndarray:
    """The unit quaternion (x, y, z, w) of a rotation matrix, w >= 0 (`matrix_quat`)."""
    out = np.empty(4)
    matrix_quat(np.ascontiguousarray(R, dtype=float), out)
    return out


def matrix_from_quat(q: Sequence[float] | np.ndarray) -> np.ndarray:
    """The rotation matrix of a unit quaternion (x, y, z, w)."""
    return quat_to_matrix(np.asarray(q, dtype=float))


@helper
def quat_rotation(q: np.ndarray, out: np.ndarray) -> None:
    """The rotation matrix of the unit quaternion q = (x, y, z, w), written into out."""
    x, y, z, w = q[0], q[1], q[2], q[3]
    out[0, 0], out[0, 1], out[0, 2] = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
    out[1, 0], out[1, 1], out[1, 2] = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
    out[2, 0], out[2, 1], out[2, 2] = 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)


@njit
def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of the unit quaternion q = (x, y, z, w)."""
    out = np.empty((3, 3))
    quat_rotation(q, out)
    return out


@njit
def quat_advance(q: np.ndarray, w: Vec, h: float) -> None:
    """q = exp(w h / 2) * q, renormalised, in place (the orientation after h of the angular
    velocity w, world frame)."""
    angle = np.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]) * h
    if angle < 1e-12:
        x1, y1, z1, w1 = 0.5 * w[0] * h, 0.5 * w[1] * h, 0.5 * w[2] * h, 1.0
    else:
        s = np.sin(0.5 * angle) / (angle / h)
        x1, y1, z1, w1 = w[0] * s, w[1] * s, w[2] * s, np.cos(0.5 * angle)
    x2, y2, z2, w2 = q[0], q[1], q[2], q[3]
    a = w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2
    b = w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2
    c = w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2
    d = w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2
    size = np.sqrt(a * a + b * b + c * c + d * d)
    q[0], q[1], q[2], q[3] = a / size, b / size, c / size, d / size


@helper
def rotate(w: Vec, h: float, r: Vec) -> Vec:
    """exp(h w~) r: r turned by the angle |w| h about w (Rodrigues)."""
    ax, ay, az = w[0] * h, w[1] * h, w[2] * h
    angle = math.sqrt(ax * ax + ay * ay + az * az)
    if angle < 1e-14:
        return (r[0] + ay * r[2] - az * r[1], r[1] + az * r[0] - ax * r[2],
                r[2] + ax * r[1] - ay * r[0])
    kx, ky, kz = ax / angle, ay / angle, az / angle
    c, s = math.cos(angle), math.sin(angle)
    kr = (kx * r[0] + ky * r[1] + kz * r[2]) * (1.0 - c)
    return (r[0] * c + (ky * r[2] - kz * r[1]) * s + kx * kr,
            r[1] * c + (kz * r[0] - kx * r[2]) * s + ky * kr,
            r[2] * c + (kx * r[1] - ky * r[0]) * s + kz * kr)


@njit
def rotate_matrix(w: Vec, h: float, R: np.ndarray) -> np.ndarray:
    """exp(h w~) R, column by column."""
    out = np.empty((3, 3))
    for j in range(3):
        c = rotate(w, h, (R[0, j], R[1, j], R[2, j]))
        for i in range(3):
            out[i, j] = c[i]
    return out


@njit
def rotation_vector(E: np.ndarray) -> np.ndarray:
    """log(E) as a rotation vector (angle times unit axis)."""
    v = np.empty(3)
    v[0] = 0.5 * (E[2, 1] - E[1, 2])
    v[1] = 0.5 * (E[0, 2] - E[2, 0])
    v[2] = 0.5 * (E[1, 0] - E[0, 1])
    s = np.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    c = 0.5 * (E[0, 0] + E[1, 1] + E[2, 2] - 1.0)
    if s < 1e-12:
        return v
    return v * (np.arctan2(s, c) / s)


def quat_rotation_vector(q: np.ndarray) -> np.ndarray:
    """log of the unit quaternion q = (x, y, z, w) as a rotation vector (angle in [0, pi]
    times unit axis)."""
    v = np.asarray(q[:3], dtype=float) * (-1.0 if q[3] < 0.0 else 1.0)
    s = float(np.linalg.norm(v))
    if s < 1e-12:
        return 2.0 * v
    return v * (2.0 * math.atan2(s, abs(float(q[3]))) / s)


@njit
def matrix_quat(R: np.ndarray, out: np.ndarray) -> None:
    """The unit quaternion (x, y, z, w) of the rotation matrix R, with w >= 0, written into out
    (Shepperd's method: the square root is taken of the largest of 1 + trace and the
    1 + 2 R_ii - trace, so it never comes near zero)."""
    trace = R[0, 0] + R[1, 1] + R[2, 2]
    if trace >= R[0, 0] and trace >= R[1, 1] and trace >= R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + trace)
        w, x, y, z = 0.25 * s, R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]
        x, y, z = x / s, y / s, z / s
    elif R[0, 0] >= R[1, 1] and R[0, 0] >= R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + 2.0 * R[0, 0] - trace)
        x, w, y, z = 0.25 * s, R[2, 1] - R[1, 2], R[0, 1] + R[1, 0], R[0, 2] + R[2, 0]
        w, y, z = w / s, y / s, z / s
    elif R[1, 1] >= R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + 2.0 * R[1, 1] - trace)
        y, w, x, z = 0.25 * s, R[0, 2] - R[2, 0], R[0, 1] + R[1, 0], R[1, 2] + R[2, 1]
        w, x, z = w / s, x / s, z / s
    else:
        s = 2.0 * math.sqrt(1.0 + 2.0 * R[2, 2] - trace)
        z, w, x, y = 0.25 * s, R[1, 0] - R[0, 1], R[0, 2] + R[2, 0], R[1, 2] + R[2, 1]
        w, x, y = w / s, x / s, y / s
    scale = (-1.0 if w < 0.0 else 1.0) / math.sqrt(x * x + y * y + z * z + w * w)
    out[0], out[1], out[2], out[3] = x * scale, y * scale, z * scale, w * scale
