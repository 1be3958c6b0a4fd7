"""Sweep and prune equals the brute-force AABB overlap set, with the pair filter."""

from __future__ import annotations

import numpy as np
import pytest
from collision_testutil import cube_verts
from scipy.spatial.transform import Rotation

from mb_sim.collision import (
    BOX,
    CAPSULE,
    CONVEX,
    CYLINDER,
    PLANE,
    SPHERE,
    WORLD,
    BroadPhase,
    GeomSpec,
    aabbs,
    build_scene,
)
from mb_sim.model.collision_filter import listed_pairs


def _random_scene(rng: np.random.Generator, n: int):
    geoms = []
    n_owners = 12
    for i in range(n):
        kind = int(rng.integers(1, 6))
        size = (rng.uniform(0.02, 0.2), rng.uniform(0.02, 0.2), rng.uniform(0.02, 0.2))
        verts = cube_verts(size) if kind == CONVEX else None
        owner = int(rng.integers(0, n_owners)) if i % 7 else WORLD
        geoms.append(GeomSpec(owner, kind, size, tuple(rng.uniform(-0.05, 0.05, 3)),
                              Rotation.random(random_state=rng).as_matrix(), verts))
    geoms.append(GeomSpec(WORLD, PLANE))
    geoms.append(GeomSpec(3, PLANE, local_rot=Rotation.from_euler("x", 180, degrees=True)
                          .as_matrix(), local_pos=(0.0, 0.0, 0.5)))
    excluded = [(0, 1), (1, 2), (5, 7)]
    static = [4, 9]
    return build_scene(geoms, excluded, static, n_owners=n_owners), excluded, static


def _may_collide(scene, excluded, static) -> np.ndarray:
    """(g, g), true at (i, j), i < j, for the pairs the filter rules let collide: not one
    owner, not both static, not an excluded pair of owners, not two planes."""
    g = scene.n_geoms
    may = np.zeros((g, g), dtype=bool)
    for i in range(g):
        for j in range(i + 1, g):
            oi, oj = scene.owner[i], scene.owner[j]
            si = oi < 0 or oi in static
            sj = oj < 0 or oj in static
            if oi == oj or (si and sj) or (min(oi, oj), max(oi, oj)) in excluded:
                continue
            if scene.kind[i] == PLANE and scene.kind[j] == PLANE:
                continue
            may[i, j] = True
    return may


def _brute_force(may, lo, hi) -> set[tuple[int, int]]:
    """The pairs `may` allows whose closed boxes overlap on every axis, all of them tested."""
    overlap = np.all(lo[:, None, :] <= hi[None, :, :], axis=2)
    return {(int(i), int(j)) for i, j in zip(*np.nonzero(may & overlap & overlap.T))}


def _random_owner_poses(rng, n_owners):
    pos = rng.uniform(-0.6, 0.6, (n_owners, 3))
    rot = Rotation.random(n_owners, random_state=rng).as_matrix()
    return pos, rot


@pytest.mark.parametrize("n", [40, 120])
def test_sap_equals_brute_force_over_moving_steps(n: int) -> None:
    """A small scene (its pairs listed, each tested) and a larger one (too many pairs to
    list: the scene tree walked)."""
    from mb_sim.collision import geometry_poses

    rng = np.random.default_rng(5)
    total = 0
    for trial in range(4):
        scene, excluded, static = _random_scene(rng, n)
        listed = listed_pairs(scene.kind, scene.static, scene.pair_allowed).shape[0]
        assert (listed > 0) == (n == 40)
        bp = BroadPhase(scene)
        may = _may_collide(scene, excluded, static)
        pos, rot = _random_owner_poses(rng, scene.n_owners)
        vel = rng.normal(0, 0.02, pos.shape)
        for step in range(60):
            if step % 20 == 19:
                pos, rot = _random_owner_poses(rng, scene.n_owners)  # teleport everything
            pos = pos + vel
            rot = rot @ Rotation.from_rotvec(rng.normal(0, 0.05, (scene.n_owners, 3))).as_matrix()
            gp, gr = geometry_poses(scene, pos, rot)
            margin = 0.01 * (trial % 2)
            pairs = bp.pairs(gp, gr, margin)
            lo, hi = aabbs(scene, gp, gr, margin)
            expected = _brute_force(may, lo, hi)
            got = [tuple(p) for p in pairs.tolist()]
            assert got == sorted(got)
            assert set(got) == expected and len(got) == len(expected)
            total += len(got)
    assert total > 500


def test_sap_touching_intervals_and_reset() -> None:
    geoms = [GeomSpec(0, BOX, (0.5, 0.5, 0.5)), GeomSpec(1, BOX, (0.5, 0.5, 0.5)),
             GeomSpec(2, SPHERE, (0.5, 0, 0))]
    scene = build_scene(geoms)
    bp = BroadPhase(scene)
    rot = np.tile(np.eye(3), (3, 1, 1))
    gp = np.array([[0.0, 0, 0], [1.0, 0, 0], [5.0, 0, 0]])
    assert bp.pairs(gp, rot, 0.0).tolist() == [[0, 1]]  # closed intervals: touching counts
    gp[1, 0] = 1.0 + 1e-9
    assert bp.pairs(gp, rot, 0.0).tolist() == []
    assert bp.pairs(gp, rot, 1e-8).tolist() == [[0, 1]]
    gp[2] = [0.5, 0.5, 0.5]
    assert bp.pairs(gp, rot, 0.0).tolist() == [[0, 2], [1, 2]]
    bp.reset()
    assert bp.pairs(gp, rot, 0.0).tolist() == [[0, 2], [1, 2]]


def test_filters_same_owner_excluded_static() -> None:
    # all geometries at the same place: only the filter decides
    geoms = [
        GeomSpec(0, BOX, (0.1, 0.1, 0.1)),
        GeomSpec(0, SPHERE, (0.1, 0, 0)),       # same owner as 0
        GeomSpec(1, CAPSULE, (0.1, 0.1, 0)),    # excluded with owner 0
        GeomSpec(2, CYLINDER, (0.1, 0.1, 0)),   # static
        GeomSpec(3, SPHERE, (0.1, 0, 0)),       # static
        GeomSpec(WORLD, PLANE),                 # static (world)
        GeomSpec(4, SPHERE, (0.1, 0, 0)),
    ]
    scene = build_scene(geoms, excluded_owner_pairs=[(1, 0)], static_owners=[2, 3])
    gp, gr = np.zeros((7, 3)), np.tile(np.eye(3), (7, 1, 1))
    pairs = {tuple(p) for p in BroadPhase(scene).pairs(gp, gr, 0.0).tolist()}
    assert (0, 1) not in pairs
    assert (0, 2) not in pairs and (1, 2) not in pairs
    assert (3, 4) not in pairs and (3, 5) not in pairs and (4, 5) not in pairs
    assert pairs == {(0, 3), (0, 4), (0, 5), (0, 6), (1, 3), (1, 4), (1, 5), (1, 6),
                     (2, 3), (2, 4), (2, 5), (2, 6), (3, 6), (4, 6), (5, 6)}
    assert scene.kind[0] == BOX


def test_only_geometries_with_a_bounded_partner_walk() -> None:
    """A robot of three links whose pairs are all excluded (self-collision off) over the
    ground: none of its geometries walks the tree and its pairs are the plane's alone; a free
    body among the links makes every link walk, and the pairs equal the brute-force set."""
    robot = [GeomSpec(k, BOX, (0.2, 0.2, 0.2)) for k in range(3)]
    ground = [GeomSpec(WORLD, PLANE, local_pos=(0.0, 0.0, -0.05))]
    excluded = [(0, 1), (0, 2), (1, 2)]
    alone = build_scene(robot + ground, excluded, n_owners=3)
    bp = BroadPhase(alone)
    assert not bp.walks.any()
    gp = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.2, 0.0, 0.0], [0.0, 0.0, -0.05]])
    rot = np.tile(np.eye(3), (4, 1, 1))
    assert bp.pairs(gp, rot, 0.0).tolist() == [[0, 3], [1, 3], [2, 3]]
    crowded = build_scene(robot + ground + [GeomSpec(3, SPHERE, (0.1, 0, 0))], excluded,
                          n_owners=4)
    bp = BroadPhase(crowded)
    assert bp.walks.tolist() == [True, True, True, False, True]
    gp = np.vstack([gp, [[0.15, 0.0, 0.0]]])
    rot = np.tile(np.eye(3), (5, 1, 1))
    lo, hi = aabbs(crowded, gp, rot, 0.0)
    got = [tuple(p) for p in bp.pairs(gp, rot, 0.0).tolist()]
    assert set(got) == _brute_force(_may_collide(crowded, excluded, []), lo, hi) == {
        (0, 3), (1, 3), (2, 3), (0, 4), (1, 4), (2, 4), (3, 4)}


def test_plane_aabb_is_a_half_space_along_its_normal() -> None:
    up = GeomSpec(WORLD, PLANE, local_pos=(0, 0, 0.2))
    tilted = GeomSpec(WORLD, PLANE, local_rot=Rotation.from_euler("x", 10, degrees=True)
                      .as_matrix())
    scene = build_scene([up, tilted, GeomSpec(0, SPHERE, (0.1, 0, 0))])
    gp = np.array([[0, 0, 0.2], [0, 0, 0], [3.0, -2.0, 0.35]])
    gr = np.stack([np.eye(3), tilted.local_rot, np.eye(3)])
    lo, hi = aabbs(scene, gp, gr, 0.01)
    assert np.all(np.isinf(lo[0])) and np.isinf(hi[0, :2]).all() and hi[0, 2] == pytest.approx(0.21)
    assert np.all(np.isinf(lo[1])) and np.all(np.isinf(hi[1]))
    bp = BroadPhase(scene)
    assert bp.pairs(gp, gr, 0.01).tolist() == [[1, 2]]
    gp[2, 2] = 0.3
    assert bp.pairs(gp, gr, 0.01).tolist() == [[0, 2], [1, 2]]
