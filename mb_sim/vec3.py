"""3-vectors as tuples of floats, so compiled kernels do not allocate per operation.

`row(a, i)` and `col(rot, i, k)` read vectors out of arrays, `put(a, i, v)` writes one back;
the rest is vector algebra, rotations by matrices and by angular velocities, the orthonormal
frame around a unit vector, and unit quaternions (x, y, z, w): their rotation matrix and their
motion under an angular velocity.
"""

from __future__ import annotations

import math

import numpy as np

from mb_sim._jit import njit

Vec = tuple[float, float, float]


@njit
def row(a: np.ndarray, i: int) -> Vec:
    """Row `i` of an (n, 3) array as a tuple."""
    return (a[i, 0], a[i, 1], a[i, 2])


@njit
def col(rot: np.ndarray, i: int, k: int) -> Vec:
    """Column `k` of the rotation `rot[i]` (its local axis `k` in world coordinates)."""
    return (rot[i, 0, k], rot[i, 1, k], rot[i, 2, k])


@njit
def add(a: Vec, b: Vec) -> Vec:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit
def sub(a: Vec, b: Vec) -> Vec:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit
def scale(a: Vec, s: float) -> Vec:
    return (a[0] * s, a[1] * s, a[2] * s)


@njit
def madd(a: Vec, s: float, b: Vec) -> Vec:
    """a + s b."""
    return (a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2])


@njit
def dot(a: Vec, b: Vec) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit
def cross(a: Vec, b: Vec) -> Vec:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit
def norm(a: Vec) -> float:
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@njit
def normalize(a: Vec) -> Vec:
    """a / |a|; the zero vector stays zero."""
    n = math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
    if n == 0.0:
        return (0.0, 0.0, 0.0)
    return (a[0] / n, a[1] / n, a[2] / n)


@njit
def rot_mul(rot: np.ndarray, i: int, v: Vec) -> Vec:
    """rot[i] @ v."""
    return (
        rot[i, 0, 0] * v[0] + rot[i, 0, 1] * v[1] + rot[i, 0, 2] * v[2],
        rot[i, 1, 0] * v[0] + rot[i, 1, 1] * v[1] + rot[i, 1, 2] * v[2],
        rot[i, 2, 0] * v[0] + rot[i, 2, 1] * v[1] + rot[i, 2, 2] * v[2],
    )


@njit
def rot_tmul(rot: np.ndarray, i: int, v: Vec) -> Vec:
    """rot[i].T @ v."""
    return (
        rot[i, 0, 0] * v[0] + rot[i, 1, 0] * v[1] + rot[i, 2, 0] * v[2],
        rot[i, 0, 1] * v[0] + rot[i, 1, 1] * v[1] + rot[i, 2, 1] * v[2],
        rot[i, 0, 2] * v[0] + rot[i, 1, 2] * v[1] + rot[i, 2, 2] * v[2],
    )


@njit
def any_perpendicular(a: Vec) -> Vec:
    """A unit vector perpendicular to the unit vector `a` (deterministic)."""
    ax = abs(a[0])
    ay = abs(a[1])
    az = abs(a[2])
    if ax <= ay and ax <= az:
        e = (1.0, 0.0, 0.0)
    elif ay <= az:
        e = (0.0, 1.0, 0.0)
    else:
        e = (0.0, 0.0, 1.0)
    return normalize(cross(a, e))


@njit
def put(a: np.ndarray, i: int, v: Vec) -> None:
    a[i, 0] = v[0]
    a[i, 1] = v[1]
    a[i, 2] = v[2]


@njit
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
def frame_around(n: Vec) -> tuple[Vec, Vec]:
    """Unit t1, t2 completing the unit vector n to a right-handed orthonormal frame
    (n, t1, t2): t1 = n x e_x normalised, or n x e_y when n is close to e_x; t2 = n x t1."""
    if abs(n[0]) < 0.6:
        t = (0.0, n[2], -n[1])
    else:
        t = (-n[2], 0.0, n[0])
    t1 = scale(t, 1.0 / norm(t))
    return t1, cross(n, t1)


# Quaternions (x, y, z, w)


@njit
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
