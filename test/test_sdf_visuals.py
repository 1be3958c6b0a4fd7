"""What cameras see of an SDF world (mb_sim.model.world.sdf.appearance): each link's visuals,
not its collisions, in their material colours, lit by the world's directional light and its
scene's ambient light, on its background; static links', bodies' and robots' visuals alike."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import pytest

import mb_sim
from mb_sim.model.sensors import SensorSpec
from mb_sim.model.spawn import spawn_body

LIGHT = """<scene><ambient>0.3 0.3 0.3 1</ambient><background>0.1 0.2 0.6 1</background></scene>
<light type="directional" name="sun"><pose>0 0 10 0 0 0</pose><diffuse>0.5 0.5 0.5 1</diffuse>
  <direction>1 0 0</direction></light>"""
"""Lit from -x (towards the light: -x), ambient 0.3, a blue background."""


def _sdf(body: str) -> str:
    return f'<?xml version="1.0"?>\n<sdf version="1.9"><world name="w">{body}</world></sdf>'


def _rgb(colour: tuple[float, float, float], lit: float, ambient: float = 0.3,
         diffuse: float = 0.5) -> np.ndarray:
    """The rasteriser's shade of a face: round(255 (c ambient + c diffuse lit))."""
    return np.array([int(min(255.0, 255.0 * (c * ambient + c * diffuse * lit)) + 0.5)
                     for c in colour])


def _eye(sim: mb_sim.Simulation, width: int = 41, height: int = 41, hfov: float = 0.6,
         xyz: tuple[float, float, float] = (0.0, 0.0, 1.0)) -> tuple[np.ndarray, np.ndarray]:
    """(colour, depth) of a camera at `xyz` looking along +x."""
    for kind in ("camera", "depth_camera"):
        sim.add_sensor(SensorSpec(kind, kind, xyz=xyz, width=width, height=height, hfov=hfov,
                                  far=50.0))
    return sim.read_sensor("camera").astype(int), sim.read_sensor("depth_camera")


def test_a_static_link_is_seen_as_its_visual_in_its_material_colour() -> None:
    """A static model whose collision is a box at x = 3 and whose visual a red box at x = 2
    (its face towards the camera at 1.75 m): the camera sees the visual's face there,
    in red x (ambient + diffuse x 1) (the face looks at the light); the lidar meets the
    collision at 2.5 m; the ground without a visual is not drawn (the background shows)."""
    world = mb_sim.load_world(_sdf(LIGHT + """
      <model name="ground"><static>true</static><link name="l"><collision name="c">
        <geometry><plane><normal>0 0 1</normal></plane></geometry></collision></link></model>
      <model name="crate"><static>true</static><link name="l">
        <collision name="c"><pose>3 0 1 0 0 0</pose><geometry><box><size>1 1 1</size></box>
        </geometry></collision>
        <visual name="v"><pose>2 0 1 0 0 0</pose><geometry><box><size>0.5 0.5 0.5</size>
        </box></geometry><material><diffuse>0.9 0.1 0.1 1</diffuse></material></visual>
      </link></model>"""))
    assert world.ground is not None and not world.ground.visible
    assert [b.visuals for b in world.bodies] == [()] and len(world.visuals) == 1
    sim = mb_sim.Simulation(world=world)
    colour, depth = _eye(sim)
    assert depth[20, 20] == pytest.approx(1.75, abs=1e-6)
    np.testing.assert_array_equal(colour[20, 20], _rgb((0.9, 0.1, 0.1), 1.0))
    np.testing.assert_array_equal(colour[0, 0], [round(255 * c) for c in (0.1, 0.2, 0.6)])
    assert np.isposinf(depth[-1, 20])  # the collision plane below: not drawn
    sim.add_sensor(SensorSpec("ring", "lidar", xyz=(0.0, 0.0, 1.0), samples=3,
                              min_angle=-0.01, max_angle=0.01, max_range=10.0))
    assert sim.read_sensor("ring")[1] == pytest.approx(2.5, abs=1e-9)


def test_a_moving_body_carries_its_visuals_and_a_ground_plane_visual_colours_the_ground(
        ) -> None:
    """A falling model of one link (a box collision, a sphere visual 0.3 m above it in blue):
    its body's visuals are posed in the body frame and move with it; the ground plane's
    visual gives the ground its colour, lit from the side (n . l = 0: ambient only)."""
    world = mb_sim.load_world(_sdf(LIGHT + """
      <include><uri>model://ground_plane</uri></include>
      <model name="ball"><pose>2 0 0.5 0 0 0</pose><link name="l">
        <collision name="c"><geometry><box><size>0.2 0.2 0.2</size></box></geometry>
        </collision>
        <visual name="v"><pose>0 0 0.3 0 0 0</pose><geometry><sphere><radius>0.1</radius>
        </sphere></geometry><material><diffuse>0.1 0.2 0.9 1</diffuse></material></visual>
      </link></model>"""))
    body = world.body("ball")
    assert body.visuals is not None and body.visuals[0].kind == "sphere"
    assert world.ground is not None and world.ground.visible
    assert world.ground.color == (0.8, 0.8, 0.8)
    sim = mb_sim.Simulation(world=world)
    sim.step(800)  # resting on the ground: the sphere's centre at 0.1 + 0.3
    z = sim.body_pose("ball")[0][2]
    assert z == pytest.approx(0.1, abs=0.01)
    colour, depth = _eye(sim, xyz=(0.0, 0.0, z + 0.3))
    assert depth[20, 20] == pytest.approx(1.9, abs=2e-3)  # the sphere's near side
    centre = colour[20, 20]
    assert centre[2] > 2 * centre[0] and centre[2] > 2 * centre[1], centre
    np.testing.assert_array_equal(colour[-1, 0], _rgb((0.8, 0.8, 0.8), 0.0))  # ground


def test_a_robot_made_from_sdf_shows_its_visuals_in_their_colours() -> None:
    """A model of two links joined by a revolute joint (a robot): its URDF carries the
    links' visuals with their material colours (a stock Gazebo/Green script on one, a
    diffuse colour on the other); the camera sees the green visual, not the collision."""
    world = mb_sim.load_world(_sdf(LIGHT + """
      <model name="arm"><pose>2 0 1 0 0 0</pose>
        <link name="base"><collision name="c"><geometry><box><size>0.2 0.2 0.2</size></box>
          </geometry></collision>
          <visual name="v"><pose>-0.3 0 0 0 0 0</pose><geometry><box><size>0.2 0.4 0.4</size>
          </box></geometry><material><script><name>Gazebo/Green</name></script></material>
          </visual></link>
        <link name="tip"><pose>0 0 0.5 0 0 0</pose><collision name="c"><geometry>
          <sphere><radius>0.1</radius></sphere></geometry></collision>
          <visual name="v"><geometry><sphere><radius>0.1</radius></sphere></geometry>
          <material><diffuse>1 1 0 1</diffuse></material></visual></link>
        <joint name="j" type="revolute"><parent>base</parent><child>tip</child>
          <axis><xyz>0 1 0</xyz></axis></joint>
        <joint name="fix" type="fixed"><parent>world</parent><child>base</child></joint>
      </model>"""))
    urdf = world.robots[0].urdf
    assert urdf is not None and urdf.count("<visual") == 2
    assert 'rgba="0.0 1.0 0.0 1.0"' in urdf and 'rgba="1.0 1.0 0.0 1.0"' in urdf
    sim = mb_sim.Simulation(world=world)
    colour, depth = _eye(sim)
    assert depth[20, 20] == pytest.approx(1.6, abs=1e-6)  # the visual, 0.3 m before the box
    np.testing.assert_array_equal(colour[20, 20], _rgb((0.0, 1.0, 0.0), 1.0))


def test_lights_and_scene_are_read_and_others_reported(caplog) -> None:
    """The first directional light's direction turned by its pose and its diffuse colour;
    the scene's ambient and background; a point light and a second directional one are
    named in the info line; without a light the default sun; model://sun is Gazebo's sun."""
    with caplog.at_level(logging.INFO, logger="mb_sim"):
        world = mb_sim.load_world(_sdf("""
          <scene><ambient>0.2 0.25 0.3</ambient><background>0 0 0 1</background></scene>
          <light type="point" name="bulb"/>
          <light type="directional" name="a"><pose>0 0 1 0 0 1.5707963267948966</pose>
            <diffuse>0.9 0.8 0.7 1</diffuse><direction>1 0 0</direction></light>
          <light type="directional" name="b"/>"""))
    light = world.light
    np.testing.assert_allclose(light.towards, (0.0, -1.0, 0.0), atol=1e-12)
    assert light.diffuse == (0.9, 0.8, 0.7)
    assert light.ambient == (0.2, 0.25, 0.3) and light.background == (0.0, 0.0, 0.0)
    line = next(r.getMessage() for r in caplog.records if "not simulated" in r.getMessage())
    assert "point light x1 (world/light[bulb]" in line
    assert "directional light x1 (world/light[b]" in line
    default = mb_sim.load_world(_sdf("")).light
    assert default.towards == mb_sim.model.world.Light().towards
    assert default.ambient == (0.4, 0.4, 0.4) and default.background == (0.7, 0.7, 0.7)
    sun = mb_sim.load_world(_sdf("<include><uri>model://sun</uri></include>")).light
    np.testing.assert_allclose(sun.towards, -np.array([-0.5, 0.1, -0.9]) / math.sqrt(1.07))
    assert sun.diffuse == (0.8, 0.8, 0.8)


def test_materials_scripts_textures_transparency_and_meshes(tmp_path: Path, caplog) -> None:
    """A PBR albedo map's mean colour multiplies the diffuse colour; a fully transparent
    visual is not drawn; a half transparent one is drawn opaque (reported); an unknown
    script leaves the default grey; a mesh visual keeps its <scale>, and with no material
    its file's colours; a visual whose mesh is missing is left out with a warning."""
    image = pytest.importorskip("PIL.Image")
    pixels = np.zeros((4, 4, 3), dtype=np.uint8)
    pixels[:, :2] = (200, 100, 0)
    pixels[:, 2:] = (100, 50, 0)
    image.fromarray(pixels).save(tmp_path / "wood.png")
    (tmp_path / "red.mtl").write_text("newmtl red\nKd 0.9 0.1 0.1\n")
    (tmp_path / "cube.obj").write_text(
        "mtllib red.mtl\nusemtl red\n" + "".join(
            f"v {x} {y} {z}\n" for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5))
        + "f 1 2 4 3\nf 5 7 8 6\nf 1 5 6 2\nf 3 4 8 7\nf 1 3 7 5\nf 2 6 8 4\n")
    visual = ('<visual name="{n}"><pose>{x} 0 0 0 0 0</pose><geometry>{g}</geometry>{m}'
              '</visual>')
    box = "<box><size>0.2 0.2 0.2</size></box>"
    visuals = "".join([
        visual.format(n="pbr", x=1, g=box, m='<material><diffuse>1 1 1 1</diffuse><pbr><metal>'
                      '<albedo_map>wood.png</albedo_map></metal></pbr></material>'),
        visual.format(n="gone", x=2, g=box, m="<transparency>1</transparency>"),
        visual.format(n="glass", x=3, g=box, m="<transparency>0.5</transparency>"),
        visual.format(n="odd", x=4, g=box, m="<material><script><name>Acme/Paint</name>"
                      "</script></material>"),
        visual.format(n="mesh", x=5, g='<mesh><uri>cube.obj</uri><scale>0.4 0.4 0.4</scale>'
                      '</mesh>', m=""),
        visual.format(n="lost", x=6, g="<mesh><uri>nowhere.dae</uri></mesh>", m="")])
    (tmp_path / "w.sdf").write_text(_sdf(f"""<model name="m"><static>true</static>
      <link name="l">{visuals}</link></model>"""))
    with caplog.at_level(logging.INFO, logger="mb_sim"):
        world = mb_sim.load_world(tmp_path / "w.sdf")
    drawn = {g.xyz[0]: g for g in world.visuals}
    assert sorted(drawn) == [1.0, 3.0, 4.0, 5.0]
    np.testing.assert_allclose(drawn[1.0].color[:3], (0.588235, 0.294118, 0.0), atol=1e-6)
    assert drawn[4.0].color[:3] == (0.7, 0.7, 0.7)
    assert drawn[5.0].color is None and drawn[5.0].scale == (0.4, 0.4, 0.4)
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "nowhere.dae" in messages and "the visual is not drawn" in messages
    assert "transparent visual x1" in messages and "transparency x1" in messages
    assert "'Acme/Paint' is not one of Gazebo's stock colours" in messages
    sim = mb_sim.Simulation(world=world)
    colour, depth = _eye(sim, xyz=(4.6, 0.0, 0.0), hfov=0.3)  # the mesh: 0.2 m half size
    assert depth[20, 20] == pytest.approx(0.2, abs=1e-6)
    np.testing.assert_array_equal(colour[20, 20], _rgb((0.9, 0.1, 0.1), 0.0, ambient=0.4,
                                                       diffuse=0.6))


def test_a_spawned_static_sdf_model_carries_its_visuals(tmp_path: Path) -> None:
    """A static model spawned from SDF text is one body; its visuals go with it, posed in
    its frame (they are drawn where the spawn pose puts it)."""
    text = """<sdf version="1.9"><model name="sign"><static>true</static><link name="l">
      <collision name="c"><geometry><box><size>0.1 1 1</size></box></geometry></collision>
      <visual name="v"><pose>0 0 0.5 0 0 0</pose><geometry><box><size>0.1 1 0.2</size></box>
      </geometry><material><diffuse>1 0 0 1</diffuse></material></visual>
      </link></model></sdf>"""
    spawned = spawn_body(resource_string=text, name="sign", xyz=(2.0, 0.0, 0.5))
    body = spawned.body
    assert body.static and body.visuals is not None and len(body.visuals) == 1
    sim = mb_sim.Simulation(world=mb_sim.load_world({"ground": None}))
    sim.add_body(body)
    colour, depth = _eye(sim, xyz=(0.0, 0.0, 1.0))
    assert depth[20, 20] == pytest.approx(1.95, abs=1e-6)  # the visual's face, not the box's
    assert np.isposinf(depth[-1, 20])  # below the visual: the collision box is not drawn
    assert colour[20, 20][0] > 3 * max(colour[20, 20][1], 1)
