"""The contacts of a step as the simulation reports them (world frame)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Contacts:
    """Contact points of the last step. Normals point from body_b to body_a; impulses are
    those applied to body_a over the step (N s): normal (restitution included) plus friction.
    Depths are positive when the surfaces overlap, negative for contacts still a gap apart."""

    points: np.ndarray
    normals: np.ndarray
    depths: np.ndarray
    impulses: np.ndarray
    body_a: tuple[str, ...]
    body_b: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.depths)

    @classmethod
    def empty(cls) -> Contacts:
        return cls(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0), np.zeros((0, 3)), (), ())
