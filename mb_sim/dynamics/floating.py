"""The free-flying base: its coordinates, its pose and motion on SE(3), its 6x6 solve.

A floating base is a 6-dof joint between the world and the root body (Holck 2005, ch. 3, a floating
base is the root of the articulated tree with S = 1). Inside the kernels each tree's segment of
the state vectors keeps its joints first and its base last (mb_sim.model.forest):

    q  = [joints (n_k), base position (3, world), base orientation (4, quaternion x, y, z, w)]
    qd = [joints (n_k), base twist (6, [omega; v] in base axes, Featherstone's order)]

Tree k's base has the slot n + k in the body arrays of `mb_sim.dynamics.work.TreeWork`.
`Simulation` and the public `aba`/`rnea`/`crba` show Pinocchio's free-flyer layout of a robot
instead (q = [x, y, z, qx, qy, qz, qw, joints], v = [v; omega, joints]); `to_pinocchio`/
`from_pinocchio` convert one robot's segment.

The base moves on SE(3): after h of a constant body twist xi = [omega; v], the pose is
T exp(h xi^), with (R, p) -> (R exp(h omega~), p + R V(h omega) h v) and
V(phi) = 1 + (1 - cos t) / t^2 phi~ + (t - sin t) / t^3 phi~^2, t = |phi| (the SE(3)
exponential, as Pinocchio's `integrate`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, inline, njit
from mb_sim.dynamics.ball import advance_balls
from mb_sim.dynamics.spatial import cross_motion
from mb_sim.model.model import BALL_X
from mb_sim.rotations import quat_advance, quat_rotation


@inline
def tree_count(tree: Any) -> int:
    """The number of trees of the forest record (mb_sim.model.forest.Tree)."""
    return tree.tree_body.shape[0] - 1


@inline
def slot_tree(tree: Any, slot: int) -> int:
    """The tree of a work slot: a body's tree, or k for the base slot n + k."""
    n = tree.parent.shape[0]
    return tree.body_tree[slot] if slot < n else slot - n


@njit
def base_pose(tree: Any, k: int, q: np.ndarray, R: np.ndarray, p: np.ndarray) -> None:
    """World pose (R, p) of tree k's base: from q for a floating base, the placement
    otherwise."""
    if tree.floating[k]:
        b = tree.tree_q[k + 1] - 7
        quat_rotation(q[b + 3:b + 7], R)
        for c in range(3):
            p[c] = q[b + c]
    else:
        R[:, :] = tree.base_rot[k]
        p[:] = tree.base_pos[k]


@helper
def base_gravity(tree: Any, k: int, q: np.ndarray, R: np.ndarray, a0: np.ndarray) -> None:
    """The fictitious base acceleration a_0 = [0; -R^T g] in base axes (Holck 2005, ch. 3) of
    tree k's floating base, with R its rotation (scratch, written) and tree.a0[k] = [0; -g]
    in world axes."""
    b = tree.tree_q[k + 1] - 7
    quat_rotation(q[b + 3:b + 7], R)
    g = tree.a0
    for c in range(3):
        a0[c] = 0.0
        a0[3 + c] = R[0, c] * g[k, 3] + R[1, c] * g[k, 4] + R[2, c] * g[k, 5]


@helper
def advance_base(qb: np.ndarray, twist: np.ndarray, h: float) -> None:
    """qb = [p, quat] moved in place by h of the constant body twist [omega; v]: the SE(3)
    exponential of the module docstring."""
    w0, w1, w2 = twist[0] * h, twist[1] * h, twist[2] * h
    u0, u1, u2 = twist[3] * h, twist[4] * h, twist[5] * h
    t2 = w0 * w0 + w1 * w1 + w2 * w2
    if t2 < 1e-12:  # series of (1 - cos t) / t^2 and (t - sin t) / t^3
        a, b = 0.5 - t2 / 24.0, 1.0 / 6.0 - t2 / 120.0
    else:
        t = np.sqrt(t2)
        a, b = (1.0 - np.cos(t)) / t2, (t - np.sin(t)) / (t2 * t)
    c0, c1, c2 = w1 * u2 - w2 * u1, w2 * u0 - w0 * u2, w0 * u1 - w1 * u0  # phi x u
    d0, d1, d2 = w1 * c2 - w2 * c1, w2 * c0 - w0 * c2, w0 * c1 - w1 * c0  # phi x (phi x u)
    s0, s1, s2 = u0 + a * c0 + b * d0, u1 + a * c1 + b * d1, u2 + a * c2 + b * d2
    x, y, z, w = qb[3], qb[4], qb[5], qb[6]
    # R s and R omega with R of the quaternion: v + 2 w (r x v) + 2 r x (r x v)
    for vec in range(2):
        v0, v1, v2 = (s0, s1, s2) if vec == 0 else (twist[0], twist[1], twist[2])
        e0, e1, e2 = y * v2 - z * v1, z * v0 - x * v2, x * v1 - y * v0
        f0, f1, f2 = y * e2 - z * e1, z * e0 - x * e2, x * e1 - y * e0
        r0 = v0 + 2.0 * (w * e0 + f0)
        r1 = v1 + 2.0 * (w * e1 + f1)
        r2 = v2 + 2.0 * (w * e2 + f2)
        if vec == 0:
            qb[0] += r0
            qb[1] += r1
            qb[2] += r2
        else:
            quat_advance(qb[3:7], (r0, r1, r2), h)


@helper
def advance(tree: Any, q: np.ndarray, dq: np.ndarray, h: float, out: np.ndarray) -> None:
    """out = q (+) h dq over every tree: joints q + h dq, ball joints by
    `ball.advance_balls`, floating bases by `advance_base` (out may be q)."""
    qadr, vadr, joint_type = tree.qadr, tree.vadr, tree.joint_type
    for i in range(qadr.shape[0]):
        if joint_type[i] < BALL_X:
            out[qadr[i]] = q[qadr[i]] + h * dq[vadr[i]]
    advance_balls(tree, q, dq, h, out)
    for k in range(tree.floating.shape[0]):
        if tree.floating[k]:
            b, v = tree.tree_q[k + 1] - 7, tree.tree_v[k + 1] - 6
            if out is not q:
                out[b:b + 7] = q[b:b + 7]
            advance_base(out[b:b + 7], dq[v:v + 6], h)


@helper
def chart_rate(delta: np.ndarray, xi: np.ndarray, t6: np.ndarray, out: np.ndarray) -> None:
    """out = dexp^-1_{-delta}(xi) = xi + [delta, xi] / 2 + [delta, [delta, xi]] / 12, to third
    order: the rate of delta for q(t) = q_0 exp(delta(t)) moving with the body twist xi
    (Munthe-Kaas' RK on Lie groups; [a, b] = a x b for motion vectors). out may not be xi."""
    cross_motion(delta, xi, t6)
    cross_motion(delta, t6, out)
    for k in range(6):
        out[k] = xi[k] + 0.5 * t6[k] + out[k] / 12.0


@helper
def cholesky6(A: np.ndarray, L: np.ndarray) -> None:
    """L L^T = A for a symmetric positive definite 6x6 A (lower triangle of L written)."""
    for j in range(6):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        d = np.sqrt(s)
        L[j, j] = d
        for i in range(j + 1, 6):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / d
        for i in range(j):
            L[i, j] = 0.0


@helper
def cholesky_solve6(L: np.ndarray, b: np.ndarray, x: np.ndarray) -> None:
    """x = -(L L^T)^-1 b: the base's response to the articulated bias (or impulse) b
    (a_0 = -I^A_0^-1 p^A_0, RBDA's floating-base ABA). x may be b."""
    for i in range(6):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * x[k]
        x[i] = s / L[i, i]
    for i in range(5, -1, -1):
        s = x[i]
        for k in range(i + 1, 6):
            s -= L[k, i] * x[k]
        x[i] = s / L[i, i]
    for i in range(6):
        x[i] = -x[i]


def to_pinocchio(q: np.ndarray | None, v: np.ndarray | None
                 ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Kernel vectors of one floating robot (joints first, the base's 7 and twist [omega; v]
    last) -> Pinocchio's free-flyer layout."""
    pq = None if q is None else np.concatenate([q[-7:], q[:-7]])
    pv = None if v is None else np.concatenate([v[-3:], v[-6:-3], v[:-6]])
    return pq, pv


def from_pinocchio(q: np.ndarray | None, v: np.ndarray | None
                   ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Pinocchio's free-flyer layout -> kernel vectors (joints first, twist [omega; v])."""
    kq = None if q is None else np.concatenate([q[7:], q[:7]])
    kv = None if v is None else np.concatenate([v[6:], v[3:6], v[:3]])
    return kq, kv
