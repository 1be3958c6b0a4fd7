"""Convex shapes against triangle meshes (mb_sim.collision.mesh_contact,
mb_sim.model.triangles): on a flat mesh of many triangles every shape touches as it touches
the plane of the mesh (same deepest depth, only the face normal, whatever edges it lies
across); active edges and ridges give their own normals; sides; the heightfield grid's
orientation; the edge flags."""

from __future__ import annotations

import math

import numpy as np
import pytest
from collision_testutil import SHAPES
from scipy.spatial.transform import Rotation

from mb_sim.collision import MESH, PLANE, SPHERE, WORLD, GeomSpec, build_scene, narrow_phase
from mb_sim.model.triangles import (
    EDGE_BACK,
    EDGE_FRONT,
    ONE_SIDED,
    TWO_SIDED,
    VERTEX,
    cook,
    grid,
)

ENV = 0.01


def flat_mesh(cells: int = 20, size: float = 2.0, one_sided: bool = True):
    v, t = grid(np.zeros((cells + 1, cells + 1)), (size, size, 0.0))
    return cook(v, t, "flat", one_sided=one_sided)


def contacts(shape: GeomSpec, pos, rot, other: GeomSpec, other_pose=None):
    other_pose = other_pose or (np.zeros(3), np.eye(3))
    scene = build_scene([GeomSpec(0, shape.kind, shape.size, verts=shape.verts),
                         GeomSpec(WORLD, other.kind, triangles=other.triangles)])
    gp = np.array([pos, other_pose[0]], dtype=float)
    gr = np.array([rot, other_pose[1]], dtype=float)
    return narrow_phase(scene, gp, gr, np.array([[0, 1]]), ENV)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_flat_mesh_touches_as_its_plane(name: str) -> None:
    """Random poses (any rotation, any place over the mesh's inside, depths from -5 to +5
    mm) on a tilted flat mesh of 800 triangles: the deepest depth equals the plane's to 1e-9
    m, and every normal is the plane's normal (no edge normal, however the shape lies across
    the triangles' edges)."""
    shape, _, _, _ = SHAPES[name]
    mesh = GeomSpec(WORLD, MESH, triangles=flat_mesh())
    plane = GeomSpec(WORLD, PLANE)
    rng = np.random.default_rng(sum(map(ord, name)))
    tilt = Rotation.from_euler("xy", [0.3, -0.2]).as_matrix()
    n = tilt[:, 2]
    checked = 0
    for _ in range(60):
        rot = Rotation.random(random_state=rng).as_matrix()
        xy = rng.uniform(-0.6, 0.6, 2)
        probe = contacts(shape, tilt @ [*xy, 0.0], rot, plane, (np.zeros(3), tilt))
        lowest = probe.depths.max()  # how far the shape reaches below its centre
        pos = tilt @ [*xy, lowest + rng.uniform(-0.005, 0.005)]
        on_plane = contacts(shape, pos, rot, plane, (np.zeros(3), tilt))
        on_mesh = contacts(shape, pos, rot, mesh, (np.zeros(3), tilt))
        assert len(on_mesh.depths) == len(on_plane.depths) > 0 or (
            len(on_plane.depths) > 0 and 0 < len(on_mesh.depths) <= 4)
        assert on_mesh.depths.max() == pytest.approx(on_plane.depths.max(), abs=1e-9)
        np.testing.assert_allclose(on_mesh.normals, np.tile(n, (len(on_mesh.depths), 1)),
                                   atol=1e-9)
        checked += 1
    assert checked == 60


def test_box_across_many_triangles_keeps_its_corners() -> None:
    """A box face resting on 16 triangles: the four points are its corners."""
    box = SHAPES["box"][0]
    c = contacts(box, [0.05, 0.0, 0.099], np.eye(3), GeomSpec(WORLD, MESH,
                                                               triangles=flat_mesh()))
    corners = {(round(x, 9), round(y, 9)) for x, y in c.points[:, :2]}
    assert corners == {(round(0.05 + sx * 0.2, 9), sy * 0.15) for sx in (-1, 1) for sy in (-1, 1)}
    np.testing.assert_allclose(c.depths, 0.001, atol=1e-12)


def test_sphere_by_a_boundary_edge_takes_the_edge_direction() -> None:
    """A single triangle: every edge is a boundary, active; a sphere beside an edge is pushed
    away from the edge, along (centre - closest edge point)."""
    tri = cook(np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]]), np.array([[0, 1, 2]]), "tri")
    assert tri.flags[0] & 7 == 7 and tri.flags[0] & (7 * VERTEX) == 7 * VERTEX
    sphere = GeomSpec(0, SPHERE, (0.1, 0, 0))
    centre = np.array([0.5, -0.06, 0.06])
    c = contacts(sphere, centre, np.eye(3), GeomSpec(WORLD, MESH, triangles=tri))
    d = centre - [0.5, 0.0, 0.0]
    assert len(c.depths) == 1
    np.testing.assert_allclose(c.normals[0], d / np.linalg.norm(d), atol=1e-12)
    assert c.depths[0] == pytest.approx(0.1 - np.linalg.norm(d), abs=1e-12)


def test_ridge_is_active_from_the_front_and_a_valley_is_not() -> None:
    """A roof of two triangles meeting at 90 degrees: the ridge edge is active from the
    front, a sphere on the ridge gets the bisector as its normal; flipped (a valley seen
    from the front) the same edge is inactive and each face pushes along its own normal."""
    verts = np.array([[0.0, -1, 0], [0, 1, 0], [-1, -1, -1], [-1, 1, -1], [1, -1, -1],
                      [1, 1, -1]])
    roof = np.array([[0, 1, 2], [1, 3, 2], [0, 4, 1], [1, 4, 5]])
    ts = cook(verts, roof, "roof", one_sided=True)
    for corners, flags in zip(ts.corners, ts.flags):
        for k in range(3):
            ridge = {tuple(corners[k]), tuple(corners[(k + 1) % 3])} == {(0, -1, 0), (0, 1, 0)}
            a, b = corners[k], corners[(k + 1) % 3]
            boundary = any(a[i] == b[i] and abs(a[i]) == 1 for i in (0, 1))
            front, back = bool(flags & (EDGE_FRONT << k)), bool(flags & (EDGE_BACK << k))
            assert (front, back) == ((True, False) if ridge else (True, True) if boundary
                                     else (False, False))
    sphere = GeomSpec(0, SPHERE, (0.1, 0, 0))
    c = contacts(sphere, [0, 0.2, 0.099], np.eye(3), GeomSpec(WORLD, MESH, triangles=ts))
    assert len(c.depths) == 1
    np.testing.assert_allclose(c.normals[0], [0, 0, 1], atol=1e-12)
    assert c.depths[0] == pytest.approx(0.001, abs=1e-12)
    valley = cook(verts * [1, 1, -1], roof, "valley", one_sided=True)  # still facing up
    c = contacts(sphere, [0, 0.2, 0.1 * math.sqrt(2) - 0.001], np.eye(3),
                 GeomSpec(WORLD, MESH, triangles=valley))
    assert len(c.depths) == 2
    s = math.sqrt(0.5)
    np.testing.assert_allclose(sorted(c.normals[:, 0]), [-s, s], atol=1e-12)
    np.testing.assert_allclose(c.depths, 0.001 * s, atol=1e-12)


def test_sides() -> None:
    """A two-sided mesh pushes a shape out on the side its centre is on; a one-sided one
    always to its front."""
    sphere = GeomSpec(0, SPHERE, (0.1, 0, 0))
    for sides, expected in ((TWO_SIDED, -1.0), (ONE_SIDED, 1.0)):
        ts = flat_mesh(one_sided=sides == ONE_SIDED)
        assert ts.sides == sides
        c = contacts(sphere, [0.1, 0.1, -0.099], np.eye(3), GeomSpec(WORLD, MESH, triangles=ts))
        assert c.normals[0, 2] == expected


def test_closed_meshes_are_one_sided_and_open_ones_two_sided() -> None:
    box = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float)
    faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    closed = cook(box, faces, "cube")
    assert closed.sides == ONE_SIDED
    assert np.allclose(closed.normals @ [1, 0, 0] + closed.normals @ [0, 1, 0]
                       + closed.normals @ [0, 0, 1], closed.normals.sum(axis=1))
    centre = closed.corners.mean(axis=1) - 0.5
    assert np.all(np.einsum("ij,ij->i", centre, closed.normals) > 0)  # outward
    inward = cook(box, faces[:, ::-1], "cube inside out")
    assert inward.sides == ONE_SIDED and np.allclose(inward.normals, closed.normals)
    assert cook(box, faces[:-1], "open cube").sides == TWO_SIDED


def test_flat_grid_has_only_its_border_active() -> None:
    ts = flat_mesh(cells=4)
    border = np.any(np.isclose(np.abs(ts.corners[:, :, :2]), 1.0), axis=(1, 2))
    assert np.all(ts.flags[~border] == 0)
    assert np.all(ts.flags[border] != 0)


def test_heightfield_grid_is_seen_from_above() -> None:
    """Row 0 is the +y edge, column 0 the -x edge, height = value x max height."""
    h = np.zeros((3, 4))
    h[0, 0] = 1.0
    h[2, 3] = 0.5
    v, t = grid(h, (3.0, 2.0, 0.4))
    top = {tuple(np.round(p, 12)) for p in v if p[2] > 0}
    assert top == {(-1.5, 1.0, 0.4), (1.5, -1.0, 0.2)}
    p = v[t]
    up = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])[:, 2]
    assert len(t) == 2 * 2 * 3 and np.all(up > 0)
