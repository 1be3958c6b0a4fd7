"""Gazebo SDF worlds read by `load_world` (mb_sim.model.world.sdf): a world written for Gazebo
behaves as its YAML twin, poses in nested frames compose as SDFormat says, bad inputs get
errors naming the file, the element and the value, and what is not simulated is listed in one
info line."""

from __future__ import annotations

import logging
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from transforms3d.euler import euler2mat
from transforms3d.quaternions import quat2mat

import mb_sim
from mb_sim.errors import WorldError

DATA = Path(__file__).parent / "data" / "sdf"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary GZ_SIM_RESOURCE_PATH folder holding the crate model (model.config naming
    model.sdf for SDF 1.9 and a decoy for 1.6), the other resource paths empty."""
    folder = tmp_path / "models"
    shutil.copytree(DATA / "models", folder)
    for variable in ("IGN_GAZEBO_RESOURCE_PATH", "SDF_PATH", "GAZEBO_MODEL_PATH"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(folder))
    return folder


def T(xyz: tuple[float, float, float] = (0.0, 0.0, 0.0),
      rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> np.ndarray:
    """The 4x4 transform of a translation and fixed-axis roll, pitch, yaw (SDF's, URDF's)."""
    out = np.eye(4)
    out[:3, :3] = euler2mat(*rpy, "sxyz")
    out[:3, 3] = xyz
    return out


def _rotation(quat_xyzw: np.ndarray) -> np.ndarray:
    x, y, z, w = quat_xyzw
    return quat2mat([w, x, y, z])


def _sdf(body: str, version: str = "1.9") -> str:
    return f'<?xml version="1.0"?>\n<sdf version="{version}"><world name="w">{body}</world></sdf>'


# ------------------------------------------------------------------------ the twin


def test_a_gazebo_world_loads_as_its_yaml_twin(models: Path) -> None:
    """scene.sdf (ground_plane and sun built in, static boxes, a ball, an included crate, a
    pendulum of two links) gives the records scene_twin.yaml gives."""
    sdf = mb_sim.load_world(DATA / "scene.sdf")
    yaml = mb_sim.load_world(DATA / "scene_twin.yaml")
    np.testing.assert_allclose(sdf.gravity, [0.0, 0.0, -9.81])
    assert sdf.ground is not None and yaml.ground is not None
    assert (sdf.ground.height, sdf.ground.friction) == (0.0, 1.0)
    assert sdf.body_names == yaml.body_names == ("block", "wall", "ball", "crate1")
    for a, b in zip(sdf.bodies, yaml.bodies, strict=True):
        assert (a.geometry.kind, a.geometry.size, a.static) == \
            (b.geometry.kind, b.geometry.size, b.static), a.name
        np.testing.assert_allclose(a.xyz, b.xyz, atol=1e-12)
        assert abs(abs(float(a.quat_xyzw @ b.quat_xyzw)) - 1.0) < 1e-12
        assert (a.mass, a.friction, a.restitution) == pytest.approx(
            (b.mass, b.friction, b.restitution))
        np.testing.assert_allclose(a.inertia, b.inertia, atol=1e-15)
    assert sdf.body("crate1").geometry.size == (0.2, 0.15, 0.1)  # model.sdf, SDF 1.9
    assert [r.name for r in sdf.robots] == ["pendulum"]
    robot = sdf.robots[0]
    assert not robot.floating and robot.urdf is not None and robot.urdf.startswith("<?xml")
    np.testing.assert_allclose(robot.xyz, [0.0, -1.0, 1.0])


def test_a_gazebo_world_behaves_as_its_yaml_twin(models: Path) -> None:
    """Simulated 1.5 s, the ball on the block, the crate on the ground and the pendulum's
    hinge move as in the YAML twin: final poses within 1 mm, the same joint motion."""
    a = mb_sim.Simulation(world=mb_sim.load_world(DATA / "scene.sdf"), dt=0.001)
    b = mb_sim.Simulation(world=mb_sim.load_world(DATA / "scene_twin.yaml"), dt=0.001)
    assert a.robot("pendulum").joint_names == ("hinge",)
    swing = []
    for _ in range(15):
        a.step(100)
        b.step(100)
        qa, qb = a.robot("pendulum").q[0], b.robot("pendulum").q[0]
        assert qa == pytest.approx(qb, abs=1e-6)
        swing.append(qa)
    assert max(swing) - min(swing) > 2.0  # released horizontal, it swings through the bottom
    for name in ("ball", "crate1"):
        (xa, qa_), (xb, qb_) = a.body_pose(name), b.body_pose(name)
        np.testing.assert_allclose(xa, xb, atol=1e-3)
        assert abs(abs(float(qa_ @ qb_)) - 1.0) < 1e-6
    assert a.body_pose("ball")[0][2] == pytest.approx(0.25, abs=1e-3)  # on the 0.2 m block
    assert a.body_pose("crate1")[0][2] == pytest.approx(0.05, abs=1e-3)  # on the ground
    # the hinge's effort moves the pendulum: the robot takes commands
    a.robot("pendulum").set_effort({"hinge": 30.0})
    before = a.robot("pendulum").qd[0]
    a.step(10)
    assert a.robot("pendulum").qd[0] > before + 0.1


def test_an_include_not_on_the_resource_path_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("GZ_SIM_RESOURCE_PATH", "IGN_GAZEBO_RESOURCE_PATH", "SDF_PATH",
                     "GAZEBO_MODEL_PATH"):
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(WorldError) as info:
        mb_sim.load_world(DATA / "scene.sdf")
    text = str(info.value)
    assert "scene.sdf: world/include/uri: cannot find 'model://crate'" in text
    assert "GZ_SIM_RESOURCE_PATH" in text


# ------------------------------------------------------------------------ frames


def test_nested_poses_compose_as_sdformat_says() -> None:
    """A chain of poses through a world frame, a model placed relative to it, a frame attached
    to a link, a link relative to that frame, a collision relative to another link, a nested
    model relative to a link, a quaternion pose and a pose in degrees: each body where the
    product of the transforms puts it."""
    half = math.pi / 2
    world = _sdf(f"""
      <frame name="F"><pose>1 0 0 0 0 {half}</pose></frame>
      <model name="m">
        <static>true</static>
        <pose relative_to="F">1 0 0 0 0 0</pose>
        <frame name="g" attached_to="a"><pose>0 0 1 0 0 0</pose></frame>
        <link name="a">
          <pose>0 2 0 0 0 0</pose>
          <collision name="c"><geometry><box><size>0.1 0.1 0.1</size></box></geometry></collision>
        </link>
        <link name="b">
          <pose relative_to="g">0 0 0 0 {half} 0</pose>
          <collision name="near_a"><pose relative_to="a">0.5 0 0 0 0 0</pose>
            <geometry><box><size>0.1 0.1 0.1</size></box></geometry></collision>
          <collision name="own"><pose>0 0 0.2 0.1 0 0</pose>
            <geometry><box><size>0.1 0.1 0.1</size></box></geometry></collision>
        </link>
        <model name="inner">
          <pose relative_to="b">0 0 0.3 0 0 0</pose>
          <link name="l">
            <pose rotation_format="quat_xyzw">0.1 0 0 0 0 0.38268343236 0.92387953251</pose>
            <collision name="c"><pose degrees="true">0 0 0 0 0 90</pose>
              <geometry><sphere><radius>0.05</radius></sphere></geometry></collision>
          </link>
        </model>
      </model>
      <model name="ball">
        <pose relative_to="m::b">0 0 -1 0.2 0.3 0.4</pose>
        <link name="link">
          <pose>0.1 0 0 0 0 0.5</pose>
          <inertial><pose>0 0.05 0 0 0 0</pose><mass>0.3</mass></inertial>
          <collision name="c"><pose>0 0 0.02 0 0.4 0</pose>
            <geometry><sphere><radius>0.05</radius></sphere></geometry></collision>
        </link>
      </model>""")
    w = mb_sim.load_world(world)
    F = T((1, 0, 0), (0, 0, half))
    M = F @ T((1, 0, 0))
    A = M @ T((0, 2, 0))
    B = A @ T((0, 0, 1)) @ T(rpy=(0, half, 0))
    L = B @ T((0, 0, 0.3)) @ T((0.1, 0, 0), (0, 0, math.pi / 4))
    link = B @ T((0, 0, -1), (0.2, 0.3, 0.4)) @ T((0.1, 0, 0), (0, 0, 0.5))
    expected = {
        "m__a": A, "m__b__near_a": A @ T((0.5, 0, 0)), "m__b__own": B @ T((0, 0, 0.2), (0.1, 0, 0)),
        "m__inner__l": L @ T(rpy=(0, 0, half)), "ball": link @ T((0, 0, 0.02), (0, 0.4, 0))}
    assert set(w.body_names) == set(expected)
    for name, pose in expected.items():
        body = w.body(name)
        rotation = _rotation(body.quat_xyzw)
        np.testing.assert_allclose(rotation, pose[:3, :3], atol=1e-9, err_msg=name)
        if name != "ball":
            np.testing.assert_allclose(body.xyz, pose[:3, 3], atol=1e-9, err_msg=name)
    # the ball's body frame sits at its centre of mass: the inertial's pose in the link
    np.testing.assert_allclose(w.body("ball").xyz, (link @ [0, 0.05, 0, 1])[:3], atol=1e-9)
    np.testing.assert_allclose(A[:3, 3], [-1.0, 1.0, 0.0], atol=1e-12)  # by hand


def test_joint_frames_and_axes_in_world_joints() -> None:
    """A ball joint makes a model's joints world joints: anchors at the joint frames (default:
    relative to the child link), axes in the joint frame, in the model frame (expressed_in
    __model__) or, in SDF 1.4, always in the model frame."""
    yaw = 0.3
    body = f"""
      <model name="chain">
        <pose>0 0 1 0 0 {yaw}</pose>
        <link name="p"><collision name="c"><geometry><sphere><radius>0.05</radius></sphere>
          </geometry></collision></link>
        <link name="q"><pose>0 0 -0.5 0 0 0</pose><collision name="c"><geometry><sphere>
          <radius>0.05</radius></sphere></geometry></collision></link>
        <link name="r"><pose>0 0 -1 0 0 0</pose><collision name="c"><geometry><sphere>
          <radius>0.05</radius></sphere></geometry></collision></link>
        <joint name="top" type="ball"><parent>world</parent><child>p</child></joint>
        <joint name="h1" type="revolute">
          <pose>0 0 0.25 0 0 {math.pi / 2}</pose><parent>p</parent><child>q</child>
          <axis><xyz>1 0 0</xyz><limit><lower>-0.5</lower><upper>0.7</upper></limit></axis>
        </joint>
        <joint name="h2" type="revolute"><parent>q</parent><child>r</child>
          <axis><xyz expressed_in="__model__">1 0 0</xyz></axis></joint>
      </model>"""
    w = mb_sim.load_world(_sdf(body))
    assert w.robots == () and w.body_names == ("chain__p", "chain__q", "chain__r")
    joints = {j.name: j for j in w.joints}
    assert set(joints) == {"chain__top", "chain__h1", "chain__h2"}
    assert joints["chain__top"].type == "ball" and joints["chain__top"].parent is None
    np.testing.assert_allclose(joints["chain__h1"].anchor, [0.0, 0.0, 0.75], atol=1e-12)
    np.testing.assert_allclose(joints["chain__h1"].axis,
                               [-math.sin(yaw), math.cos(yaw), 0.0], atol=1e-12)
    assert joints["chain__h1"].limits == (-0.5, 0.7)
    np.testing.assert_allclose(joints["chain__h2"].anchor, [0.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(joints["chain__h2"].axis,
                               [math.cos(yaw), math.sin(yaw), 0.0], atol=1e-12)
    assert joints["chain__h2"].limits is None
    old = mb_sim.load_world(_sdf(body.replace(' expressed_in="__model__"', ""), "1.4"))
    np.testing.assert_allclose({j.name: j for j in old.joints}["chain__h1"].axis,
                               [math.cos(yaw), math.sin(yaw), 0.0], atol=1e-12)


def test_a_closed_loop_of_revolute_joints_is_held_by_world_joints() -> None:
    """A four-bar linkage (crank and rocker hinged to the world, a coupler between them) closes
    a loop: its links are bodies and its four hinges world joints, which hold while it
    moves."""
    def bar(name: str, xyz: str, size: str) -> str:
        return (f'<link name="{name}"><pose>{xyz} 0 0 0</pose><inertial><mass>1</mass>'
                '<inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>'
                f'<collision name="c"><geometry><box><size>{size}</size></box></geometry>'
                "</collision></link>")

    def hinge(name: str, parent: str, child: str, xyz: str) -> str:
        return (f'<joint name="{name}" type="revolute"><pose relative_to="__model__">{xyz} 0 0 0'
                f"</pose><parent>{parent}</parent><child>{child}</child><axis><xyz>0 1 0</xyz>"
                "</axis></joint>")

    w = mb_sim.load_world(_sdf(f"""
      <model name="fourbar"><pose>0 0 1 0 0 0</pose>
        {bar("crank", "0 0 0.15", "0.04 0.04 0.3")}
        {bar("coupler", "0.25 0 0.3", "0.5 0.04 0.04")}
        {bar("rocker", "0.5 0 0.15", "0.04 0.04 0.3")}
        {hinge("a", "world", "crank", "0 0 0")}
        {hinge("b", "crank", "coupler", "0 0 0.3")}
        {hinge("c", "coupler", "rocker", "0.5 0 0.3")}
        {hinge("d", "world", "rocker", "0.5 0 0")}
        <self_collide>false</self_collide>
      </model>"""))
    assert w.robots == () and len(w.bodies) == 3 and len(w.joints) == 4
    assert all(j.type == "revolute" for j in w.joints)
    sim = mb_sim.Simulation(world=w, dt=0.001)
    sim.set_body_state("fourbar__coupler", linear=[1.0, 0.0, 0.0])
    sim.step(500)
    moved = np.linalg.norm(sim.body_pose("fourbar__coupler")[0] - w.body("fourbar__coupler").xyz)
    assert moved > 0.05
    for joint in w.joints:
        ends = []
        for body, local in ((joint.parent, joint.parent_anchor_local),
                            (joint.child, joint.child_anchor_local)):
            if body is None:
                ends.append(local)
                continue
            xyz, quat = sim.body_pose(body)
            ends.append(xyz + _rotation(quat) @ local)
        assert np.linalg.norm(ends[0] - ends[1]) < 1e-3, joint.name


# ------------------------------------------------------------------------ the mapping


def _box_link(name: str, xyz: str = "0 0 0", extra: str = "", collisions: int = 1) -> str:
    parts = "".join(f'<collision name="c{i}"><pose>0 0 {0.1 * i} 0 0 0</pose><geometry><box>'
                    "<size>0.1 0.1 0.1</size></box></geometry></collision>"
                    for i in range(collisions))
    return (f'<link name="{name}"><pose>{xyz} 0 0 0</pose><inertial><mass>0.5</mass><inertia>'
            "<ixx>0.001</ixx><iyy>0.001</iyy><izz>0.001</izz></inertia></inertial>"
            f"{parts}{extra}</link>")


def test_links_become_bodies_objects_and_static_bodies_by_their_joints(caplog) -> None:
    """Several free links: bodies model__link; a moving link of two collisions: a floating
    URDF object; a static model of several links and collisions: one static body each; links
    joined by fixed joints only: one floating object; a prismatic joint to the world: a
    fixed-base robot. The info line says what is read otherwise than Gazebo reads it."""
    with caplog.at_level(logging.INFO, logger="mb_sim"):
        w = mb_sim.load_world(_sdf(f"""
      <model name="pair">{_box_link("a", "0 0 1")}{_box_link("b", "1 0 1")}</model>
      <model name="twin">{_box_link("l", "2 0 1", collisions=2)}</model>
      <model name="shelf"><static>true</static>{_box_link("x", "3 0 0", collisions=2)}
        {_box_link("y", "3 1 0")}</model>
      <model name="welded">{_box_link("p", "4 0 1")}{_box_link("q", "4 0 1.2")}
        <joint name="w" type="fixed"><parent>p</parent><child>q</child></joint></model>
      <model name="lift">{_box_link("car", "5 0 1")}
        <joint name="slide" type="prismatic"><parent>world</parent><child>car</child>
          <axis><xyz>0 0 1</xyz><limit><lower>-0.5</lower><upper>0.5</upper>
          <effort>100</effort></limit></axis></joint></model>"""))
    line = next(r.getMessage() for r in caplog.records if "Gazebo reads it" in r.getMessage())
    assert line.startswith("<string>: read otherwise than Gazebo reads it: ")
    assert "static link of several collisions x1 (world/model[shelf]/link[x]; one static body " \
        "per collision)" in line
    assert "link of several collisions x1 (world/model[twin]/link[l]; a floating URDF object" \
        in line
    assert w.body_names == ("pair__a", "pair__b", "shelf__x__c0", "shelf__x__c1", "shelf__y")
    assert [b.static for b in w.bodies] == [False, False, True, True, True]
    assert [(r.name, r.floating) for r in w.robots] == [
        ("twin", True), ("welded", True), ("lift", False)]
    sim = mb_sim.Simulation(world=w, dt=0.001)
    assert sim.robot_names == ("lift",) and sim.object_names == ("twin", "welded")
    lift = sim.robot("lift")
    assert lift.joint_names == ("slide",)
    assert float(sim.robot("lift").model.upper[0]) == 0.5
    assert float(lift.model.effort_limit[0]) == 100.0
    sim.step(300)
    assert lift.q[0] < -0.1  # it slides down under gravity


def test_unknown_joint_types_are_reported_and_their_links_left_apart(caplog) -> None:
    with caplog.at_level(logging.INFO, logger="mb_sim"):
        w = mb_sim.load_world(_sdf(f"""
          <model name="u">{_box_link("a", "0 0 1")}{_box_link("b", "0 0 1.5")}
            <joint name="uj" type="universal"><parent>a</parent><child>b</child>
              <axis><xyz>1 0 0</xyz></axis><axis2><xyz>0 1 0</xyz></axis2></joint></model>"""))
    assert w.body_names == ("u__a", "u__b") and w.joints == ()
    lines = [r.getMessage() for r in caplog.records if "not simulated" in r.getMessage()]
    assert len(lines) == 1 and "universal joint x1 (world/model[u]/joint[uj]" in lines[0]


def test_what_is_not_simulated_is_listed_in_one_info_line(caplog) -> None:
    text = _sdf(f"""
      <gui fullscreen="0"><camera name="user"/></gui>
      <scene><ambient>0.4 0.4 0.4 1</ambient></scene>
      <light type="point" name="lamp"/>
      <plugin filename="gz-sim-physics-system" name="gz::sim::systems::Physics"/>
      <actor name="walker"/>
      <include><uri>model://sun</uri></include>
      <model name="robot">
        {_box_link("base", "0 0 1", '<sensor name="alt" type="altimeter"/><visual name="v"/>')}
        <plugin filename="gz-sim-joint-position-controller-system" name="jpc"/>
        <joint name="spin" type="revolute"><parent>world</parent><child>base</child>
          <axis><xyz>0 0 1</xyz><dynamics><spring_stiffness>5</spring_stiffness></dynamics>
          </axis></joint>
      </model>""")
    with caplog.at_level(logging.INFO, logger="mb_sim"):
        mb_sim.load_world(text)
    lines = [r.getMessage() for r in caplog.records if "not simulated" in r.getMessage()]
    assert len(lines) == 1, lines
    line = lines[0]
    assert line.startswith("<string>: not simulated: ")
    for fragment in ("gui x1 (world/gui", "point light x1 (world/light[lamp]",
                     ("plugin x2 (world/plugin[gz::sim::systems::Physics], "
                      "world/model[robot]/plugin[jpc]"), "actor x1 (world/actor[walker]",
                     "altimeter sensor x1 (world/model[robot]/link[base]/sensor[alt]",
                     "visual not drawn x1 (world/model[robot]/link[base]/visual[v]",
                     "joint spring x1 (world/model[robot]/joint[spin]"):
        assert fragment in line, fragment
    for read in ("pose x", "inertial x", "collision x", "link x", "joint x", "axis x",
                 "scene x", "light[sun]"):  # the scene's ambient and the sun light cameras
        assert read not in line, read


def test_the_shipped_sdf_table_world_is_the_yaml_table() -> None:
    """config/worlds/table.sdf (the default scene as Gazebo would have it) holds the bodies of
    table.yaml, and they rest where those rest."""
    sdf = mb_sim.load_world(ROOT / "config" / "worlds" / "table.sdf")
    yaml = mb_sim.load_world(ROOT / "config" / "worlds" / "table.yaml")
    assert sdf.robots == () and sdf.ground is not None
    assert len(sdf.bodies) == len(yaml.bodies)
    for a in sdf.bodies:
        twin = min(yaml.bodies, key=lambda b: float(np.linalg.norm(b.xyz - a.xyz)))
        np.testing.assert_allclose(a.xyz, twin.xyz, atol=1e-9, err_msg=a.name)
        assert (a.geometry.kind, a.geometry.size, a.static) == \
            (twin.geometry.kind, twin.geometry.size, twin.static), a.name
        assert a.mass == pytest.approx(twin.mass) and a.color == pytest.approx(twin.color)
    a = mb_sim.Simulation(world=sdf, dt=0.001)
    b = mb_sim.Simulation(world=yaml, dt=0.001)
    a.step(500)
    b.step(500)
    for name in ("box_red", "box_green", "box_blue", "ball"):
        np.testing.assert_allclose(a.body_pose(name)[0], b.body_pose(name)[0], atol=1e-3)


def test_an_sdf_world_round_trips_through_to_dict(models: Path) -> None:
    """World.to_dict of an SDF world (its robots' URDF as text) reads back as the same world."""
    world = mb_sim.load_world(DATA / "scene.sdf")
    again = mb_sim.load_world(world.to_dict())
    assert again.body_names == world.body_names
    assert [r.name for r in again.robots] == ["pendulum"] and again.robots[0].urdf == \
        world.robots[0].urdf
    sim = mb_sim.Simulation(world=again)
    assert sim.robot("pendulum").joint_names == ("hinge",)


def test_fuel_urls_are_read_from_the_local_fuel_cache(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """https://fuel.gazebosim.org/1.0/<owner>/models/<name> is the newest version in the
    cache (lower-cased folders, as gz-fuel-tools writes them), or an error naming the URL."""
    cache = tmp_path / "fuel"
    for version, size in (("1", "9 9 9"), ("3", "0.2 0.15 0.1")):
        folder = cache / "fuel.gazebosim.org" / "openrobotics" / "models" / "small crate" / version
        folder.mkdir(parents=True)
        shutil.copy(DATA / "models" / "crate" / "model.config", folder)
        text = (DATA / "models" / "crate" / "model.sdf").read_text()
        (folder / "model.sdf").write_text(text.replace("0.2 0.15 0.1", size))
        shutil.copy(DATA / "models" / "crate" / "model-1_6.sdf", folder)
    monkeypatch.setenv("GZ_FUEL_CACHE_PATH", str(cache))
    url = "https://fuel.gazebosim.org/1.0/OpenRobotics/models/Small%20Crate"
    w = mb_sim.load_world(_sdf(f"<include><uri>{url}</uri><pose>0 0 1 0 0 0</pose></include>"))
    assert w.body_names == ("crate",) and w.body("crate").geometry.size == (0.2, 0.15, 0.1)
    pinned = mb_sim.load_world(_sdf(f"<include><uri>{url}/1</uri></include>"))
    assert pinned.body("crate").geometry.size == (9.0, 9.0, 9.0)
    with pytest.raises(WorldError) as info:
        mb_sim.load_world(_sdf("<include><uri>https://fuel.gazebosim.org/1.0/OpenRobotics/"
                               "models/Nothing</uri></include>"))
    assert "cannot find 'https://fuel.gazebosim.org/1.0/OpenRobotics/models/Nothing'" in \
        str(info.value)
    assert "gz fuel download -u" in str(info.value) and str(cache) in str(info.value)


# ------------------------------------------------------------------------ bad inputs


_BALL = ('<link name="l"><collision name="c"><geometry><sphere><radius>0.1</radius></sphere>'
         "</geometry></collision></link>")


def test_a_heightmap_is_a_heightfield_seen_from_above_as_its_image(tmp_path: Path) -> None:
    """A heightmap whose image is white in its top half (rows 0..15 of 33, the +y side) and
    mid-grey below, 4 x 4 m, white = 1 m, its grid centred on <pos> 0 0 -0.5 in a model at
    x = 1: balls (r 0.1) dropped on the +y and -y sides come to rest at 0.5 + r and
    -0.5 + 128/255 + r."""
    from PIL import Image

    image = np.full((33, 33), 128, dtype=np.uint8)
    image[:16] = 255
    Image.fromarray(image).save(tmp_path / "terrain.png")

    def ball(name: str, y: float) -> str:
        return (f'<model name="{name}"><pose>1.2 {y} 1.5 0 0 0</pose><link name="b"><inertial>'
                "<mass>1</mass><inertia><ixx>0.004</ixx><iyy>0.004</iyy><izz>0.004</izz>"
                '</inertia></inertial><collision name="c"><geometry><sphere><radius>0.1'
                "</radius></sphere></geometry></collision></link></model>")

    path = tmp_path / "hills.sdf"
    path.write_text(_sdf(
        '<model name="hills"><static>true</static><pose>1 0 0 0 0 0</pose><link name="l">'
        '<collision name="c"><geometry><heightmap><uri>terrain.png</uri><size>4 4 1</size>'
        "<pos>0 0 -0.5</pos></heightmap></geometry></collision></link></model>"
        + ball("north", 1.2) + ball("south", -1.2)))
    world = mb_sim.load_world(path)
    hills = world.bodies[0]
    assert hills.geometry.kind == "heightfield" and hills.static
    np.testing.assert_allclose(hills.xyz, [1.0, 0.0, -0.5])
    assert hills.geometry.size == (4.0, 4.0, 1.0)
    sim = mb_sim.Simulation(world=world)
    sim.step(1500)
    z = {name: sim.body_pose(name)[0][2] for name in ("north", "south")}
    assert z["north"] == pytest.approx(0.5 + 0.1, abs=2e-3)
    assert z["south"] == pytest.approx(-0.5 + 128 / 255 + 0.1, abs=2e-3)


@pytest.mark.parametrize(("body", "fragments"), [
    ('<model name="a"><link name="l">', ["malformed XML"]),
    ("<include><uri>model://no_such_model</uri></include>",
     ["world/include/uri: cannot find 'model://no_such_model'", "GZ_SIM_RESOURCE_PATH"]),
    (('<model name="box1"><link name="base"><collision name="c"><geometry><box/></geometry>'
     "</collision></link></model>"),
     ["world/model[box1]/link[base]/collision[c]/geometry/box/size: is missing"]),
    (('<model name="box1"><link name="base"><collision name="c"><geometry><box><size>0.1 nan'
     " 0.1</size></box></geometry></collision></link></model>"),
     ["world/model[box1]/link[base]/collision[c]/geometry/box/size: must be 3 finite numbers",
      "'0.1 nan 0.1'"]),
    ('<model name="b"><link name="l"><inertial><mass>-1</mass></inertial></link></model>',
     ["world/model[b]/link[l]/inertial/mass: must be 1 finite number >= 0", "'-1'"]),
    (('<model name="b"><link name="l"><inertial><mass>2</mass><inertia><ixx>1</ixx><iyy>1</iyy>'
     "<izz>3</izz></inertia></inertial><collision name=\"c\"><geometry><sphere><radius>0.1"
     "</radius></sphere></geometry></collision></link></model>"),
     ["world/model[b]/link[l]/inertial/inertia: inertia", "triangle"]),
    ('<model name="b"><pose>0 0 nan 0 0 0</pose></model>',
     ["world/model[b]/pose: must be 6 finite numbers", "'0 0 nan 0 0 0'"]),
    ((f'<model name="b"><pose relative_to="c">0 0 1 0 0 0</pose>{_BALL}</model>'
     f'<model name="c"><pose relative_to="b">0 0 1 0 0 0</pose>{_BALL}</model>'),
     ["cycle (b -> c -> b)"]),
    ((f'<model name="b">{_BALL}<joint name="j" type="revolute"><parent>world</parent>'
     "<child>nope</child><axis><xyz>0 0 1</xyz></axis></joint></model>"),
     ["world/model[b]/joint[j]/child: names no link of this model; links: l", "'nope'"]),
    ((f'<model name="b">{_BALL}<joint name="j" type="revolute"><parent>world</parent>'
     "<child>l</child><axis><xyz>0 0 0</xyz></axis></joint></model>"),
     ["world/model[b]/joint[j]/axis/xyz: the axis must not be zero"]),
    ((f'<model name="b">{_BALL}<joint name="j" type="revolute"><parent>world</parent>'
     "<child>l</child><axis><xyz>0 0 1</xyz><limit><lower>1</lower><upper>-1</upper></limit>"
     "</axis></joint></model>"), ["world/model[b]/joint[j]/axis/limit: lower is above upper"]),
    ((f'<model name="b">{_BALL}<joint name="j" type="helical"><parent>world</parent>'
     "<child>l</child></joint></model>"), ["world/model[b]/joint[j]: type must be one of"]),
    (('<model name="b"><link name="l"><collision name="c"><geometry><sphere><radius>0.1</radius>'
     '</sphere></geometry><surface><bounce><restitution_coefficient>2</restitution_coefficient>'
     "</bounce></surface></collision></link></model>"),
     [("link[l]/collision[c]/surface/bounce/restitution_coefficient: must be 1 finite number "
      "within [0, 1]"), "'2'"]),
    ((f'<model name="b">{_box_link("p", "0 0 1", collisions=2)}'
     '<joint name="j" type="ball"><parent>world</parent><child>p</child></joint></model>'),
     ["world/model[b]/link[p]: a link joined to the world by a ball joint",
      "exactly one collision shape", "(got 2)"]),
    ((f'<model name="b">{_box_link("p", "0 0 1")}<link name="q"><inertial><mass>0</mass>'
     "<inertia><ixx>0</ixx><iyy>0</iyy><izz>0</izz></inertia>"
     '</inertial></link><joint name="j" type="revolute"><parent>p</parent><child>q</child>'
     "<axis><xyz>0 0 1</xyz></axis></joint></model>"),
     ["world/model[b]: the robot made of this model cannot be loaded: joint 'j': moves no mass"]),
    (('<model name="b"><link name="l"><collision name="c"><geometry><plane><normal>0 0 1'
     "</normal></plane></geometry></collision></link></model>"),
     ["world/model[b]/link[l]/collision[c]: a plane collides only as part of a static model"]),
    (('<model name="hills"><static>true</static><link name="l"><collision name="c"><geometry>'
     "<heightmap><uri>terrain.png</uri><size>10 10 2</size></heightmap></geometry></collision>"
     "</link></model>"), ["world/model[hills]/link[l]/collision[c].heights", "cannot read the PNG",
                         "terrain.png"]),
    (('<model name="b"><link name="l"><collision name="c"><geometry><mesh><uri>missing.stl</uri>'
     "</mesh></geometry></collision></link></model>"),
     ["world/model[b]/link[l]/collision[c]/geometry/mesh/uri: cannot find 'missing.stl'"]),
])
def test_bad_sdf_inputs_name_the_file_the_element_and_the_value(
        tmp_path: Path, body: str, fragments: list[str]) -> None:
    (tmp_path / "terrain.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    path = tmp_path / "bad.sdf"
    path.write_text(_sdf(body))
    with pytest.raises(WorldError) as info:
        mb_sim.load_world(path)
    text = str(info.value)
    assert text.startswith(f"{path}: "), text
    for fragment in fragments:
        assert fragment in text, text


def test_an_error_in_an_included_model_names_its_file_and_the_include(models: Path) -> None:
    crate = models / "crate" / "model.sdf"
    crate.write_text(crate.read_text().replace("<mass>0.6</mass>", "<mass>-0.6</mass>"))
    with pytest.raises(WorldError) as info:
        mb_sim.load_world(_sdf("<include><uri>model://crate</uri><name>c2</name></include>"))
    text = str(info.value)
    assert text.startswith(f"{crate.resolve()}: model[crate]/link[body]/inertial/mass: ")
    assert "'-0.6'" in text and "(included by <string>: world/include)" in text


def test_sdf_text_and_dtds(tmp_path: Path) -> None:
    """SDF text is read as SDF (not YAML); a DTD is refused."""
    w = mb_sim.load_world(_sdf(f'<model name="m"><pose>0 0 1 0 0 0</pose>{_BALL}</model>'))
    assert w.source == "<string>" and w.body_names == ("m",) and w.body("m").mass == 1.0
    np.testing.assert_allclose(w.gravity, [0.0, 0.0, -9.8])  # SDF's default
    with pytest.raises(WorldError, match="no DTD"):
        mb_sim.load_world('<?xml version="1.0"?><!DOCTYPE sdf [<!ENTITY a "b">]><sdf/>')
    odd = tmp_path / "world.yaml"  # what a replay writes: SDF text in a .yaml file
    odd.write_text(_sdf(_BALL.replace('<link name="l">', '<model name="m"><link name="l">')
                        + "</model>"))
    assert mb_sim.load_world(odd).body_names == ("m",)


def test_includes_nested_in_a_model_and_placement_frames(models: Path) -> None:
    """An <include> inside a model is a nested model (its links named model__include__link);
    a placement_frame puts that frame, not the model frame, at the pose."""
    w = mb_sim.load_world(_sdf("""
      <model name="cart"><pose>1 0 0 0 0 0</pose>
        <include><uri>model://crate</uri><name>load</name><pose>0 0 0.5 0 0 0</pose>
        </include>
        <link name="deck"><pose>0 0 0.2 0 0 0</pose><inertial><mass>2</mass></inertial>
          <collision name="c"><geometry><box><size>0.5 0.4 0.05</size></box></geometry>
          </collision></link>
      </model>
      <include><uri>model://crate</uri><name>placed</name>
        <placement_frame>body</placement_frame><pose>0 3 0.05 0 0 0</pose></include>
      <model name="hung" placement_frame="tip"><pose>0 -3 1 0 0 0</pose>
        <frame name="tip" attached_to="l"><pose>0 0 0.5 0 0 0</pose></frame>
        <link name="l"><collision name="c"><geometry><sphere><radius>0.1</radius></sphere>
          </geometry></collision></link></model>"""))
    assert w.body_names == ("cart__deck", "cart__load__body", "placed", "hung")
    np.testing.assert_allclose(w.body("cart__load__body").xyz, [1.0, 0.0, 0.5], atol=1e-12)
    np.testing.assert_allclose(w.body("placed").xyz, [0.0, 3.0, 0.05], atol=1e-12)
    np.testing.assert_allclose(w.body("hung").xyz, [0.0, -3.0, 0.5], atol=1e-12)


def test_a_tree_rooted_against_its_joints_moves_as_the_same_tree(tmp_path: Path) -> None:
    """A chain a -> b -> c rooted at its canonical link c (its URDF joints turned round, axes
    reversed) and rooted at a: under the same joint efforts, without gravity, every link and
    every joint coordinate moves alike."""
    def chain(canonical: str) -> mb_sim.World:
        links = "".join(
            f'<link name="{n}"><pose>{0.3 * i} 0 1 0 0 0</pose><inertial><mass>{1 + i}</mass>'
            "<inertia><ixx>0.01</ixx><iyy>0.02</iyy><izz>0.02</izz></inertia></inertial></link>"
            for i, n in enumerate("abc"))
        joints = "".join(
            f'<joint name="{j}" type="revolute"><pose>-0.15 0 0 0 0 0</pose><parent>{p}</parent>'
            f"<child>{c}</child><axis><xyz>0 0.6 0.8</xyz></axis></joint>"
            for j, p, c in (("j1", "a", "b"), ("j2", "b", "c")))
        return mb_sim.load_world(_sdf(f'<gravity>0 0 0</gravity><model name="m" '
                                      f'canonical_link="{canonical}">{links}{joints}</model>'))
    sims = [mb_sim.Simulation(world=chain(root), dt=0.001) for root in ("a", "c")]
    for sim in sims:
        robot = sim.robot("m")
        assert robot.model.base_link == ("a" if sim is sims[0] else "c")
        robot.set_effort({"j1": 0.3, "j2": -0.2})
        sim.step(400)
    a, c = (s.robot("m") for s in sims)
    assert a.joint_names == ("j1", "j2") and c.joint_names == ("j2", "j1")
    np.testing.assert_allclose(a.q[7:], c.q[:6:-1], atol=1e-9)  # the base first, then joints
    assert abs(a.q[7]) > 0.05 and abs(a.q[8]) > 0.05
    for link in "bc":  # the chain's shape: exact; where it drifts (the base's integration): 1 mm
        (pa, qa), (pc, qc) = a.link_pose("a"), c.link_pose("a")
        (la, _), (lc, _) = a.link_pose(link), c.link_pose(link)
        np.testing.assert_allclose(_rotation(qa).T @ (la - pa), _rotation(qc).T @ (lc - pc),
                                   atol=1e-9)
        np.testing.assert_allclose(la, lc, atol=1e-3)


def test_sensors_and_a_drive_of_sdf_models() -> None:
    """SDF <sensor>s and a diff-drive <plugin> are read as a Gazebo-ready URDF's <gazebo>
    blocks are: on a robot's link (its URDF carries them), on a body (mounted on it), on a
    static link (mounted on the world at its pose); the robot drives on velocity commands
    and its lidar sees the wall ahead."""
    wheel = ('<link name="{n}"><pose>0 {y} 0.08 -1.5707963267948966 0 0</pose><inertial><mass>'
             "0.5</mass><inertia><ixx>0.001</ixx><iyy>0.001</iyy><izz>0.0016</izz></inertia>"
             '</inertial><collision name="c"><geometry><cylinder><radius>0.08</radius><length>'
             "0.04</length></cylinder></geometry></collision></link>"
             '<joint name="{n}_joint" type="revolute"><parent>chassis</parent><child>{n}</child>'
             "<axis><xyz>0 0 1</xyz></axis></joint>")
    imu = '<sensor name="puck_imu" type="imu"><pose>0.02 0 0 0 0 0</pose></sensor>'
    w = mb_sim.load_world(_sdf(f"""
      <include><uri>model://ground_plane</uri></include>
      <model name="overhead"><static>true</static><pose>0 -1 3 0 1.5707963267948966 0</pose>
        <link name="link"><sensor name="top_cam" type="camera"><pose>0 0 0.1 0 0 0</pose>
          <update_rate>5</update_rate><camera><image><width>64</width><height>48</height>
          </image></camera></sensor></link></model>
      <model name="wall"><static>true</static><pose>2 0 0.5 0 0 0</pose><link name="l">
        <collision name="c"><geometry><box><size>0.1 4 1</size></box></geometry></collision>
        </link></model>
      <model name="puck"><pose>0 1 0.05 0 0 0</pose>{_box_link("l", "0 0 0", imu)}</model>
      <model name="bot"><pose>0 0 0.001 0 0 0</pose>
        <link name="chassis"><pose>0 0 0.12 0 0 0</pose><inertial><mass>4</mass><inertia>
          <ixx>0.03</ixx><iyy>0.04</iyy><izz>0.05</izz></inertia></inertial>
          <collision name="c"><geometry><box><size>0.3 0.2 0.08</size></box></geometry>
          </collision>
          <collision name="caster"><pose>0.12 0 -0.09 0 0 0</pose><geometry><sphere><radius>
            0.03</radius></sphere></geometry><surface><friction><ode><mu>0</mu></ode>
            </friction></surface></collision>
          <sensor name="lidar" type="gpu_lidar"><pose>0 0 0.1 0 0 0</pose><lidar><scan>
            <horizontal><samples>360</samples><min_angle>-3.14159265</min_angle>
            <max_angle>3.14159265</max_angle></horizontal></scan><range><min>0.05</min>
            <max>10</max></range></lidar></sensor></link>
        {wheel.format(n="left", y=0.13)}{wheel.format(n="right", y=-0.13)}
        <plugin filename="gz-sim-diff-drive-system" name="gz::sim::systems::DiffDrive">
          <left_joint>left_joint</left_joint><right_joint>right_joint</right_joint>
          <wheel_separation>0.26</wheel_separation><wheel_radius>0.08</wheel_radius>
        </plugin></model>"""))
    assert [(s.name, s.link) for s in w.sensors] == [("top_cam", "world"), ("puck_imu", "puck")]
    sim = mb_sim.Simulation(world=w, dt=0.001)
    assert set(sim.sensor_names) == {"top_cam", "puck_imu", "lidar"}
    np.testing.assert_allclose(sim.sensor_pose("top_cam")[0], [0.1, -1.0, 3.0], atol=1e-9)
    np.testing.assert_allclose(sim.sensor_pose("puck_imu")[0], [0.02, 1.0, 0.05], atol=1e-9)
    assert sim.read_sensor("top_cam").shape == (48, 64, 3)
    drive = sim.drives["bot"]
    assert drive.spec.left_joints == ("left_joint",) and drive.spec.wheel_radius == 0.08
    sim.step(300)
    lidar_x = sim.sensor_pose("lidar")[0][0]
    assert sim.read_sensor("lidar")[180] == pytest.approx(1.95 - lidar_x, abs=0.01)
    drive.reset(sim.time)
    t0, start = sim.time, None
    while sim.time < t0 + 3.0 - 1e-9:  # 1 s to reach the speed, then 2 s at it
        # the speed taken up over 0.5 s, as a drive limits its acceleration (a step in the
        # wheels' speed lifts the chassis onto its rear edge, whence it may or may not fall
        # back within the second)
        drive.command(0.25 * min(1.0, (sim.time - t0) / 0.5), 0.0, sim.time)
        sim.step(10)
        if start is None and sim.time >= t0 + 1.0 - 1e-9:
            start = sim.robot("bot").base_pose()[0].copy()
    moved = sim.robot("bot").base_pose()[0] - start
    assert moved[0] == pytest.approx(0.5, rel=0.03) and abs(moved[1]) < 0.02


def test_a_static_model_nested_in_a_moving_one_is_the_world_to_its_joints() -> None:
    """A door: its frame a static model nested in the door model, its panel hinged to the
    frame's post (the post the hinge's parent, and once its child): the post is a static
    body and the panel a robot hinged to the world, swinging the same way both times."""
    def door(parent: str, child: str, axis: str) -> mb_sim.World:
        return mb_sim.load_world(_sdf(f"""
          <model name="door">
            <model name="frame"><static>true</static>
              {_box_link("post", "0 0 1")}</model>
            {_box_link("panel", "0.4 0 1")}
            <joint name="hinge" type="revolute"><pose relative_to="frame::post">0 0 0 0 0 0
              </pose><parent>{parent}</parent><child>{child}</child>
              <axis><xyz>{axis}</xyz></axis></joint>
          </model>"""))
    worlds = [door("frame::post", "panel", "0 0 1"), door("panel", "frame::post", "0 0 -1")]
    for w in worlds:
        assert w.body_names == ("door__frame__post",) and w.body("door__frame__post").static
        assert [r.name for r in w.robots] == ["door"] and not w.robots[0].floating
    sims = [mb_sim.Simulation(world=w, dt=0.001) for w in worlds]
    for sim in sims:
        sim.robot("door").set_effort({"hinge": 0.2})
        sim.step(300)
    a, b = (s.robot("door") for s in sims)
    assert a.q[0] > 0.05 and a.q[0] == pytest.approx(b.q[0], abs=1e-9)
    np.testing.assert_allclose(a.link_pose("panel")[0], b.link_pose("panel")[0], atol=1e-9)
    assert a.link_pose("panel")[0][1] > 0.01  # +z turns the panel (at +x) towards +y


def test_a_mimic_joint_follows_its_leader() -> None:
    """SDF 1.11's <mimic> (multiplier, offset, reference) couples the follower to its leader
    as the URDF's <mimic> does: q_follower = m (q_leader - reference) + offset."""
    def arm(name: str, y: float, mimic: str = "") -> str:
        return (f'{_box_link(name, f"0.2 {y} 1")}<joint name="{name}_hinge" type="revolute">'
                f'<pose>-0.2 0 0 0 0 0</pose><parent>post</parent><child>{name}</child>'
                f"<axis><xyz>0 1 0</xyz>{mimic}</axis></joint>")
    mimic = ('<mimic joint="lead_hinge" axis="axis"><multiplier>0.5</multiplier><offset>0.1'
             "</offset><reference>0.2</reference></mimic>")
    w = mb_sim.load_world(_sdf(
        f'<model name="pair">{_box_link("post", "0 0.25 1")}{arm("lead", 0.0)}'
        f'{arm("follow", 0.5, mimic)}<joint name="fix" type="fixed"><parent>world</parent>'
        "<child>post</child></joint><self_collide>false</self_collide></model>"))
    sim = mb_sim.Simulation(world=w, dt=0.001)
    robot = sim.robot("pair")
    sim.step(400)
    q = dict(zip(robot.joint_names, robot.q, strict=True))
    assert q["lead_hinge"] > 0.3
    assert q["follow_hinge"] == pytest.approx(0.5 * (q["lead_hinge"] - 0.2) + 0.1, abs=1e-3)


def test_worlds_as_gazebo_writes_them(caplog) -> None:
    """What Gazebo's own parser takes and XML does not: `--` in comments, prefixes without an
    xmlns declaration (elements and attributes), `::` in element names; and geometries mb_sim
    has not (two polylines) left out with a note, an automatic inertial without a collision
    to compute it from taking SDF's default."""
    text = _sdf(f"""
      <!-- run it: gz sim -v 4 --iterations 10 this.sdf -->
      <plugin filename="gz-sim-physics-system" name="p"><gz::system_priority>10
        </gz::system_priority></plugin>
      <model name="m">{_BALL.replace('<link name="l">', '<link name="l" gz:flag="1">')}
        <gz:extra>1</gz:extra></model>
      <model name="letter"><link name="l"><inertial auto="true"/><collision name="c">
        <geometry><polyline><point>0 0</point><point>1 0</point><point>0 1</point>
        <height>0.1</height></polyline><polyline><point>0 0</point><point>1 1</point>
        <point>0 1</point><height>0.1</height></polyline></geometry></collision></link>
      </model>""")
    with caplog.at_level(logging.INFO, logger="mb_sim"):
        w = mb_sim.load_world(text)
    assert w.body_names == ("m",) and [r.name for r in w.robots] == ["letter"]
    line = next(r.getMessage() for r in caplog.records if "not simulated" in r.getMessage())
    for fragment in ("plugin x1 (world/plugin[p];",
                     "gz:extra x1 (world/model[m]/gz:extra",
                     "polyline geometry x1 (world/model[letter]/link[l]/collision[c]/geometry",
                     "automatic inertial x1 (world/model[letter]/link[l]/inertial"):
        assert fragment in line, fragment
