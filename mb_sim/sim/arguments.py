"""The arguments `Simulation` accepts, checked before anything changes (SI units; docs/api.md
lists them): the step, the integrator, gravity, joint states and
efforts, a floating base's pose and twist, states to restore. Bounds of positions, speeds and
gravity are those of the world file (`mb_sim.model.world`)."""

from __future__ import annotations

import logging
import math
import numbers
import operator
import reprlib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from mb_sim.model.compile import INTEGRATORS
from mb_sim.model.model import BALL_X, PRISMATIC, Model
from mb_sim.model.world import GRAVITY as GRAVITY_BOUND
from mb_sim.model.world import POSITION, SPEED, SPIN, World
from mb_sim.sim.state import State

log = logging.getLogger("mb_sim")

DT_RANGE = (1e-6, 0.05)  # s
DT_WARN = 0.01  # s: a warning above this step
LIMIT_TOLERANCE = 1e-3  # rad or m that set_state accepts beyond a joint limit
EFFORT = 1e6  # N m or N: the effort limit of a joint whose URDF gives none
# |q| <= POSITION (rad or m), |qd| <= SPIN rad/s (revolute) or SPEED m/s (prismatic),
# gravity components within +-GRAVITY_BOUND m/s^2: the bounds of the world file
RESTORED = ("clock", "q", "qd", "effort", "applied", "mode", "target", "gains", "integral",
            "body_pos", "body_quat", "body_vel", "warm_count")
"""The State fields restore_state takes as they are (the warm-start keys and impulses come
with warm_count)."""


def show(value: object) -> str:
    """A value for a message, never longer than about 80 characters."""
    text = reprlib.repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_dt(dt: object) -> float:
    """dt as a float: a number of seconds within DT_RANGE (a warning above DT_WARN)."""
    if isinstance(dt, (bool, np.bool_)) or not isinstance(dt, numbers.Real):
        raise TypeError(f"dt must be a number of seconds, got {show(dt)} "
                        f"({type(dt).__name__})")
    value = float(dt)
    lo, hi = DT_RANGE
    if not (math.isfinite(value) and lo <= value <= hi):
        raise ValueError(f"dt must be within [{lo:g}, {hi:g}] s, got {value!r}")
    if value > DT_WARN:
        log.warning("dt = %g s is above %g s: contacts and joint limits may jitter or "
                    "blow up (raising SimulationError); 0.001 s is the default",
                    value, DT_WARN)
    return value


def check_gravity(gravity: object, source: str = "gravity") -> np.ndarray:
    """gravity as an array of 3 finite numbers, each within +-GRAVITY_BOUND m/s^2."""
    allowed = f"3 numbers [x, y, z] in m/s^2, each within +-{GRAVITY_BOUND:g}"
    try:
        g = np.asarray(gravity)
    except (TypeError, ValueError):
        g = np.asarray(None)
    if g.dtype.kind not in "iuf":
        raise TypeError(f"{source} must be {allowed}, got {show(gravity)}")
    if g.shape != (3,):
        raise ValueError(f"{source} must be {allowed}, got {g.size} value(s): {show(gravity)}")
    g = g.astype(float)
    if not (np.all(np.isfinite(g)) and np.all(np.abs(g) <= GRAVITY_BOUND)):
        raise ValueError(f"{source} must be {allowed}, got {show(gravity)}")
    return g


def check_integrator(integrator: object) -> str:
    """One of INTEGRATORS."""
    if not isinstance(integrator, str) or integrator not in INTEGRATORS:
        raise ValueError(f"integrator must be one of {INTEGRATORS}, got {show(integrator)}")
    return integrator


def check_inputs(model: object, world: object) -> None:
    """A `Model` (or None) and a `World` (or None)."""
    if model is not None and not isinstance(model, Model):
        raise TypeError(f"model must be a Model (mb_sim.load_urdf) or None, got {show(model)}")
    if world is not None and not isinstance(world, World):
        raise TypeError(f"world must be a World (mb_sim.load_world) or None, got {show(world)}")


def check_steps(n: object) -> int:
    """A non-negative integer number of steps."""
    if isinstance(n, (bool, np.bool_)):
        raise TypeError(f"step(n): n must be a non-negative integer, got {n!r}")
    try:
        steps = operator.index(n)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"step(n): n must be a non-negative integer, got {show(n)} "
                        f"({type(n).__name__})") from None
    if steps < 0:
        raise ValueError(f"step(n): n must be a non-negative integer, got {steps}")
    return steps


def _vector(value: object, size: int, what: str, bound: float, unit: str) -> np.ndarray:
    """value as `size` finite numbers within +-bound."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be {size} numbers, got {show(value)}") from None
    if arr.shape != (size,):
        raise ValueError(f"{what} must be {size} numbers, got {show(value)}")
    if not np.all(np.isfinite(arr)) or np.any(np.abs(arr) > bound):
        raise ValueError(f"{what} {arr.tolist()} must be finite and within +-{bound:g} "
                         f"{unit}".rstrip())
    return arr


class StateArguments:
    """The checks of the state-changing arguments of one simulation: joint vectors in q order
    or {joint: value}, a floating base's pose and twist, and states to restore. Vectors come
    back in the kernels' layout (mb_sim.dynamics.floating); every error names the joint, body
    or field and the value."""

    def __init__(self, model: Model | None, body_names: tuple[str, ...]) -> None:
        self.model = model
        self.body_names = body_names
        self.n_joints = model.n_joints if model is not None else 0
        self.n_coordinates = model.n_joint_coordinates if model is not None else 0
        """The joints' part of q: n_joints, plus one per ball joint (its quaternion)."""
        self.floating_base = model is not None and model.floating_base
        self.joint_names = model.joint_names if model is not None else ()
        self.balls = dict(model.ball_joints) if model is not None else {}
        self._ball_of = {name: ball for ball, first in self.balls.items()
                         for name in self.joint_names[first:first + 3]}

    def joint_index(self, name: str) -> int:
        if self.model is None:
            raise KeyError(f"unknown joint {name!r}: the simulation has no robot")
        return self.model.joint_index(name)

    def ball_of(self, name: str) -> str | None:
        """The ball joint whose degree of freedom joint `name` is (None: a 1-dof joint)."""
        return self._ball_of.get(name)

    def joint_vector(self, value: object, what: str,
                     current: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the new values, which joints were given) from an array in joint order or a
        mapping {joint: value}; TypeError, KeyError or ValueError naming the joint and
        value."""
        n = self.n_joints
        given = np.zeros(n, dtype=bool)
        if isinstance(value, Mapping):
            out = current.copy()
            for name, v in value.items():
                i = self.joint_index(name)
                if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
                    raise TypeError(f"{what} for joint {name!r} must be a number, got {show(v)}")
                out[i] = float(v)
                given[i] = True
        else:
            try:
                arr = np.asarray(value)
            except (TypeError, ValueError):
                arr = np.asarray(None)
            if arr.dtype.kind not in "iuf":
                raise TypeError(f"{what} must be numbers in joint order or {{joint: value}}, "
                                f"got {show(value)}")
            out = arr.astype(float).reshape(-1)
            if arr.ndim > 1 or out.shape != (n,):
                raise ValueError(f"{what} needs {n} values in joint order "
                                 f"{list(self.joint_names)[:10]}, got shape {arr.shape}")
            given[:] = True
        bad = ~np.isfinite(out)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{what} for joint {self.joint_names[i]!r} is {out[i]}; "
                             "a finite number is needed")
        return out, given

    def state(self, q: object, qd: object, clamp: bool,
              base: Any) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The new state vectors of set_state's arguments (None: not given); joints not
        named keep base's values."""
        n, nc = self.n_joints, self.n_coordinates
        new_q = new_qd = None
        if q is not None:
            q, pose = self._split_base(q, "q", 7, nc)
            new_q = self._joint_coordinates(q, base.q[:nc], clamp)
            if self.floating_base:
                pose = base.q[nc:] if pose is None else self.base_pose(pose[:3], pose[3:])
                new_q = np.concatenate([new_q, pose])
        if qd is not None:
            qd, twist = self._split_base(qd, "qd", 6, n)
            new_qd, given = self.joint_vector(qd, "qd", base.qd[:n])
            bound = np.full(n, SPIN)
            if self.model is not None:
                bound[self.model.joint_type == PRISMATIC] = SPEED
            self._check_bound(new_qd, given, "qd", bound, "rad/s or m/s")
            if self.floating_base:
                twist = base.qd[n:] if twist is None else self.base_twist(twist[:3], twist[3:])
                new_qd = np.concatenate([new_qd, twist])
        return new_q, new_qd

    def _joint_coordinates(self, q: object, current: np.ndarray, clamp: bool) -> np.ndarray:
        """The joints' part of q from set_state's q (an array of the joints' coordinates, or
        {joint: value}; a ball joint's value is its unit quaternion x, y, z, w), checked:
        finite, within the bounds and the joint limits (clamped with `clamp`)."""
        n = self.n_joints
        if not self.balls:
            new_q, given = self.joint_vector(q, "q", current)
            self._check_bound(new_q, given, "q", np.full(n, POSITION), "rad or m")
            return self._within_limits(new_q, given, clamp)
        assert self.model is not None
        qadr, one = self.model.qadr, self.model.joint_type < BALL_X
        dof = np.zeros(n)
        dof[one] = current[qadr[one]]
        out = current.copy()
        if isinstance(q, Mapping):
            scalars = {}
            for name, value in q.items():
                if name in self.balls:
                    a = qadr[self.balls[name]]
                    out[a:a + 4] = self.unit_quaternion(value, f"q for ball joint {name!r}")
                elif self.ball_of(name) is not None:
                    raise ValueError(f"q for joint {name!r}: it is a rotation of ball joint "
                                     f"{self.ball_of(name)!r}, whose position is a quaternion: "
                                     f"give {{{self.ball_of(name)!r}: [qx, qy, qz, qw]}}")
                else:
                    scalars[name] = value
            dof, given = self.joint_vector(scalars, "q", dof)
        else:
            arr = np.asarray(q) if not isinstance(q, (str, bytes)) else np.asarray(None)
            if arr.dtype.kind not in "iuf" or arr.shape != (self.n_coordinates,):
                raise ValueError(f"q needs the joints' {self.n_coordinates} coordinates (one "
                                 "per joint, a ball joint's quaternion x, y, z, w in place of "
                                 f"its three rotations), got {show(q)}")
            arr = arr.astype(float)
            for name, first in self.balls.items():
                a = qadr[first]
                out[a:a + 4] = self.unit_quaternion(arr[a:a + 4], f"q for ball joint {name!r}")
            dof[one] = arr[qadr[one]]
            given = one.copy()
            bad = given & ~np.isfinite(dof)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(f"q for joint {self.joint_names[i]!r} is {dof[i]}; a finite "
                                 "number is needed")
        self._check_bound(dof, given, "q", np.full(n, POSITION), "rad or m")
        dof = self._within_limits(dof, given, clamp)
        out[qadr[one]] = dof[one]
        return out

    @staticmethod
    def unit_quaternion(value: object, what: str) -> np.ndarray:
        """(x, y, z, w): finite, of norm 1 within 1e-3 (normalised)."""
        r = _vector(value, 4, f"{what} (x, y, z, w)", 2.0, "")
        norm = float(np.linalg.norm(r))
        if abs(norm - 1.0) > 1e-3:
            raise ValueError(f"{what} (x, y, z, w) {r.tolist()} has norm {norm:.6g}; a unit "
                             "quaternion is needed")
        return r / norm

    def _split_base(self, value: object, what: str, size: int, joints: int
                    ) -> tuple[object, Any]:
        """(the joints' part, the floating base's part or None) of a set_state argument: an
        array of nq (nv) values has the base first; a mapping names joints only. `joints`:
        the joints' share of the array."""
        if not self.floating_base or isinstance(value, Mapping):
            return value, None
        arr = np.asarray(value) if not isinstance(value, (str, bytes)) else np.asarray(None)
        full = joints + size
        if arr.dtype.kind in "iuf" and arr.shape != (full,):
            raise ValueError(f"{what} needs {full} values (the floating base's {size}, then the "
                             f"joints {list(self.joint_names)[:10]}), got shape {arr.shape}")
        if arr.dtype.kind not in "iuf":
            return value, None  # refused with the joints' message
        return arr[size:], arr[:size]

    def base_pose(self, xyz: object, quat: object) -> np.ndarray:
        """[x, y, z, qx, qy, qz, qw] of a floating base: finite, |x| <= POSITION, a unit
        quaternion within 1e-3 (normalised)."""
        p = self._base_vector(xyz, 3, "base position", POSITION, "m")
        r = self._base_vector(quat, 4, "base quaternion (x, y, z, w)", 2.0, "")
        norm = float(np.linalg.norm(r))
        if abs(norm - 1.0) > 1e-3:
            raise ValueError(f"base quaternion (x, y, z, w) {r.tolist()} has norm {norm:.6g}; "
                             "a unit quaternion is needed")
        return np.concatenate([p, r / norm])

    def base_twist(self, linear: object, angular: object) -> np.ndarray:
        """[omega; v] (kernel order) of a floating base's linear and angular velocity."""
        v = self._base_vector(linear, 3, "base linear velocity", SPEED, "m/s")
        w = self._base_vector(angular, 3, "base angular velocity", SPIN, "rad/s")
        return np.concatenate([w, v])

    def body_state(self, name: str, xyz: object, quat: object, linear: object,
                   angular: object) -> tuple[np.ndarray | None, ...]:
        """(position, unit quaternion, linear velocity, angular velocity) of a free body, each
        None when not given; bounded as in a world file, the quaternion unit within 1e-3
        (normalised)."""
        what = f"body {name!r}"
        p = None if xyz is None else _vector(xyz, 3, f"{what} position", POSITION, "m")
        r = None if quat is None else _vector(quat, 4, f"{what} quaternion (x, y, z, w)", 2.0,
                                              "")
        if r is not None:
            norm = float(np.linalg.norm(r))
            if abs(norm - 1.0) > 1e-3:
                raise ValueError(f"{what} quaternion (x, y, z, w) {r.tolist()} has norm "
                                 f"{norm:.6g}; a unit quaternion is needed")
            r = r / norm
        v = None if linear is None else _vector(linear, 3, f"{what} linear velocity", SPEED,
                                                "m/s")
        w = None if angular is None else _vector(angular, 3, f"{what} angular velocity", SPIN,
                                                 "rad/s")
        return p, r, v, w

    def _base_vector(self, value: object, size: int, what: str, bound: float,
                     unit: str) -> np.ndarray:
        if not self.floating_base:
            raise ValueError(f"{what}: the robot has no floating base (load_urdf(..., "
                             "floating_base=True))")
        return _vector(value, size, what, bound, unit)

    def _check_bound(self, values: np.ndarray, given: np.ndarray, what: str,
                     bound: np.ndarray, unit: str) -> None:
        over = given & (np.abs(values) > bound)
        if over.any():
            i = int(np.flatnonzero(over)[0])
            raise ValueError(f"{what} for joint {self.joint_names[i]!r} is {values[i]:g}; "
                             f"allowed: |{what}| <= {bound[i]:g} {unit}")

    def _within_limits(self, q: np.ndarray, given: np.ndarray, clamp: bool) -> np.ndarray:
        """q itself when the given joints are within their limits (up to LIMIT_TOLERANCE);
        with clamp, a copy clamped to the limits; ValueError otherwise."""
        if self.model is None:
            return q
        lower, upper = self.model.lower, self.model.upper
        out = given & ((q < lower - LIMIT_TOLERANCE) | (q > upper + LIMIT_TOLERANCE))
        if not out.any():
            return q
        bad = np.flatnonzero(out)
        shown = ", ".join(f"{self.joint_names[i]!r} = {q[i]:g} (limits [{lower[i]:g}, "
                          f"{upper[i]:g}])" for i in bad[:10])
        if len(bad) > 10:
            shown += f", ... ({len(bad)} in all)"
        if clamp:
            log.warning("set_state: q clamped to the joint limits: %s", shown)
            clamped = q.copy()
            clamped[bad] = np.clip(q[bad], lower[bad], upper[bad])
            return clamped
        i = int(bad[0])
        hint = ""
        if self.model.joint_type[i] != PRISMATIC and lower[i] <= math.radians(q[i]) <= upper[i]:
            hint = " (q is in radians, not degrees)"
        raise ValueError(f"q outside the joint limits beyond {LIMIT_TOLERANCE:g} rad or m: "
                         f"{shown}{hint}; set_state(..., clamp=True) clamps with a warning")

    def restorable(self, state: object, mine: Any,
                   describe: Callable[[str, int], str] | None = None) -> int:
        """The number of warm-start entries of a State to restore into this simulation's
        state `mine`: TypeError or ValueError when it is no State of this simulation or holds
        a non-finite value (`describe(field, index)` names a joint or base entry of q, qd
        or effort; default: this robot's)."""
        if not isinstance(state, State):
            raise TypeError(f"restore_state needs a State from save_state(), got "
                            f"{show(state)}")
        for name in RESTORED:
            theirs, ours = np.shape(getattr(state, name)), getattr(mine, name).shape
            if theirs != ours:
                raise ValueError(
                    f"restore_state: the state's {name} has shape {theirs}, this simulation's "
                    f"{ours} ({mine.effort.shape[0]} joints, {len(self.body_names)} bodies): a "
                    "state of another simulation")
        n = int(state.warm_count[0])
        w = np.shape(state.warm_key)
        if len(w) != 1 or np.shape(state.warm_value) != (w[0], 4) or not 0 <= n <= w[0]:
            raise ValueError(f"restore_state: warm_count {n} with warm_key {w} and warm_value "
                             f"{np.shape(state.warm_value)}: not a state of save_state()")
        for name in RESTORED[:-1]:
            bad = ~np.isfinite(np.asarray(getattr(state, name)))
            if bad.any():
                raise ValueError(f"restore_state: the state's {name} holds a non-finite value "
                                 f"({self._where(name, bad, describe)}); nothing was restored")
        if not np.all(np.isfinite(state.warm_value[:n])):
            raise ValueError("restore_state: the state's warm_value holds a non-finite value; "
                             "nothing was restored")
        return n

    def _where(self, name: str, bad: np.ndarray,
               describe: Callable[[str, int], str] | None) -> str:
        i = int(np.flatnonzero(bad.reshape(bad.shape[0], -1).any(axis=1))[0])
        if name in ("q", "qd", "effort"):
            return describe(name, i) if describe is not None else self.joint_or_base(i)
        if name.startswith("body_"):
            return f"body {self.body_names[i]!r}"
        return "time"

    def joint_or_base(self, i: int) -> str:
        """Entry i of the state vectors (kernel layout): a joint or the floating base."""
        if i < self.n_joints:
            return f"joint {self.joint_names[i]!r}"
        assert self.model is not None
        return f"the floating base ({self.model.base_link!r})"


__all__ = ["DT_RANGE", "DT_WARN", "EFFORT", "LIMIT_TOLERANCE", "POSITION", "SPEED", "SPIN",
           "StateArguments", "check_dt", "check_gravity", "check_inputs", "check_integrator",
           "check_steps", "show"]
