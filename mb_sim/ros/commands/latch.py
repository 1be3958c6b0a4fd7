"""The command latch: what each joint gets in the next physics step.

Each joint has the command interfaces it declares (`<ros2_control>` or the parameter
`command_interfaces.<joint>`; effort by default): its servo is position, velocity or effort
(`mb_sim.model.ros2_control.servo_interface`), and a command may give it any of its
interfaces (a position joint with velocity: a velocity feed-forward; with effort: an effort
feed-forward).

A command names some joints and their values: Float64MultiArray efforts in `command_joints`
order, or JointState by name with `position`, `velocity` and `effort` each empty or one value
per name (the convention of ros2_control's topic hardware interface). It is checked (length,
names, finite values: else rejected with a `CommandError` naming topic, joint and value),
efforts are clamped to the URDF effort limits (with a log line), values for an interface a
joint does not have are dropped with a throttled warning, and the rest is latched, commands
taking effect in their order of arrival:
- efforts: each joint keeps its latest effort; a joint without an effort command for
  `command_timeout` seconds of simulated time goes to zero effort (the watchdog, with a log
  line), until its next command;
- position and velocity targets hold until the next command (no watchdog: the hardware
  interface publishes only when a command changes).

`apply` hands the efforts to the simulation only when they may have changed (a command, the
watchdog running out, a new timeout) and the targets when new ones came. `sim_node` and
`mb_sim.replay` both apply commands through this code, so a replay of a bag does exactly what
the node did. No rclpy and no message package here: a replay runs without ROS installed, and
the messages only need `.name`, `.position`, `.velocity`, `.effort` (JointState) or `.data`
(Float64MultiArray).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from mb_sim.model.ros2_control import servo_interface
from mb_sim.ros.process.logs import name_list

FIELDS = ("position", "velocity", "effort")
"""The JointState fields a command may fill, one per command interface."""
PLURAL = {"position": "positions", "velocity": "velocities", "effort": "efforts"}
Values = dict[str, tuple[np.ndarray, np.ndarray]]
"""A checked command: {interface: (joint indices, values)}."""
Warn = Callable[[str, str], None]
"""warn(kind, message): a warning rate-limited per kind
(`mb_sim.ros.process.logs.Throttle.warn`)."""


class CommandError(ValueError):
    """An effort command that cannot be applied; the message names the topic, joint and value."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        """Short class of the problem ("nan", "length", "unknown_joint", ...) for throttling."""


def _check_finite(topic: str, joints: Sequence[str], values: np.ndarray,
                  field: str = "effort") -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise CommandError(
            "nan",
            f"{topic}: {field} for joint {joints[i]!r} is {float(values[i])}; "
            f"NaN and infinite values are rejected (command ignored)",
        )


def efforts_from_array(
    topic: str, data: Sequence[float], joints: Sequence[str], index: Mapping[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """(q indices, efforts) of a Float64MultiArray command laid out in `joints` order."""
    values = np.asarray(data, dtype=float).ravel()
    if values.size != len(joints):
        raise CommandError(
            "length",
            f"{topic}: got {values.size} efforts, expected {len(joints)} "
            f"(one per joint, in the order {list(joints)}); command ignored",
        )
    _check_finite(topic, joints, values)
    return np.array([index[j] for j in joints], dtype=np.int64), values


def values_from_joint_state(topic: str, msg: Any, index: Mapping[str, int]) -> Values:
    """{field: (q indices, values)} of a JointState command: names with positions,
    velocities and efforts, each empty or one per name, for any subset of joints."""
    names = list(msg.name)
    if not names:
        raise CommandError("length", f"{topic}: JointState command has no joint names; ignored")
    out: Values = {}
    for field in FIELDS:
        values = np.asarray(getattr(msg, field, ()), dtype=float).ravel()
        if values.size == 0:
            continue
        if values.size != len(names):
            raise CommandError(
                "length",
                f"{topic}: JointState command has {len(names)} names but {values.size} "
                f"{PLURAL[field]} ({field} must be empty or give one value per name); ignored",
            )
        _check_finite(topic, names, values, field)
        out[field] = (np.zeros(0, dtype=np.int64), values)
    if not out:
        raise CommandError("length", f"{topic}: JointState command has names but no position, "
                                     "velocity or effort values; ignored")
    unknown = [n for n in names if n not in index]
    if unknown:
        raise CommandError(
            "unknown_joint",
            f"{topic}: unknown joint name(s) {name_list(unknown)}; movable joints are "
            f"{name_list(list(index))}; "
            "command ignored",
        )
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise CommandError("duplicate", f"{topic}: joint(s) {dup} named twice; command ignored")
    idx = np.array([index[n] for n in names], dtype=np.int64)
    return {field: (idx, values) for field, (_, values) in out.items()}


def efforts_from_joint_state(
    topic: str, msg: Any, index: Mapping[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """(q indices, efforts) of a JointState command's effort field."""
    values = values_from_joint_state(topic, msg, index)
    if "effort" not in values:
        raise CommandError("length", f"{topic}: JointState command has no efforts; ignored")
    return values["effort"]


def clamp_efforts(effort: np.ndarray, limit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Efforts clamped to +-limit where the limit is finite and positive; also the clamped mask."""
    bounded = np.isfinite(limit) & (limit > 0.0)
    lim = np.where(bounded, limit, np.inf)
    clamped = np.clip(effort, -lim, lim)
    return clamped, clamped != effort


def _quiet(_kind: str, _message: str) -> None:
    pass


class CommandLatch:
    """The latest command of every joint of one robot, and when its effort came (module
    docstring).

    interfaces: the command interfaces of each joint (None: effort only). robot: the robot's
    name, for messages in a world of several robots ('' for the one robot); owner(joint):
    which other robot has a joint of that name, said where a command names it (None: none)."""

    def __init__(self, joint_names: Sequence[str], effort_limit: np.ndarray,
                 command_joints: Sequence[str] | None = None, warn: Warn = _quiet,
                 interfaces: Sequence[Sequence[str]] | None = None, robot: str = "",
                 owner: Callable[[str], str | None] | None = None) -> None:
        self.robot = robot
        self._owner = owner
        self.joint_names = tuple(joint_names)
        self.index = {n: i for i, n in enumerate(self.joint_names)}
        self.command_joints = list(command_joints or self.joint_names)
        """Joint order of the Float64MultiArray commands."""
        self.limit = np.asarray(effort_limit, dtype=float)
        self._warn = warn
        n = len(self.joint_names)
        self.interfaces = [tuple(i) for i in interfaces] if interfaces else [("effort",)] * n
        self.servo = [servo_interface(i) for i in self.interfaces]
        """Each joint's servo: position, velocity or effort."""
        self.accepts = {f: np.array([f in i for i in self.interfaces], dtype=bool)
                        for f in FIELDS}
        self.effort = np.zeros(n)
        self.time = np.full(n, -math.inf)
        """Simulated time each joint's effort was last commanded (-inf: never)."""
        self.timed_out = np.zeros(n, dtype=bool)
        self.target = {f: np.zeros(n) for f in FIELDS[:2]}
        """The latest position and velocity targets."""
        self.pending = {f: np.zeros(n, dtype=bool) for f in FIELDS[:2]}
        """Targets latched but not yet handed to the simulation."""
        self._targets_changed = False
        """Whether `pending` may hold a target (saves two array scans a step)."""
        self._changed = True
        self._recheck = -math.inf
        self._timeout = math.nan

    # --- checking (any thread) -------------------------------------------------------------

    def from_array(self, topic: str, msg: Any) -> Values:
        """{"effort": (joints, clamped efforts)} of a Float64MultiArray command; CommandError
        if invalid."""
        idx, values = efforts_from_array(topic, msg.data, self.command_joints, self.index)
        return self._accepted(topic, {"effort": (idx, self._clamped(idx, values))})

    def from_joint_state(self, topic: str, msg: Any) -> Values:
        """{field: (joints, values)} of a JointState command, efforts clamped; CommandError
        if invalid."""
        try:
            values = values_from_joint_state(topic, msg, self.index)
        except CommandError as e:
            if e.kind != "unknown_joint" or not self.robot:
                raise
            raise CommandError(e.kind, self._not_mine(topic, msg)) from None
        if "effort" in values:
            idx, effort = values["effort"]
            values["effort"] = (idx, self._clamped(idx, effort))
        return self._accepted(topic, values)

    def _not_mine(self, topic: str, msg: Any) -> str:
        """The message of a command naming joints this robot does not have: which robot
        has them, where known."""
        unknown = [n for n in msg.name if n not in self.index]
        owners = [f"{n!r} is a joint of {self._owner(n)}" for n in unknown
                  if self._owner is not None and self._owner(n)]
        where = f" ({'; '.join(owners)})" if owners else ""
        return (f"{topic}: unknown joint name(s) {name_list(unknown)} for robot {self.robot!r}"
                f"{where}; movable joints of {self.robot!r} are {name_list(self.joint_names)}; "
                "command ignored")

    def _accepted(self, topic: str, values: Values) -> Values:
        """The values of interfaces the joints have; the others dropped with a warning."""
        out: Values = {}
        for field, (idx, v) in values.items():
            ok = self.accepts[field][idx]
            if not ok.all():
                names = [self.joint_names[i] for i in idx[~ok]]
                self._warn(f"interface:{topic}:{field}",
                           f"{topic}: {field} for {name_list(names)}, which have no {field} "
                           "command interface (<ros2_control> or command_interfaces.<joint>); "
                           "not applied")
            if ok.any():
                out[field] = (idx[ok], v[ok])
        return out

    def _clamped(self, idx: np.ndarray, values: np.ndarray) -> np.ndarray:
        clamped, hit = clamp_efforts(values, self.limit[idx])
        if hit.any():
            names = [self.joint_names[i] for i in idx[hit]]
            whose = f" of robot {self.robot!r}" if self.robot else ""
            self._warn(
                f"effort_limit{whose}",
                f"effort command beyond the URDF effort limit for {name_list(names)}{whose} "
                f"(requested {values[hit].tolist()[:10]}, "
                f"limits {self.limit[idx][hit].tolist()[:10]}); clamped",
            )
        return clamped

    # --- latching and the watchdog (the thread that steps) -----------------------------------

    def latch(self, command: Values, t: float) -> None:
        """A checked command (`from_array`, `from_joint_state`) from simulated time `t` on."""
        for field, (idx, values) in command.items():
            if field == "effort":
                self.set(idx, values, t)
            else:
                self.target[field][idx] = values
                self.pending[field][idx] = True
                self._targets_changed = True

    def set(self, idx: np.ndarray, values: np.ndarray, t: float) -> None:
        """Efforts `values` for joints `idx` from simulated time `t` on."""
        self.effort[idx] = values
        self.time[idx] = t
        self.timed_out[idx] = False
        self._changed = True

    def apply(self, sim: Any, timeout: float, robot: Any = None) -> None:
        """Hand what changed to the robot before the next step of the simulation `sim` (a
        `mb_sim.Simulation`; `robot`: its `sim.robot(name)`, None: the simulation's one robot):
        the efforts (`changed_efforts`), then the new targets of the position and velocity
        servos (position joints take a velocity target as their feed-forward)."""
        effort = self.changed_efforts(sim.time, sim.dt, timeout)
        if robot is not None:
            sim = robot
        if effort is not None:
            sim.set_effort(effort)
        if not self._targets_changed:
            return
        self._targets_changed = False
        pos, vel = self.pending["position"], self.pending["velocity"]
        if not (pos.any() or vel.any()):
            return
        names = self.joint_names
        q = {names[i]: float(self.target["position"][i]) for i in np.flatnonzero(pos)}
        ff, v = {}, {}
        for i in np.flatnonzero(vel):
            (ff if self.servo[i] == "position" else v)[names[i]] = \
                float(self.target["velocity"][i])
        if q or ff:
            sim.set_position_target(q, ff or None)
        if v:
            sim.set_velocity_target(v)
        pos[:] = False
        vel[:] = False

    def changed_efforts(self, t: float, dt: float, timeout: float) -> np.ndarray | None:
        """`efforts(t, dt, timeout)` when they may differ from those of the last call, else
        None: after `set`, `reset` or `restore`, with another timeout, or when a joint's
        watchdog may run out (checked from a quarter step before it is due)."""
        if not (self._changed or t >= self._recheck or timeout != self._timeout):
            return None
        effort = self.efforts(t, dt, timeout)
        self._changed = False
        self._timeout = timeout
        self._recheck = self._next_check(t, dt, timeout)
        return effort

    def efforts(self, t: float, dt: float, timeout: float) -> np.ndarray:
        """Efforts for the step from time `t`: zero for joints without a command for more than
        `timeout` s of simulated time (0 = no watchdog), with a warning when that starts."""
        if timeout <= 0.0:
            return self.effort
        stale = (t - self.time) > timeout + 0.5 * dt
        fresh = stale & ~self.timed_out & np.isfinite(self.time)
        self.timed_out |= stale
        if fresh.any():
            names = [self.joint_names[i] for i in np.flatnonzero(fresh)]
            whose = f" of robot {self.robot!r}" if self.robot else ""
            self._warn(f"timeout{whose}", f"no effort command for {timeout:g} s (sim time) on "
                                          f"{name_list(names)}{whose}; efforts set to zero")
        return np.where(stale, 0.0, self.effort)

    def _next_check(self, t: float, dt: float, timeout: float) -> float:
        """From when on `efforts` may differ without a new command or timeout: a quarter step
        before the first joint still within its timeout at `t` runs out; inf if none."""
        if timeout <= 0.0:
            return math.inf
        live = np.isfinite(self.time) & ((t - self.time) <= timeout + 0.5 * dt)
        if not live.any():
            return math.inf
        return float(self.time[live].min()) + timeout + 0.25 * dt

    def reset(self) -> None:
        """No command for any joint (start, ~/reset); the servos hold where the simulation's
        reset puts them."""
        self.effort[:] = 0.0
        self.time[:] = -math.inf
        self.timed_out[:] = False
        for f in self.pending:
            self.pending[f][:] = False
        self._changed = True

    def snapshot(self) -> dict[str, Any]:
        """The latch as JSON-ready lists (the start of a recording)."""
        return {
            "effort": self.effort.tolist(),
            "effort_time": [t if math.isfinite(t) else None for t in self.time],
            "timed_out": self.timed_out.tolist(),
            "interfaces": [list(i) for i in self.interfaces],
            "target": {f: v.tolist() for f, v in self.target.items()},
            "pending": {f: v.tolist() for f, v in self.pending.items()},
        }

    def restore(self, snapshot: Mapping[str, Any]) -> None:
        """The latch of a `snapshot()` (its interfaces are the constructor's)."""
        self.effort[:] = np.array(snapshot["effort"], dtype=float)
        self.time[:] = [-math.inf if t is None else t for t in snapshot["effort_time"]]
        self.timed_out[:] = np.array(snapshot["timed_out"], dtype=bool)
        for f in self.target:
            self.target[f][:] = snapshot.get("target", {}).get(f, 0.0)
            self.pending[f][:] = snapshot.get("pending", {}).get(f, False)
        self._changed = True
        self._targets_changed = True
