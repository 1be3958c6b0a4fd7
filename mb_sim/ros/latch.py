"""The command latch: which effort each joint gets in the next physics step.

A command names some joints and their efforts (Float64MultiArray in `command_joints` order,
or JointState by name). It is checked (length, names, finite values: else rejected with a
`CommandError` naming topic, joint and value), clamped to the URDF effort limits (with a log
line), and latched: each joint keeps the latest effort it was given, commands taking effect
in their order of arrival. A joint without a command for `command_timeout` seconds of
simulated time goes to zero effort (the watchdog, with a log line), until its next command.

`changed_efforts` hands out the efforts only when they may have changed (a command, the
watchdog running out, a new timeout), so a caller sets them on the simulation only then.
`sim_node` and `mb_sim.replay` both apply commands through this code, so a replay of a bag
does exactly what the node did. No rclpy and no message package here: a replay runs
without ROS installed, and the messages only need `.name` and `.effort` (JointState) or
`.data` (Float64MultiArray).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from mb_sim.ros.logs import name_list

Warn = Callable[[str, str], None]
"""warn(kind, message): a warning rate-limited per kind (`mb_sim.ros.logs.Throttle.warn`)."""


class CommandError(ValueError):
    """An effort command that cannot be applied; the message names the topic, joint and value."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        """Short class of the problem ("nan", "length", "unknown_joint", ...) for throttling."""


def _check_finite(topic: str, joints: Sequence[str], values: np.ndarray) -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise CommandError(
            "nan",
            f"{topic}: effort for joint {joints[i]!r} is {float(values[i])}; "
            "NaN and infinite efforts are rejected (command ignored)",
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


def efforts_from_joint_state(
    topic: str, msg: Any, index: Mapping[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """(q indices, efforts) of a JointState command: names with efforts, any subset of joints."""
    names = list(msg.name)
    values = np.asarray(msg.effort, dtype=float).ravel()
    if not names:
        raise CommandError("length", f"{topic}: JointState command has no joint names; ignored")
    if values.size != len(names):
        raise CommandError(
            "length",
            f"{topic}: JointState command has {len(names)} names but {values.size} efforts "
            "(effort must give one value per name); ignored",
        )
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
    _check_finite(topic, names, values)
    return np.array([index[n] for n in names], dtype=np.int64), values


def clamp_efforts(effort: np.ndarray, limit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Efforts clamped to +-limit where the limit is finite and positive; also the clamped mask."""
    bounded = np.isfinite(limit) & (limit > 0.0)
    lim = np.where(bounded, limit, np.inf)
    clamped = np.clip(effort, -lim, lim)
    return clamped, clamped != effort


def _quiet(_kind: str, _message: str) -> None:
    pass


class CommandLatch:
    """The latest effort of every joint, and when it came (see the module docstring)."""

    def __init__(self, joint_names: Sequence[str], effort_limit: np.ndarray,
                 command_joints: Sequence[str] | None = None, warn: Warn = _quiet) -> None:
        self.joint_names = tuple(joint_names)
        self.index = {n: i for i, n in enumerate(self.joint_names)}
        self.command_joints = list(command_joints or self.joint_names)
        """Joint order of the Float64MultiArray commands."""
        self.limit = np.asarray(effort_limit, dtype=float)
        self._warn = warn
        n = len(self.joint_names)
        self.effort = np.zeros(n)
        self.time = np.full(n, -math.inf)
        """Simulated time each joint's effort was last commanded (-inf: never)."""
        self.timed_out = np.zeros(n, dtype=bool)
        self._changed = True
        self._recheck = -math.inf
        self._timeout = math.nan

    # --- checking (any thread) -------------------------------------------------------------

    def from_array(self, topic: str, msg: Any) -> tuple[np.ndarray, np.ndarray]:
        """(joints, clamped efforts) of a Float64MultiArray command; CommandError if invalid."""
        idx, values = efforts_from_array(topic, msg.data, self.command_joints, self.index)
        return idx, self._clamped(idx, values)

    def from_joint_state(self, topic: str, msg: Any) -> tuple[np.ndarray, np.ndarray]:
        """(joints, clamped efforts) of a JointState command; CommandError if invalid."""
        idx, values = efforts_from_joint_state(topic, msg, self.index)
        return idx, self._clamped(idx, values)

    def _clamped(self, idx: np.ndarray, values: np.ndarray) -> np.ndarray:
        clamped, hit = clamp_efforts(values, self.limit[idx])
        if hit.any():
            names = [self.joint_names[i] for i in idx[hit]]
            self._warn(
                "effort_limit",
                f"effort command beyond the URDF effort limit for {name_list(names)} "
                f"(requested {values[hit].tolist()[:10]}, "
                f"limits {self.limit[idx][hit].tolist()[:10]}); clamped",
            )
        return clamped

    # --- latching and the watchdog (the thread that steps) -----------------------------------

    def set(self, idx: np.ndarray, values: np.ndarray, t: float) -> None:
        """Efforts `values` for joints `idx` from simulated time `t` on."""
        self.effort[idx] = values
        self.time[idx] = t
        self.timed_out[idx] = False
        self._changed = True

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
            self._warn("timeout", f"no effort command for {timeout:g} s (sim time) on "
                                  f"{name_list(names)}; efforts set to zero")
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
        """No command for any joint (start, ~/reset)."""
        self.effort[:] = 0.0
        self.time[:] = -math.inf
        self.timed_out[:] = False
        self._changed = True

    def snapshot(self) -> dict[str, Any]:
        """The latch as JSON-ready lists (the start of a recording)."""
        return {
            "effort": self.effort.tolist(),
            "effort_time": [t if math.isfinite(t) else None for t in self.time],
            "timed_out": self.timed_out.tolist(),
        }

    def restore(self, snapshot: Mapping[str, Any]) -> None:
        """The latch of a `snapshot()`."""
        self.effort[:] = np.array(snapshot["effort"], dtype=float)
        self.time[:] = [-math.inf if t is None else t for t in snapshot["effort_time"]]
        self.timed_out[:] = np.array(snapshot["timed_out"], dtype=bool)
        self._changed = True
