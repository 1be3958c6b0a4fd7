"""Scene compilation: polyhedron data, validation messages, geometry poses."""

from __future__ import annotations

import dataclasses

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
    GeomSpec,
    build_scene,
    geometry_poses,
    rpy_matrix,
    spec_from_geometry,
)
from mb_sim.model.geometry import Geometry
from mb_sim.model.polytope import Polytope, box_corners, box_polytope, polytope_from_points


def _faces(scene, g):
    out = []
    for f in range(scene.face_count[g]):
        k = scene.face_start[g] + f
        idx = scene.face_verts[scene.face_vert_start[k]:scene.face_vert_start[k]
                               + scene.face_vert_count[k]]
        out.append((scene.face_normal[k], scene.face_offset[k], idx))
    return out


def _check_polyhedron(scene, g) -> None:
    v = scene.verts[scene.vert_start[g]:scene.vert_start[g] + scene.vert_count[g]]
    faces = _faces(scene, g)
    for n, off, idx in faces:
        assert np.linalg.norm(n) == pytest.approx(1.0)
        np.testing.assert_allclose(v[idx] @ n, off, atol=1e-12)
        assert np.all(v @ n <= off + 1e-12)  # every vertex behind every face
        p = v[idx]
        for k in range(len(idx)):  # convex and counter-clockwise about the outward normal
            turn = np.cross(p[(k + 1) % len(p)] - p[k], p[(k + 2) % len(p)] - p[(k + 1) % len(p)])
            assert turn @ n > 0
    e = scene.edge_count[g]
    assert scene.vert_count[g] - e + scene.face_count[g] == 2  # Euler
    for k in range(e):
        a, b = scene.edge_verts[scene.edge_start[g] + k]
        for f in scene.edge_faces[scene.edge_start[g] + k]:
            assert a in faces[f][2] and b in faces[f][2]


def test_box_and_cube_hull_polyhedra() -> None:
    h = (0.3, 0.2, 0.1)
    extra = np.vstack([cube_verts(h), [[0.3, 0, 0], [0, 0, 0.1], [0.01, 0.02, 0.0]]])
    scene = build_scene([GeomSpec(0, BOX, h), GeomSpec(1, CONVEX, verts=extra)])
    for g in (0, 1):
        assert scene.vert_count[g] == 8 and scene.face_count[g] == 6 and scene.edge_count[g] == 12
        assert all(len(f[2]) == 4 for f in _faces(scene, g))
        _check_polyhedron(scene, g)
    offs = sorted(f[1] for f in _faces(scene, 0))
    np.testing.assert_allclose(offs, [0.1, 0.1, 0.2, 0.2, 0.3, 0.3])
    assert scene.max_face_verts == 4 and scene.max_verts == 8


def test_box_polytope_is_the_hull_of_its_corners() -> None:
    """The closed-form box (`box_polytope`) is what qhull makes of its corners, bit for bit:
    vertices, faces and their order, loops, edges, graphs and seeds, over boxes of half
    extents from 0.1 mm to 20 m and of every aspect."""
    rng = np.random.default_rng(5)
    for half in [(1.0, 1.0, 1.0), (0.3, 0.05, 0.7), *np.exp(rng.uniform(-9.2, 3.0, (300, 3)))]:
        closed = box_polytope(half)
        hull = polytope_from_points(box_corners(half), "box")
        for field in dataclasses.fields(Polytope):
            a, b = getattr(closed, field.name), getattr(hull, field.name)
            assert a.dtype == b.dtype and a.shape == b.shape, (field.name, half)
            assert np.array_equal(a, b) and np.array_equal(np.signbit(a), np.signbit(b)), (
                field.name, half)
            assert not a.flags.writeable


def test_random_hulls_are_closed_polyhedra() -> None:
    rng = np.random.default_rng(2)
    specs = [GeomSpec(i, CONVEX, verts=rng.normal(size=(int(rng.integers(4, 60)), 3)))
             for i in range(10)]
    # a prism: coplanar triangles of the caps merge into one 12-gon each
    ang = np.linspace(0, 2 * np.pi, 12, endpoint=False)
    ring = np.c_[np.cos(ang), np.sin(ang)]
    specs.append(GeomSpec(10, CONVEX, verts=np.vstack([np.c_[ring, -np.ones(12)],
                                                       np.c_[ring, np.ones(12)]])))
    scene = build_scene(specs)
    for g in range(11):
        _check_polyhedron(scene, g)
    assert scene.face_count[10] == 14 and scene.max_face_verts == 12


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        (GeomSpec(0, 9), ["geometry 1 (owner 0)", "kind", "9"]),
        (GeomSpec(0, SPHERE, (-0.1, 0, 0)), ["geometry 1", "sphere size", "-0.1"]),
        (GeomSpec(0, BOX, (0.1, 0.0, 0.1)), ["box size", "0.0"]),
        (GeomSpec(0, CAPSULE, (0.1, 0.0, 0)), ["capsule", "0.0"]),
        (GeomSpec(0, CYLINDER, (0.1, float("nan"), 0)), ["size", "nan"]),
        (GeomSpec(0, BOX, (0.1, 0.1, 0.1), local_rot=np.diag([1.0, 1.0, -1.0])),
         ["local_rot", "rotation"]),
        (GeomSpec(0, BOX, (0.1, 0.1, 0.1), local_pos=(0, 0)), ["local_pos"]),
        (GeomSpec(0, CONVEX), ["convex", "verts", "None"]),
        (GeomSpec(0, CONVEX, verts=np.eye(3)), ["(3, 3)"]),
        (GeomSpec(0, CONVEX, verts=np.c_[np.random.default_rng(0).normal(size=(9, 2)),
                                         np.zeros(9)]), ["no volume"]),
        (GeomSpec(-2, SPHERE, (0.1, 0, 0)), ["owner", "-2"]),
    ],
)
def test_bad_specs_raise_naming_field_and_value(spec: GeomSpec, words: list[str]) -> None:
    with pytest.raises(ValueError) as err:
        build_scene([GeomSpec(5, SPHERE, (0.1, 0, 0)), spec])
    for w in words:
        assert w in str(err.value)


def test_bad_filter_arguments() -> None:
    with pytest.raises(ValueError, match="excluded_owner_pairs"):
        build_scene([GeomSpec(0, SPHERE, (0.1, 0, 0))], excluded_owner_pairs=[(-1, 0)])
    with pytest.raises(ValueError, match="n_owners"):
        build_scene([GeomSpec(4, SPHERE, (0.1, 0, 0))], n_owners=2)


def test_geometry_poses_compose_owner_and_local() -> None:
    rng = np.random.default_rng(1)
    lr = Rotation.random(3, random_state=rng).as_matrix()
    lp = rng.normal(size=(3, 3))
    specs = [GeomSpec(1, BOX, (0.1, 0.1, 0.1), tuple(lp[0]), lr[0]),
             GeomSpec(0, SPHERE, (0.1, 0, 0), tuple(lp[1]), lr[1]),
             GeomSpec(WORLD, PLANE, (0, 0, 0), tuple(lp[2]), lr[2])]
    scene = build_scene(specs)
    op = rng.normal(size=(2, 3))
    orot = Rotation.random(2, random_state=rng).as_matrix()
    gp, gr = geometry_poses(scene, op, orot)
    np.testing.assert_allclose(gp[0], op[1] + orot[1] @ lp[0])
    np.testing.assert_allclose(gr[0], orot[1] @ lr[0])
    np.testing.assert_allclose(gp[1], op[0] + orot[0] @ lp[1])
    np.testing.assert_allclose(gp[2], lp[2])
    np.testing.assert_allclose(gr[2], lr[2])
    assert scene.static.tolist() == [False, False, True]
    with pytest.raises(ValueError, match="owner_pos"):
        geometry_poses(scene, op[:1], orot[:1])


def test_spec_from_geometry_units() -> None:
    box = spec_from_geometry(Geometry("box", (0.2, 0.4, 0.6), (1, 2, 3), (0.1, 0.2, 0.3)), 3)
    assert box.kind == BOX and box.size == (0.1, 0.2, 0.3) and box.owner == 3
    np.testing.assert_allclose(box.local_rot, Rotation.from_euler("xyz", (0.1, 0.2, 0.3))
                               .as_matrix())
    np.testing.assert_allclose(rpy_matrix((0.1, 0.2, 0.3)),
                               Rotation.from_euler("xyz", (0.1, 0.2, 0.3)).as_matrix())
    cap = spec_from_geometry(Geometry("capsule", (0.05, 0.3)), 0)
    assert cap.kind == CAPSULE and cap.size == (0.05, 0.15, 0.0)
    cyl = spec_from_geometry(Geometry("cylinder", (0.05, 0.3)), 0)
    assert cyl.kind == CYLINDER and cyl.size == (0.05, 0.15, 0.0)
    sph = spec_from_geometry(Geometry("sphere", (0.07,)), 0)
    assert sph.kind == SPHERE and sph.size == (0.07, 0.0, 0.0)
    mesh = spec_from_geometry(Geometry("mesh", (), mesh="m.stl", scale=(2, 2, 2)), 0,
                              verts=cube_verts((1, 1, 1)))
    assert mesh.kind == CONVEX and np.abs(mesh.verts).max() == 2.0
    with pytest.raises(ValueError, match="vertices"):
        spec_from_geometry(Geometry("mesh", (), mesh="m.stl"), 0)
