"""Changing the bodies of a simulation between two steps: the scene is compiled again and the
state of everything that stays is carried over exactly, warm-start impulses included.

Geometries are named by what owns them (the robot's i-th geometry, a body by its name, the
ground), so a contact between two geometries that both stay keeps its warm-start key
(`mb_sim.solver.warm`: ((a g + b) 64 + rank) 2 for geometries a < b of g) under the new
numbering, and the robot's joint rows (odd keys) keep theirs. Bodies keep their order and new
ones come last, so the order of the remaining geometries, and of their contacts, is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from mb_sim.model.compile import CompiledScene
from mb_sim.sim.state import State

RANKS = 64
"""Contacts a pair may have in one warm-start key (mb_sim.solver.warm.row_groups)."""


def geom_identities(scene: CompiledScene, has_ground: bool) -> list[Hashable]:
    """What owns each geometry of the scene: ("robot", i), ("body", name) or ("ground",).
    A world body holds one geometry; the robot's come first, the ground's last."""
    nb = len(scene.body_names)
    n_robot = len(scene.geom_names) - nb - int(has_ground)
    ids: list[Hashable] = [("robot", i) for i in range(n_robot)]
    ids += [("body", name) for name in scene.body_names]
    return ids + [("ground",)] * int(has_ground)


def index_map(old: Sequence[Hashable], new: Sequence[Hashable]) -> np.ndarray:
    """For each entry of `old` its index in `new` (-1: gone)."""
    where = {ident: i for i, ident in enumerate(new)}
    return np.array([where.get(ident, -1) for ident in old], dtype=np.int64)


def carry_warm(keys: np.ndarray, values: np.ndarray, geom_map: np.ndarray,
               n_new: int) -> tuple[np.ndarray, np.ndarray]:
    """The warm-start keys (sorted) and impulses of the groups that stay, renumbered by
    geom_map (old geometry -> new, -1: gone); contacts of a gone geometry are dropped."""
    n_old = geom_map.shape[0]
    contact = keys % 2 == 0
    pair, rank = np.divmod(keys // 2, RANKS)
    a = np.where(contact, pair // max(n_old, 1), 0)
    b = np.where(contact, pair % max(n_old, 1), 0)
    if n_old:
        a, b = geom_map[np.minimum(a, n_old - 1)], geom_map[np.minimum(b, n_old - 1)]
    renumbered = np.where(contact, ((a * n_new + b) * RANKS + rank) * 2, keys)
    keep = ~contact | ((a >= 0) & (b >= 0))
    renumbered, kept = renumbered[keep], values[keep]
    order = np.argsort(renumbered, kind="mergesort")
    return renumbered[order], kept[order]


def carry_state(old: State, new: State, body_map: np.ndarray, geom_map: np.ndarray,
                n_geoms: int) -> None:
    """Write old's time, robot state, efforts and servos, the bodies that stay (body_map: new body ->
    old, -1: new, left as they are in `new`) and the warm start into `new` (whose warm-start
    room must hold old's)."""
    for name in ("clock", "q", "qd", "effort", "applied", "mode", "target", "gains",
                 "integral"):
        np.copyto(getattr(new, name), getattr(old, name))
    kept = body_map >= 0
    for name in ("body_pos", "body_quat", "body_vel"):
        getattr(new, name)[kept] = getattr(old, name)[body_map[kept]]
    m = int(old.warm_count[0])
    keys, values = carry_warm(old.warm_key[:m], old.warm_value[:m], geom_map, n_geoms)
    n = keys.shape[0]
    new.warm_key[:] = 0
    new.warm_value[:] = 0.0
    new.warm_key[:n], new.warm_value[:n] = keys, values
    new.warm_count[0] = n


class RememberedOverlaps:
    """The robot's overlap query asked once: its answer depends only on the robot, which a
    change of bodies leaves as it is (the robot's geometries come first in every scene)."""

    def __init__(self, query: Callable[..., np.ndarray]) -> None:
        self._query = query
        self._found: np.ndarray | None = None

    def __call__(self, *args: Any) -> np.ndarray:
        if self._found is None:
            self._found = self._query(*args)
        return self._found


__all__ = ["RememberedOverlaps", "carry_state", "carry_warm", "geom_identities", "index_map"]
