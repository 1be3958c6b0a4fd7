"""Contacts as Python reads them: what `Simulation.contacts` reports and what the collision
functions on a bare `CollisionScene` return (world frame)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


def _none() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class Contacts:
    """k contact points. Normals point from b to a; depths are positive when the surfaces
    overlap, negative for contacts still a gap apart; points lie midway between the surfaces.
    Impulses are those applied to a over the step (N s): normal (restitution included) plus
    friction (zero from the collision functions, which solve nothing). body_a, body_b name
    the two bodies (empty when no names are known); geom_a, geom_b are the geometries'
    indices, and `features` identifies the touching features within the pair (corner,
    clipped edge, rim point, ...), the same over steps while the same features touch, which
    lets a solver carry impulses from one step to the next."""

    points: np.ndarray
    normals: np.ndarray
    depths: np.ndarray
    impulses: np.ndarray
    body_a: tuple[str, ...] = ()
    body_b: tuple[str, ...] = ()
    geom_a: np.ndarray = field(default_factory=_none)
    geom_b: np.ndarray = field(default_factory=_none)
    features: np.ndarray = field(default_factory=_none)

    def __len__(self) -> int:
        return len(self.depths)

    @classmethod
    def empty(cls) -> Contacts:
        return cls(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0), np.zeros((0, 3)))

    @classmethod
    def found(cls, c: Any, names: tuple[str, ...] = ()) -> Contacts:
        """Copies of the contacts in a `mb_sim.collision.work.ContactList` (impulses zero),
        with the geometries' names when given."""
        k = int(c.count[0])
        a, b = c.geom_a[:k].copy(), c.geom_b[:k].copy()
        return cls(
            points=c.point[:k].copy(), normals=c.normal[:k].copy(),
            depths=c.depth[:k].copy(), impulses=np.zeros((k, 3)),
            body_a=tuple(names[g] for g in a) if names else (),
            body_b=tuple(names[g] for g in b) if names else (),
            geom_a=a, geom_b=b, features=c.feature[:k].copy(),
        )
