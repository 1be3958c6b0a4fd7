"""The simulation state: small, copyable, everything a step reads that can change."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from mb_sim._jit import njit, record

StateArrays, StateRecord = record("StateArrays", (
    "clock", "q", "qd", "effort", "body_pos", "body_quat", "body_vel", "warm_key",
    "warm_value", "warm_count",
))


@njit
def new_state(values: StateArrays) -> Any:
    return StateRecord(*values)


@dataclass(eq=False)
class State:
    """Robot joint state, free-body state (world frame, quaternions x, y, z, w), the applied
    efforts, and the impulses kept for warm starting (so a restored state continues with the
    same bits): `warm_key[:warm_count[0]]` sorted, `warm_value` their impulses (normal, and
    friction as a world vector). `clock[0]` is the time."""

    clock: np.ndarray  # (1,) simulated time, s
    q: np.ndarray
    qd: np.ndarray
    effort: np.ndarray
    body_pos: np.ndarray  # (b, 3) centre of mass
    body_quat: np.ndarray  # (b, 4) x, y, z, w
    body_vel: np.ndarray  # (b, 6) linear, angular
    warm_key: np.ndarray  # (w,) int64
    warm_value: np.ndarray  # (w, 4)
    warm_count: np.ndarray  # (1,) int64

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
