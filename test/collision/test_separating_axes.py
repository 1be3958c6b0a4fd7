"""The separating axes the narrow phase keeps from call to call skip only pairs its colliders
find apart: along a path that brings two shapes together and apart again, the contacts are
the same bits with the table kept as with it emptied before every call, and the table skips
most of the calls while they are apart."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from collision_testutil import spec
from scipy.spatial.transform import Rotation

from mb_sim.collision import BOX, CAPSULE, CONVEX, CYLINDER, SPHERE, build_scene
from mb_sim.collision.narrowphase import _records, narrow_phase_into
from mb_sim.collision.work import new_collision_work, new_contact_list
from mb_sim.model.compile import new_geoms

ENV = 0.005
RNG = np.random.default_rng(11)
BALL = RNG.normal(size=(200, 3))
BALL = 0.1 * BALL / np.linalg.norm(BALL, axis=1)[:, None] * (1.0, 0.7, 0.5)
PEBBLE = RNG.normal(size=(20, 3))
PEBBLE = 0.06 * PEBBLE / np.linalg.norm(PEBBLE, axis=1)[:, None] * (1.0, 0.8, 0.6)
SHAPES = {
    "hull": spec(CONVEX, verts=BALL),  # climbed: more than SCAN_VERTS vertices
    "small_hull": spec(CONVEX, verts=PEBBLE),  # scanned
    "box": spec(BOX, (0.06, 0.05, 0.04)),
    "capsule": spec(CAPSULE, (0.04, 0.08, 0.0)),
    "cylinder": spec(CYLINDER, (0.05, 0.07, 0.0)),
    "sphere": spec(SPHERE, (0.05, 0.0, 0.0)),
}
PAIRS = [("hull", "hull"), ("hull", "small_hull"), ("small_hull", "box"), ("hull", "capsule"),
         ("cylinder", "hull"), ("sphere", "hull"), ("capsule", "cylinder")]


class Workspace:
    """One narrow-phase workspace over the pair (a, b), kept between calls."""

    def __init__(self, a: Any, b: Any) -> None:
        a, b = replace(a, owner=0), replace(b, owner=1)
        scene = build_scene([a, b])
        g, self.w, self.c = _records(scene, 2, 1)
        self.records = (new_geoms(g), new_collision_work(self.w), new_contact_list(self.c))
        self.w.pairs[0] = (0, 1)

    def contacts(self, pos: np.ndarray, rot: np.ndarray) -> tuple[np.ndarray, ...]:
        self.w.geom_pos[...] = pos
        self.w.geom_rot[...] = rot
        k = narrow_phase_into(*self.records, 1, ENV, False)
        c = self.c
        return (c.point[:k].copy(), c.normal[:k].copy(), c.depth[:k].copy(),
                c.feature[:k].copy())


def _path(steps: int) -> tuple[np.ndarray, np.ndarray]:
    """B passes A: from 0.4 m off through A's middle and out the other side, turning."""
    s = np.linspace(-1.0, 1.0, steps)
    pos = np.zeros((steps, 2, 3))
    pos[:, 1] = np.c_[0.4 * s, 0.05 + 0.1 * s ** 2, 0.02 * np.ones(steps)]
    turn = Rotation.from_rotvec(np.outer(np.linspace(0.0, 1.5, steps), [0.3, 0.8, 0.5]))
    rot = np.zeros((steps, 2, 3, 3))
    rot[:, 0] = Rotation.from_euler("xyz", [0.2, -0.4, 0.9]).as_matrix()
    rot[:, 1] = turn.as_matrix()
    return pos, rot


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_the_kept_axes_change_no_contact_and_skip_pairs_apart(a: str, b: str) -> None:
    kept, fresh = Workspace(SHAPES[a], SHAPES[b]), Workspace(SHAPES[a], SHAPES[b])
    pos, rot = _path(400)
    apart = touching = held = skipped = 0
    hull = CONVEX in (SHAPES[a].kind, SHAPES[b].kind)
    for p, r in zip(pos, rot, strict=True):
        key, axis = kept.w.apart_key.copy(), kept.w.apart_axis.copy()
        fresh.w.apart_key[:] = 0
        got, want = kept.contacts(p, r), fresh.contacts(p, r)
        for x, y in zip(got, want, strict=True):
            assert np.array_equal(x, y)
        if len(want[2]) > 0:
            touching += 1
            continue
        apart += 1
        if key.any():  # a skip leaves the axis and climbs a hull's support map from the
            held += 1  # last vertex; a collider that finds the pair apart writes its
            slot = np.flatnonzero(key)  # axis again, the climbs from the seeds (-1)
            skipped += bool(np.array_equal(axis, kept.w.apart_axis)
                            and (not hull or (kept.w.apart_hint[slot] != -1).any()))
    assert touching > 20 and apart > 100 and held > 50, (touching, apart, held)
    assert skipped > 0.8 * held, (skipped, held)


@pytest.mark.parametrize(("a", "b"), PAIRS[:5])
def test_an_axis_that_does_not_separate_is_only_a_miss(a: str, b: str) -> None:
    """A wrong axis in the table (the shapes overlap along it, or it points the wrong way):
    the collider runs and finds the contacts a fresh table finds."""
    pos, rot = _path(400)
    kept, fresh = Workspace(SHAPES[a], SHAPES[b]), Workspace(SHAPES[a], SHAPES[b])
    j = 0
    while not kept.w.apart_key.any():  # the first pose that leaves an axis
        kept.contacts(pos[j], rot[j])
        j += 1
    slot = np.flatnonzero(kept.w.apart_key)
    assert slot.size == 1
    for i in range(160, 241, 8):  # around the middle: overlapping
        want = fresh.contacts(pos[i], rot[i])
        assert len(want[2]) > 0
        for axis in [*np.eye(3), *-np.eye(3)]:
            kept.w.apart_axis[slot] = axis
            got = kept.contacts(pos[i], rot[i])
            assert kept.w.apart_key[slot] != 0
            for x, y in zip(got, want, strict=True):
                assert np.array_equal(x, y)
