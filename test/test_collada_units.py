"""Collada units: a `.dae` file's vertices are in the unit its `<asset><unit meter>` declares,
and every reader of mesh files takes them in metres (before the URDF's or SDF's scale), as
gz-common's ColladaLoader and RViz do; `<up_axis>` is ignored, as both ignore it.

The meshes are written here: boxes in inches (meter 0.0254, as the walls of TurtleBot3's
worlds) and in centimetres (meter 0.01, as the meshes of AWS's small house world). Heights of
things at rest are checked to 0.1 mm against the height the unit gives; with the unit ignored
they would be 39 or 100 times off.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

import mb_sim
from mb_sim.model import cache, triangles
from mb_sim.model import mesh as meshmod
from mb_sim.model.geometry import Geometry
from mb_sim.model.mass import shape_properties

INCH = ("inch", 0.0254)
CENTIMETRE = ("centimeter", 0.01)
UNITS = [pytest.param(INCH, id="inch"), pytest.param(CENTIMETRE, id="centimetre")]
UP_AXES = ["Z_UP", "Y_UP"]
BOX = (4.0, 6.0, 2.0)
"""Full extents of the test box in the file's units, all different: read with an up axis
turned to z, a Y_UP file's box would stand on another face and rest at another height."""
TOL = 1e-4
"""m: how close to the height the unit gives things come to rest."""
EXACT = {"slop": 0.0}
"""Solver settings of the worlds here: no penetration is left to rest in (the default slop
lets contacts settle up to 1 mm deep, docs/physics.md), so heights are exact."""


def write_box_dae(path: Path, extents: tuple[float, float, float], unit: tuple[str, float] | None,
                  up_axis: str = "Z_UP", centre: tuple[float, float, float] = (0, 0, 0)) -> Path:
    """A Collada box of `extents` (file units) centred on `centre`, in `unit` (name, meters
    per unit; None: no <unit> element), 12 outward triangles, under a node with an identity
    matrix."""
    half = np.asarray(extents, dtype=float) / 2
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half
    corners += np.asarray(centre, dtype=float)
    faces = [0, 1, 3, 0, 3, 2, 4, 6, 7, 4, 7, 5, 0, 4, 5, 0, 5, 1, 2, 3, 7, 2, 7, 6, 0, 2, 6,
             0, 6, 4, 1, 5, 7, 1, 7, 3]
    unit_xml = "" if unit is None else f'<unit name="{unit[0]}" meter="{unit[1]}"/>'
    path.write_text(f"""<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><contributor><authoring_tool>test</authoring_tool></contributor>
    {unit_xml}<up_axis>{up_axis}</up_axis></asset>
  <library_geometries><geometry id="box"><mesh>
    <source id="box-pos"><float_array id="box-pos-array" count="24">
      {" ".join(f"{v:.9g}" for v in corners.reshape(-1))}</float_array>
      <technique_common><accessor source="#box-pos-array" count="8" stride="3">
        <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
      </accessor></technique_common></source>
    <vertices id="box-vtx"><input semantic="POSITION" source="#box-pos"/></vertices>
    <triangles count="12"><input semantic="VERTEX" source="#box-vtx" offset="0"/>
      <p>{" ".join(map(str, faces))}</p></triangles>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="scene"><node id="n" name="n">
    <matrix>1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1</matrix>
    <instance_geometry url="#box"/></node></visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#scene"/></scene>
</COLLADA>
""")
    return path


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Entries of this test only on disk; nothing remembered in memory across tests."""
    monkeypatch.setenv("MB_SIM_CACHE", str(tmp_path / "cache"))
    for cached in (meshmod._hull_cached, meshmod._collision_hull_cached,
                   meshmod._collada_unit_cached, triangles._mesh_cached):
        cached.cache_clear()


def _settle(sim: mb_sim.Simulation, seconds: float = 1.5) -> None:
    sim.step(n=round(seconds / sim.dt))


@pytest.mark.parametrize("up_axis", UP_AXES)
@pytest.mark.parametrize("unit", UNITS)
def test_the_unit_scales_every_reader(tmp_path: Path, unit: tuple[str, float],
                                      up_axis: str) -> None:
    """load_mesh, the hulls, mass properties, the triangle sets, the cameras' triangles and
    the viewer's meshes all see the box in metres, before the scale; the up axis changes
    nothing."""
    from mb_sim.sensing.visuals import shape_triangles
    from mb_sim.viewer.view import _mesh

    path = write_box_dae(tmp_path / f"box_{unit[0]}_{up_axis}.dae", BOX, unit, up_axis)
    metres = np.asarray(BOX) * unit[1]
    scale = (1.0, 2.0, 0.5)
    want = metres * scale
    assert meshmod.collada_unit(path) == unit[1]
    v, _ = meshmod.load_mesh(path, scale)
    np.testing.assert_allclose(np.ptp(v, axis=0), want, rtol=1e-9)
    for reader in (meshmod.convex_hull_vertices(path, scale),
                   meshmod.collision_hull_vertices(path, scale),
                   triangles.mesh_triangles(path, scale).corners.reshape(-1, 3),
                   shape_triangles(Geometry("mesh", mesh=str(path), scale=scale), "box")[0],
                   _mesh(str(path), scale)[0]):
        np.testing.assert_allclose(np.ptp(reader, axis=0), want, rtol=1e-6)
    props = shape_properties(Geometry("mesh", mesh=str(path), scale=scale), 1000.0)
    assert props.mass == pytest.approx(1000.0 * np.prod(want), rel=1e-9)


def test_no_unit_is_metres_and_other_formats_have_none(tmp_path: Path) -> None:
    path = write_box_dae(tmp_path / "plain.dae", BOX, None)
    assert meshmod.collada_unit(path) == 1.0
    np.testing.assert_allclose(np.ptp(meshmod.load_mesh(path)[0], axis=0), BOX)
    assert meshmod.collada_unit(Path(__file__).parent / "assets" / "cube.stl") == 1.0
    missing_meter = tmp_path / "named_only.dae"
    missing_meter.write_text(path.read_text().replace("<up_axis>",
                                                      '<unit name="meter"/><up_axis>'))
    assert meshmod.collada_unit(missing_meter) == 1.0


@pytest.mark.parametrize("meter", ["abc", "0", "-0.0254", "nan", "1e9"])
def test_a_bad_unit_names_the_file_and_the_value(tmp_path: Path, meter: str) -> None:
    path = write_box_dae(tmp_path / "bad.dae", BOX, ("inch", 0.0254))
    path.write_text(path.read_text().replace('meter="0.0254"', f'meter="{meter}"'))
    with pytest.raises(meshmod.MeshError) as err:
        meshmod.load_mesh(path)
    text = str(err.value)
    assert str(path) in text and f"meter={meter!r}" in text and "<unit" in text, text
    urdf = (f'<robot name="r"><link name="a"><inertial><mass value="1"/><inertia ixx="1" '
            f'iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial><collision><geometry>'
            f'<mesh filename="{path}"/></geometry></collision></link></robot>')
    with pytest.raises(mb_sim.ModelError) as err:
        mb_sim.Simulation(mb_sim.load_urdf(urdf, floating_base=True))
    assert "link 'a'" in str(err.value) and f"meter={meter!r}" in str(err.value)


@pytest.mark.parametrize("up_axis", UP_AXES)
@pytest.mark.parametrize("unit", UNITS)
def test_a_free_body_rests_at_the_height_of_its_unit(tmp_path: Path, unit: tuple[str, float],
                                                     up_axis: str) -> None:
    path = write_box_dae(tmp_path / "box.dae", BOX, unit, up_axis)
    half = BOX[2] / 2 * unit[1]
    world = mb_sim.load_world({"ground": True, "solver": EXACT, "bodies": [
        {"name": "box", "shape": "mesh", "mesh": str(path), "xyz": [0, 0, half + 0.01]}]})
    sim = mb_sim.Simulation(None, world=world, dt=0.001)
    _settle(sim)
    xyz, quat = sim.body_pose("box")
    assert xyz[2] == pytest.approx(half, abs=TOL)
    assert abs(quat[3]) == pytest.approx(1.0, abs=1e-6)  # did not tip over
    assert world.bodies[0].mass == pytest.approx(1000.0 * np.prod(BOX) * unit[1] ** 3, rel=1e-9)


@pytest.mark.parametrize("up_axis", UP_AXES)
@pytest.mark.parametrize("unit", UNITS)
def test_a_robot_link_rests_at_the_height_of_its_unit(tmp_path: Path, unit: tuple[str, float],
                                                      up_axis: str) -> None:
    """A floating robot whose link collides as the box, with a URDF scale on top."""
    path = write_box_dae(tmp_path / "link.dae", BOX, unit, up_axis)
    scale_z = 1.5
    half = BOX[2] / 2 * unit[1] * scale_z
    urdf = (f'<robot name="crate"><link name="body"><inertial><mass value="2"/>'
            f'<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>'
            f'<collision><geometry><mesh filename="file://{path}" scale="1 1 {scale_z}"/>'
            f'</geometry></collision></link></robot>')
    model = mb_sim.load_urdf(urdf, floating_base=True)
    world = mb_sim.load_world({"ground": True, "solver": EXACT,
                               "robot": {"xyz": [0, 0, half + 0.01], "floating": True}})
    sim = mb_sim.Simulation(model, world=world, dt=0.001)
    _settle(sim)
    xyz, quat = sim.link_pose("body")
    assert xyz[2] == pytest.approx(half, abs=TOL)
    assert abs(quat[3]) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("up_axis", UP_AXES)
@pytest.mark.parametrize("unit", UNITS)
def test_a_ball_rests_on_a_static_mesh_at_the_height_of_its_unit(
        tmp_path: Path, unit: tuple[str, float], up_axis: str) -> None:
    """A static slab (collides as its triangles) whose top is 50 file units up: 1.27 m in
    inches, 0.5 m in centimetres; a ball dropped on it rests at top + radius."""
    slab = (200.0, 200.0, 10.0)
    path = write_box_dae(tmp_path / "slab.dae", slab, unit, up_axis, centre=(0, 0, 45))
    top = 50.0 * unit[1]
    radius = 0.05
    world = mb_sim.load_world({"ground": True, "solver": EXACT, "bodies": [
        {"name": "slab", "shape": "mesh", "mesh": str(path), "static": True},
        {"name": "ball", "shape": "sphere", "size": [radius], "xyz": [0, 0, top + 0.02]}]})
    sim = mb_sim.Simulation(None, world=world, dt=0.001)
    _settle(sim)
    assert sim.body_pose("ball")[0][2] == pytest.approx(top + radius, abs=TOL)


def test_an_sdf_world_of_meshes_in_inches(tmp_path: Path) -> None:
    """As in TurtleBot3's worlds: a static model whose walls are a .dae in inches, and a
    moving model whose collision is one; both at their true size."""
    wall = write_box_dae(tmp_path / "wall.dae", (100.0, 4.0, 20.0), INCH, "Y_UP",
                         centre=(0, 0, 10))
    write_box_dae(tmp_path / "crate.dae", BOX, INCH)  # named relative to the world
    world_file = tmp_path / "inches.world"
    world_file.write_text(f"""<sdf version="1.6"><world name="w">
  <include><uri>model://ground_plane</uri></include>
  <model name="wall"><static>true</static><link name="l"><collision name="c"><geometry>
    <mesh><uri>file://{wall}</uri></mesh></geometry></collision></link></model>
  <model name="crate"><pose>0 1 0.2 0 0 0</pose><link name="l"><collision name="c"><geometry>
    <mesh><uri>crate.dae</uri><scale>2 2 2</scale></mesh></geometry></collision></link></model>
</world></sdf>""")
    world = mb_sim.load_world(str(world_file))
    sim = mb_sim.Simulation(None, world=world, dt=0.001)
    _settle(sim)
    assert sim.body_pose("crate")[0][2] == pytest.approx(BOX[2] * INCH[1], abs=TOL)
    wall_body = next(b for b in world.bodies if b.name == "wall")
    corners = triangles.mesh_triangles(wall_body.geometry.mesh, wall_body.geometry.scale)
    np.testing.assert_allclose(np.ptp(corners.corners.reshape(-1, 3), axis=0),
                               np.array([100.0, 4.0, 20.0]) * INCH[1], rtol=1e-9)


def _old_entries(path: Path, scale: tuple[float, float, float]) -> None:
    """Entries on disk as the reader before units wrote them (the same keys, the vertices as
    written in the file): a hull and a triangle set 39 times too large."""
    stamp = cache.file_stamp(str(path.resolve()))
    verts, tris = meshmod.load_mesh(path, scale)
    wrong = verts / meshmod.collada_unit(path)
    cache.cached(cache.key("hull", stamp, scale, meshmod.HULL_TOLERANCE, None,
                           meshmod.HULL_VERSION), lambda: {"verts": wrong})
    cache.cached(cache.key("mesh", stamp, scale, triangles.COOK_VERSION),
                 lambda: triangles.cook(wrong, tris, str(path)).arrays())
    meshmod._collada_unit_cached.cache_clear()


def test_entries_cached_before_units_are_not_served(tmp_path: Path) -> None:
    path = write_box_dae(tmp_path / "old.dae", BOX, INCH)
    scale = (1.0, 1.0, 1.0)
    _old_entries(path, scale)
    folder = Path(cache.cache_dir())
    assert len(list(folder.glob("*.npz"))) == 2
    want = np.asarray(BOX) * INCH[1]
    hull = meshmod.collision_hull_vertices(path, scale)
    np.testing.assert_allclose(np.ptp(hull, axis=0), want, rtol=1e-9)
    tri = triangles.mesh_triangles(path, scale).corners.reshape(-1, 3)
    np.testing.assert_allclose(np.ptp(tri, axis=0), want, rtol=1e-9)
    assert len(list(folder.glob("*.npz"))) == 4  # made again under new keys, the old ones left


def test_unit_is_read_once_per_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = write_box_dae(tmp_path / "cm.dae", BOX, CENTIMETRE)
    with caplog.at_level(logging.DEBUG, logger="mb_sim"):
        for _ in range(3):
            meshmod.load_mesh(path)
    said = [r.getMessage() for r in caplog.records if "Collada unit" in r.getMessage()]
    assert len(said) == 1 and "0.01" in said[0] and "centimeter" in said[0]


def test_a_spawned_entity_is_at_its_true_size(tmp_path: Path) -> None:
    """spawn_entity's resource, a one-link URDF whose collision is the box in inches and
    without an <inertial>: its shape and its mass (1000 kg/m^3) are those of the box in
    metres."""
    from mb_sim.model.spawn import spawn_body

    path = write_box_dae(tmp_path / "spawned.dae", BOX, INCH)
    urdf = (f'<robot name="crate"><link name="body"><collision><geometry><mesh '
            f'filename="file://{path}"/></geometry></collision></link></robot>')
    spawned = spawn_body(resource_string=urdf, name="crate")
    metres = np.asarray(BOX) * INCH[1]
    assert spawned.body.mass == pytest.approx(1000.0 * np.prod(metres), rel=1e-9)
    hull = meshmod.convex_hull_vertices(spawned.body.geometry.mesh,
                                        spawned.body.geometry.scale)
    np.testing.assert_allclose(np.ptp(hull, axis=0), metres, rtol=1e-9)
