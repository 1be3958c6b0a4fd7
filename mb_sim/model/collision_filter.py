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
from mb_sim.model.model import BALL_X, Model
from mb_sim.model.shapes import PLANE, CollisionScene
from mb_sim.model.srdf import known_pairs
from mb_sim.model.world import DEFAULT_SELF_COLLISION
from mb_sim.rotations import quat_from_matrix

log = logging.getLogger("mb_sim")

OVERLAP = 1e-6
"""Shapes closer than this (m) at the reference pose count as overlapping: parts mounted
flush, whose surfaces meet to within rounding of the CAD export."""


def self_collision(placement: Any) -> bool:
    """Whether the robot's links collide with each other (the world's `robot.self_collision`,
    else `DEFAULT_SELF_COLLISION`)."""
    return bool(getattr(placement, "self_collision", DEFAULT_SELF_COLLISION))


def reference_positions(robot: Model, placement: Any) -> np.ndarray:
    """The joints' part of q at their initial positions: the world file's
    `robot.initial_positions`, else 0 clamped into the joint limits; a ball joint at the
    identity quaternion (0, 0, 0, 1)."""
    dof = np.clip(np.zeros(robot.n_joints), robot.lower, robot.upper)
    for name, value in getattr(placement, "initial_positions", {}).items():
        dof[robot.joint_index(name)] = float(value)
    q = np.zeros(robot.n_joint_coordinates)
    one_dof = np.asarray(robot.joint_type) < BALL_X
    q[robot.qadr[one_dof]] = dof[one_dof]
    for first in robot.ball_joints.values():
        q[robot.qadr[first] + 3] = 1.0
    return q


def listed_link_pairs(robot: Model, placement: Any, source: str = "<world>",
                      label: str = "robot") -> list[tuple[str, str]]:
    """The link pairs that never collide by rule 3 (the model's SRDF, the world entry's SRDF
    and exclude_pairs), checked against the robot's links; errors name the world file
    (`source`) and the entry (`label`: robot, robots[1])."""
    pairs = list(robot.collision_exclusions)
    if placement is None:
        return pairs
    if getattr(placement, "srdf", None) is not None:
        pairs += known_pairs(placement.srdf_pairs, robot.link_names, placement.srdf,
                             robot.name)
    links = set(robot.link_names)
    for i, (a, b) in enumerate(getattr(placement, "exclude_pairs", ())):
        for k, link in enumerate((a, b)):
            if link not in links:
                raise WorldError(f"{source}: {label}.exclude_pairs[{i}][{k}]: robot "
                                 f"{robot.name!r} has no link {link!r} (got {[a, b]})")
        pairs.append((a, b))
    return pairs


def excluded_robot_pairs(robot: Model, placement: Any, geom_links: Sequence[str],
                         source: str = "<world>", label: str = "robot"
                         ) -> list[tuple[int, int]]:
    """Pairs (i, j) of one robot's geometries (indices into `geom_links`, the link of each)
    that never collide by rules 2, 3 and 5 (`placement` may be None)."""
    k = len(geom_links)
    if not self_collision(placement):
        return list(combinations(range(k), 2))
    body = [robot.link_body[link] for link in geom_links]
    joined = {frozenset((robot.link_body[link], robot.link_body[parent]))
              for link, parent in robot.link_parent.items() if parent is not None}
    listed = {frozenset(p) for p in listed_link_pairs(robot, placement, source, label)}
    return [(i, j) for i, j in combinations(range(k), 2)
            if frozenset((body[i], body[j])) in joined
            or frozenset((geom_links[i], geom_links[j])) in listed]


OverlapQuery = Callable[[CollisionScene, Any, np.ndarray, np.ndarray, float], np.ndarray]
"""(scene, compiled forest, positions q of every tree, geometry pairs (p, 2), tolerance) ->
the pairs that overlap: `mb_sim.collision.overlaps.overlapping_pairs`, which the simulation
passes in (the collision stage builds on this package, not the other way round)."""


def reference_state(robots: Sequence[Any], tree: Any) -> np.ndarray:
    """q of the forest at the robots' reference poses: each tree's initial positions, a
    floating base at its start pose."""
    q = np.zeros(int(tree.tree_q[-1]))
    for k, placed in enumerate(robots):
        q0 = int(tree.tree_q[k])
        q[q0:q0 + placed.model.n_joint_coordinates] = reference_positions(placed.model,
                                                                           placed.placement)
        if placed.model.floating_base:
            q[int(tree.tree_q[k + 1]) - 7:int(tree.tree_q[k + 1]) - 4] = tree.base_pos[k]
            q[int(tree.tree_q[k + 1]) - 4:int(tree.tree_q[k + 1])] = quat_from_matrix(
                tree.base_rot[k])
    return q


def without_overlaps(cs: CollisionScene, robots: Sequence[Any], tree: Any,
                     ranges: Sequence[tuple[int, int]], links: Sequence[str],
                     overlapping: OverlapQuery) -> CollisionScene:
    """The scene with rule 4 applied: each robot's link pairs whose shapes overlap at the
    reference pose never collide (one info line per robot). Robots whose shapes overlap each
    other at the start keep colliding, with a warning naming the pairs (they will be pushed
    apart). `ranges`: each robot's geometries (first, end) in cs; `links`: the link of each
    geometry."""
    candidates: list[tuple[int, int]] = []
    for placed, (a, b) in zip(robots, ranges):
        if self_collision(placed.placement):
            candidates += [(i, j) for i, j in combinations(range(a, b), 2)
                           if cs.pair_allowed[i, j]]
    for (a0, b0), (a1, b1) in combinations(ranges, 2):
        candidates += [(i, j) for i in range(a0, b0) for j in range(a1, b1)
                       if cs.pair_allowed[i, j]]
    if not candidates:
        return cs
    pairs = np.array(candidates, dtype=np.int64).reshape(-1, 2)
    found = overlapping(cs, tree, reference_state(robots, tree), pairs, OVERLAP)
    owner = np.zeros(cs.n_geoms, dtype=np.int64) - 1
    for k, (a, b) in enumerate(ranges):
        owner[a:b] = k
    allowed = cs.pair_allowed.copy()
    own: list[dict[frozenset[str], tuple[str, str]]] = [{} for _ in robots]
    between: dict[tuple[str, str, str, str], None] = {}
    for a, b in found:
        ka, kb = int(owner[a]), int(owner[b])
        la, lb = links[a], links[b]
        if ka == kb:
            own[ka].setdefault(frozenset((la, lb)), (la, lb))
        else:
            between[(robots[ka].name, la, robots[kb].name, lb)] = None
    for k, (placed, (a, b)) in enumerate(zip(robots, ranges)):
        pairs_k = own[k]
        if not pairs_k:
            continue
        for i, j in combinations(range(a, b), 2):
            if frozenset((links[i], links[j])) in pairs_k:
                allowed[i, j] = allowed[j, i] = False
        shown = list(pairs_k.values())
        more = f" and {len(shown) - 10} more" if len(shown) > 10 else ""
        log.info("robot %r: %d link pairs overlap at the reference pose and never collide: "
                 "%s%s", placed.name, len(shown), ", ".join(f"({a}, {b})" for a, b in
                                                            shown[:10]), more)
    if between:
        shown_between = list(between)
        more = f" and {len(shown_between) - 10} more" if len(shown_between) > 10 else ""
        log.warning("robots placed overlapping each other at the start (they will be pushed "
                    "apart): %s%s", ", ".join(f"{ra}/{la} with {rb}/{lb}" for ra, la, rb, lb
                                              in shown_between[:10]), more)
    return dataclasses.replace(cs, pair_allowed=allowed)


LISTED_PAIRS = 2048
"""A scene whose pairs that may collide are at most this many lists them (`listed_pairs`):
the broad phase tests each listed pair's boxes, about 2 ns a pair, instead of refitting and
walking the scene tree (talos alone, 52 geometries and 1,046 pairs, world boxes included:
3.5-4.7 us listed, 5.2-7.8 us walking the tree)."""


def listed_pairs(kind: np.ndarray, static: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """The pairs (i, j), i < j in lexicographic order, that may collide (`allowed`, not both
    static, not both planes), when there are at most LISTED_PAIRS of them; none (0, 2)
    otherwise, where the scene tree finds the pairs to test."""
    kind, static = np.asarray(kind), np.asarray(static, dtype=bool)
    planes = kind == PLANE
    may = (np.asarray(allowed, dtype=bool) & ~(static[:, None] & static[None, :])
           & ~(planes[:, None] & planes[None, :]))
    i, j = np.nonzero(np.triu(may, 1))  # row by row: lexicographic
    if i.shape[0] > LISTED_PAIRS:
        return np.zeros((0, 2), dtype=np.int64)
    return np.stack([i, j], axis=1).astype(np.int64)


def walkers(kind: np.ndarray, static: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Per geometry: whether it moves, is bounded (not a plane) and may collide with another
    bounded geometry, i.e. whether it has pairs to look for in the scene tree."""
    bounded = np.asarray(kind) != PLANE
    partnered = (np.asarray(allowed) & bounded[None, :]).any(axis=1)
    return bounded & ~np.asarray(static, dtype=bool) & partnered
