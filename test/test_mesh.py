"""Mesh files: STL (ASCII, binary), OBJ, URI resolution, convex hulls and their cache."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np
import pytest

from mb_sim.model import mesh as meshmod
from mb_sim.model.mass import mesh_properties
from mb_sim.model.mesh import (
    MeshError,
    convex_hull,
    convex_hull_mesh,
    convex_hull_vertices,
    load_mesh,
    resolve_uri,
)

ASSETS = Path(__file__).parent / "assets"
CUBE = ASSETS / "cube.stl"
PYRAMID = ASSETS / "pyramid.obj"
READERS = [pytest.param(False, id="builtin"),
           pytest.param(True, id="trimesh", marks=pytest.mark.skipif(
               not meshmod.trimesh_available(), reason="trimesh is not installed"))]
CORNERS = {(x, y, z) for x in (0.0, 1.0) for y in (0.0, 1.0) for z in (0.0, 1.0)}


def _triangles(verts: np.ndarray, tris: np.ndarray) -> np.ndarray:
    return verts[tris]


def _write_binary_stl(path: Path, corners: np.ndarray, header: bytes = b"binary") -> None:
    out = bytearray(header.ljust(80, b" "))
    out += struct.pack("<I", len(corners))
    for tri in corners:
        n = np.cross(tri[1] - tri[0], tri[2] - tri[0])
        out += struct.pack("<12fH", *n, *tri.reshape(-1), 0)
    path.write_bytes(bytes(out))


@pytest.mark.parametrize("use_trimesh", READERS)
def test_ascii_stl_cube(use_trimesh: bool) -> None:
    v, t = load_mesh(CUBE, use_trimesh=use_trimesh)
    assert t.shape == (12, 3)
    assert {tuple(p) for p in v.tolist()} == CORNERS
    p = mesh_properties(v, t, 1.0)
    assert p.volume == pytest.approx(1.0)
    np.testing.assert_allclose(p.com, 0.5)


@pytest.mark.parametrize("use_trimesh", READERS)
@pytest.mark.parametrize("header", [b"binary cube", b"solid but binary"])
def test_binary_stl_matches_ascii(tmp_path: Path, use_trimesh: bool, header: bytes) -> None:
    v, t = load_mesh(CUBE, use_trimesh=False)
    soup = _triangles(v, t)
    path = tmp_path / "cube_bin.stl"
    _write_binary_stl(path, soup, header)
    vb, tb = load_mesh(path, scale=(2.0, 3.0, 0.5), use_trimesh=use_trimesh)
    assert tb.shape == (12, 3)
    got = sorted(map(tuple, np.round(_triangles(vb, tb).reshape(-1, 9), 9).tolist()))
    want = sorted(map(tuple, np.round((soup * [2.0, 3.0, 0.5]).reshape(-1, 9), 9).tolist()))
    assert got == want


@pytest.mark.parametrize("use_trimesh", READERS)
def test_obj_with_quad_and_negative_indices(use_trimesh: bool) -> None:
    v, t = load_mesh(PYRAMID, use_trimesh=use_trimesh)
    assert len(t) == 6  # one quad split in two plus four side triangles
    p = mesh_properties(v, t, 1.0)
    assert p.volume == pytest.approx(4.0)  # base 2 x 2, height 3: 4 / 3 * 3
    np.testing.assert_allclose(p.com, [0.0, 0.0, 0.75], atol=1e-12)
    # square pyramid: I_xx = m (a^2 / 20 + 3 h^2 / 80), I_zz = m a^2 / 10 about the centroid
    np.testing.assert_allclose(np.diag(p.inertia), [4 * (0.2 + 27 / 80)] * 2 + [4 * 0.4])


def test_hull_is_outward_and_minimal() -> None:
    v, t = convex_hull_mesh(CUBE)
    assert len(v) == 8 and len(t) == 12
    center = v.mean(axis=0)
    a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
    normals = np.cross(b - a, c - a)
    assert np.all(np.einsum("ij,ij->i", normals, (a + b + c) / 3 - center) > 0)
    interior = np.vstack([v, np.random.default_rng(0).uniform(0.1, 0.9, (50, 3))])
    v2, t2 = convex_hull(interior)
    assert len(v2) == 8 and len(t2) == 12


def test_hull_vertices_are_cached_and_follow_file_changes(tmp_path: Path) -> None:
    path = tmp_path / "part.stl"
    path.write_bytes(CUBE.read_bytes())
    first = convex_hull_vertices(path, (1.0, 1.0, 1.0))
    assert convex_hull_vertices(str(path), 1.0) is first
    assert not first.flags.writeable
    scaled = convex_hull_vertices(path, 2.0)
    assert scaled is not first
    np.testing.assert_allclose(np.sort(scaled, axis=0), 2.0 * np.sort(first, axis=0))
    v, t = load_mesh(CUBE, use_trimesh=False)
    _write_binary_stl(path, _triangles(v * 3.0, t))
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    changed = convex_hull_vertices(path)
    assert changed.max() == pytest.approx(3.0)


@pytest.mark.parametrize(("name", "content", "use_trimesh"), [
    ("junk.stl", b"\x00\xff\x10 not a mesh", False),
    ("bad_vertex.stl", (b"solid x\n facet normal 0 0 1\n outer loop\n vertex 0 0 a\n"
                        b" vertex 1 0 0\n vertex 0 1 0\n endloop\n endfacet\nendsolid x\n"),
     False),
    ("empty.stl", b"solid x\nendsolid x\n", False),
    ("bad_index.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n", False),
    ("faceless.obj", b"v 0 0 0\nv 1 0 0\n", False),
    ("model.ply", b"ply\n", False),
])
def test_unreadable_mesh_names_the_file(tmp_path: Path, name: str, content: bytes,
                                        use_trimesh: bool) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(MeshError) as err:
        load_mesh(path, use_trimesh=use_trimesh)
    assert name in str(err.value)


def test_missing_and_flat_meshes(tmp_path: Path) -> None:
    with pytest.raises(MeshError, match="nothere.stl"):
        load_mesh(tmp_path / "nothere.stl")
    flat = tmp_path / "flat.obj"
    flat.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\n")
    with pytest.raises(MeshError, match="flat.obj"):
        convex_hull_vertices(flat)
    with pytest.raises(MeshError, match="scale"):
        load_mesh(CUBE, scale=(1.0, -1.0, 1.0))


def test_resolve_uri_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "src" / "my_pkg" / "meshes"
    pkg.mkdir(parents=True)
    target = pkg / "cube.stl"
    target.write_bytes(CUBE.read_bytes())
    assert resolve_uri("meshes/cube.stl", tmp_path / "src" / "my_pkg") == str(target)
    assert resolve_uri(str(target)) == str(target)
    assert resolve_uri(f"file://{target}") == str(target)
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path / "src"))
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path / "empty_prefix"))
    assert resolve_uri("package://my_pkg/meshes/cube.stl") == str(target)
    with pytest.raises(MeshError, match="package://no_such_pkg/x.stl"):
        resolve_uri("package://no_such_pkg/x.stl")
    with pytest.raises(MeshError, match="missing.stl"):
        resolve_uri("missing.stl", tmp_path)


COLLADA = ASSETS / "cube_moved.dae"


def test_collada_parts_move_with_their_nodes() -> None:
    v, t = load_mesh(COLLADA)
    assert t.shape == (12, 3)
    np.testing.assert_allclose(v.min(axis=0), [0.5, -1.0, 0.0])
    np.testing.assert_allclose(v.max(axis=0), [2.5, 0.0, 1.0])
    assert mesh_properties(v, t, 1.0).volume == pytest.approx(2.0)


def test_obj_materials_and_textures_are_not_read(tmp_path: Path) -> None:
    """Only the geometry: a missing material library, materials and texture coordinates
    (which trimesh would turn into textures that need an image library) never stop a
    collision mesh."""
    path = tmp_path / "painted.obj"
    path.write_text("mtllib missing.mtl\nv -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\nv 0 0 3\n"
                    "vt 0 0\nvt 1 0\nvt 0 1\nusemtl red\nf 1/1 4/2 3/3 2/1\nf 1/1 2/2 5/3\n"
                    "usemtl blue\nf 2/1 3/2 5/3\nf 3/1 4/2 5/3\nf 4/1 1/2 5/3\n")
    v, t = load_mesh(path)
    assert mesh_properties(v, t, 1.0).volume == pytest.approx(4.0)


def test_collada_without_its_reader_names_the_file_and_the_link(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import mb_sim

    monkeypatch.setenv("MB_SIM_CACHE", str(tmp_path))  # no hull of an earlier run on disk
    meshmod._collision_hull_cached.cache_clear()

    urdf = (f'<robot name="r"><link name="base"/><joint name="j" type="continuous">'
            f'<parent link="base"/><child link="shell"/><axis xyz="0 0 1"/></joint>'
            f'<link name="shell"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" '
            f'ixy="0" ixz="0" iyz="0"/></inertial><collision><geometry>'
            f'<mesh filename="file://{COLLADA}"/></geometry></collision></link></robot>')
    model = mb_sim.load_urdf(urdf)
    monkeypatch.setattr(meshmod, "_collada_available", lambda: False)
    meshmod._hull_cached.cache_clear()
    with pytest.raises(mb_sim.ModelError) as err:
        mb_sim.Simulation(model)
    assert "'shell'" in str(err.value) and str(COLLADA) in str(err.value)
    assert "pycollada" in str(err.value)
    monkeypatch.undo()
    meshmod._hull_cached.cache_clear()
    assert mb_sim.Simulation(model).scene.geom_names == ("shell",)


def _distance_to_hull(p: np.ndarray, verts: np.ndarray) -> float:
    """Distance from p to the convex hull of verts, independently of mb_sim: the nearest
    convex combination V^T l (l >= 0, sum l = 1) by non-negative least squares, the sum
    held by a heavily weighted row."""
    from scipy.optimize import nnls

    weight = 1e4
    A = np.vstack([verts.T, weight * np.ones(len(verts))])
    lam, _ = nnls(A, np.concatenate([p, [weight]]), maxiter=50 * len(verts))
    return float(np.linalg.norm(verts.T @ lam - p))


def test_simplified_hulls_of_real_robots_stay_within_their_tolerance() -> None:
    """Hulls of example-robot-data meshes simplified to 0.5 mm: every exact hull vertex left
    out is within 0.5 mm of the simplified hull (measured by an independent solver), the
    simplified hull's vertices are the exact hull's, and dense hulls lose most vertices."""
    from robot_data import robots_dir

    files = sorted(p for p in robots_dir().rglob("*") if p.suffix.lower() in (".stl", ".obj"))
    assert len(files) > 100
    before = after = 0
    for path in files[::40]:
        try:
            exact = convex_hull_vertices(path)
        except MeshError:
            continue
        simple = meshmod.simplify_hull(exact, 0.0005)
        rows = {tuple(v) for v in exact}
        assert all(tuple(v) in rows for v in simple), path
        dropped = np.array([v for v in exact if tuple(v) not in {tuple(s) for s in simple}])
        for p in dropped[:: max(1, len(dropped) // 20)]:
            assert _distance_to_hull(p, simple) <= 0.0005 + 1e-6, path
        before, after = before + len(exact), after + len(simple)
    assert after < 0.6 * before, (before, after)


def test_a_hull_vertex_cap_and_no_tolerance() -> None:
    rng = np.random.default_rng(3)
    ball = rng.normal(size=(3000, 3))
    ball /= np.linalg.norm(ball, axis=1)[:, None]  # 3,000 points on a unit sphere
    exact = convex_hull(ball)[0]
    assert len(meshmod.simplify_hull(exact, 0.0)) == len(exact)
    capped = meshmod.simplify_hull(exact, 0.0, max_vertices=40)
    assert len(capped) == 40
    # the farthest-point order spreads them: every point of the sphere within 0.25 of them
    assert max(_distance_to_hull(p, capped) for p in exact[::50]) < 0.25
    coarse, fine = (meshmod.simplify_hull(exact, tol) for tol in (0.01, 0.001))
    assert len(coarse) < len(fine) < len(exact)
    assert max(_distance_to_hull(p, coarse) for p in exact[::30]) <= 0.01 + 1e-6


def test_a_robot_entry_sets_how_its_hulls_are_simplified(tmp_path: Path) -> None:
    import mb_sim

    urdf = tmp_path / "ball.urdf"
    sphere = tmp_path / "sphere.obj"
    rng = np.random.default_rng(1)
    pts = rng.normal(size=(2000, 3))
    pts = 0.1 * pts / np.linalg.norm(pts, axis=1)[:, None]
    faces = convex_hull(pts)[1]
    sphere.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in pts)
                      + "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in faces))
    urdf.write_text(
        '<robot name="r"><link name="base"/><link name="l"><inertial><mass value="1"/>'
        '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>'
        f'<collision><geometry><mesh filename="{sphere}"/></geometry></collision></link>'
        '<joint name="j" type="revolute"><parent link="base"/><child link="l"/>'
        '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        '</robot>')
    counts = {}
    for entry in ({}, {"hull_tolerance": 0.0}, {"max_hull_vertices": 16}):
        world = mb_sim.load_world({"ground": None, "robot": {"urdf": str(urdf), **entry}})
        sim = mb_sim.Simulation(world=world)
        counts[str(entry)] = int(sim.scene.arrays.geoms.vert_count[0])
    assert counts["{'max_hull_vertices': 16}"] == 16
    assert counts["{}"] < counts["{'hull_tolerance': 0.0}"] == len(convex_hull(pts)[0])


def test_a_negative_scale_mirrors_the_colliding_hull() -> None:
    """URDFs of symmetric limbs mirror a mesh with a negative scale: its colliding hull is
    the mirror image of the hull at the positive scale."""
    plain = meshmod.collision_hull_vertices(PYRAMID, (0.5, 0.5, 0.5))
    mirrored = meshmod.collision_hull_vertices(PYRAMID, (0.5, -0.5, 0.5))
    np.testing.assert_array_equal(mirrored, plain * [1.0, -1.0, 1.0])
    with pytest.raises(MeshError, match="finite and > 0"):
        meshmod.collision_hull_vertices(PYRAMID, (0.5, 0.0, 0.5))
