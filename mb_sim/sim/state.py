"""The simulation state: small, copyable, everything a step reads that can change."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np


@dataclass
class State:
    """Robot joint state, free-body state (world frame, quaternions x, y, z, w), the applied
    efforts, and the impulses kept for warm starting (so a restored state continues with the
    same bits)."""

    time: float
    q: np.ndarray
    qd: np.ndarray
    effort: np.ndarray
    body_pos: np.ndarray  # (b, 3) centre of mass
    body_quat: np.ndarray  # (b, 4) x, y, z, w
    body_vel: np.ndarray  # (b, 6) linear, angular
    warm: dict = field(default_factory=dict)

    def copy(self) -> State:
        return copy.deepcopy(self)
