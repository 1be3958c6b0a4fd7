"""Joints between environment bodies (placeholder until the impulse-kept joints land)."""

from __future__ import annotations

from typing import Any

import numpy as np


class WorldJoints:
    def __init__(self, world: Any, scene: Any):
        self.joints = tuple(getattr(world, "joints", ()) or ())
        if self.joints:
            raise NotImplementedError("world joints")

    def rows(self, sim: Any, rows: Any, vb: np.ndarray, h: float) -> None:
        return None

    def keep(self, sim: Any, vb: np.ndarray, h: float) -> None:
        return None
