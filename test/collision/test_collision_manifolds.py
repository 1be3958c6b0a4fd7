"""Contact manifolds: resting boxes, cylinders, capsules and hulls get several points."""

from __future__ import annotations

import math

import numpy as np
import pytest
from collision_testutil import cube_verts, pair_contacts, rot, spec
from scipy.spatial.transform import Rotation

from mb_sim.collision import BOX, CAPSULE, CONVEX, CYLINDER, PLANE
from mb_sim.collision.manifold import reduce4

PLANE_SPEC = spec(PLANE)


def _corners(h, r=None, c=(0, 0, 0)):
    r = np.eye(3) if r is None else np.asarray(r)
    return cube_verts(h) @ r.T + np.asarray(c)


def _match_points(actual: np.ndarray, expected: np.ndarray, atol: float = 1e-9) -> None:
    """Same point sets (any order)."""
    assert actual.shape == expected.shape, (actual, expected)
    for p in expected:
        d = np.linalg.norm(actual - p, axis=1)
        assert d.min() < atol, (p, actual)


@pytest.mark.parametrize("yaw", [0.0, 30.0, 45.0])
def test_box_resting_on_plane_four_corners(yaw: float) -> None:
    h = (0.2, 0.1, 0.05)
    r = rot("z", yaw)
    c = pair_contacts(spec(BOX, h), (0.3, -0.1, 0.05 - 0.002), r, PLANE_SPEC, (0, 0, 0),
                      np.eye(3))
    assert len(c) == 4
    np.testing.assert_allclose(c.depths, 0.002, atol=1e-12)
    np.testing.assert_allclose(c.normals, [[0, 0, 1]] * 4, atol=1e-12)
    bottom = _corners(h, r, (0.3, -0.1, 0.048))[[0, 2, 4, 6]]
    bottom[:, 2] = -0.001
    _match_points(c.points, bottom)


@pytest.mark.parametrize("yaw", [0.0, 45.0, 10.0])
def test_box_resting_on_larger_box_four_corners(yaw: float) -> None:
    small = (0.1, 0.1, 0.05)
    big = (0.5, 0.4, 0.3)
    r = rot("z", yaw)
    depth = 0.001
    centre = (0.05, -0.02, 0.3 + 0.05 - depth)
    for order in ("ab", "ba"):
        if order == "ab":
            c = pair_contacts(spec(BOX, small), centre, r, spec(BOX, big), (0, 0, 0), np.eye(3))
            up = 1.0
        else:
            c = pair_contacts(spec(BOX, big), (0, 0, 0), np.eye(3), spec(BOX, small), centre, r)
            up = -1.0
        assert len(c) == 4
        np.testing.assert_allclose(c.depths, depth, atol=1e-12)
        np.testing.assert_allclose(c.normals, [[0, 0, up]] * 4, atol=1e-12)
        expected = _corners(small, r, centre)[[0, 2, 4, 6]]
        expected[:, 2] = 0.3 - depth / 2
        _match_points(c.points, expected)


def test_box_overhanging_edge_is_clipped() -> None:
    small = (0.1, 0.1, 0.05)
    big = (0.5, 0.4, 0.3)
    c = pair_contacts(spec(BOX, small), (0.45, 0.0, 0.349), np.eye(3), spec(BOX, big),
                      (0, 0, 0), np.eye(3))
    assert len(c) == 4
    np.testing.assert_allclose(c.depths, 0.001, atol=1e-12)
    _match_points(c.points[:, :2], np.array([[0.35, -0.1], [0.35, 0.1], [0.5, -0.1], [0.5, 0.1]]))


def test_box_slightly_tilted_on_plane_keeps_deepest_and_rests_on_four() -> None:
    h = (0.2, 0.1, 0.05)
    r = rot("y", 0.5)
    low = _corners(h, r)[:, 2].min()
    c = pair_contacts(spec(BOX, h), (0, 0, -low - 0.001), r, PLANE_SPEC, (0, 0, 0), np.eye(3))
    assert len(c) == 4
    assert c.depths.max() == pytest.approx(0.001, abs=1e-12)
    drop = 0.001 - 2 * 0.2 * math.sin(math.radians(0.5))
    assert sorted(c.depths) == pytest.approx([drop, drop, 0.001, 0.001], abs=1e-12)


def test_cylinder_standing_on_plane_four_rim_points() -> None:
    r, hl = 0.1, 0.15
    c = pair_contacts(spec(CYLINDER, (r, hl, 0)), (0.2, 0.3, hl - 0.003), rot("z", 20),
                      PLANE_SPEC, (0, 0, 0), np.eye(3))
    assert len(c) == 4
    np.testing.assert_allclose(c.depths, 0.003, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(c.points[:, :2] - [0.2, 0.3], axis=1), r,
                               atol=1e-12)
    # the four points span a square of side r sqrt 2
    d = np.linalg.norm(c.points[:, None, :] - c.points[None, :, :], axis=2)
    assert d.max() == pytest.approx(2 * r, abs=1e-12)


def test_cylinder_lying_on_plane_two_points_at_the_ends() -> None:
    r, hl = 0.1, 0.15
    c = pair_contacts(spec(CYLINDER, (r, hl, 0)), (0.0, 0.0, r - 0.002), rot("y", 90),
                      PLANE_SPEC, (0, 0, 0), np.eye(3))
    assert len(c) == 2
    np.testing.assert_allclose(c.depths, 0.002, atol=1e-12)
    np.testing.assert_allclose(sorted(c.points[:, 0]), [-hl, hl], atol=1e-12)


def test_capsule_lying_on_plane_two_points() -> None:
    r, hl = 0.05, 0.2
    c = pair_contacts(spec(CAPSULE, (r, hl, 0)), (0.1, 0.0, r - 0.004), rot("z", 30) @
                      rot("y", 90), PLANE_SPEC, (0, 0, 0), np.eye(3))
    assert len(c) == 2
    np.testing.assert_allclose(c.depths, 0.004, atol=1e-12)
    ends = np.array([[0.1 - hl * math.cos(math.radians(30)), -hl * math.sin(math.radians(30))],
                     [0.1 + hl * math.cos(math.radians(30)), hl * math.sin(math.radians(30))]])
    _match_points(c.points[:, :2], ends)


def test_capsule_lying_on_box_two_points_clipped_to_the_face() -> None:
    r, hl = 0.05, 0.3
    c = pair_contacts(spec(CAPSULE, (r, hl, 0)), (0.0, 0.0, 0.1 + r - 0.004), rot("y", 90),
                      spec(BOX, (0.2, 0.2, 0.1)), (0, 0, 0), np.eye(3))
    assert len(c) == 2
    np.testing.assert_allclose(c.depths, 0.004, atol=1e-9)
    np.testing.assert_allclose(c.normals, [[0, 0, 1]] * 2, atol=1e-9)
    np.testing.assert_allclose(sorted(c.points[:, 0]), [-0.2, 0.2], atol=1e-9)


def test_cylinder_standing_on_box_rim_points() -> None:
    r, hl = 0.08, 0.1
    c = pair_contacts(spec(CYLINDER, (r, hl, 0)), (0.05, 0.0, 0.1 + hl - 0.002), np.eye(3),
                      spec(BOX, (0.3, 0.3, 0.1)), (0, 0, 0), np.eye(3))
    assert len(c) == 4
    np.testing.assert_allclose(c.depths, 0.002, atol=1e-9)
    np.testing.assert_allclose(c.normals, [[0, 0, 1]] * 4, atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(c.points[:, :2] - [0.05, 0.0], axis=1), r,
                               atol=1e-9)


def test_convex_prism_on_plane_reduced_to_four_widest() -> None:
    ang = np.linspace(0, 2 * np.pi, 16, endpoint=False)
    ring = np.stack([0.1 * np.cos(ang), 0.1 * np.sin(ang)], axis=1)
    verts = np.vstack([np.c_[ring, np.full(16, -0.05)], np.c_[ring, np.full(16, 0.05)]])
    c = pair_contacts(spec(CONVEX, verts=verts), (0, 0, 0.05 - 0.001), np.eye(3), PLANE_SPEC,
                      (0, 0, 0), np.eye(3))
    assert len(c) == 4
    np.testing.assert_allclose(c.depths, 0.001, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(c.points[:, :2], axis=1), 0.1, atol=1e-12)
    # widest spread of 16 points on a circle: a square (diagonals are diameters)
    d = np.sort(np.linalg.norm(c.points[:, None, :2] - c.points[None, :, :2], axis=2).ravel())
    assert d[-1] == pytest.approx(0.2, abs=1e-12)
    # the quad's diagonals are the pairs (first, second) and (third, fourth) chosen
    u = c.points[1, :2] - c.points[0, :2]
    v = c.points[3, :2] - c.points[2, :2]
    assert 0.5 * abs(u[0] * v[1] - u[1] * v[0]) == pytest.approx(0.02, rel=1e-9)


def _by_point(c) -> np.ndarray:
    return np.lexsort(np.round(c.points, 6).T[::-1])


def test_convex_cube_equals_box_on_random_poses() -> None:
    rng = np.random.default_rng(3)
    h = (0.12, 0.1, 0.08)
    box = spec(BOX, h)
    hull = spec(CONVEX, verts=cube_verts(h))
    hits = 0
    for _ in range(200):
        ra = np.eye(3) if rng.random() < 0.3 else Rotation.random(random_state=rng).as_matrix()
        rb = Rotation.random(random_state=rng).as_matrix()
        pa = rng.uniform(-0.25, 0.25, 3)
        ref = pair_contacts(box, pa, ra, box, (0, 0, 0), rb)
        r_order = _by_point(ref)
        for a, b in ((hull, box), (box, hull), (hull, hull)):
            # box-box has its own 15-axis SAT; hulls go through the polyhedron SAT
            c = pair_contacts(a, pa, ra, b, (0, 0, 0), rb)
            assert len(c) == len(ref)
            order = _by_point(c)
            np.testing.assert_allclose(c.depths[order], ref.depths[r_order], atol=1e-9)
            np.testing.assert_allclose(c.normals[order], ref.normals[r_order], atol=1e-9)
            np.testing.assert_allclose(c.points[order], ref.points[r_order], atol=1e-9)
        pl = pair_contacts(box, pa, ra, PLANE_SPEC, (0, 0, 0), np.eye(3))
        cl = pair_contacts(hull, pa, ra, PLANE_SPEC, (0, 0, 0), np.eye(3))
        assert len(pl) == len(cl)
        np.testing.assert_allclose(np.sort(cl.depths), np.sort(pl.depths), atol=1e-12)
        hits += len(ref) > 0
    assert hits > 50


def test_reduce4_keeps_deepest_and_spread() -> None:
    rng = np.random.default_rng(0)
    m = 12
    cp = np.c_[rng.uniform(-1, 1, (m, 2)), np.zeros(m)]
    cn = np.tile([0.0, 0.0, 1.0], (m, 1))
    cd = rng.uniform(0, 0.01, m)
    cf = np.arange(m, dtype=np.int64)
    deepest = int(np.argmax(cd))
    pts = cp.copy()
    k = reduce4(cp, cn, cd, cf, m)
    assert k == 4
    assert cf[0] == deepest
    far = int(np.argmax(np.linalg.norm(pts - pts[deepest], axis=1)))
    assert cf[1] == far
    np.testing.assert_allclose(cp[:4], pts[cf[:4]])
