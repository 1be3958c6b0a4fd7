"""Every pair type, separated / touching / penetrating, against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from collision_testutil import ENV, SHAPES, pair_contacts, rot, spec

from mb_sim.collision import BOX, CAPSULE, CYLINDER, PLANE, SPHERE

PLANE_SPEC = spec(PLANE)
BOTTOMS = list(SHAPES) + ["plane"]
TOPS = list(SHAPES)
GAPS = (0.05, 0.0, -0.02)


def _stack(top: str, bottom: str, gap: float):
    """`top` resting on `bottom` (centre at the origin) with a vertical gap; returns both
    orders of the pair."""
    ts, trot, tlow, _ = SHAPES[top]
    if bottom == "plane":
        bs, brot, bhigh = PLANE_SPEC, np.eye(3), 0.0
    else:
        bs, brot, _, bhigh = SHAPES[bottom]
    z = bhigh + tlow + gap
    ab = pair_contacts(ts, (0.0, 0.0, z), trot, bs, (0.0, 0.0, 0.0), brot)
    ba = pair_contacts(bs, (0.0, 0.0, 0.0), brot, ts, (0.0, 0.0, z), trot)
    return ab, ba, bhigh


CASES = [(t, b) for t in TOPS for b in BOTTOMS if not (t == "convex_oct" and b == "convex_oct")]


@pytest.mark.parametrize(("top", "bottom"), CASES)
def test_stacked_pair_depth_normal_point(top: str, bottom: str) -> None:
    for gap in GAPS:
        ab, ba, zt = _stack(top, bottom, gap)
        if gap > ENV:
            assert len(ab) == 0 and len(ba) == 0, (gap, ab)
            continue
        assert len(ab) >= 1 and len(ba) >= 1
        np.testing.assert_allclose(ab.depths, -gap, atol=1e-6)
        np.testing.assert_allclose(ba.depths, -gap, atol=1e-6)
        # EPA on two curved surfaces converges to about 1e-12 in depth, a few 1e-6 in angle
        np.testing.assert_allclose(ab.normals, np.tile([0.0, 0.0, 1.0], (len(ab), 1)), atol=1e-5)
        np.testing.assert_allclose(ba.normals, np.tile([0.0, 0.0, -1.0], (len(ba), 1)),
                                   atol=1e-5)
        np.testing.assert_allclose(ab.points[:, 2], zt + gap / 2, atol=1e-6)
        assert np.all(ab.geom_a == 0) and np.all(ab.geom_b == 1)
        np.testing.assert_allclose(np.linalg.norm(ab.normals, axis=1), 1.0, atol=1e-12)


def test_sphere_over_plane_brief_example() -> None:
    c = pair_contacts(spec(SPHERE, (0.1, 0, 0)), (0, 0, 0.09), np.eye(3), PLANE_SPEC, (0, 0, 0),
                      np.eye(3))
    assert len(c) == 1
    assert c.depths[0] == pytest.approx(0.01, abs=1e-12)
    np.testing.assert_allclose(c.normals[0], [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(c.points[0], [0, 0, -0.005], atol=1e-12)


def test_sphere_on_tilted_plane() -> None:
    r = rot("x", 30)
    n = r[:, 2]
    centre = 0.3 * n + np.array([0.0, 0.0, 0.0]) + 0.07 * np.cross(n, [1, 0, 0])
    c = pair_contacts(spec(SPHERE, (0.32, 0, 0)), centre, np.eye(3), PLANE_SPEC, (0, 0, 0), r)
    assert c.depths[0] == pytest.approx(0.02, abs=1e-12)
    np.testing.assert_allclose(c.normals[0], n, atol=1e-12)


def test_sphere_box_corner_region_and_inside() -> None:
    box = spec(BOX, (0.2, 0.1, 0.3))
    sph = spec(SPHERE, (0.06, 0, 0))
    c = pair_contacts(sph, (0.23, 0.14, 0.0), np.eye(3), box, (0, 0, 0), np.eye(3))
    assert c.depths[0] == pytest.approx(0.06 - 0.05, abs=1e-12)
    np.testing.assert_allclose(c.normals[0], [0.6, 0.8, 0.0], atol=1e-12)
    # centre inside, nearest face +x at 0.01
    c = pair_contacts(sph, (0.19, 0.0, 0.05), np.eye(3), box, (0, 0, 0), np.eye(3))
    assert c.depths[0] == pytest.approx(0.06 + 0.01, abs=1e-12)
    np.testing.assert_allclose(c.normals[0], [1, 0, 0], atol=1e-12)
    # rotated box: the same configuration expressed in a rotated frame
    r = rot("z", 40)
    c2 = pair_contacts(sph, r @ [0.23, 0.14, 0.0], np.eye(3), box, (0, 0, 0), r)
    assert c2.depths[0] == pytest.approx(0.01, abs=1e-12)
    np.testing.assert_allclose(c2.normals[0], r @ [0.6, 0.8, 0.0], atol=1e-12)


def test_sphere_capsule_side_and_end() -> None:
    cap = spec(CAPSULE, (0.05, 0.2, 0))
    sph = spec(SPHERE, (0.1, 0, 0))
    c = pair_contacts(sph, (0.12, 0.0, 0.1), np.eye(3), cap, (0, 0, 0), np.eye(3))
    assert c.depths[0] == pytest.approx(0.15 - 0.12, abs=1e-12)
    np.testing.assert_allclose(c.normals[0], [1, 0, 0], atol=1e-12)
    c = pair_contacts(sph, (0.0, 0.09, 0.2 + 0.09), np.eye(3), cap, (0, 0, 0), np.eye(3))
    assert c.depths[0] == pytest.approx(0.15 - 0.09 * math.sqrt(2), abs=1e-12)
    np.testing.assert_allclose(c.normals[0], [0, 1 / math.sqrt(2), 1 / math.sqrt(2)], atol=1e-12)


def test_sphere_cylinder_rim_side_cap_inside() -> None:
    cyl = spec(CYLINDER, (0.1, 0.2, 0))
    sph = spec(SPHERE, (0.05, 0, 0))
    # outside the rim circle: closest point (0.1, 0, 0.2)
    c = pair_contacts(sph, (0.13, 0.0, 0.24), np.eye(3), cyl, (0, 0, 0), np.eye(3))
    assert c.depths[0] == pytest.approx(0.05 - 0.05, abs=1e-12)
    np.testing.assert_allclose(c.normals[0], [0.6, 0.0, 0.8], atol=1e-12)
    c = pair_contacts(sph, (0.0, 0.14, 0.1), np.eye(3), cyl, (0, 0, 0), np.eye(3))
    assert c.depths[0] == pytest.approx(0.01, abs=1e-12)
    np.testing.assert_allclose(c.normals[0], [0, 1, 0], atol=1e-12)
    c = pair_contacts(sph, (0.02, 0.0, 0.19), np.eye(3), cyl, (0, 0, 0), np.eye(3))
    assert c.depths[0] == pytest.approx(0.05 + 0.01, abs=1e-12)
    np.testing.assert_allclose(c.normals[0], [0, 0, 1], atol=1e-12)


def test_capsule_capsule_crossing() -> None:
    a = spec(CAPSULE, (0.04, 0.3, 0))
    b = spec(CAPSULE, (0.03, 0.25, 0))
    # a along x at height h, b along y shifted: closest points (0.1, 0, h) and (0.1, 0, 0)
    h = 0.06
    c = pair_contacts(a, (0.0, 0.0, h), rot("y", 90), b, (0.1, 0.05, 0.0), rot("x", 90))
    assert len(c) == 1
    assert c.depths[0] == pytest.approx(0.07 - h, abs=1e-12)
    np.testing.assert_allclose(c.normals[0], [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(c.points[0], [0.1, 0.0, 0.03 + (h - 0.04 - 0.03) / 2], atol=1e-12)
    # crossing at 60 degrees about z through a common vertical
    r60 = rot("z", 60) @ rot("y", 90)
    c = pair_contacts(a, (0.0, 0.0, 0.065), rot("y", 90), b, (0.0, 0.0, 0.0), r60)
    assert c.depths[0] == pytest.approx(0.005, abs=1e-12)
    np.testing.assert_allclose(c.normals[0], [0, 0, 1], atol=1e-12)
    # separated beyond the envelope
    assert len(pair_contacts(a, (0, 0, 0.2), rot("y", 90), b, (0, 0, 0), r60)) == 0


def test_capsule_capsule_parallel_gives_two_points() -> None:
    a = spec(CAPSULE, (0.04, 0.3, 0))
    b = spec(CAPSULE, (0.04, 0.2, 0))
    c = pair_contacts(a, (0.1, 0.0, 0.07), rot("y", 90), b, (0.0, 0.0, 0.0), rot("y", 90))
    assert len(c) == 2
    np.testing.assert_allclose(c.depths, 0.01, atol=1e-12)
    np.testing.assert_allclose(sorted(c.points[:, 0]), [-0.2, 0.2], atol=1e-12)
    np.testing.assert_allclose(c.normals, [[0, 0, 1]] * 2, atol=1e-12)


def test_box_box_edge_edge() -> None:
    h = 0.1
    a = spec(BOX, (h, h, h))
    ra = rot("x", 45)  # lowest feature: an edge along x at -h sqrt 2
    rb = rot("y", 45)  # highest feature: an edge along y at +h sqrt 2
    for gap in (0.005, 0.0, -0.004):
        z = 2 * h * math.sqrt(2) + gap
        c = pair_contacts(a, (0.01, 0.02, z), ra, a, (0, 0, 0), rb)
        assert len(c) == 1
        assert c.depths[0] == pytest.approx(-gap, abs=1e-12)
        np.testing.assert_allclose(c.normals[0], [0, 0, 1], atol=1e-12)
        np.testing.assert_allclose(c.points[0], [0.0, 0.02, h * math.sqrt(2) + gap / 2],
                                   atol=1e-12)


def test_box_corner_on_plane_tilted() -> None:
    r = rot("x", 30) @ rot("y", 20)
    h = np.array([0.1, 0.2, 0.15])
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * h
    low = (corners @ r.T)[:, 2].min()
    c = pair_contacts(spec(BOX, h), (0.3, 0.1, -low - 0.003), r, PLANE_SPEC, (0, 0, 0),
                      np.eye(3))
    assert len(c) == 1
    assert c.depths[0] == pytest.approx(0.003, abs=1e-12)


def test_cylinder_tilted_on_plane_lowest_rim_point() -> None:
    th = math.radians(25)
    r, hl = 0.1, 0.2
    zc = 0.3
    c = pair_contacts(spec(CYLINDER, (r, hl, 0)), (0, 0, zc), rot("x", 25), PLANE_SPEC,
                      (0, 0, 0), np.eye(3), env=0.0 + 1e-9 + 0.5)
    low = zc - hl * math.cos(th) - r * math.sin(th)
    assert c.depths.max() == pytest.approx(-low, abs=1e-12)
    deepest = c.points[np.argmax(c.depths)]
    # rotation about x by +25 deg tips local +z towards -y; the lowest rim point is at +y
    np.testing.assert_allclose(deepest[:2], [0.0, hl * math.sin(th) - r * math.cos(th)],
                               atol=1e-12)
