"""Position and velocity servos inside the step: a joint drive at the physics rate.

Each joint has a command interface (`State.mode`): EFFORT (the commanded effort as it is),
POSITION (PID on position) or VELOCITY (PI on velocity); a servo adds the commanded effort
as a feed-forward tau_ff. The servo's effort is taken at the end of the step ("stable PD",
Tan, Liu & Turk 2011): with qd+ = qd + h qdd and q+ = q + h qd+,

    position:  tau = Kp e+ + Kd (v_r - qd+) + Ki (I + h e+) + tau_ff,  e+ = q_r - q+
    velocity:  tau = Kp (v_r - qd+) + Ki (I + h (v_r - qd+)) + tau_ff

Both are tau = tau_0 - a qdd with, e = q_r - q,

    position:  tau_0 = Kp (e - h qd) + Kd (v_r - qd) + Ki (I + h (e - h qd)) + tau_ff,
               a = h Kd + h^2 Kp + h^3 Ki
    velocity:  tau_0 = Kp (v_r - qd) + Ki (I + h (v_r - qd)) + tau_ff,  a = h Kp + h^2 Ki

so the free motion solves (H + diag(a)) qdd = tau_0 - C - g - damping qd: ABA with a added
to D_i like an armature (mb_sim.dynamics.aba). Stiffness, damping and integral are
integrated implicitly (backward Euler), so no gain makes the step unstable however light the
joint; the constraint impulses of the step see the same H + diag(a).

Like a real drive:
- velocity limit (URDF) and braking: the position servo is a cascade, v_c = v_r + v_e with
  v_e = (Kp / Kd) e, e = q_r - q. The feedback speed is kept to what the joint can brake
  from within e, |v_e| <= sqrt(2 b |e|) with b = (effort limit) / (2 H_ii) (half the limit
  left for gravity and coupling), and |v_c| to the URDF velocity limit; when either bound
  holds the servo tracks v_c, tau = Kd (v_c - qd+) + Ki I + tau_ff (a = h Kd). Velocity
  targets are clamped to the limit when set.
- effort limit (URDF): a servo whose tau_0, or whose realised effort tau_0 - a qdd, exceeds
  the limit applies the limit (a = 0), and ABA runs again (only in a step where a joint
  newly saturates).
- anti-windup: the integral advances only while the servo is neither saturated nor speed
  limited, I += h (q_r - q+) (position) or h (v_r - qd+) (velocity), and |Ki I| stays
  within the effort limit.

Default gains (`default_gains`) from the effective inertia m = the largest H_ii (CRBA) over
the reference pose and 16 poses spread over the joint limits, at least f_c / (3 w^2 E_F)
for a joint with Coulomb friction f_c (its P term alone overcomes the friction at an error
of E_F = 0.01 rad or m; `mb_sim.sim.servo_arguments.ServoArguments.effective_inertia`), and
one bandwidth w = min(W_MAX, W_DT / h) rad/s: the closed loop of m qdd = tau has its poles at
-w, a triple pole for the PID on position, a double one for the PI on velocity:

    position:  Kp = 3 m w^2,  Ki = m w^3,  Kd = 3 m w
    velocity:  Kp = 2 m w,    Ki = m w^2   (Kd unused)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mb_sim._jit import helper, inline
from mb_sim.dynamics.aba import articulated_accelerations
from mb_sim.dynamics.joint_space import contacts_reach_many, factored_accelerations

EFFORT, POSITION, VELOCITY = 0, 1, 2
INTERFACES = ("effort", "position", "velocity")
"""Command interface names (ros2_control's), indexed by State.mode."""
FREE, SATURATED, SPEED_LIMITED = 0, 1, 2
"""Data.work.servo_flag: what held a servo back in the last step."""
W_MAX = 100.0
"""rad/s: the default servos' bandwidth at most."""
W_DT = 0.1
"""w h at most: the default bandwidth of a long step (w = W_DT / h for h > 1 ms)."""
E_F = 0.01
"""rad or m: the error at which a default position servo's P term matches the joint's
Coulomb friction (a floor of the effective inertia)."""


def bandwidth(dt: float) -> float:
    """The default servos' bandwidth w, rad/s, for a step of dt s."""
    return min(W_MAX, W_DT / dt)


def braking(inertia: np.ndarray, effort_limit: np.ndarray) -> np.ndarray:
    """b = effort limit / (2 H_ii): the deceleration a position servo plans with (inf for a
    joint without an effort limit)."""
    m = np.maximum(np.asarray(inertia, dtype=float), 1e-300)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(effort_limit), 0.5 * np.asarray(effort_limit) / m, np.inf)


def default_gains(inertia: np.ndarray, dt: float, mode: int,
                  friction: np.ndarray | None = None) -> np.ndarray:
    """(n, 3) gains p, i, d for joints of effective inertia `inertia` (H_ii, kg m^2 or kg)
    and Coulomb friction `friction` with the interface `mode` (module docstring); zero for
    EFFORT."""
    w = bandwidth(dt)
    m = np.asarray(inertia, dtype=float)
    if friction is not None:
        m = np.maximum(m, np.asarray(friction, dtype=float) / (3.0 * w * w * E_F))
    out = np.zeros((m.shape[0], 3))
    if mode == POSITION:
        out[:, 0], out[:, 1], out[:, 2] = 3.0 * m * w * w, m * w ** 3, 3.0 * m * w
    elif mode == VELOCITY:
        out[:, 0], out[:, 1] = 2.0 * m * w, m * w * w
    return out


@inline
def servo_efforts(m: Any, d: Any, s: Any) -> bool:
    """d.work.tau (tau_0, clamped), d.tree.armature (a) and d.work.servo_flag of the step;
    True when some joint has a servo."""
    tree, work, armature = m.tree, d.work, d.tree.armature
    qadr, vadr = tree.qadr, tree.vadr
    h = m.options.dt
    any_servo = False
    for i in range(s.mode.shape[0]):
        mode = s.mode[i]
        tau, a, flag = s.effort[i], 0.0, FREE
        if mode != EFFORT:
            any_servo = True
            kp, ki, kd = s.gains[i, 0], s.gains[i, 1], s.gains[i, 2]
            q_r, v_r, qd = s.target[i, 0], s.target[i, 1], s.qd[vadr[i]]
            if mode == POSITION:
                e = q_r - s.q[qadr[i]]
                v_c = v_r
                limited = False
                if kd > 0.0:
                    v_e = kp / kd * e
                    v_b = np.sqrt(2.0 * s.gains[i, 3] * abs(e))
                    if abs(v_e) > v_b:
                        v_e = v_b if v_e > 0.0 else -v_b
                        limited = True
                    v_c = v_r + v_e
                    v_max = tree.velocity_limit[i]
                    if abs(v_c) > v_max:
                        v_c = v_max if v_c > 0.0 else -v_max
                        limited = True
                if limited:
                    tau += kd * (v_c - qd) + ki * s.integral[i]
                    a = h * kd
                    flag = SPEED_LIMITED
                else:
                    e_next = e - h * qd
                    tau += kp * e_next + kd * (v_r - qd) + ki * (s.integral[i] + h * e_next)
                    a = h * (kd + h * (kp + h * ki))
            else:
                e = v_r - qd
                tau += kp * e + ki * (s.integral[i] + h * e)
                a = h * (kp + h * ki)
            limit = tree.effort_limit[i]
            if abs(tau) > limit:
                tau = limit if tau > 0.0 else -limit
                a = 0.0
                flag = SATURATED
        work.tau[i] = tau
        armature[i] = a
        work.servo_flag[i] = flag
    return any_servo


@inline
def saturate(m: Any, d: Any, k: int, qdd: np.ndarray) -> bool:
    """Servos of tree k whose realised effort tau_0 - a qdd exceeds the effort limit apply
    the limit instead (a = 0); True when any did (ABA runs again)."""
    work, armature, limit, vadr = d.work, d.tree.armature, m.tree.effort_limit, m.tree.vadr
    changed = False
    for i in range(m.tree.tree_body[k], m.tree.tree_body[k + 1]):
        if armature[i] > 0.0:
            tau = work.tau[i] - armature[i] * qdd[vadr[i]]
            if abs(tau) > limit[i]:
                work.tau[i] = limit[i] if tau > 0.0 else -limit[i]
                armature[i] = 0.0
                work.servo_flag[i] = SATURATED
                changed = True
    return changed


@inline
def _accelerations(m: Any, d: Any, s: Any, k: int, qdd: np.ndarray, factors: bool) -> None:
    if factors:
        factored_accelerations(m.tree, d.tree, k, s.q, s.qd, d.work.tau, qdd)
    else:
        articulated_accelerations(m.tree, d.tree, k, s.q, s.qd, d.work.tau, qdd)


@inline
def drive(m: Any, d: Any, s: Any, qdd: np.ndarray, by_factors: bool) -> bool:
    """The free-motion accelerations qdd with the servos, tree by tree (of H + diag(a),
    again while a joint of the tree newly saturates): by ABA, which leaves d.tree the
    articulated inertias with the armature; with `by_factors`, a tree whose contacts reach
    many columns of H^-1 (`joint_space.contacts_reach_many`), which its rows would
    factorise anyway, from that factorisation instead (`joint_space.factored_accelerations`,
    the factors kept for the rows). True when some joint has a servo."""
    servo = servo_efforts(m, d, s)
    for k in range(m.tree.tree_body.shape[0] - 1):
        factors = by_factors and contacts_reach_many(m.tree, d.tree, k)
        _accelerations(m, d, s, k, qdd, factors)
        while servo and saturate(m, d, k, qdd):
            _accelerations(m, d, s, k, qdd, factors)
    return servo


@inline
def make_explicit(m: Any, d: Any, qdd: np.ndarray) -> None:
    """The realised efforts tau_0 - a qdd as plain efforts (a = 0): the same qdd (RK4 keeps
    the servo's effort over the step)."""
    work, armature, vadr = d.work, d.tree.armature, m.tree.vadr
    for i in range(armature.shape[0]):
        work.tau[i] -= armature[i] * qdd[vadr[i]]
        armature[i] = 0.0


@helper
def servo_update(m: Any, d: Any, s: Any) -> None:
    """After the step: s.applied = tau_0 - a (qd+ - qd) / h, and the integrals of the free
    servos (anti-windup: |Ki I| within the effort limit)."""
    work, armature, before = d.work, d.tree.armature, d.before
    h = m.options.dt
    limit, qadr, vadr = m.tree.effort_limit, m.tree.qadr, m.tree.vadr
    for i in range(s.mode.shape[0]):
        v = vadr[i]
        s.applied[i] = work.tau[i] - armature[i] * (s.qd[v] - before.qd[v]) / h
        mode, ki = s.mode[i], s.gains[i, 1]
        if mode == EFFORT or work.servo_flag[i] != FREE or ki <= 0.0:
            continue
        if mode == POSITION:
            s.integral[i] += h * (s.target[i, 0] - s.q[qadr[i]])
        else:
            s.integral[i] += h * (s.target[i, 1] - s.qd[v])
        if abs(ki * s.integral[i]) > limit[i]:
            s.integral[i] = (limit[i] if s.integral[i] > 0.0 else -limit[i]) / ki


__all__ = [
    "EFFORT",
    "E_F",
    "FREE",
    "INTERFACES",
    "POSITION",
    "SATURATED",
    "SPEED_LIMITED",
    "VELOCITY",
    "W_DT",
    "W_MAX",
    "bandwidth",
    "braking",
    "default_gains",
    "drive",
    "make_explicit",
    "saturate",
    "servo_efforts",
    "servo_update",
]
