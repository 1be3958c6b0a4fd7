"""The step: one compiled function over (model, data, state), made of named stages.

`step(sim, n)` advances n steps of m.options.dt inside one call. Each stage reads the
read-only scene model `m` (mb_sim.model.compile), writes the workspace `d` (mb_sim.sim.data)
and, at the end, the state `s` (mb_sim.sim.state):

0. take the commands: a non-finite effort or servo target refuses the step, one beyond its
   bounds is clamped (and reported);
1. collide: link and body poses, broad phase, narrow phase (Holck 2005, fig. 2.4), and the
   columns of H^-1 the contacts reach;
2. free motion: robot qdd by ABA with the commanded efforts and the position and velocity
   servos, their stiffness and damping implicit (mb_sim.sim.servo; Holck 2005, ch. 3), or
   from H factorised where the contacts' rows will factorise it anyway (RBDA sec. 6.1);
   free bodies under gravity with implicit gyroscopic rotation; velocities advance by h
   (semi-implicit Euler, Mikhailyuk & Strashnov 2016, semi-implicit Euler) or by RK4 (Holck
   2005 eq. 2.33) for the robot;
3. make rows: contacts, robot joint limits / friction / mimic, world joints (mb_sim.solver);
4. solve: warm start, collisions pair by pair (restitution pass), sequential impulses
   (Mikhailyuk & Strashnov 2016, sequential impulses);
5. keep world joints: impulses on the predicted positions at t + h (Bender et al. n.d., the step);
6. correct positions by split impulses: penetration is removed through pseudo-velocities
   that move positions but are never added to the velocities, so correcting drift adds no
   energy (in place of Baumgarte's bias terms, Valášek 2011, ch. 6);
7. integrate: positions advance with the new velocities (a floating base on SE(3));
8. servos: the efforts the joints got, the servos' integrals (mb_sim.sim.servo);
9. check: a non-finite value stops the run and restores the state of the step before;
10. measure: the force-torque and contact sensors' share of the step (mb_sim.sim.sensors;
    nothing when none is set).

A step that finds more contacts than d can hold stops before changing the state and says so
in d.work.info; `Simulation` grows d and calls again. Same inputs give the same bits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import inline, njit, record_fields
from mb_sim.collision.narrowphase import detect_into
from mb_sim.dynamics.aba import articulated_accelerations
from mb_sim.dynamics.ball import advance_ball, ball_chart_rates
from mb_sim.dynamics.floating import advance, advance_base, chart_rate
from mb_sim.dynamics.kinematics import body_poses
from mb_sim.model.compile import RK4, SceneModel
from mb_sim.model.model import BALL_X, BALL_Z
from mb_sim.records import Field, record
from mb_sim.sim.data import (
    BAD_BODY,
    BAD_EFFORT,
    BAD_INDEX,
    BAD_JOINT,
    BAD_KIND,
    BAD_POSITION_TARGET,
    BAD_VELOCITY_TARGET,
    CLAMPED_EFFORT,
    CLAMPED_POSITION,
    CLAMPED_VELOCITY,
    CLAMPS,
    EFFORT_CAP,
    NEED_CAPACITY,
    NOT_FINITE,
    ROW_END,
    ROW_START,
    STATUS,
    STEPS_DONE,
    SWEEPS,
    Data,
)
from mb_sim.sim.rigid import advance_poses
from mb_sim.sim.rigid import free_motion as free_body_motion
from mb_sim.sim.sensors import Sensors, measure
from mb_sim.sim.servo import EFFORT, POSITION, drive, make_explicit, servo_update
from mb_sim.sim.state import StateArrays
from mb_sim.solver import pgs, warm
from mb_sim.solver.contact import contact_rows, drop_receding_contacts, mark_contact_columns
from mb_sim.solver.robot_joints import joint_row_responses, robot_joint_rows
from mb_sim.solver.rows import NORMAL, SCALAR
from mb_sim.solver.world_joints import blocks, frames, keep_world_joints, world_joint_rows

Sim, SimRecord = record("Sim", """What `step` takes: the model, the workspace, the
state and the sensors.""", (
    Field("model", SceneModel, (), "the read-only scene model (mb_sim.model.compile)"),
    Field("data", Data, (), "the workspace (mb_sim.sim.data)"),
    Field("state", StateArrays, (), "the state (mb_sim.sim.state)"),
    Field("sensors", Sensors, (), "the force-torque and contact sensors (mb_sim.sim.sensors)"),
))


@njit
def new_sim(model: Any, data: Any, state: Any, sensors: Any) -> Any:
    return SimRecord(*record_fields((model, data, state, sensors)))


@inline
def copy_state(src: Any, dst: Any) -> None:
    """dst = src for two `StateArrays` of the same sizes (warm starts: the entries in use)."""
    dst.q[:] = src.q
    dst.qd[:] = src.qd
    dst.effort[:] = src.effort
    dst.applied[:] = src.applied
    dst.mode[:] = src.mode
    dst.target[:, :] = src.target
    dst.gains[:, :] = src.gains
    dst.integral[:] = src.integral
    dst.body_pos[:, :] = src.body_pos
    dst.body_quat[:, :] = src.body_quat
    dst.body_vel[:, :] = src.body_vel
    dst.clock[0] = src.clock[0]
    n = src.warm_count[0]
    dst.warm_count[0] = n
    dst.warm_key[:n] = src.warm_key[:n]
    dst.warm_value[:n] = src.warm_value[:n]


@njit
def take_commands(m: Any, d: Any, s: Any) -> bool:
    """Stage 0: the commands as the state holds them, however they were written (the checked
    `set_effort`, or straight into the arrays of `Robot.arrays`): an effort, or a servo
    target its joint's interface uses, that is not finite refuses the step before anything
    changes (d.work.info names the joint: BAD_EFFORT, BAD_POSITION_TARGET,
    BAD_VELOCITY_TARGET); an effort beyond the joint's effort limit (EFFORT_CAP without one),
    a position target beyond its joint limits and a velocity target beyond its velocity limit
    are clamped in place and flagged in d.work.clamped; info[CLAMPS] counts the flags new to
    it (a joint's first clamp of each kind), which `Simulation` reports, so that a command
    clamped at every step costs no report after its first."""
    tree, work, info = m.tree, d.work, d.work.info
    effort, target, mode, clamped = s.effort, s.target, s.mode, work.clamped
    limit, lower, upper, vmax = (tree.effort_limit, tree.lower, tree.upper,
                                 tree.velocity_limit)
    for i in range(effort.shape[0]):
        e = effort[i]
        if not np.isfinite(e):
            return _refuse(info, BAD_EFFORT, i)
        cap = min(limit[i], EFFORT_CAP)
        if abs(e) > cap:
            effort[i] = cap if e > 0.0 else -cap
            info[CLAMPS] += _flag(clamped, i, CLAMPED_EFFORT)
        if mode[i] == EFFORT:
            continue
        p, v = target[i, 0], target[i, 1]
        if mode[i] == POSITION:
            if not np.isfinite(p):
                return _refuse(info, BAD_POSITION_TARGET, i)
            if p < lower[i] or p > upper[i]:
                target[i, 0] = min(max(p, lower[i]), upper[i])
                info[CLAMPS] += _flag(clamped, i, CLAMPED_POSITION)
        if not np.isfinite(v):
            return _refuse(info, BAD_VELOCITY_TARGET, i)
        if abs(v) > vmax[i]:
            target[i, 1] = vmax[i] if v > 0.0 else -vmax[i]
            info[CLAMPS] += _flag(clamped, i, CLAMPED_VELOCITY)
    return True


@inline
def _flag(clamped: np.ndarray, i: int, flag: int) -> int:
    """Set `flag` in clamped[i]: 1 when it was not set yet, else 0."""
    if clamped[i] & flag:
        return 0
    clamped[i] |= flag
    return 1


@inline
def _refuse(info: np.ndarray, kind: int, i: int) -> bool:
    info[BAD_KIND] = kind
    info[BAD_INDEX] = i
    return False


@inline
def remember(d: Any, s: Any) -> None:
    """Stage 0: the state before the step, for the check stage (d.before)."""
    copy_state(s, d.before)


@inline
def restore(d: Any, s: Any) -> None:
    """Back to the state before the step."""
    copy_state(d.before, s)


@njit
def free_motion(m: Any, d: Any, s: Any) -> None:
    """Stage 2: d.work.qd_free (and for RK4 the position increment dq_free) and d.work.body_vel,
    the velocities after h of the smooth forces; d.tree keeps the articulated inertias of q,
    or, with semi-implicit Euler, for a tree whose contacts (d.tree.column_due, marked by
    `collide`) reach many columns of H^-1, the factors of its H (`mb_sim.sim.servo.drive`).
    RK4 moves a floating base on SE(3) (Munthe-Kaas): stage positions are q (+) f k_pos, with
    k_pos the rate of the increment (`mb_sim.dynamics.floating.chart_rate`); dq_free is the
    increment of the step. The trees are independent here: each its own ABA (or factors)."""
    tree, opt, w, work = m.tree, m.options, d.tree, d.work
    h = opt.dt
    q, qd, tau = s.q, s.qd, work.tau
    nv = qd.shape[0]
    trees = tree.tree_body.shape[0] - 1
    if nv > 0 and opt.integrator == RK4:
        kv, ka, kp, qt = w.rk4_qd, w.rk4_qdd, w.rk4_dq, w.rk4_q
        kv[0] = qd
        kp[0] = qd
        if drive(m, d, s, ka[0], False):
            make_explicit(m, d, ka[0])
        for stage in range(1, 4):
            f = 0.5 * h if stage < 3 else h
            advance(tree, q, kp[stage - 1], f, qt)
            for i in range(nv):
                kv[stage, i] = qd[i] + f * ka[stage - 1, i]
            for k in range(trees):
                articulated_accelerations(tree, w, k, qt, kv[stage], tau, ka[stage])
            kp[stage] = kv[stage]
            ball_chart_rates(tree, kp[stage - 1], f, kv[stage], kp[stage])
            for k in range(trees):
                if tree.floating[k]:
                    b = tree.tree_v[k + 1] - 6
                    for c in range(6):
                        w.vec6b[c] = f * kp[stage - 1, b + c]
                    chart_rate(w.vec6b, kv[stage, b:b + 6], w.vec6, kp[stage, b:b + 6])
        dq_free, qd_free = work.dq_free, work.qd_free
        for i in range(nv):
            dq_free[i] = h / 6.0 * (kp[0, i] + 2 * kp[1, i] + 2 * kp[2, i] + kp[3, i])
            qd_free[i] = qd[i] + h / 6.0 * (ka[0, i] + 2 * ka[1, i] + 2 * ka[2, i] + ka[3, i])
        for k in range(trees):  # the inertias of q
            articulated_accelerations(tree, w, k, q, qd, tau, w.qdd)
    elif nv > 0:
        qdd, qd_free = w.qdd, work.qd_free
        drive(m, d, s, qdd, True)
        for i in range(nv):
            qd_free[i] = qd[i] + h * qdd[i]
    free_body_motion(s.body_vel, s.body_quat, m.bodies.inertia, m.bodies.dynamic,
                     opt.gravity, h, work.body_vel)


@njit
def collide(m: Any, d: Any, s: Any) -> bool:
    """Stage 1: link poses (d.tree.rot, pos; slot n + k: tree k's base), body frames
    (d.frames), contacts (d.contacts) and the columns of H^-1 their rows may reach
    (d.tree.column_due: `mark_contact_columns`; receding ones are dropped later, by the
    rows). False when the contacts do not fit in d."""
    tree, w, c = m.tree, d.tree, d.collision
    n = tree.parent.shape[0]
    body_poses(tree, s.q, w.rot, w.pos)
    frames(m, d, s)
    nb = s.body_pos.shape[0]
    c.owner_pos[:n] = w.pos[:n]
    c.owner_rot[:n] = w.rot[:n]
    c.owner_pos[n:n + nb] = s.body_pos
    c.owner_rot[n:n + nb] = d.frames.rot[:nb]
    for k in range(tree.floating.shape[0]):  # a floating base's geometries move with it
        if tree.floating[k]:
            c.owner_pos[n + nb + k] = w.pos[n + k]
            c.owner_rot[n + nb + k] = w.rot[n + k]
    if m.geoms.kind.shape[0] == 0:
        c.pair_count[0] = 0
        d.contacts.count[0] = 0
        return True
    if not detect_into(m.geoms, c, d.contacts, m.options.envelope):
        return False
    mark_contact_columns(m, d)
    return True


@njit
def make_rows(m: Any, d: Any, s: Any) -> None:
    """Stage 3: the rows of the contacts (a robot's contacts between its own links that are
    apart and not closing dropped first: `mb_sim.solver.contact.drop_receding_contacts`), the
    robot's joints and the world joints. The robot rows share the columns of H^-1
    (d.tree.response) at this step's articulated inertias: the joint rows' come first, all
    at once (`joint_row_responses`), so that the contact rows find them; a tree whose rows
    (the contacts' included, marked by `collide`) reach many columns is factorised first
    (by the free motion already, with semi-implicit Euler), and they all come from its
    factors."""
    drop_receding_contacts(m, d)
    d.rows.count[0] = 0
    d.tree.response_ready[:] = False
    if s.qd.shape[0] > 0:
        joint_row_responses(m, d, s)
    contact_rows(m, d, s)
    d.work.info[ROW_START] = d.rows.count[0]
    if s.qd.shape[0] > 0:
        robot_joint_rows(m, d, s)
    d.work.info[ROW_END] = d.rows.count[0]
    world_joint_rows(m, d, s, d.work.body_vel)


@njit
def solve(m: Any, d: Any, s: Any) -> None:
    """Stage 4: warm start, restitution pass, sequential impulses; the velocities
    d.work.qd_new, d.work.body_vel end up constrained, the impulses are kept for the next step."""
    rows, work, opt, con = d.rows, d.work, m.options, d.contacts
    work.qd_new[:] = work.qd_free
    n = rows.count[0]
    if n == 0:
        s.warm_count[0] = 0
        work.info[SWEEPS] = 0
        return
    groups = warm.row_groups(con, work, work.info[ROW_START], work.info[ROW_END],
                             m.geoms.kind.shape[0])
    if opt.warm_start:
        warm.load(rows, con, work, groups, s)
    pgs.effective_mass(rows)
    pgs.warm_start(rows, work.qd_new, work.body_vel)
    pgs.restitution_pass(rows, work.qd_new, work.body_vel, opt.dt, opt.restitution_threshold,
                         max(4 * n, 10))
    work.info[SWEEPS] = pgs.solve(rows, work.qd_new, work.body_vel, opt.iterations, opt.tolerance,
                                  opt.velocity_tolerance, pgs.SUBSPACE_STEPS)
    warm.save(rows, con, work, groups, s)


@njit
def correct_positions(m: Any, d: Any, s: Any) -> None:
    """Stage 6: pseudo-velocities d.work.dq_push, vb_push that move positions this step and
    are then dropped, so they never change momentum or energy (split impulses):
    - contact normals and joint limits push out beta (depth - slop) / h of a penetration;
    - a bounce taken at a gap (speculative contact) takes back the (1 + e) gap that the
      bodies would otherwise end too far out, as if they had turned at the surface."""
    rows, push, work, opt, con = d.rows, d.push, d.work, m.options, d.contacts
    tree = m.tree
    work.dq_push[:] = 0.0
    work.body_push[:, :] = 0.0
    h = opt.dt
    n = tree.parent.shape[0]
    joint_start, joint_end = work.info[ROW_START], work.info[ROW_END]
    beta, slop = opt.baumgarte, opt.slop
    depth, normal_row, tags = con.depth, con.normal_row, work.joint_tag
    lower, upper, q, qadr = tree.lower, tree.upper, s.q, tree.qadr
    k = 0
    for c in range(con.count[0]):
        k = _push_row(rows, push, k, normal_row[c], beta * max(depth[c] - slop, 0.0) / h, h)
    for r in range(joint_start, joint_end):
        joint, side = tags[r] // 3, tags[r] % 3
        bias = 0.0
        if joint < n and side < 2:
            qj = q[qadr[joint]]
            violation = lower[joint] - qj if side == 0 else qj - upper[joint]
            bias = beta * max(violation, 0.0) / h
        k = _push_row(rows, push, k, r, bias, h)
    push.count[0] = k
    if k == 0:
        return
    pgs.effective_mass(push)
    pgs.solve(push, work.dq_push, work.body_push, opt.iterations, opt.tolerance,
              opt.velocity_tolerance, 0)


@inline
def _push_row(rows: Any, push: Any, k: int, r: int, bias: float, h: float) -> int:
    """Copy row r into push row k when it asks for a push: a NORMAL row with a penetration
    bias, or one that bounced at a gap (reflect > 0: pull back, unbounded below). Returns the
    next free push row."""
    if rows.kind[r] != NORMAL:
        return k
    low = 0.0
    if rows.reflect[r] > 0.0:
        bias = -rows.reflect[r] / h
        low = -np.inf
    if bias == 0.0:
        return k
    push.kind[k] = SCALAR
    push.tree[k] = rows.tree[r]
    push.span[k] = rows.span[r]
    push.J_t[k] = rows.J_t[r]
    push.W_t[k] = rows.W_t[r]
    push.body[k] = rows.body[r]
    push.J_b[k] = rows.J_b[r]
    push.W_b[k] = rows.W_b[r]
    push.target[k] = bias
    push.lo[k] = low
    push.hi[k] = np.inf
    push.lam[k] = 0.0
    return k + 1


@njit
def integrate(m: Any, d: Any, s: Any) -> None:
    """Stage 7: positions move with the new velocities plus this step's push."""
    opt, work, bodies, tree = m.options, d.work, m.bodies, m.tree
    h = opt.dt
    q, qd_new, qd_free, dq_free, dq_push = s.q, work.qd_new, work.qd_free, work.dq_free, work.dq_push
    qadr, vadr, joint_type = tree.qadr, tree.vadr, tree.joint_type
    rk4 = opt.integrator == RK4
    for i in range(qadr.shape[0]):
        a, v = qadr[i], vadr[i]
        if joint_type[i] < BALL_X:
            if rk4:
                q[a] = q[a] + dq_free[v] + h * (qd_new[v] - qd_free[v] + dq_push[v])
            else:
                q[a] = q[a] + h * (qd_new[v] + dq_push[v])
        elif joint_type[i] == BALL_X:  # its quaternion on SO(3) (mb_sim.dynamics.ball)
            w = d.tree.vec6b
            for c in range(3):
                w[c] = qd_new[v + c] + dq_push[v + c]
                if rk4:
                    w[c] += dq_free[v + c] / h - qd_free[v + c]
            advance_ball(q, a, w[0], w[1], w[2], h)
    twist = d.tree.vec6b
    for k in range(tree.floating.shape[0]):  # a floating base on SE(3): q_base exp(increment)
        if not tree.floating[k]:
            continue
        b, v = tree.tree_q[k + 1] - 7, tree.tree_v[k + 1] - 6
        for c in range(6):
            i = v + c
            twist[c] = qd_new[i] + dq_push[i]
            if opt.integrator == RK4:
                twist[c] += dq_free[i] / h - qd_free[i]
        advance_base(q[b:b + 7], twist, h)
    s.qd[:] = qd_new
    vb_pos, vb, vb_push = work.body_move, work.body_vel, work.body_push
    pushed = False
    for b in range(vb_pos.shape[0]):
        for k in range(6):
            vb_pos[b, k] = vb[b, k] + vb_push[b, k]
            pushed = pushed or vb_push[b, k] != 0.0
    if pushed:  # keep the joints closed under the push too (it is dropped after)
        keep_world_joints(m, d, vb_pos)
    if opt.integrator == RK4:  # exact for the constant gravity of the free motion
        dynamic, gravity = bodies.dynamic, opt.gravity
        for b in range(vb_pos.shape[0]):
            if dynamic[b]:
                for k in range(3):
                    vb_pos[b, k] -= 0.5 * h * gravity[k]
    advance_poses(s.body_pos, s.body_quat, vb_pos, bodies.dynamic, h)
    s.body_vel[:, :] = work.body_vel
    s.clock[0] += h


@njit
def check(m: Any, d: Any, s: Any) -> bool:
    """Stage 9: every number of the state finite; otherwise d.work.info names the joint
    whose motion is not (BAD_JOINT; n + k: tree k's floating base) or the body (BAD_BODY).
    (The commands were checked by `take_commands`.)"""
    info = d.work.info
    q, qd, pos, quat, vel = s.q, s.qd, s.body_pos, s.body_quat, s.body_vel
    tree = m.tree
    qadr, vadr, joint_type, n = tree.qadr, tree.vadr, tree.joint_type, tree.parent.shape[0]
    for i in range(n):
        a = qadr[i]
        if joint_type[i] >= BALL_X:  # a ball's quaternion: one coordinate per body, w last
            a += joint_type[i] - BALL_X
        ok = np.isfinite(q[a]) and np.isfinite(qd[vadr[i]])
        if joint_type[i] == BALL_Z:
            ok = ok and np.isfinite(q[a + 1])
        if not ok:
            info[BAD_KIND] = BAD_JOINT
            info[BAD_INDEX] = i
            return False
    for k in range(tree.floating.shape[0]):
        ok = True
        for c in range(tree.tree_q[k + 1] - 7 if tree.floating[k] else 0,
                       tree.tree_q[k + 1] if tree.floating[k] else 0):
            ok = ok and np.isfinite(q[c])
        for c in range(tree.tree_v[k + 1] - 6 if tree.floating[k] else 0,
                       tree.tree_v[k + 1] if tree.floating[k] else 0):
            ok = ok and np.isfinite(qd[c])
        if not ok:
            info[BAD_KIND] = BAD_JOINT
            info[BAD_INDEX] = n + k
            return False
    for b in range(pos.shape[0]):
        ok = True
        for k in range(3):
            ok = ok and np.isfinite(pos[b, k])
        for k in range(4):
            ok = ok and np.isfinite(quat[b, k])
        for k in range(6):
            ok = ok and np.isfinite(vel[b, k])
        if not ok:
            info[BAD_KIND] = BAD_BODY
            info[BAD_INDEX] = b
            return False
    return True


@njit
def step(sim: Any, n: int) -> None:
    """n steps; d.work.info tells how many were done and why the run stopped early."""
    m, d, s, sensors = sim.model, sim.data, sim.state, sim.sensors
    info = d.work.info
    info[:] = 0
    sensing = sensors.ft_body.shape[0] + sensors.contact_body.shape[0] > 0
    for _ in range(n):
        if not take_commands(m, d, s):
            info[STATUS] = NOT_FINITE
            return
        remember(d, s)
        if not collide(m, d, s):
            info[STATUS] = NEED_CAPACITY
            return
        free_motion(m, d, s)
        make_rows(m, d, s)
        solve(m, d, s)
        keep_world_joints(m, d, d.work.body_vel)
        correct_positions(m, d, s)
        integrate(m, d, s)
        servo_update(m, d, s)
        if not check(m, d, s):
            restore(d, s)
            info[STATUS] = NOT_FINITE
            return
        if sensing:
            measure(m, d, s, sensors)
        info[STEPS_DONE] += 1


@njit
def keep_world_joints_now(sim: Any, vb: np.ndarray) -> None:
    """The keeping loop alone on the body velocities vb, at the state's poses."""
    m, d, s = sim.model, sim.data, sim.state
    frames(m, d, s)
    blocks(m, d)
    keep_world_joints(m, d, vb)
