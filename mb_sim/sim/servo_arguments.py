"""The checks of the servo calls of `Simulation`: interfaces, gains, targets.

Every error names the joint and the value; a refused call changes nothing. Targets beyond a
joint's limits are clamped with one warning per joint (positions to the joint limits,
velocities to the URDF velocity limit); the default gains come from the effective inertia
H_ii at the reference pose (mb_sim.sim.servo.default_gains).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from mb_sim.model.model import BALL_X, Model
from mb_sim.sim.arguments import StateArguments, show
from mb_sim.sim.servo import EFFORT, INTERFACES, braking, default_gains
from mb_sim.sim.state import State

log = logging.getLogger("mb_sim")

POSES = 16
"""Poses besides the reference pose over which the default gains take the joints' largest
effective inertia."""


class ServoArguments:
    """Servo settings of one simulation: `reference` gives the joint positions whose mass
    matrix diagonal sets the default gains (asked once, when first needed)."""

    def __init__(self, model: Model | None, dt: float, args: StateArguments,
                 reference: Callable[[], np.ndarray]) -> None:
        self.model = model
        self.dt = dt
        self.args = args
        self.n = args.n_joints
        self._reference = reference
        self._defaults: dict[int, np.ndarray] | None = None
        self._brake = np.zeros(self.n)
        self.custom: dict[int, np.ndarray] = {}
        self.followers = {int(m[0]) for m in model.mimic} if model is not None else set()
        self.qadr = model.qadr if model is not None else np.zeros(0, dtype=np.int64)
        self._warned: set[tuple[int, int]] = set()

    @property
    def defaults(self) -> dict[int, np.ndarray]:
        """{mode: (n, 3) default gains}."""
        if self._defaults is None:
            inertia = self.effective_inertia()
            friction = self.model.friction if self.model is not None else None
            self._defaults = {mode: default_gains(inertia, self.dt, mode, friction)
                              for mode in range(len(INTERFACES))}
            if self.model is not None:
                self._brake = braking(inertia, self.model.effort_limit)
        return self._defaults

    def effective_inertia(self) -> np.ndarray:
        """m_i = the largest H_ii over the reference pose and POSES poses spread over the
        joint limits (mb_sim.sim.servo: a joint's inertia changes with the pose by orders of
        magnitude, e.g. a shoulder's with the arm upright or stretched; too large an m only
        makes the implicit servo stiffer and better damped, too small a one makes it weak)."""
        if self.model is None or self.n == 0:
            return np.zeros(self.n)
        from mb_sim.dynamics import crba

        model, n = self.model, self.n
        q = np.asarray(self._reference(), dtype=float)
        one = model.joint_type < BALL_X  # a ball joint keeps its reference rotation
        joints = (7 if model.floating_base else 0) + model.qadr[one]
        diag = slice(6, None) if model.floating_base else slice(0, n)
        lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)[one]
        hi = np.where(np.isfinite(model.upper), model.upper, np.pi)[one]
        inertia = np.diag(crba(model, q))[diag].copy()
        for k in range(POSES):  # a fixed low-discrepancy sequence: the same gains every time
            pose = q.copy()
            fractions = ((k + 1) * np.sqrt(np.arange(2, n + 2))) % 1.0
            pose[joints] = lo + fractions[one] * (hi - lo)
            inertia = np.maximum(inertia, np.diag(crba(model, pose))[diag])
        return inertia

    def mode_of(self, name: object, joint: str) -> int:
        if not isinstance(name, str) or name not in INTERFACES:
            raise ValueError(f"joint {joint!r}: unknown command interface {show(name)}; "
                             f"known: {', '.join(INTERFACES)}")
        return INTERFACES.index(name)

    def modes(self, interfaces: Mapping[str, str]) -> dict[int, int]:
        """{joint index: mode} of {joint: interface name}."""
        if not isinstance(interfaces, Mapping):
            raise TypeError(f"interfaces must be {{joint: {' | '.join(INTERFACES)}}}, got "
                            f"{show(interfaces)}")
        out = {}
        for joint, name in interfaces.items():
            i = self.args.joint_index(joint)
            mode = self.mode_of(name, joint)
            if mode != EFFORT and i in self.followers:
                raise ValueError(f"joint {joint!r} mimics another joint: it cannot have the "
                                 f"{name} interface (command its leader)")
            if mode != EFFORT and self.args.ball_of(joint) is not None:
                raise ValueError(f"joint {joint!r} is a rotation of ball joint "
                                 f"{self.args.ball_of(joint)!r}: it takes efforts only, not "
                                 f"the {name} interface")
            out[i] = mode
        return out

    def switch(self, state: State, modes: dict[int, int]) -> None:
        """The new interfaces in `state`: hold where the joint is, integral 0."""
        for i, mode in modes.items():
            state.mode[i] = mode
            state.target[i] = (state.q[self.qadr[i]], 0.0)
            state.integral[i] = 0.0
            state.gains[i, :3] = self.custom.get(i, self.defaults[mode][i])
            state.gains[i, 3] = self._brake[i]

    def gains(self, gains: Mapping[str, Sequence[float]]) -> dict[int, np.ndarray]:
        """{joint index: (p, i, d)} of {joint: (p, i, d)}."""
        if not isinstance(gains, Mapping):
            raise TypeError(f"gains must be {{joint: (p, i, d)}}, got {show(gains)}")
        out = {}
        for joint, value in gains.items():
            i = self.args.joint_index(joint)
            try:
                g = np.asarray(value, dtype=float)
            except (TypeError, ValueError):
                g = np.zeros(0)
            if g.shape != (3,) or not np.all(np.isfinite(g)) or np.any(g < 0.0):
                raise ValueError(f"gains of joint {joint!r} must be 3 finite numbers >= 0 "
                                 f"(p, i, d), got {show(value)}")
            out[i] = g
        return out

    def apply_gains(self, state: State, values: dict[int, np.ndarray]) -> None:
        for i, g in values.items():
            self.custom[i] = g.copy()
            state.gains[i, :3] = g

    def set_targets(self, state: State, mode: int, q: object, qd: object) -> None:
        """Position (mode POSITION: q, optional feed-forward qd) or velocity (VELOCITY: qd)
        targets into state.target, checked and clamped (module docstring)."""
        new_q = new_qd = None
        if q is not None:
            new_q, given = self.args.joint_vector(q, "position target", state.target[:, 0])
            self._check_mode(state, given, mode)
            new_q = self._clamp(new_q, given, 0)
        if qd is not None:
            new_qd, given = self.args.joint_vector(qd, "velocity target", state.target[:, 1])
            self._check_mode(state, given, mode)
            new_qd = self._clamp(new_qd, given, 1)
        if new_q is not None:
            state.target[:, 0] = new_q
        if new_qd is not None:
            state.target[:, 1] = new_qd

    def _check_mode(self, state: State, given: np.ndarray, mode: int) -> None:
        wrong = given & (state.mode != mode)
        if wrong.any():
            i = int(np.flatnonzero(wrong)[0])
            raise ValueError(f"joint {self.args.joint_names[i]!r} has the "
                             f"{INTERFACES[state.mode[i]]} interface, not {INTERFACES[mode]} "
                             "(Simulation.set_interfaces)")

    def _clamp(self, values: np.ndarray, given: np.ndarray, kind: int) -> np.ndarray:
        """Positions (kind 0) within the joint limits, velocities (1) within the URDF
        velocity limit; one warning per joint and kind."""
        if self.model is None:
            return values
        if kind == 0:
            lo, hi, what = self.model.lower, self.model.upper, "joint limits"
        else:
            v = self.model.velocity_limit
            lo, hi, what = -v, v, "velocity limit"
        out = given & ((values < lo) | (values > hi))
        for i in np.flatnonzero(out):
            if (int(i), kind) not in self._warned:
                self._warned.add((int(i), kind))
                log.warning("%s target %.6g for joint %r is beyond its %s [%.6g, %.6g]; "
                            "clamped", "position" if kind == 0 else "velocity", values[i],
                            self.args.joint_names[i], what, lo[i], hi[i])
        return np.where(out, np.clip(values, lo, hi), values)


__all__ = ["ServoArguments"]
