"""Joints between environment bodies in maximal coordinates, kept by impulses (Bender et al. n.d.,
Mikhailyuk & Strashnov 2016).

Each joint holds a point of its child on a point of its parent (or of the world) and, by type,
directions between them:

- ball: the point (3 linear constraints);
- revolute: the point and the axis (3 linear, 2 angular: the axes stay parallel);
- prismatic: the child's point stays on the parent's axis line (2 linear) and the relative
  orientation is that of load time (3 angular);
- fixed: point and relative orientation (3 linear, 3 angular).

Two stages of the step use them.

1. Velocity rows (`world_joint_rows`, before the sequential-impulse solve, Mikhailyuk & Strashnov
2016, sequential impulses), so
   that contacts pushing a jointed body see the joint. A point row along d has
   J = [d, r_c x d] on the child and -[d, r_p x d] on the parent, an angular row along d has
   J = [0, d] and -[0, d]; W = M^-1 J^T (Holck 2005 eq. 2.16 terms). The k bilateral rows of a
   joint are handed to the solver K-orthonormalised: with K = J W^T = L L^T, J' = L^-1 J and
   W' = L^-1 W, an invertible recombination of equality rows with the same solution set whose
   block is the identity, so one visit solves the joint's own block exactly. Their targets
   are the look-ahead of Bender et al. n.d., the step linearised about the velocities u0 after
   the free motion, target = J' u0 - L^-1 c(u0) / h with c(u0) the joint's error predicted at t
   + h (below):
   the relative velocity that closes the predicted error, which is 0 for a joint that is
   closed and stays closed to first order (`predictive = False` gives plain target 0). The
   solve then already lands the joints close to D_max together with the contacts, and the
   keeping loop corrects what the linearisation and the other rows leave (on the ball chain
   6.6 instead of 55 corrections per step, benchmarks/bench_world_joints.py). On top of them:
   - Coulomb friction (Mikhailyuk & Strashnov 2016, joint friction-1.7, eqs. 12, 15, 16): revolute,
   a SCALAR row on
     (w_c - w_p) . n clamped to +-F h; prismatic, a SCALAR row on the relative velocity of
     the child's point along d with the lever-arm terms of Mikhailyuk & Strashnov 2016, joint types,
     B = [d, r_c x d] / -[d, r_p x d], clamped to +-F h; ball, a BALL group of three angular
     rows (w_c - w_p) . e_k kept in the ball |p| <= F h (eq. 16);
   - limits on the joint coordinate s (revolute: angle about the axis in (-pi, pi];
     prismatic: displacement along it; both 0 at load time) as NORMAL rows, speculative with
     restitution 0: s_dot >= -(s - lower) / h and -s_dot >= -(upper - s) / h.
   Friction and limit rows J_f are made K-orthogonal to the joint's bilateral rows,
   J_f <- J_f - sum_a (J_f . W'_a) J'_a (the same for W_f). On the joint manifold
   (J' u = 0) they measure the same velocity, and the part removed is a reaction through the
   joint, so the friction impulse itself stays the one bounded by F h; what changes is that
   Gauss-Seidel no longer trades between the friction row and the joint's own rows.
   World-joint rows are not warm-started (each step starts them from zero), so the copyable
   `State` holds nothing of theirs.

2. The keeping loop of Bender et al. n.d., the step (`keep_world_joints`, after the solve).
   With the current velocities every body is moved ballistically to t + h (x' = x + h v,
   R' = exp(h w~) R, the same motion the position stage then makes) and each joint's error is predicted: the gap
   g = p_c' - p_p' between its points and, per type, the angle between the axes or the
   rotation vector of R_c' (R_p' R_rel0)^T. A joint whose linear or angular error exceeds
   D_max gets the impulse that linearly removes it in one step (Bender et al. n.d., the impulse,
   the Bender-Schmitt form I = K^-1 g / h): lambda = -K^-1 c / h on its constraint rows, with K
   = J M^-1 J^T of
   the lever arms and world inverse inertias at time t. For a ball joint this is Holck 2005
   eq. 2.16, K = (1/m_c + 1/m_p) 1 - r_c~ I_c^-1 r_c~ - r_p~ I_p^-1 r_p~, applied +I at the
   child's point and -I at the parent's; for the other types the linear and angular rows are
   solved together (the same orthonormalised block as the rows). A static end (the world or
   a static body) has zero inverse mass. Passes over all joints repeat, re-predicting after
   every change, until a whole pass finds every joint within D_max or `max_passes` passes
   have run (max_passes = 1 is the real-time mode of Bender et al. n.d., accuracy parameters;
   reaching the cap is never an
   error, the joints are simply left with what the passes achieved).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, njit
from mb_sim.model.compile import BALL_JOINT, FIXED_JOINT, PRISMATIC_JOINT, REVOLUTE_JOINT
from mb_sim.model.compile import CHILD_ANCHOR as _CA
from mb_sim.model.compile import CHILD_AXIS as _CAX
from mb_sim.model.compile import CHILD_REF as _CREF
from mb_sim.model.compile import PARENT_ANCHOR as _PA
from mb_sim.model.compile import PARENT_AXIS as _PAX
from mb_sim.model.compile import PARENT_REF as _PREF
from mb_sim.rotations import quat_rotation, rotate, rotate_matrix, rotation_vector
from mb_sim.solver.rows import BALL, FOLLOWER, NORMAL, SCALAR, clear_row
from mb_sim.vec3 import (
    Vec,
    add,
    cross,
    dot,
    frame_around,
    madd,
    norm,
    rot_mul,
    row,
    scale,
    sub,
)

REVOLUTE = REVOLUTE_JOINT
PRISMATIC = PRISMATIC_JOINT
FIXED = FIXED_JOINT
AXES = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


# --------------------------------------------------------------------------------------------
# Per-step frames and joint blocks


@njit
def frames(m: Any, d: Any, s: Any) -> None:
    """d.frames of the bodies at s: pose, world inverse inertia R I^-1 R^T (Bender et al. n.d., the
    step) and
    inverse mass of every body; entry n_bodies is the world (at rest, infinite mass)."""
    f = d.frames
    X, R, Iw, im, dyn = f.pos, f.rot, f.inv_inertia, f.inv_mass, f.dynamic
    body_pos, body_quat = s.body_pos, s.body_quat
    inv_mass, inv_inertia, dynamic = m.bodies.inv_mass, m.bodies.inv_inertia, m.bodies.dynamic
    nb = body_pos.shape[0]
    for b in range(nb + 1):
        if b < nb:
            for i in range(3):
                X[b, i] = body_pos[b, i]
            quat_rotation(body_quat[b], R[b])
            dyn[b] = dynamic[b]
        else:
            X[b] = 0.0
            R[b] = 0.0
            for i in range(3):
                R[b, i, i] = 1.0
            dyn[b] = False
        if dyn[b]:
            im[b] = inv_mass[b]
            for i in range(3):
                for k in range(3):
                    t = 0.0
                    for a in range(3):
                        for c in range(3):
                            t += R[b, i, a] * inv_inertia[b, a, c] * R[b, k, c]
                    Iw[b, i, k] = t
        else:
            im[b] = 0.0
            Iw[b] = 0.0


@helper
def _n_rows(jtype: int) -> int:
    if jtype == BALL_JOINT:
        return 3
    if jtype == FIXED:
        return 6
    return 5


@helper
def _set_row(f: Any, Jr: np.ndarray, Wr: np.ndarray, point: bool, d: Vec, rc: Vec, rp: Vec,
             ends: np.ndarray) -> None:
    """J and W = M^-1 J^T of one constraint row between the bodies ends = (child, parent)
    (frames f): slot 0 the child (+), slot 1 the parent (-). A point row along d acts at the
    lever arms rc, rp; an angular row is a pure torque."""
    Iw, im, dyn = f.inv_inertia, f.inv_mass, f.dynamic
    c, p = ends[0], ends[1]
    Jr[:, :] = 0.0
    Wr[:, :] = 0.0
    for slot in range(2):
        b = c if slot == 0 else p
        if not dyn[b]:
            continue
        sign = 1.0 if slot == 0 else -1.0
        arm = d
        if point:
            arm = cross(rc if slot == 0 else rp, d)
            for k in range(3):
                Jr[slot, k] = sign * d[k]
                Wr[slot, k] = sign * im[b] * d[k]
        Ia = rot_mul(Iw, b, arm)
        for k in range(3):
            Jr[slot, 3 + k] = sign * arm[k]
            Wr[slot, 3 + k] = sign * Ia[k]


@helper
def _raw_rows(m: Any, d: Any, j: int, raw_J: np.ndarray, raw_W: np.ndarray) -> int:
    """Joint j's bilateral rows before orthonormalisation (J and W of each, `_set_row`);
    its lever arms and basis into d.joints. Returns the number of rows."""
    jtype, ends, loc = m.joints.jtype, m.joints.ends, m.joints.loc
    f = d.frames
    X, R = f.pos, f.rot
    arms, basis = d.joints.arms, d.joints.basis
    c, p = ends[j, 0], ends[j, 1]
    rc = rot_mul(R, c, row(loc[j], _CA))
    rp = rot_mul(R, p, row(loc[j], _PA))
    n = rot_mul(R, p, row(loc[j], _PAX))
    t1, t2 = frame_around(n)
    t = jtype[j]
    if t == PRISMATIC:  # the parent is pushed where the child's point is
        rp = sub(add(row(X, c), rc), row(X, p))
    for i in range(3):
        arms[j, 0, i] = rc[i]
        arms[j, 1, i] = rp[i]
        basis[j, 0, i] = n[i]
        basis[j, 1, i] = t1[i]
        basis[j, 2, i] = t2[i]
    k = _n_rows(t)
    n_linear = 2 if t == PRISMATIC else 3
    for a in range(k):
        point = a < n_linear
        i = a if point else a - n_linear
        if (t == PRISMATIC and point) or (t == REVOLUTE and not point):
            dv = t1 if i == 0 else t2
        else:
            dv = AXES[i]
        _set_row(f, raw_J[a], raw_W[a], point, dv, rc, rp, ends[j])
    return k


@helper
def _cholesky_inverse(raw_J: np.ndarray, raw_W: np.ndarray, k: int, K: np.ndarray,
                      L: np.ndarray, Li: np.ndarray) -> None:
    """Li = L^-1 for K = J W^T = L L^T of the first k raw rows (K, L: scratch). A pivot is
    kept above 1e-14 of K's largest diagonal entry."""
    for a in range(k):
        for b in range(k):
            s = 0.0
            for slot in range(2):
                for e in range(6):
                    s += raw_J[a, slot, e] * raw_W[b, slot, e]
            K[a, b] = s
    largest = 0.0
    for a in range(k):
        largest = max(largest, K[a, a])
    L[:, :] = 0.0
    for a in range(k):  # Cholesky, K = L L^T
        for b in range(a + 1):
            s = K[a, b]
            for e in range(b):
                s -= L[a, e] * L[b, e]
            if a == b:
                L[a, a] = np.sqrt(max(s, 1e-14 * largest + 1e-300))
            else:
                L[a, b] = s / L[b, b]
    Li[:, :] = 0.0
    for col in range(k):  # forward substitution: L Li = 1
        for a in range(col, k):
            s = 1.0 if a == col else 0.0
            for e in range(col, a):
                s -= L[a, e] * Li[e, col]
            Li[a, col] = s / L[a, a]


@njit
def blocks(m: Any, d: Any) -> None:
    """Each world joint's bilateral rows at time t (poses of d.frames), K-orthonormalised,
    into d.joints.

    Rows in order: ball: point x, y, z; revolute: point x, y, z, angular t1, t2; prismatic:
    point t1, t2 (at the child's point), angular x, y, z; fixed: point x, y, z, angular
    x, y, z (world axes; n the parent's axis, t1, t2 perpendicular to it). With the raw rows'
    K = J W^T = L L^T (Cholesky), J[j] and W[j] receive L^-1 J and L^-1 W, Linv[j] receives
    L^-1, arms[j] the lever arms (child, parent), basis[j] (n, t1, t2)."""
    J, W, Linv = d.joints.J, d.joints.W, d.joints.Linv
    raw_J = np.zeros((6, 2, 6))
    raw_W = np.zeros((6, 2, 6))
    K = np.zeros((6, 6))
    L = np.zeros((6, 6))
    for j in range(m.joints.jtype.shape[0]):
        k = _raw_rows(m, d, j, raw_J, raw_W)
        Li = Linv[j]
        _cholesky_inverse(raw_J, raw_W, k, K, L, Li)
        for a in range(6):
            for slot in range(2):
                for e in range(6):
                    sj = 0.0
                    sw = 0.0
                    if a < k:
                        for b in range(a + 1):
                            sj += Li[a, b] * raw_J[b, slot, e]
                            sw += Li[a, b] * raw_W[b, slot, e]
                    J[j, a, slot, e] = sj
                    W[j, a, slot, e] = sw


@helper
def joint_coordinate(m: Any, d: Any, j: int) -> float:
    """Revolute: the angle about the parent's axis from the load-time pose, in (-pi, pi];
    prismatic: the child's point's displacement along the parent's axis from load time."""
    jtype, ends, loc, s0 = m.joints.jtype, m.joints.ends, m.joints.loc, m.joints.s0
    X, R = d.frames.pos, d.frames.rot
    c, p = ends[j, 0], ends[j, 1]
    n = rot_mul(R, p, row(loc[j], _PAX))
    if jtype[j] == REVOLUTE:
        up = rot_mul(R, p, row(loc[j], _PREF))
        uc = rot_mul(R, c, row(loc[j], _CREF))
        return np.arctan2(dot(n, cross(up, uc)), dot(up, uc))
    gap = sub(add(row(X, c), rot_mul(R, c, row(loc[j], _CA))),
              add(row(X, p), rot_mul(R, p, row(loc[j], _PA))))
    return dot(gap, n) - s0[j]


# --------------------------------------------------------------------------------------------
# The keeping loop (Bender et al. n.d., the step)


@helper
def predicted_error(m: Any, d: Any, j: int, u: np.ndarray,
                    c_out: np.ndarray) -> tuple[float, float]:
    """Joint j's error at t + h after ballistic motion from the velocities u, in the order of
    its constraint rows (c_out), and its linear and angular sizes (m, rad)."""
    jtype, ends, loc, rrel0 = m.joints.jtype, m.joints.ends, m.joints.loc, m.joints.rrel0
    X, R, basis, h = d.frames.pos, d.frames.rot, d.joints.basis, m.options.dt
    c, p = ends[j, 0], ends[j, 1]
    wc = (u[c, 3], u[c, 4], u[c, 5])
    wp = (u[p, 3], u[p, 4], u[p, 5])
    pc = add(madd(row(X, c), h, (u[c, 0], u[c, 1], u[c, 2])),
             rotate(wc, h, rot_mul(R, c, row(loc[j], _CA))))
    pp = add(madd(row(X, p), h, (u[p, 0], u[p, 1], u[p, 2])),
             rotate(wp, h, rot_mul(R, p, row(loc[j], _PA))))
    g = sub(pc, pp)
    t = jtype[j]
    lin = 0.0
    ang = 0.0
    if t == PRISMATIC:
        n = rotate(wp, h, rot_mul(R, p, row(loc[j], _PAX)))
        g = madd(g, -dot(g, n), n)
        c_out[0] = dot(g, row(basis[j], 1))
        c_out[1] = dot(g, row(basis[j], 2))
    else:
        for i in range(3):
            c_out[i] = g[i]
    lin = norm(g)
    if t == REVOLUTE:
        ap = rotate(wp, h, rot_mul(R, p, row(loc[j], _PAX)))
        ac = rotate(wc, h, rot_mul(R, c, row(loc[j], _CAX)))
        axis = cross(ap, ac)  # rotation from the parent's axis to the child's
        s = norm(axis)
        err = axis
        if s > 1e-300:
            err = scale(axis, np.arctan2(s, dot(ap, ac)) / s)
        c_out[3] = dot(err, row(basis[j], 1))
        c_out[4] = dot(err, row(basis[j], 2))
        ang = norm(err)
    elif t == PRISMATIC or t == FIXED:
        Rc = rotate_matrix(wc, h, R[c])
        Rt = rotate_matrix(wp, h, R[p]) @ rrel0[j]
        phi = rotation_vector(Rc @ Rt.T)
        o = 2 if t == PRISMATIC else 3
        for i in range(3):
            c_out[o + i] = phi[i]
        ang = np.sqrt(phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2])
    return lin, ang


# --------------------------------------------------------------------------------------------
# Velocity rows


@helper
def _project_out(Jf: np.ndarray, Wf: np.ndarray, J: np.ndarray, W: np.ndarray, j: int,
                 k: int) -> None:
    """Jf <- Jf - sum_a (Jf . W'_a) J'_a, Wf likewise: Jf becomes K-orthogonal to the
    joint's orthonormal bilateral rows."""
    for a in range(k):
        s = 0.0
        for slot in range(2):
            for m in range(6):
                s += Jf[slot, m] * W[j, a, slot, m]
        for slot in range(2):
            for m in range(6):
                Jf[slot, m] -= s * J[j, a, slot, m]
                Wf[slot, m] -= s * W[j, a, slot, m]


@helper
def _write_row(rows: Any, r: int, Jr: np.ndarray, Wr: np.ndarray, ends: np.ndarray,
               dyn: np.ndarray) -> None:
    """The two bodies' parts of row r (cleared before): the child's in slot 0, the
    parent's in slot 1, nothing for a static end."""
    for slot in range(2):
        b = ends[slot]
        rows.body[r, slot] = b if dyn[b] else -1
        for k in range(6):
            rows.J_b[r, slot, k] = Jr[slot, k] if dyn[b] else 0.0
            rows.W_b[r, slot, k] = Wr[slot, k] if dyn[b] else 0.0


@helper
def _bilateral_rows(m: Any, d: Any, j: int, u: np.ndarray, cvec: np.ndarray, r: int) -> int:
    """Joint j's orthonormal bilateral rows from row r, their targets from the velocities u
    (module docstring); returns the next free row."""
    jb, rows, ends = d.joints, d.rows, m.joints.ends
    J, W, Linv = jb.J, jb.W, jb.Linv
    predictive, h = m.options.predictive, m.options.dt
    cvec[:] = 0.0
    if predictive:
        predicted_error(m, d, j, u, cvec)
    for a in range(_n_rows(m.joints.jtype[j])):
        goal = 0.0
        if predictive:  # J' u0 - L^-1 c / h: the velocity that closes the predicted error
            for slot in range(2):
                b = ends[j, slot]
                for i in range(6):
                    goal += J[j, a, slot, i] * u[b, i]
            for b in range(a + 1):
                goal -= Linv[j, a, b] * cvec[b] / h
        clear_row(rows, r, SCALAR, goal, -np.inf, np.inf)
        _write_row(rows, r, J[j, a], W[j, a], ends[j], d.frames.dynamic)
        r += 1
    return r


@helper
def _friction_rows(m: Any, d: Any, j: int, Jf: np.ndarray, Wf: np.ndarray, r: int) -> int:
    """Joint j's Coulomb friction rows (a BALL group of three for a ball joint) from row r,
    K-orthogonal to its bilateral rows; returns the next free row."""
    jb, rows, f, ends = d.joints, d.rows, d.frames, m.joints.ends
    t = m.joints.jtype[j]
    k = _n_rows(t)
    bound = m.joints.friction[j] * m.options.dt
    jb.friction_row[j] = r
    if t == BALL_JOINT:
        for a in range(3):
            _set_row(f, Jf, Wf, False, AXES[a], row(jb.arms[j], 0), row(jb.arms[j], 1),
                     ends[j])
            _project_out(Jf, Wf, jb.J, jb.W, j, k)
            clear_row(rows, r, BALL if a == 0 else FOLLOWER, 0.0, -bound, bound)
            _write_row(rows, r, Jf, Wf, ends[j], f.dynamic)
            r += 1
        return r
    _set_row(f, Jf, Wf, t == PRISMATIC, row(jb.basis[j], 0), row(jb.arms[j], 0),
             row(jb.arms[j], 1), ends[j])
    _project_out(Jf, Wf, jb.J, jb.W, j, k)
    clear_row(rows, r, SCALAR, 0.0, -bound, bound)
    _write_row(rows, r, Jf, Wf, ends[j], f.dynamic)
    return r + 1


@helper
def _limit_rows(m: Any, d: Any, j: int, Jf: np.ndarray, Wf: np.ndarray, r: int) -> int:
    """Joint j's lower and upper limit rows from row r (NORMAL rows on the joint coordinate,
    K-orthogonal to its bilateral rows); returns the next free row."""
    jb, rows, f, ends, limits = d.joints, d.rows, d.frames, m.joints.ends, m.joints.limits
    t = m.joints.jtype[j]
    h = m.options.dt
    coordinate = joint_coordinate(m, d, j)
    _set_row(f, Jf, Wf, t == PRISMATIC, row(jb.basis[j], 0), row(jb.arms[j], 0),
             row(jb.arms[j], 1), ends[j])
    _project_out(Jf, Wf, jb.J, jb.W, j, _n_rows(t))
    for side in range(2):  # lower: +s_dot >= -(s - lower) / h; upper: -s_dot
        gap = coordinate - limits[j, 0] if side == 0 else limits[j, 1] - coordinate
        if side == 1:
            for slot in range(2):
                for i in range(6):
                    Jf[slot, i] = -Jf[slot, i]
                    Wf[slot, i] = -Wf[slot, i]
        jb.limit_row[j, side] = r
        clear_row(rows, r, NORMAL, -gap / h, 0.0, np.inf)
        _write_row(rows, r, Jf, Wf, ends[j], f.dynamic)
        r += 1
    return r


# --------------------------------------------------------------------------------------------
# Stages


@helper
def world_joint_rows(m: Any, d: Any, s: Any, vb: np.ndarray) -> None:
    """Stage 3's world-joint part: the blocks at the poses of d.frames (those of s), then
    every world joint's rows appended to d.rows (bilateral, friction, limits; the module
    docstring), targets from the velocities vb after the free motion; d.joints.first_row,
    friction_row, limit_row receive the row indices per joint (-1 where a joint has none).
    Nothing without world joints."""
    jt, jb = m.joints, d.joints
    if jt.jtype.shape[0] == 0:
        return
    blocks(m, d)
    Jf = np.zeros((2, 6))
    Wf = np.zeros((2, 6))
    cvec = np.zeros(6)
    nb = vb.shape[0]
    u = jb.body_vel
    u[:nb] = vb
    u[nb] = 0.0
    r = d.rows.count[0]
    for j in range(jt.jtype.shape[0]):
        t = jt.jtype[j]
        jb.first_row[j] = r
        r = _bilateral_rows(m, d, j, u, cvec, r)
        jb.friction_row[j] = -1
        if jt.friction[j] > 0.0:
            r = _friction_rows(m, d, j, Jf, Wf, r)
        jb.limit_row[j, 0] = -1
        jb.limit_row[j, 1] = -1
        if jt.has_limits[j] and (t == REVOLUTE or t == PRISMATIC):
            r = _limit_rows(m, d, j, Jf, Wf, r)
    d.rows.count[0] = r


@njit
def keep_world_joints(m: Any, d: Any, vb: np.ndarray) -> None:
    """Bender et al. n.d., the step step 1 on vb (in place): passes over the joints, each joint
    whose predicted
    error exceeds d_max receiving lambda' = -L^-1 c / h on its orthonormal rows (that is
    lambda = -K^-1 c / h on the raw ones), until a pass finds all within d_max or
    max_passes passes have run. d.joints.stats: passes, corrections and the largest
    predicted error of the last pass, corrections in total."""
    jtype, ends = m.joints.jtype, m.joints.ends
    if jtype.shape[0] == 0:
        return
    jb, opt = d.joints, m.options
    W, Linv = jb.W, jb.Linv
    h, d_max = opt.dt, opt.d_max
    nb = vb.shape[0]
    u = jb.body_vel
    u[:nb] = vb
    u[nb] = 0.0
    cvec = np.zeros(6)
    lam = np.zeros(6)
    corrections = 0
    passes = 0
    worst = 0.0
    for _ in range(opt.max_passes):
        passes += 1
        worst = 0.0
        fixed_any = False
        for j in range(jtype.shape[0]):
            lin, ang = predicted_error(m, d, j, u, cvec)
            worst = max(worst, max(lin, ang))
            if lin <= d_max and ang <= d_max:
                continue
            fixed_any = True
            corrections += 1
            k = _n_rows(jtype[j])
            for a in range(k):
                t = 0.0
                for b in range(a + 1):
                    t += Linv[j, a, b] * cvec[b]
                lam[a] = -t / h
            for slot in range(2):
                b = ends[j, slot]
                for i in range(6):
                    t = 0.0
                    for a in range(k):
                        t += W[j, a, slot, i] * lam[a]
                    u[b, i] += t
        if not fixed_any:
            break
    vb[:, :] = u[:nb]
    jb.stats[0] = passes
    jb.stats[1] = corrections
    jb.stats[2] = worst
    jb.stats[3] += corrections


@njit
def world_joint_coordinates(m: Any, d: Any, out: np.ndarray) -> None:
    """Revolute angles and prismatic displacements of the world joints (NaN for ball and
    fixed joints) at the poses of d.frames."""
    jw = m.joints
    for j in range(jw.jtype.shape[0]):
        out[j] = np.nan
        if jw.jtype[j] == REVOLUTE or jw.jtype[j] == PRISMATIC:
            out[j] = joint_coordinate(m, d, j)
