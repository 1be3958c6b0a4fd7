"""GJK + EPA (the general fallback) against closed forms on seeded random configurations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from collision_testutil import pair_contacts, spec
from scipy.spatial.transform import Rotation

from mb_sim.collision import BOX, CAPSULE, CYLINDER, SPHERE

ENV = 0.05


def _random_rot(rng: np.random.Generator) -> np.ndarray:
    return Rotation.random(random_state=rng).as_matrix()


def _box_sat_depth(ha, ra, pa, hb, rb, pb) -> float:
    """Exact penetration depth of two boxes: the smallest overlap over the 15 SAT axes."""
    axes = [ra[:, k] for k in range(3)] + [rb[:, k] for k in range(3)]
    for i, j in itertools.product(range(3), range(3)):
        c = np.cross(ra[:, i], rb[:, j])
        if np.linalg.norm(c) > 1e-9:
            axes.append(c / np.linalg.norm(c))
    best = np.inf
    d = np.asarray(pa) - np.asarray(pb)
    for ax in axes:
        ea = np.sum(np.abs(ra.T @ ax) * ha)
        eb = np.sum(np.abs(rb.T @ ax) * hb)
        best = min(best, ea + eb - abs(d @ ax))
    return best


def _compare(a, b, rng, n, place, normal_ok=lambda *_: True, atol_normal=1e-6):
    seen = 0
    for _ in range(n):
        ra, rb = _random_rot(rng), _random_rot(rng)
        pa = place(rng)
        ref = pair_contacts(a, pa, ra, b, (0, 0, 0), rb, env=ENV)
        gen = pair_contacts(a, pa, ra, b, (0, 0, 0), rb, env=ENV, generic=True)
        assert len(ref) == len(gen) <= 1
        if len(ref):
            seen += 1
            assert gen.depths[0] == pytest.approx(ref.depths[0], abs=1e-6)
            if normal_ok(pa, ra, rb):
                np.testing.assert_allclose(gen.normals[0], ref.normals[0], atol=atol_normal)
                np.testing.assert_allclose(gen.points[0], ref.points[0], atol=atol_normal)
    return seen


def test_sphere_box_matches_closed_form() -> None:
    rng = np.random.default_rng(11)
    h = np.array([0.2, 0.1, 0.15])

    def unambiguous(pa, ra, rb) -> bool:
        cl = rb.T @ pa
        if np.all(np.abs(cl) < h):
            gaps = np.sort(h - np.abs(cl))
            return gaps[1] - gaps[0] > 1e-6
        return True

    seen = _compare(spec(SPHERE, (0.08, 0, 0)), spec(BOX, tuple(h)), rng, 400,
                    lambda r: r.uniform(-0.3, 0.3, 3), unambiguous)
    assert seen > 200


def test_sphere_sphere_capsule_capsule_match_closed_forms() -> None:
    rng = np.random.default_rng(12)
    seen = _compare(spec(SPHERE, (0.1, 0, 0)), spec(SPHERE, (0.07, 0, 0)), rng, 200,
                    lambda r: r.uniform(-0.2, 0.2, 3))
    seen += _compare(spec(SPHERE, (0.1, 0, 0)), spec(CAPSULE, (0.05, 0.2, 0)), rng, 200,
                     lambda r: r.uniform(-0.3, 0.3, 3))
    # capsule cores (segments) that do not cross: the distance path of GJK
    seen += _compare(spec(CAPSULE, (0.06, 0.1, 0)), spec(CAPSULE, (0.05, 0.2, 0)), rng, 200,
                     lambda r: r.uniform(-0.2, 0.2, 3) + [0, 0, 0.25 * np.sign(r.uniform(-1, 1))])
    assert seen > 250


def test_sphere_cylinder_matches_closed_form() -> None:
    rng = np.random.default_rng(13)

    def unambiguous(pa, ra, rb) -> bool:
        cl = rb.T @ pa
        rho = np.hypot(cl[0], cl[1])
        if rho < 0.1 and abs(cl[2]) < 0.15:
            return abs((0.1 - rho) - (0.15 - abs(cl[2]))) > 1e-6
        return True

    seen = _compare(spec(SPHERE, (0.05, 0, 0)), spec(CYLINDER, (0.1, 0.15, 0)), rng, 300,
                    lambda r: r.uniform(-0.25, 0.25, 3), unambiguous, atol_normal=1e-5)
    assert seen > 120


def test_box_box_epa_matches_sat_depth() -> None:
    rng = np.random.default_rng(14)
    ha = np.array([0.2, 0.1, 0.15])
    hb = np.array([0.12, 0.18, 0.1])
    seen = 0
    for _ in range(300):
        ra, rb = _random_rot(rng), _random_rot(rng)
        pa = rng.uniform(-0.35, 0.35, 3)
        depth = _box_sat_depth(ha, ra, pa, hb, rb, np.zeros(3))
        if depth <= 0.0:
            continue
        seen += 1
        gen = pair_contacts(spec(BOX, ha), pa, ra, spec(BOX, hb), (0, 0, 0), rb, env=ENV,
                            generic=True)
        assert len(gen) == 1
        assert gen.depths[0] == pytest.approx(depth, abs=1e-6)
        sat = pair_contacts(spec(BOX, ha), pa, ra, spec(BOX, hb), (0, 0, 0), rb, env=ENV)
        assert len(sat) >= 1
        # faces are preferred over edge pairs unless an edge axis separates by 1 % more
        assert sat.depths.max() <= depth * 1.01 + 1e-6
        # the contact normal separates the boxes by the depth: translate a along it
        moved = pa + sat.normals[np.argmax(sat.depths)] * (sat.depths.max() + 1e-7)
        assert _box_sat_depth(ha, ra, moved, hb, rb, np.zeros(3)) <= 1e-6
        moved = pa + gen.normals[0] * (gen.depths[0] + 1e-7)
        assert _box_sat_depth(ha, ra, moved, hb, rb, np.zeros(3)) <= 1e-6
    assert seen > 100


def _cloud(rng: np.random.Generator, cloud: str) -> np.ndarray:
    p = rng.normal(size=(600, 3))
    p /= np.linalg.norm(p, axis=1)[:, None]
    if cloud == "cylinder":  # flat caps and a round side: many coplanar facets
        ang = rng.uniform(0.0, 2.0 * np.pi, 300)
        p = np.c_[np.cos(ang), np.sin(ang), rng.choice([-0.5, 0.5], 300)]
    elif cloud == "flattened":
        p *= (1.0, 0.3, 0.02)
    return p


@pytest.mark.parametrize("cloud", ["ball", "cylinder", "flattened"])
def test_climbing_face_search_finds_the_face_most_along_d(cloud: str) -> None:
    """The face of a large hull most along d, climbed over the hull of its face normals, is
    one whose normal lies as far along d as the farthest, for random directions, the axes and
    the face normals themselves (the manifold's facing face: `facing_feature`)."""
    from mb_sim.collision.features import _face_along
    from mb_sim.model.compile import geoms_of
    from mb_sim.model.polytope import SCAN_FACES
    from mb_sim.model.shapes import CONVEX, build_scene

    rng = np.random.default_rng(7)
    scene = build_scene([spec(CONVEX, verts=_cloud(rng, cloud))])
    faces = scene.face_count[0]
    assert faces > SCAN_FACES and scene.seed_faces[0, 0] >= 0
    g = geoms_of(scene)
    normals = scene.face_normal[:faces]
    d = np.vstack([rng.normal(size=(500, 3)), np.eye(3), -np.eye(3), normals])
    climb = getattr(_face_along, "py_func", _face_along)
    for di in d:
        di = di / np.linalg.norm(di)
        f, best = climb(g, 0, (di[0], di[1], di[2]))
        assert best == pytest.approx(normals[f] @ di, abs=1e-15)
        assert best >= np.max(normals @ di) - 1e-12


@pytest.mark.parametrize("cloud", ["ball", "cylinder", "flattened"])
def test_climbing_support_finds_the_farthest_vertex(cloud: str) -> None:
    """The hill-climbing support map of a large hull returns a vertex as far along d as the
    farthest one, for random directions, the axes and the face normals (ties: a whole face
    is farthest), climbing from the axis-extreme seeds or from any vertex."""
    from mb_sim.collision.gjk import SCAN_VERTS, hull_support
    from mb_sim.collision.poses import Shapes
    from mb_sim.model.shapes import CONVEX, build_scene

    rng = np.random.default_rng(5)
    scene = build_scene([spec(CONVEX, verts=_cloud(rng, cloud))])
    assert scene.vert_count[0] > SCAN_VERTS
    sh = Shapes(scene.kind, scene.size, scene.vert_start, scene.vert_count, scene.verts,
                scene.adjacent_start, scene.adjacent_count, scene.adjacent, scene.seed_verts,
                np.zeros((1, 3)), np.eye(3)[None])
    d = np.vstack([rng.normal(size=(500, 3)), np.eye(3), -np.eye(3),
                   scene.face_normal[:scene.face_count[0]]])
    verts = scene.verts[:scene.vert_count[0]]
    climb = getattr(hull_support, "py_func", hull_support)  # compiled: for compiled callers only
    hint = -1
    for di in d:  # from the seeds, and from the last vertex found
        for start in (-1, hint):
            v = climb(sh, 0, (di[0], di[1], di[2]), start)
            assert verts[v] @ di >= np.max(verts @ di) - 1e-12
        hint = v
