"""Which pairs of the robot's links may collide: the one pair filter of the compile step.

Two collision shapes of the robot never collide when
1. they belong to one body: links welded by fixed joints are lumped into one body
   (`mb_sim.model.urdf`), and shapes of one owner never collide (`build_scene`);
2. a joint joins their links' bodies: parent and child (Holck 2005 Table 3.6, as MuJoCo and
   Drake filter them);
3. their links are a listed pair: an SRDF's `<disable_collisions>` (`load_urdf(...,
   srdf=...)`, the world file's `robot: {srdf: ...}`; pairs of unknown links are dropped with
   a warning) or the world file's `robot: {exclude_pairs: [[a, b], ...]}` (unknown links are
   an error);
4. their links' shapes already overlap at the robot's reference pose (its initial positions),
   as MoveIt's "Default" pairs: such a pair would be pushed apart from the first step. One
   info line lists them;
5. `robot: {self_collision: false}`: no two shapes of the robot ever collide, the root link's
   included (they are static world geometry when the base is fixed).

Everything else of the robot collides with itself, the ground and the bodies. Rules 2, 3 and
5 give geometry pairs to `mb_sim.model.shapes.build_scene`; `without_overlaps` applies rule 4
to the built scene with the collision stage's own query (passed in: imports go one way,
model <- dynamics <- collision).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from mb_sim.errors import WorldError
from mb_sim.model.model import Model
from mb_sim.model.shapes import CollisionScene
from mb_sim.model.srdf import known_pairs
from mb_sim.model.world import DEFAULT_SELF_COLLISION

log = logging.getLogger("mb_sim")

OVERLAP = 1e-6
"""Shapes closer than this (m) at the reference pose count as overlapping: parts mounted
flush, whose surfaces meet to within rounding of the CAD export."""


def self_collision(placement: Any) -> bool:
    """Whether the robot's links collide with each other (the world's `robot.self_collision`,
    else `DEFAULT_SELF_COLLISION`)."""
    return bool(getattr(placement, "self_collision", DEFAULT_SELF_COLLISION))


def reference_positions(robot: Model, placement: Any) -> np.ndarray:
    """The joints' initial positions: the world file's `robot.initial_positions`, else 0
    clamped into the joint limits."""
    q0 = np.clip(np.zeros(robot.n_joints), robot.lower, robot.upper)
    for name, value in getattr(placement, "initial_positions", {}).items():
        q0[robot.joint_index(name)] = float(value)
    return q0


def listed_link_pairs(robot: Model, world: Any) -> list[tuple[str, str]]:
    """The link pairs that never collide by rule 3 (the model's SRDF, the world's SRDF and
    exclude_pairs), checked against the robot's links."""
    pairs = list(robot.collision_exclusions)
    placement = getattr(world, "robot", None)
    if placement is None:
        return pairs
    if placement.srdf is not None:
        pairs += known_pairs(placement.srdf_pairs, robot.link_names, placement.srdf,
                             robot.name)
    links = set(robot.link_names)
    for i, (a, b) in enumerate(placement.exclude_pairs):
        for k, link in enumerate((a, b)):
            if link not in links:
                raise WorldError(f"{world.source}: robot.exclude_pairs[{i}][{k}]: robot "
                                 f"{robot.name!r} has no link {link!r} (got {[a, b]})")
        pairs.append((a, b))
    return pairs


def excluded_robot_pairs(robot: Model, world: Any, geom_links: Sequence[str]
                         ) -> list[tuple[int, int]]:
    """Pairs (i, j) of robot geometries (indices into `geom_links`, the link of each) that
    never collide by rules 2, 3 and 5 (`world` may be None)."""
    k = len(geom_links)
    if not self_collision(getattr(world, "robot", None)):
        return list(combinations(range(k), 2))
    body = [robot.link_body[link] for link in geom_links]
    joined = {frozenset((robot.link_body[link], robot.link_body[parent]))
              for link, parent in robot.link_parent.items() if parent is not None}
    listed = {frozenset(p) for p in listed_link_pairs(robot, world)}
    return [(i, j) for i, j in combinations(range(k), 2)
            if frozenset((body[i], body[j])) in joined
            or frozenset((geom_links[i], geom_links[j])) in listed]


OverlapQuery = Callable[[CollisionScene, Any, np.ndarray, np.ndarray, float], np.ndarray]
"""(scene, compiled tree, joint positions, geometry pairs (p, 2), tolerance) -> the pairs
that overlap: `mb_sim.collision.overlaps.overlapping_pairs`, which the simulation passes in
(the collision stage builds on this package, not the other way round)."""


def without_overlaps(cs: CollisionScene, robot: Model, placement: Any, tree: Any,
                     geom_links: Sequence[str], overlapping: OverlapQuery) -> CollisionScene:
    """The scene with rule 4 applied: the robot's link pairs whose shapes overlap at the
    reference pose never collide. Robot geometries are the first len(geom_links) of cs."""
    if not self_collision(placement):
        return cs
    k = len(geom_links)
    pairs = np.array([(i, j) for i, j in combinations(range(k), 2) if cs.pair_allowed[i, j]],
                     dtype=np.int64).reshape(-1, 2)
    if len(pairs) == 0:
        return cs
    found = overlapping(cs, tree, reference_positions(robot, placement), pairs, OVERLAP)
    overlapping_links: dict[frozenset[str], tuple[str, str]] = {}
    for a, b in found:
        link_a, link_b = geom_links[a], geom_links[b]
        overlapping_links.setdefault(frozenset((link_a, link_b)), (link_a, link_b))
    if not overlapping_links:
        return cs
    allowed = cs.pair_allowed.copy()
    for i, j in combinations(range(k), 2):
        if frozenset((geom_links[i], geom_links[j])) in overlapping_links:
            allowed[i, j] = allowed[j, i] = False
    shown = list(overlapping_links.values())
    more = f" and {len(shown) - 10} more" if len(shown) > 10 else ""
    log.info("robot %r: %d link pairs overlap at the reference pose and never collide: %s%s",
             robot.name, len(shown), ", ".join(f"({a}, {b})" for a, b in shown[:10]), more)
    return dataclasses.replace(cs, pair_allowed=allowed)
