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
    the two geometries' owners as the scene names its geometries (a body, a link, with
    several robots `robot/link`; empty when no names are known); entity_a, entity_b say
    which robot, URDF object or body (or "ground") each side is, and link_a, link_b which
    link of it ("" for a body); geom_a, geom_b are the geometries' indices, and `features`
    identifies the touching features within the pair (corner, clipped edge, rim point, ...),
    the same over steps while the same features touch, which lets a solver carry impulses
    from one step to the next."""

    points: np.ndarray
    normals: np.ndarray
    depths: np.ndarray
    impulses: np.ndarray
    body_a: tuple[str, ...] = ()
    body_b: tuple[str, ...] = ()
    geom_a: np.ndarray = field(default_factory=_none)
    geom_b: np.ndarray = field(default_factory=_none)
    features: np.ndarray = field(default_factory=_none)
    entity_a: tuple[str, ...] = ()
    entity_b: tuple[str, ...] = ()
    link_a: tuple[str, ...] = ()
    link_b: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.depths)

    @classmethod
    def empty(cls) -> Contacts:
        return cls(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0), np.zeros((0, 3)))

    @classmethod
    def found(cls, c: Any, names: tuple[str, ...] = (), entities: tuple[str, ...] = (),
              links: tuple[str, ...] = ()) -> Contacts:
        """Copies of the contacts in a `mb_sim.collision.work.ContactList` (impulses zero),
        with the geometries' names, entities and links when given."""
        k = int(c.count[0])
        a, b = c.geom_a[:k].copy(), c.geom_b[:k].copy()

        def named(table: tuple[str, ...], geoms: np.ndarray) -> tuple[str, ...]:
            return tuple(table[g] for g in geoms) if table else ()

        return cls(
            points=c.point[:k].copy(), normals=c.normal[:k].copy(),
            depths=c.depth[:k].copy(), impulses=np.zeros((k, 3)),
            body_a=named(names, a), body_b=named(names, b),
            geom_a=a, geom_b=b, features=c.feature[:k].copy(),
            entity_a=named(entities, a), entity_b=named(entities, b),
            link_a=named(links, a), link_b=named(links, b),
        )
