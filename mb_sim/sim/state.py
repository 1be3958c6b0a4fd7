"""The simulation state: small, copyable, everything a step reads that can change."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from mb_sim._jit import njit, record_fields
from mb_sim.records import INDEX, REAL, Field, allocate, record

StateArrays, StateRecord = record("StateArrays", """Joint states of every tree, free-body state
(world frame, quaternions x, y, z, w), the applied efforts, and the impulses kept for warm
starting (so a restored state continues with the same bits). Tree after tree, q and qd keep
each tree's joints first, then its floating base (mb_sim.model.forest); the joint arrays have
one entry per joint (body) of every tree.""", (
    Field("clock", REAL, (1,), "simulated time, s"),
    Field("q", REAL, ("nq",), "joint positions, rad or m; then a floating base's position "
          "(world, m) and quaternion"),
    Field("qd", REAL, ("nv",), "joint velocities; then a floating base's twist [omega; v], "
          "base axes"),
    Field("effort", REAL, ("n",), "commanded joint efforts, N m or N (a servo's feed-forward)"),
    Field("applied", REAL, ("n",), "efforts the joints got in the last step (the commanded "
          "one, or a servo's with its feed-forward), N m or N"),
    Field("mode", INDEX, ("n",), "command interface of each joint: EFFORT (0), POSITION (1) "
          "or VELOCITY (2) (mb_sim.sim.servo)"),
    Field("target", REAL, ("n", 2), "servo targets: position (rad or m) and velocity "
          "(rad/s or m/s)"),
    Field("gains", REAL, ("n", 4), "servo gains p, i, d, and the braking deceleration b of "
          "a position servo (mb_sim.sim.servo)"),
    Field("integral", REAL, ("n",), "servo integral: of the position error (position), of "
          "the velocity error (velocity)"),
    Field("body_pos", REAL, ("b", 3), "free bodies' centres of mass, world, m"),
    Field("body_quat", REAL, ("b", 4), "free bodies' orientations, quaternion x, y, z, w"),
    Field("body_vel", REAL, ("b", 6), "free bodies' linear and angular velocities, world"),
    Field("warm_key", INDEX, ("w",), "keys of last step's row groups, sorted "
          "(mb_sim.solver.warm)"),
    Field("warm_value", REAL, ("w", 4), "their impulses: normal, and friction as a world "
          "vector"),
    Field("warm_count", INDEX, (1,), "keys in use"),
), {"n": "movable joints of every tree", "nq": "positions (n, + 7 per floating base)",
    "nv": "velocities (n, + 6 per floating base)", "b": "free bodies",
    "w": "warm-start room (the row capacity)"})


@njit
def new_state(values: StateArrays) -> Any:
    return StateRecord(*record_fields(values))


@dataclass(eq=False)
class State:
    """The arrays of a `StateArrays` record (fields and meanings declared there), as a
    copyable object: `warm_key[:warm_count[0]]` is sorted, `clock[0]` is the time."""

    clock: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    effort: np.ndarray
    applied: np.ndarray
    mode: np.ndarray
    target: np.ndarray
    gains: np.ndarray
    integral: np.ndarray
    body_pos: np.ndarray
    body_quat: np.ndarray
    body_vel: np.ndarray
    warm_key: np.ndarray
    warm_value: np.ndarray
    warm_count: np.ndarray

    @classmethod
    def allocate(cls, **sizes: int) -> State:
        """Zeroed arrays of the given sizes (those of `StateArrays`)."""
        return cls(*allocate(StateArrays, **sizes))

    @property
    def time(self) -> float:
        return float(self.clock[0])

    def copy(self) -> State:
        return State(*(getattr(self, f.name).copy() for f in fields(self)))

    def arrays(self) -> StateArrays:
        return StateArrays(*(getattr(self, f.name) for f in fields(self)))

    def same_shapes(self, other: State) -> bool:
        return all(getattr(self, f.name).shape == getattr(other, f.name).shape
                   for f in fields(self))

    def copy_from(self, other: State) -> None:
        """Take other's values into these arrays (same shapes)."""
        for f in fields(self):
            np.copyto(getattr(self, f.name), getattr(other, f.name))

    def clear_warm_start(self) -> None:
        self.warm_count[0] = 0
