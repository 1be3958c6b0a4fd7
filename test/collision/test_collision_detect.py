"""The whole pipeline on a robot-and-table scene; symmetry and determinism."""

from __future__ import annotations

import numpy as np
import pytest
from collision_testutil import SHAPES
from scipy.spatial.transform import Rotation

from mb_sim.collision import (
    BOX,
    CAPSULE,
    PLANE,
    SPHERE,
    WORLD,
    BroadPhase,
    GeomSpec,
    build_scene,
    detect,
    narrow_phase,
)

N_LINKS = 7
TABLE, BOX1, BOX2, BOX3, BALL = 7, 8, 9, 10, 11
N_OWNERS = 12


def default_like_scene():
    """A 7-link arm of capsules (and a box hand), a table, three boxes, a ball, the ground.
    Owners: links 0..6, table 7 (static), boxes 8..10, ball 11; the ground belongs to the world.
    """
    geoms = [GeomSpec(WORLD, PLANE)]
    for k in range(N_LINKS - 1):
        geoms.append(GeomSpec(k, CAPSULE, (0.05, 0.1, 0.0), (0.0, 0.0, 0.1)))
    geoms.append(GeomSpec(N_LINKS - 1, BOX, (0.04, 0.06, 0.03), (0.0, 0.0, 0.03)))
    geoms.append(GeomSpec(TABLE, BOX, (0.4, 0.6, 0.02)))
    for b in (BOX1, BOX2, BOX3):
        geoms.append(GeomSpec(b, BOX, (0.04, 0.04, 0.04)))
    geoms.append(GeomSpec(BALL, SPHERE, (0.05, 0.0, 0.0)))
    excluded = [(k, k + 1) for k in range(N_LINKS - 1)]
    return build_scene(geoms, excluded, static_owners=[0, TABLE], n_owners=N_OWNERS)


def default_like_poses(lift: float = 0.0):
    pos = np.zeros((N_OWNERS, 3))
    rot = np.tile(np.eye(3), (N_OWNERS, 1, 1))
    for k in range(N_LINKS):  # a vertical arm at x = -0.6
        pos[k] = (-0.6, 0.0, 0.2 * k)
    pos[TABLE] = (0.5, 0.0, 0.5)
    pos[BOX1] = (0.4, -0.2, 0.56 - 0.001 + lift)
    pos[BOX2] = (0.6, 0.2, 0.56 - 0.001 + lift)
    rot[BOX2] = Rotation.from_euler("z", 45, degrees=True).as_matrix()
    pos[BOX3] = (0.4, -0.2, 0.64 - 0.002 + lift)  # stacked on BOX1
    pos[BALL] = (0.0, 0.5, 0.05 - 0.003)
    return pos, rot


def test_default_like_scene_contacts() -> None:
    scene = default_like_scene()
    bp = BroadPhase(scene)
    pos, rot = default_like_poses()
    c = detect(scene, bp, pos, rot, 0.005)
    owners = [tuple(sorted((scene.owner[a], scene.owner[b]))) for a, b in zip(c.geom_a, c.geom_b)]
    count = {o: owners.count(o) for o in set(owners)}
    assert count == {(TABLE, BOX1): 4, (TABLE, BOX2): 4, (BOX1, BOX3): 4, (WORLD, BALL): 1}
    for a, b, n in zip(c.geom_a, c.geom_b, c.normals):
        oa, ob = scene.owner[a], scene.owner[b]
        lower_first = {TABLE: 0, BOX1: 1, WORLD: -1}
        up = 1.0 if lower_first.get(ob, 99) < lower_first.get(oa, 99) else -1.0
        np.testing.assert_allclose(n, [0, 0, up], atol=1e-12)
    assert sorted(np.round(c.depths, 12)) == sorted([0.001] * 8 + [0.001] * 4 + [0.003])
    # lift everything above the envelope: only the stacked pair and the ball remain
    pos, rot = default_like_poses(lift=0.01)
    c = detect(scene, bp, pos, rot, 0.005)
    owners = {tuple(sorted((scene.owner[a], scene.owner[b]))) for a, b in zip(c.geom_a, c.geom_b)}
    assert owners == {(BOX1, BOX3), (WORLD, BALL)}


def test_arm_adjacent_links_filtered_but_others_collide() -> None:
    scene = default_like_scene()
    pos, rot = default_like_poses()
    # fold link 3 back so that its capsule overlaps link 1's capsule
    pos[3] = (-0.6 + 0.08, 0.0, 0.2)
    rot[3] = Rotation.from_euler("y", 180, degrees=True).as_matrix()
    c = detect(scene, BroadPhase(scene), pos, rot, 0.005)
    links = {tuple(sorted((scene.owner[a], scene.owner[b]))) for a, b in zip(c.geom_a, c.geom_b)
             if scene.owner[a] < N_LINKS and scene.owner[b] < N_LINKS}
    assert (1, 3) in links
    assert all(abs(a - b) > 1 for a, b in links)


def test_detect_is_deterministic() -> None:
    scene = default_like_scene()
    rng = np.random.default_rng(4)
    bp1 = BroadPhase(scene)
    bp2 = BroadPhase(scene)
    for step in range(20):
        pos, rot = default_like_poses()
        pos = pos + rng.normal(0, 0.002, pos.shape)
        c1 = detect(scene, bp1, pos, rot, 0.005)
        if step % 3 == 0:
            bp2 = BroadPhase(scene)  # a fresh sort history must not change the output
        c2 = detect(scene, bp2, pos.copy(), rot.copy(), 0.005)
        for f in ("geom_a", "geom_b", "points", "normals", "depths", "features"):
            assert np.array_equal(getattr(c1, f), getattr(c2, f))
        assert len(c1) > 0


def test_swapping_a_and_b_flips_the_normal_on_random_poses() -> None:
    rng = np.random.default_rng(9)
    names = list(SHAPES)
    checked = 0
    for _ in range(600):
        na, nb = rng.choice(names, 2)
        sa, sb = SHAPES[na][0], SHAPES[nb][0]
        scene = build_scene([GeomSpec(0, sa.kind, sa.size, verts=sa.verts),
                             GeomSpec(1, sb.kind, sb.size, verts=sb.verts)])
        gp = np.array([rng.uniform(-0.2, 0.2, 3), np.zeros(3)])
        gr = Rotation.random(2, random_state=rng).as_matrix()
        ab = narrow_phase(scene, gp, gr, np.array([[0, 1]]), 0.01)
        ba = narrow_phase(scene, gp, gr, np.array([[1, 0]]), 0.01)
        assert (len(ab) > 0) == (len(ba) > 0)
        if len(ab) == 0:
            continue
        checked += 1
        assert np.all(ab.geom_a == 0) and np.all(ba.geom_a == 1)
        if sa.kind != sb.kind:  # the same computation: exact flips
            np.testing.assert_array_equal(ab.normals, -ba.normals)
            np.testing.assert_array_equal(ab.depths, ba.depths)
            np.testing.assert_array_equal(ab.points, ba.points)
        else:
            assert ab.depths.max() == pytest.approx(ba.depths.max(), abs=1e-6)
            i, j = np.argmax(ab.depths), np.argmax(ba.depths)
            if sa.kind in (SPHERE, CAPSULE):
                np.testing.assert_allclose(ab.normals[i], -ba.normals[j], atol=1e-6)
    assert checked > 200


def test_narrow_phase_argument_errors() -> None:
    scene = build_scene([GeomSpec(0, SPHERE, (0.1, 0, 0)), GeomSpec(1, BOX, (0.1, 0.1, 0.1))])
    gp, gr = np.zeros((2, 3)), np.tile(np.eye(3), (2, 1, 1))
    with pytest.raises(ValueError, match="pairs"):
        narrow_phase(scene, gp, gr, np.array([[0, 2]]), 0.01)
    with pytest.raises(ValueError, match="envelope"):
        narrow_phase(scene, gp, gr, np.array([[0, 1]]), -1.0)
    assert len(narrow_phase(scene, gp, gr, np.zeros((0, 2), dtype=int), 0.01)) == 0

