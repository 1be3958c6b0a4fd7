"""Changing the bodies or trees of a simulation between two steps: the scene is compiled
again and the state of everything that stays is carried over exactly, warm-start impulses
included.

Geometries are named by what owns them (a tree's i-th geometry, a body by its name, the
ground), so a contact between two geometries that both stay keeps its warm-start key
(`mb_sim.solver.warm`: ((a g + b) 64 + rank) 2 for geometries a < b of g) under the new
numbering, and the trees' joint rows (odd keys: tags of joints and mimic pairs, global
indices) keep theirs, renumbered. Trees and bodies keep their order and new ones come last,
so the order of the remaining geometries, and of their contacts, is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mb_sim.model.compile import CompiledScene
from mb_sim.sim.state import State

RANKS = 64
"""Contacts a pair may have in one warm-start key (mb_sim.solver.warm.row_groups)."""


def geom_identities(scene: CompiledScene) -> list[Hashable]:
    """What owns each geometry of the scene: ("tree", name, i) for a tree's i-th geometry,
    ("body", name) for a body's (its first), ("body", name, i) for a body's i-th convex piece
    after the first, or ("ground",)."""
    ids: list[Hashable] = []
    firsts = {name: first for name, (first, _) in zip(scene.tree_names, scene.tree_geoms)}
    pieces: dict[str, int] = {}
    for g, entity in enumerate(scene.geom_entity):
        if entity in firsts and scene.geom_link[g]:
            ids.append(("tree", entity, g - firsts[entity]))
        elif entity == "ground" and g == len(scene.geom_entity) - 1:
            ids.append(("ground",))
        else:
            k = pieces[entity] = pieces.get(entity, -1) + 1
            ids.append(("body", entity) if k == 0 else ("body", entity, k))
    return ids


def index_map(old: Sequence[Hashable], new: Sequence[Hashable]) -> np.ndarray:
    """For each entry of `old` its index in `new` (-1: gone)."""
    where = {ident: i for i, ident in enumerate(new)}
    return np.array([where.get(ident, -1) for ident in old], dtype=np.int64)


@dataclass(frozen=True)
class TreeMap:
    """How the trees of an old forest map onto a new one (`Tree` arrays of each):
    `tree_map[k]` the new index of old tree k (-1: gone); joints and mimic pairs follow."""

    old: Any
    new: Any
    tree_map: np.ndarray

    def joints(self) -> np.ndarray:
        """New index of each old joint (body) (-1: its tree is gone)."""
        out = np.full(self.old.parent.shape[0], -1, dtype=np.int64)
        for k, j in enumerate(self.tree_map):
            if j >= 0:
                a, b = int(self.old.tree_body[k]), int(self.old.tree_body[k + 1])
                out[a:b] = np.arange(a, b) - a + int(self.new.tree_body[j])
        return out

    def mimics(self) -> np.ndarray:
        """New index of each old mimic pair (-1: gone)."""
        joints = self.joints()
        new_pairs = [tuple(row[:2].astype(int)) for row in self.new.mimic]
        out = np.full(self.old.mimic.shape[0], -1, dtype=np.int64)
        for c, row in enumerate(self.old.mimic):
            i, j = joints[int(row[0])], joints[int(row[1])]
            if i >= 0 and (i, j) in new_pairs:
                out[c] = new_pairs.index((i, j))
        return out


def carry_warm(keys: np.ndarray, values: np.ndarray, geom_map: np.ndarray,
               n_new: int, trees: TreeMap | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The warm-start keys (sorted) and impulses of the groups that stay, renumbered by
    geom_map (old geometry -> new, -1: gone) and by the trees' joints and mimic pairs;
    contacts of a gone geometry and rows of a gone tree are dropped."""
    n_old = geom_map.shape[0]
    contact = keys % 2 == 0
    pair, rank = np.divmod(keys // 2, RANKS)
    a = np.where(contact, pair // max(n_old, 1), 0)
    b = np.where(contact, pair % max(n_old, 1), 0)
    if n_old:
        a, b = geom_map[np.minimum(a, n_old - 1)], geom_map[np.minimum(b, n_old - 1)]
    tags = np.where(contact, 0, keys // 2)
    kept_rows = np.ones(keys.shape[0], dtype=bool)
    if trees is not None:
        tags, kept_rows = _renumbered_tags(tags, trees)
    renumbered = np.where(contact, ((a * n_new + b) * RANKS + rank) * 2, tags * 2 + 1)
    keep = np.where(contact, (a >= 0) & (b >= 0), kept_rows)
    renumbered, kept = renumbered[keep], values[keep]
    order = np.argsort(renumbered, kind="mergesort")
    return renumbered[order], kept[order]


def _renumbered_tags(tags: np.ndarray, trees: TreeMap) -> tuple[np.ndarray, np.ndarray]:
    """Joint-row tags (3 i + side, 3 n + c for mimic pair c) in the new forest; and which
    stay."""
    n_old, n_new = trees.old.parent.shape[0], trees.new.parent.shape[0]
    joints, mimics = trees.joints(), trees.mimics()
    out = tags.copy()
    keep = np.ones(tags.shape[0], dtype=bool)
    for i, tag in enumerate(tags):
        if tag < 3 * n_old:
            j = joints[tag // 3]
            out[i], keep[i] = 3 * j + tag % 3, j >= 0
        elif tag - 3 * n_old < mimics.shape[0]:
            c = mimics[tag - 3 * n_old]
            out[i], keep[i] = 3 * n_new + c, c >= 0
    return out, keep


ROBOT_FIELDS = ("effort", "applied", "mode", "target", "gains", "integral")
"""The joint arrays of the state, carried tree by tree."""


def carry_state(old: State, new: State, body_map: np.ndarray, geom_map: np.ndarray,
                n_geoms: int, trees: TreeMap | None = None) -> None:
    """Write old's time, the trees that stay (`trees`; None: the same trees), the bodies that
    stay (body_map: new body -> old, -1: new, left as they are in `new`) and the warm start
    into `new` (whose warm-start room must hold old's)."""
    new.clock[0] = old.clock[0]
    if trees is None:
        for name in ("q", "qd", *ROBOT_FIELDS):
            np.copyto(getattr(new, name), getattr(old, name))
    else:
        for k, j in enumerate(trees.tree_map):
            if j < 0:
                continue
            for name, table in (("q", "tree_q"), ("qd", "tree_v")):
                o, w = getattr(trees.old, table), getattr(trees.new, table)
                getattr(new, name)[w[j]:w[j + 1]] = getattr(old, name)[o[k]:o[k + 1]]
            o, w = trees.old.tree_body, trees.new.tree_body
            for name in ROBOT_FIELDS:
                getattr(new, name)[w[j]:w[j + 1]] = getattr(old, name)[o[k]:o[k + 1]]
    kept = body_map >= 0
    for name in ("body_pos", "body_quat", "body_vel"):
        getattr(new, name)[kept] = getattr(old, name)[body_map[kept]]
    m = int(old.warm_count[0])
    keys, values = carry_warm(old.warm_key[:m], old.warm_value[:m], geom_map, n_geoms, trees)
    n = keys.shape[0]
    new.warm_key[:] = 0
    new.warm_value[:] = 0.0
    new.warm_key[:n], new.warm_value[:n] = keys, values
    new.warm_count[0] = n


class RememberedOverlaps:
    """The trees' overlap query asked once per set of trees: its answer depends only on the
    trees (their geometries come first in every scene, tree after tree), which a change of
    bodies leaves as they are."""

    def __init__(self, query: Callable[..., np.ndarray]) -> None:
        self._query = query
        self._found: dict[Hashable, np.ndarray] = {}
        self.key: Hashable = None
        """The trees the next query is for (set by the simulation before compiling)."""

    def __call__(self, *args: Any) -> np.ndarray:
        if self.key not in self._found:
            self._found = {self.key: self._query(*args)}
        return self._found[self.key]


__all__ = ["RememberedOverlaps", "TreeMap", "carry_state", "carry_warm", "geom_identities",
           "index_map"]
