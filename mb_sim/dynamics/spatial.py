"""Spatial algebra in Featherstone's notation (Holck 2005, ch. 3), written out for 6-vectors.

Motion vectors are [omega; v] and force vectors [n; f], both at a frame origin and in that
frame's coordinates. A Plücker transform from frame A to frame B, with E the rotation from A
to B coordinates and r the origin of B in A coordinates, is (Holck 2005 eq. 3.16)

    B_X_A = [[E, 0], [-E r~, E]],     and forces transform with B_X_A^-T.

The helpers below are small loops so that numba compiles them into the kernels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, inline
from mb_sim.model.model import BALL_X, BALL_Z, PRISMATIC, REVOLUTE


@inline
def dot6(a: np.ndarray, b: np.ndarray) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@inline
def joint_pose(joint_type: np.ndarray, axis: np.ndarray, tree_rot: np.ndarray,
               tree_pos: np.ndarray, i: int, q: np.ndarray, a: int, R: np.ndarray,
               p: np.ndarray) -> None:
    """Pose (R, p) of body i in its parent's frame, written into R, p, from the tree arrays
    and the forest's positions q (body i's at q[a], a = qadr[i]): the tree offset, then the
    joint's motion: a rotation about the axis (Rodrigues: R_J = cos q 1 + (1 - cos q) u u^T +
    sin q u~), a translation along it, or for a ball joint's first body (BALL_X) the rotation
    of its unit quaternion q[a:a+4] (x, y, z, w); its other two bodies sit on it (identity
    offsets: docs/architecture.md, "Ball joints in the tree")."""
    x, y, z = axis[i, 0], axis[i, 1], axis[i, 2]
    t = joint_type[i]
    if t == REVOLUTE or t == BALL_X:
        if t == REVOLUTE:
            c, s = np.cos(q[a]), np.sin(q[a])
            u = 1.0 - c
            j00, j01, j02 = c + u * x * x, u * x * y - s * z, u * x * z + s * y
            j10, j11, j12 = u * x * y + s * z, c + u * y * y, u * y * z - s * x
            j20, j21, j22 = u * x * z - s * y, u * y * z + s * x, c + u * z * z
        else:
            qx, qy, qz, qw = q[a], q[a + 1], q[a + 2], q[a + 3]
            j00, j01, j02 = 1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)
            j10, j11, j12 = 2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)
            j20, j21, j22 = 2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)
        for r in range(3):
            a0, a1, a2 = tree_rot[i, r, 0], tree_rot[i, r, 1], tree_rot[i, r, 2]
            R[r, 0] = a0 * j00 + a1 * j10 + a2 * j20
            R[r, 1] = a0 * j01 + a1 * j11 + a2 * j21
            R[r, 2] = a0 * j02 + a1 * j12 + a2 * j22
            p[r] = tree_pos[i, r]
    else:
        d = q[a] if t == PRISMATIC else 0.0
        for r in range(3):
            a0, a1, a2 = tree_rot[i, r, 0], tree_rot[i, r, 1], tree_rot[i, r, 2]
            R[r, 0], R[r, 1], R[r, 2] = a0, a1, a2
            p[r] = tree_pos[i, r] + d * (a0 * x + a1 * y + a2 * z)


@inline
def subspace_half(joint_type: np.ndarray, i: int) -> int:
    """Where S_i's nonzero half starts: 0 for a rotation ([axis; 0]: revolute and ball
    joints), 3 for a translation ([0; axis]: prismatic)."""
    return 3 if joint_type[i] == PRISMATIC else 0


@helper
def joint_transform(tree: Any, w: Any, i: int, q: np.ndarray) -> None:
    """Body i's Plücker transform from its parent, X_i = X_J(q_i) X_T (Holck 2005 eq. 3.16),
    into w.X[i], and its motion subspace S_i (S = [axis; 0] for a revolute or ball joint's
    body, [0; axis] for a prismatic one) into w.S[i], for the tree record `tree`
    (mb_sim.model.compile.Tree), its work record w and the forest's positions q: the one
    joint step of ABA, RNEA and hybrid dynamics. X_i is [[E, 0], [-E r~, E]] with E = R^T
    for the body posed at (R, r) in its parent."""
    R, p, X, S, axis = w.joint_rot, w.joint_pos, w.X, w.S, tree.axis
    joint_pose(tree.joint_type, axis, tree.tree_rot, tree.tree_pos, i, q, tree.qadr[i], R, p)
    for r in range(3):
        e0, e1, e2 = R[0, r], R[1, r], R[2, r]
        X[i, r, 0], X[i, r, 1], X[i, r, 2] = e0, e1, e2
        X[i, r, 3], X[i, r, 4], X[i, r, 5] = 0.0, 0.0, 0.0
        X[i, r + 3, 3], X[i, r + 3, 4], X[i, r + 3, 5] = e0, e1, e2
        X[i, r + 3, 0] = e2 * p[1] - e1 * p[2]
        X[i, r + 3, 1] = e0 * p[2] - e2 * p[0]
        X[i, r + 3, 2] = e1 * p[0] - e0 * p[1]
    o = subspace_half(tree.joint_type, i)
    for k in range(3):
        S[i, 3 - o + k] = 0.0
        S[i, o + k] = axis[i, k]


@inline
def ball_bias(joint_type: np.ndarray, vadr: np.ndarray, i: int, qd: np.ndarray,
              v: np.ndarray, c: np.ndarray, k: int) -> None:
    """c[k] = the velocity-product term of body i when it is a ball joint's: v_i x [omega;
    0] on its last body (BALL_Z; omega = the three qd of the joint, v = v[i] its child's
    velocity), zero on the other two (docs/architecture.md, "Ball joints in the tree")."""
    for r in range(6):
        c[k, r] = 0.0
    if joint_type[i] == BALL_Z:
        b = vadr[i] - 2
        o0, o1, o2 = qd[b], qd[b + 1], qd[b + 2]
        w0, w1, w2, u0, u1, u2 = v[i, 0], v[i, 1], v[i, 2], v[i, 3], v[i, 4], v[i, 5]
        c[k, 0], c[k, 1], c[k, 2] = w1 * o2 - w2 * o1, w2 * o0 - w0 * o2, w0 * o1 - w1 * o0
        c[k, 3], c[k, 4], c[k, 5] = u1 * o2 - u2 * o1, u2 * o0 - u0 * o2, u0 * o1 - u1 * o0


@inline
def mv6(A: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    for i in range(6):
        s = 0.0
        for j in range(6):
            s += A[i, j] * x[j]
        out[i] = s


@inline
def transform_motion(X: np.ndarray, i: int, w0: float, w1: float, w2: float, u0: float,
                     u1: float, u2: float, out: np.ndarray, k: int) -> None:
    """out[k] = X_i [w; u] for the Plücker transform X[i] = [[E, 0], [M, E]] (its zero block
    skipped; arrays and indices rather than row views, which numba reference-counts)."""
    for r in range(3):
        out[k, r] = X[i, r, 0] * w0 + X[i, r, 1] * w1 + X[i, r, 2] * w2
        out[k, 3 + r] = (X[i, 3 + r, 0] * w0 + X[i, 3 + r, 1] * w1 + X[i, 3 + r, 2] * w2
                         + X[i, 3 + r, 3] * u0 + X[i, 3 + r, 4] * u1 + X[i, 3 + r, 5] * u2)


@inline
def transform_force_add(X: np.ndarray, i: int, f: np.ndarray, out: np.ndarray, k: int) -> None:
    """out[k] += X_i^T f for the Plücker transform X[i] = [[E, 0], [M, E]] and a force f (6)."""
    n0, n1, n2, f0, f1, f2 = f[0], f[1], f[2], f[3], f[4], f[5]
    for c in range(3):
        out[k, c] += (X[i, 0, c] * n0 + X[i, 1, c] * n1 + X[i, 2, c] * n2
                      + X[i, 3, c] * f0 + X[i, 4, c] * f1 + X[i, 5, c] * f2)
        out[k, 3 + c] += X[i, 3, 3 + c] * f0 + X[i, 4, 3 + c] * f1 + X[i, 5, 3 + c] * f2


@inline
def velocity_force(inertia: np.ndarray, b: int, v: np.ndarray, k: int, f: np.ndarray) -> None:
    """f[k] = v x* I v, the velocity-product force of a body of spatial inertia inertia[b]
    moving with v[k] (I v is kept in f[k] on the way)."""
    w0, w1, w2, u0, u1, u2 = v[k, 0], v[k, 1], v[k, 2], v[k, 3], v[k, 4], v[k, 5]
    for r in range(6):
        f[k, r] = (inertia[b, r, 0] * w0 + inertia[b, r, 1] * w1 + inertia[b, r, 2] * w2
                   + inertia[b, r, 3] * u0 + inertia[b, r, 4] * u1 + inertia[b, r, 5] * u2)
    h0, h1, h2, h3, h4, h5 = f[k, 0], f[k, 1], f[k, 2], f[k, 3], f[k, 4], f[k, 5]
    f[k, 0] = w1 * h2 - w2 * h1 + u1 * h5 - u2 * h4
    f[k, 1] = w2 * h0 - w0 * h2 + u2 * h3 - u0 * h5
    f[k, 2] = w0 * h1 - w1 * h0 + u0 * h4 - u1 * h3
    f[k, 3] = w1 * h5 - w2 * h4
    f[k, 4] = w2 * h3 - w0 * h5
    f[k, 5] = w0 * h4 - w1 * h3


@inline
def body_force(inertia: np.ndarray, b: int, v: np.ndarray, a: np.ndarray, f: np.ndarray,
               k: int) -> None:
    """f[k] = I a + v x* I v, the Newton-Euler force of a body of spatial inertia inertia[b]
    moving with v[k], accelerating with a[k]."""
    velocity_force(inertia, b, v, k, f)
    m0, m1, m2, m3, m4, m5 = a[k, 0], a[k, 1], a[k, 2], a[k, 3], a[k, 4], a[k, 5]
    for r in range(6):
        f[k, r] += (inertia[b, r, 0] * m0 + inertia[b, r, 1] * m1 + inertia[b, r, 2] * m2
                    + inertia[b, r, 3] * m3 + inertia[b, r, 4] * m4 + inertia[b, r, 5] * m5)


@inline
def mtv6_add(A: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """out += A^T x."""
    for j in range(6):
        s = 0.0
        for i in range(6):
            s += A[i, j] * x[i]
        out[j] += s


@helper
def congruence_add(X: np.ndarray, i: int, I: np.ndarray, out: np.ndarray, j: int,
                   tmp: np.ndarray) -> None:
    """out[j] += X_i^T I X_i for a symmetric I and a Plücker transform X[i] = [[E, 0],
    [-E r~, E]], in blocks (rotate, then translate; half the products of two 6x6 matrix
    products; arrays and indices rather than row views, which numba reference-counts): with
    I = [[A, B], [B^T, C]] rotated to A' = E^T A E, B' = E^T B E, C' = E^T C E, and
    V = r~ C', W = B' r~,

        X^T I X = [[A' - W - W^T - V r~, B' + V], [(B' + V)^T, C']].

    `tmp` is 6x6 scratch: A', B', C' in their blocks, then V in the lower-left, W in the
    lower-right one."""
    for blk in range(3):  # A, B, C: G = Blk E in tmp's lower-left block, then E^T G
        ro, co = (0, 0) if blk == 0 else ((0, 3) if blk == 1 else (3, 3))
        for r in range(3):
            for c in range(3):
                tmp[3 + r, c] = (I[ro + r, co] * X[i, 0, c] + I[ro + r, co + 1] * X[i, 1, c]
                                 + I[ro + r, co + 2] * X[i, 2, c])
        for r in range(3):
            for c in range(3):
                tmp[ro + r, co + c] = (X[i, 0, r] * tmp[3, c] + X[i, 1, r] * tmp[4, c]
                                       + X[i, 2, r] * tmp[5, c])
    # r from r~ = -E^T M, with M = X[i, 3:6, 0:3] = -E r~
    r0 = -(X[i, 0, 2] * X[i, 3, 1] + X[i, 1, 2] * X[i, 4, 1] + X[i, 2, 2] * X[i, 5, 1])
    r1 = -(X[i, 0, 0] * X[i, 3, 2] + X[i, 1, 0] * X[i, 4, 2] + X[i, 2, 0] * X[i, 5, 2])
    r2 = -(X[i, 0, 1] * X[i, 3, 0] + X[i, 1, 1] * X[i, 4, 0] + X[i, 2, 1] * X[i, 5, 0])
    for c in range(3):  # column c of V = r x C'[:, c]; the off-diagonal blocks B' + V
        y0, y1, y2 = tmp[3, 3 + c], tmp[4, 3 + c], tmp[5, 3 + c]
        v0, v1, v2 = r1 * y2 - r2 * y1, r2 * y0 - r0 * y2, r0 * y1 - r1 * y0
        tmp[3, c], tmp[4, c], tmp[5, c] = v0, v1, v2
        b0, b1, b2 = tmp[0, 3 + c] + v0, tmp[1, 3 + c] + v1, tmp[2, 3 + c] + v2
        out[j, 0, 3 + c] += b0
        out[j, 1, 3 + c] += b1
        out[j, 2, 3 + c] += b2
        out[j, 3 + c, 0] += b0
        out[j, 3 + c, 1] += b1
        out[j, 3 + c, 2] += b2
    for r in range(3):
        for c in range(3):
            out[j, 3 + r, 3 + c] += tmp[3 + r, 3 + c]
    for r in range(3):  # row r of W = B'[r, :] r~ = -(r x B'[r, :])
        b0, b1, b2 = tmp[r, 3], tmp[r, 4], tmp[r, 5]
        tmp[3 + r, 3] = r2 * b1 - r1 * b2
        tmp[3 + r, 4] = r0 * b2 - r2 * b0
        tmp[3 + r, 5] = r1 * b0 - r0 * b1
    for r in range(3):  # row r of V r~ = -(r x V[r, :]); A'' = A' - W - W^T - V r~
        y0, y1, y2 = tmp[3 + r, 0], tmp[3 + r, 1], tmp[3 + r, 2]
        z0, z1, z2 = r2 * y1 - r1 * y2, r0 * y2 - r2 * y0, r1 * y0 - r0 * y1
        out[j, r, 0] += tmp[r, 0] - tmp[3 + r, 3] - tmp[3, 3 + r] - z0
        out[j, r, 1] += tmp[r, 1] - tmp[3 + r, 4] - tmp[4, 3 + r] - z1
        out[j, r, 2] += tmp[r, 2] - tmp[3 + r, 5] - tmp[5, 3 + r] - z2


@helper
def rigid_congruence_add(X: np.ndarray, i: int, I: np.ndarray, b: int, out: np.ndarray,
                         j: int) -> None:
    """out[j] += X_i^T I[b] X_i for a rigid-body inertia I[b] = [[I_o, h~], [h~^T, m 1]]
    (mass m, first moment h = m c, inertia I_o about the frame's origin; `congruence_add`
    for any symmetric I) from its ten numbers (RBDA sec. 2.13): with X[i] = [[E, 0],
    [-E r~, E]], the body's numbers in the parent's axes are m, h_R = E^T h and
    I_R = E^T I_o E, and about the parent's origin

        h' = h_R + m r,
        I_o' = I_R - r h_R^T - h_R r^T - m r r^T + (2 h_R . r + m r . r) 1

    (the parallel-axis theorem: I_o' = I_c + m c'~ c'~^T with c' = E^T c + r). A sum of
    rigid-body inertias is one: the composite inertias of CRBA are."""
    m = I[b, 3, 3]
    h0, h1, h2 = I[b, 2, 4], I[b, 0, 5], I[b, 1, 3]
    e00, e01, e02 = X[i, 0, 0], X[i, 0, 1], X[i, 0, 2]
    e10, e11, e12 = X[i, 1, 0], X[i, 1, 1], X[i, 1, 2]
    e20, e21, e22 = X[i, 2, 0], X[i, 2, 1], X[i, 2, 2]
    # r from r~ = -E^T M, with M = X[i, 3:6, 0:3] = -E r~
    r0 = -(e02 * X[i, 3, 1] + e12 * X[i, 4, 1] + e22 * X[i, 5, 1])
    r1 = -(e00 * X[i, 3, 2] + e10 * X[i, 4, 2] + e20 * X[i, 5, 2])
    r2 = -(e01 * X[i, 3, 0] + e11 * X[i, 4, 0] + e21 * X[i, 5, 0])
    g0 = e00 * h0 + e10 * h1 + e20 * h2  # h_R = E^T h
    g1 = e01 * h0 + e11 * h1 + e21 * h2
    g2 = e02 * h0 + e12 * h1 + e22 * h2
    # G = I_o E (columns), then I_R = E^T G, its upper triangle
    a00, a01, a02 = I[b, 0, 0], I[b, 0, 1], I[b, 0, 2]
    a11, a12, a22 = I[b, 1, 1], I[b, 1, 2], I[b, 2, 2]
    p00 = a00 * e00 + a01 * e10 + a02 * e20
    p10 = a01 * e00 + a11 * e10 + a12 * e20
    p20 = a02 * e00 + a12 * e10 + a22 * e20
    p01 = a00 * e01 + a01 * e11 + a02 * e21
    p11 = a01 * e01 + a11 * e11 + a12 * e21
    p21 = a02 * e01 + a12 * e11 + a22 * e21
    p02 = a00 * e02 + a01 * e12 + a02 * e22
    p12 = a01 * e02 + a11 * e12 + a12 * e22
    p22 = a02 * e02 + a12 * e12 + a22 * e22
    s = 2.0 * (g0 * r0 + g1 * r1 + g2 * r2) + m * (r0 * r0 + r1 * r1 + r2 * r2)
    c00 = e00 * p00 + e10 * p10 + e20 * p20 - 2.0 * r0 * g0 - m * r0 * r0 + s
    c11 = e01 * p01 + e11 * p11 + e21 * p21 - 2.0 * r1 * g1 - m * r1 * r1 + s
    c22 = e02 * p02 + e12 * p12 + e22 * p22 - 2.0 * r2 * g2 - m * r2 * r2 + s
    c01 = e00 * p01 + e10 * p11 + e20 * p21 - r0 * g1 - g0 * r1 - m * r0 * r1
    c02 = e00 * p02 + e10 * p12 + e20 * p22 - r0 * g2 - g0 * r2 - m * r0 * r2
    c12 = e01 * p02 + e11 * p12 + e21 * p22 - r1 * g2 - g1 * r2 - m * r1 * r2
    k0, k1, k2 = g0 + m * r0, g1 + m * r1, g2 + m * r2  # h'
    out[j, 0, 0] += c00
    out[j, 1, 1] += c11
    out[j, 2, 2] += c22
    out[j, 0, 1] += c01
    out[j, 1, 0] += c01
    out[j, 0, 2] += c02
    out[j, 2, 0] += c02
    out[j, 1, 2] += c12
    out[j, 2, 1] += c12
    out[j, 0, 4] -= k2  # h'~ above, its transpose below
    out[j, 0, 5] += k1
    out[j, 1, 3] += k2
    out[j, 1, 5] -= k0
    out[j, 2, 3] -= k1
    out[j, 2, 4] += k0
    out[j, 4, 0] -= k2
    out[j, 5, 0] += k1
    out[j, 3, 1] += k2
    out[j, 5, 1] -= k0
    out[j, 3, 2] -= k1
    out[j, 4, 2] += k0
    out[j, 3, 3] += m
    out[j, 4, 4] += m
    out[j, 5, 5] += m


@inline
def cross_motion(v: np.ndarray, m: np.ndarray, out: np.ndarray) -> None:
    """out = v x m for motion vectors."""
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    out[0] = w1 * m[2] - w2 * m[1]
    out[1] = w2 * m[0] - w0 * m[2]
    out[2] = w0 * m[1] - w1 * m[0]
    out[3] = w1 * m[5] - w2 * m[4] + u1 * m[2] - u2 * m[1]
    out[4] = w2 * m[3] - w0 * m[5] + u2 * m[0] - u0 * m[2]
    out[5] = w0 * m[4] - w1 * m[3] + u0 * m[1] - u1 * m[0]


@inline
def cross_force(v: np.ndarray, f: np.ndarray, out: np.ndarray) -> None:
    """out = v x* f for force vectors."""
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    out[0] = w1 * f[2] - w2 * f[1] + u1 * f[5] - u2 * f[4]
    out[1] = w2 * f[0] - w0 * f[2] + u2 * f[3] - u0 * f[5]
    out[2] = w0 * f[1] - w1 * f[0] + u0 * f[4] - u1 * f[3]
    out[3] = w1 * f[5] - w2 * f[4]
    out[4] = w2 * f[3] - w0 * f[5]
    out[5] = w0 * f[4] - w1 * f[3]
