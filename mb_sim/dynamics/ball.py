"""Ball joints' coordinates on SO(3): the quaternion of each moved by its angular velocity.

A ball joint of a tree is three bodies (BALL_X, BALL_Y, BALL_Z) with one unit quaternion
q = (x, y, z, w) in the state at their `qadr`, the rotation of the child frame in the frame
the joint's tree offset gives, and three velocities at their `vadr`: the child's angular
velocity omega in its own frame (docs/architecture.md, "Ball joints in the tree"; Pinocchio's
spherical joint). After h of a constant omega the quaternion is q exp(h omega), the product
on the right since omega is in the child frame:

    q <- q (x) (sin(t/2) u, cos(t/2)),   t = h |omega|, u = omega / |omega|,

renormalised. RK4's stages move it the same way, and their rates in the chart are
dexp^-1_{-delta}(omega) = omega + delta x omega / 2 + delta x (delta x omega) / 12 to third
order (Munthe-Kaas' RK on Lie groups, as `floating.chart_rate` for a floating base).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper
from mb_sim.model.model import BALL_X


@helper
def advance_ball(q: np.ndarray, a: int, w0: float, w1: float, w2: float, h: float) -> None:
    """q[a:a+4] moved in place by h of the child-frame angular velocity (w0, w1, w2)."""
    x0, y0, z0 = w0 * h, w1 * h, w2 * h
    t2 = x0 * x0 + y0 * y0 + z0 * z0
    if t2 < 1e-24:
        s, c = 0.5, 1.0
    else:
        t = np.sqrt(t2)
        s, c = np.sin(0.5 * t) / t, np.cos(0.5 * t)
    bx, by, bz, bw = s * x0, s * y0, s * z0, c
    ax, ay, az, aw = q[a], q[a + 1], q[a + 2], q[a + 3]
    x = aw * bx + bw * ax + ay * bz - az * by
    y = aw * by + bw * ay + az * bx - ax * bz
    z = aw * bz + bw * az + ax * by - ay * bx
    w = aw * bw - ax * bx - ay * by - az * bz
    size = np.sqrt(x * x + y * y + z * z + w * w)
    q[a], q[a + 1], q[a + 2], q[a + 3] = x / size, y / size, z / size, w / size


@helper
def advance_balls(tree: Any, q: np.ndarray, dq: np.ndarray, h: float, out: np.ndarray) -> None:
    """out's ball quaternions = q's moved by h of the velocities dq (out may be q)."""
    joint_type, qadr, vadr = tree.joint_type, tree.qadr, tree.vadr
    for i in range(joint_type.shape[0]):
        if joint_type[i] == BALL_X:
            a, v = qadr[i], vadr[i]
            for c in range(4):
                out[a + c] = q[a + c]
            advance_ball(out, a, dq[v], dq[v + 1], dq[v + 2], h)


@helper
def ball_chart_rates(tree: Any, previous: np.ndarray, f: float, omega: np.ndarray,
                     out: np.ndarray) -> None:
    """out's entries of every ball joint = dexp^-1_{-delta}(omega) (module docstring), with
    delta = f previous (the increment of the RK4 stage) and omega the stage's velocities."""
    joint_type, vadr = tree.joint_type, tree.vadr
    for i in range(joint_type.shape[0]):
        if joint_type[i] != BALL_X:
            continue
        v = vadr[i]
        d0, d1, d2 = f * previous[v], f * previous[v + 1], f * previous[v + 2]
        o0, o1, o2 = omega[v], omega[v + 1], omega[v + 2]
        c0, c1, c2 = d1 * o2 - d2 * o1, d2 * o0 - d0 * o2, d0 * o1 - d1 * o0
        e0, e1, e2 = d1 * c2 - d2 * c1, d2 * c0 - d0 * c2, d0 * c1 - d1 * c0
        out[v] = o0 + 0.5 * c0 + e0 / 12.0
        out[v + 1] = o1 + 0.5 * c1 + e1 / 12.0
        out[v + 2] = o2 + 0.5 * c2 + e2 / 12.0
