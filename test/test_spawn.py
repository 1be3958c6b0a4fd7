"""Spawn resources (mb_sim.model.spawn): world-file YAML bodies, one-link URDFs and SDF models
turned into placed world bodies, and every bad request refused with its simulation_interfaces problem and a
message that names it. The bodies then simulate as world bodies do."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
from robot_data import robots_dir
from transforms3d.euler import euler2mat
from transforms3d.quaternions import mat2quat, quat2mat

import mb_sim.model.spawn as spawn_module
from mb_sim.errors import SpawnError
from mb_sim.model.mesh import convex_hull_vertices
from mb_sim.model.spawn import free_name, spawn_body
from mb_sim.model.world import load_world
from mb_sim.sim import Simulation

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "config" / "worlds" / "table.yaml"
ASSETS = Path(__file__).parent / "assets"

BOX = "{name: crate, shape: box, size: [0.2, 0.1, 0.05], mass: 0.5}"


def _urdf(link: str, name: str = "thing") -> str:
    return f'<robot name="{name}">{link}</robot>'


def _link(collisions: str, inertial: str = "", name: str = "body") -> str:
    return f'<link name="{name}">{inertial}{collisions}</link>'


def _box_collision(size: str = "0.2 0.1 0.05", xyz: str = "0 0 0", rpy: str = "0 0 0") -> str:
    return (f'<collision><origin xyz="{xyz}" rpy="{rpy}"/><geometry><box size="{size}"/>'
            '</geometry></collision>')


def _inertial(mass: float = 1.5, xyz: str = "0 0 0", rpy: str = "0 0 0",
              moments: str = 'ixx="0.01" iyy="0.02" izz="0.025" ixy="0.001" ixz="0" iyz="0"'
              ) -> str:
    return (f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
            f'<inertia {moments}/></inertial>')


def _refused(problem: str, *fragments: str, **request: object) -> SpawnError:
    with pytest.raises(SpawnError) as info:
        spawn_body(**request)  # type: ignore[arg-type]
    assert info.value.problem == problem, str(info.value)
    for fragment in fragments:
        assert fragment in str(info.value)
    return info.value


def _same_rotation(q1: np.ndarray, q2: np.ndarray) -> bool:
    return bool(np.isclose(abs(float(np.dot(q1, q2))), 1.0, atol=1e-12))


def _matrix(q_xyzw: np.ndarray) -> np.ndarray:
    x, y, z, w = q_xyzw
    return quat2mat([w, x, y, z])


# ------------------------------------------------------------------------------------------
# world-file YAML


def test_yaml_body_at_the_identity_is_the_world_files_body() -> None:
    """A body from its text, and one picked from a world file, are those load_world makes."""
    world = load_world(TABLE)
    for name in ("box_green", "ball", "table_top"):
        spawned = spawn_body(uri=f"{TABLE}#{name}")
        got, want = spawned.body, world.body(name)
        assert spawned.format == "yaml" and got.name == name
        for field in ("mass", "static", "friction", "restitution", "geometry"):
            assert getattr(got, field) == getattr(want, field), field
        for field in ("xyz", "quat_xyzw", "inertia", "linear_velocity", "angular_velocity"):
            assert np.array_equal(getattr(got, field), getattr(want, field)), field


def test_yaml_body_is_placed_by_the_spawn_pose() -> None:
    """The entry's pose and velocities are in the spawn frame: a quarter turn about z maps
    x to y."""
    entry = ("{name: b, shape: sphere, size: [0.1], xyz: [1, 0, 0.5], "
             "linear_velocity: [2, 0, 0], angular_velocity: [0, 3, 0]}")
    s = math.sqrt(0.5)
    body = spawn_body(resource_string=entry, xyz=[10, 20, 30], quat_xyzw=[0, 0, s, s]).body
    assert np.allclose(body.xyz, [10, 21, 30.5], atol=1e-12)
    assert np.allclose(body.linear_velocity, [0, 2, 0], atol=1e-12)
    assert np.allclose(body.angular_velocity, [-3, 0, 0], atol=1e-12)
    assert _same_rotation(body.quat_xyzw, np.array([0, 0, s, s]))
    assert body.xyz.flags.writeable is False


def test_body_of_a_jointed_world_file_is_spawned_alone(caplog: pytest.LogCaptureFixture
                                                       ) -> None:
    door = ROOT / "config" / "worlds" / "door.yaml"
    joint = load_world(door).joints[0]
    body = spawn_body(uri=f"{door}#{joint.child}", name="loose").body
    assert body.name == "loose" and not body.static
    assert f"spawned alone, without its joints {joint.name!r}" in caplog.text


def test_yaml_file_with_relative_mesh(tmp_path: Path) -> None:
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "cube.stl").write_bytes((ASSETS / "cube.stl").read_bytes())
    (tmp_path / "part.yaml").write_text("name: part\nshape: mesh\nmesh: parts/cube.stl\n"
                                        "mass: 0.2\n")
    spawned = spawn_body(uri=f"file://{tmp_path / 'part.yaml'}", xyz=[0, 0, 1])
    assert spawned.body.geometry.mesh == str((tmp_path / "parts" / "cube.stl").resolve())
    assert spawned.body.mass == 0.2 and spawned.source == str(tmp_path / "part.yaml")


def test_world_file_needs_a_fragment_when_it_holds_several_bodies(tmp_path: Path) -> None:
    count = len(load_world(TABLE).bodies)
    _refused("RESOURCE_PARSE_ERROR", f"holds {count} bodies", "#name", uri=str(TABLE))
    _refused("RESOURCE_PARSE_ERROR", "no body named 'mug'", "box_red", uri=f"{TABLE}#mug")
    one = tmp_path / "crate.yaml"
    one.write_text(BOX)
    _refused("RESOURCE_PARSE_ERROR", "needs a world file", uri=f"{one}#crate")
    text = "bodies:\n  - " + BOX + "\n"
    assert spawn_body(resource_string=text).body.name == "crate"  # its only body


# ------------------------------------------------------------------------------------------
# one-link URDF


def test_urdf_link_becomes_the_equivalent_world_body() -> None:
    """Collision origin rotated and offset, inertial offset and rotated: the body equals the
    YAML body that states the same solid in shape axes (R_c^T R_i I R_i^T R_c about the COM
    R_c^T (c - p_c)), and its entity frame is the link frame at the spawn pose."""
    p_c, rpy_c = np.array([0.0, 0.01, 0.02]), (0.0, 0.0, math.pi / 2)
    c, rpy_i = np.array([0.01, 0.02, 0.03]), (0.3, 0.0, 0.0)
    inertia = np.array([[0.01, 0.001, 0.0], [0.001, 0.02, 0.0], [0.0, 0.0, 0.025]])
    urdf = _urdf(_link(_box_collision(xyz="0 0.01 0.02", rpy=f"0 0 {math.pi / 2!r}"),
                       _inertial(xyz="0.01 0.02 0.03", rpy="0.3 0 0")))
    pose_xyz, pose_rpy = np.array([0.3, -0.2, 0.5]), (0.1, 0.2, 0.3)
    pose_rot = euler2mat(*pose_rpy, axes="sxyz")
    w, x, y, z = mat2quat(pose_rot)
    got = spawn_body(resource_string=urdf, xyz=pose_xyz, quat_xyzw=[x, y, z, w])
    assert got.format == "urdf" and got.body.name == "thing"

    R_c, R_i = euler2mat(*rpy_c, axes="sxyz"), euler2mat(*rpy_i, axes="sxyz")
    inertia_shape = R_c.T @ R_i @ inertia @ R_i.T @ R_c
    com_shape = R_c.T @ (c - p_c)
    yaml_entry = {"name": "same", "shape": "box", "size": [0.2, 0.1, 0.05], "mass": 1.5,
                  "inertia": inertia_shape.tolist(), "com": com_shape.tolist(),
                  "xyz": p_c.tolist(), "rpy": list(rpy_c)}
    want = spawn_body(resource_string=str(yaml_entry).replace("'", '"'), xyz=pose_xyz,
                      quat_xyzw=[x, y, z, w]).body
    body = got.body
    assert body.mass == want.mass and body.geometry.kind == "box"
    assert np.allclose(body.geometry.xyz, want.geometry.xyz, atol=1e-15)
    assert np.allclose(body.inertia, want.inertia, atol=1e-15)
    assert np.array_equal(body.inertia, body.inertia.T)
    assert np.allclose(body.xyz, want.xyz, atol=1e-15)
    assert _same_rotation(body.quat_xyzw, want.quat_xyzw)
    assert np.allclose(body.xyz, pose_xyz + pose_rot @ c, atol=1e-15)  # the COM, placed
    link_rot = _matrix(body.quat_xyzw) @ _matrix(got.frame_quat_xyzw)
    link_xyz = body.xyz + _matrix(body.quat_xyzw) @ got.frame_xyz
    assert np.allclose(link_rot, pose_rot, atol=1e-12)
    assert np.allclose(link_xyz, pose_xyz, atol=1e-12)


def test_urdf_link_without_inertial_is_solid_at_density_1000() -> None:
    body = spawn_body(resource_string=_urdf(_link(_box_collision()))).body
    assert body.mass == pytest.approx(1000 * 0.2 * 0.1 * 0.05, rel=1e-12)
    assert np.allclose(np.diag(body.inertia),
                       [body.mass / 12 * (b * b + c * c) for b, c in
                        ((0.1, 0.05), (0.2, 0.05), (0.2, 0.1))], rtol=1e-12)


def test_real_one_link_urdf_with_package_mesh_comes_to_rest_on_the_ground() -> None:
    """example-robot-data's quadrotor base (a package:// STL collision mesh, its inertial),
    spawned above the ground and simulated for 1.5 s: it lands and rests on its hull."""
    urdf = robots_dir() / "hector_description" / "robots" / "quadrotor_base.urdf"
    spawned = spawn_body(uri=str(urdf), name="drone", xyz=[0, 0, 0.3],
                         package_dirs=[robots_dir().parents[1]])
    body = spawned.body
    assert body.geometry.kind == "mesh" and body.mass == pytest.approx(1.477)
    world = load_world("ground: {height: 0.0}\n")
    sim = Simulation(world=dataclasses.replace(world, bodies=(body,)), dt=0.001)
    sim.step(1500)
    xyz, quat = sim.body_pose("drone")
    linear, angular = sim.body_velocity("drone")
    hull = convex_hull_vertices(body.geometry.mesh, body.geometry.scale)
    lowest = float(np.min((hull + np.array(body.geometry.xyz)) @ _matrix(quat).T[:, 2] + xyz[2]))
    assert abs(lowest) < 5e-3, lowest
    assert np.linalg.norm(linear) < 1e-2 and np.linalg.norm(angular) < 5e-2


def test_urdf_cylinder_offsets_rest_at_the_closed_form_height() -> None:
    """A cylinder whose collision sits 0.05 m above the link origin and whose COM is off its
    axis: spawned upright, it stands on its base, the link origin 0.05 - 0.05 = 0 m high."""
    collision = ('<collision><origin xyz="0 0 0.05"/><geometry><cylinder radius="0.04" '
                 'length="0.1"/></geometry></collision>')
    urdf = _urdf(_link(collision, _inertial(mass=0.3, xyz="0.005 0 0.04", moments=(
        'ixx="2e-4" iyy="2e-4" izz="2.4e-4" ixy="0" ixz="0" iyz="0"'))), name="can")
    spawned = spawn_body(resource_string=urdf, xyz=[0, 0, 0.01])
    world = load_world("ground: {height: 0.0}\n")
    sim = Simulation(world=dataclasses.replace(world, bodies=(spawned.body,)), dt=0.001)
    sim.step(1000)
    xyz, quat = sim.body_pose("can")
    link_z = xyz[2] + (_matrix(quat) @ spawned.frame_xyz)[2]
    assert link_z == pytest.approx(0.0, abs=2e-3)
    assert xyz[2] == pytest.approx(0.04, abs=2e-3)


def test_names_and_renaming() -> None:
    assert spawn_body(resource_string=BOX, name="other").body.name == "other"
    assert spawn_body(resource_string=BOX, taken={"crate"}, allow_renaming=True,
                      ).body.name == "crate_1"
    unnamed = "{shape: sphere, size: [0.1]}"
    assert spawn_body(resource_string=unnamed, allow_renaming=True,
                      taken={"body"}).body.name == "body_1"
    assert free_name("a", {"a", "a_1"}) == "a_2" and free_name("a", ()) == "a"


# ------------------------------------------------------------------------------------------
# bad requests: each refused with its problem, the message naming it


def test_bad_names() -> None:
    _refused("NAME_INVALID", "no name given", resource_string="{shape: sphere, size: [0.1]}")
    _refused("NAME_NOT_UNIQUE", "'crate' (from <resource_string>) is taken",
             resource_string=BOX, taken={"crate"})
    _refused("NAME_NOT_UNIQUE", "'box' is taken", "'box_1'", resource_string=BOX, name="box",
             taken={"box"})
    _refused("NAME_INVALID", "reserved", resource_string=BOX, name="world")
    _refused("NAME_INVALID", "whitespace", resource_string=BOX, name="my box")
    _refused("NAME_INVALID", "longer than 256", resource_string=BOX, name="b" * 300)
    _refused("NAME_INVALID", "the resource's name", "whitespace",
             resource_string="{name: 'a b', shape: sphere, size: [0.1]}")


@pytest.mark.parametrize(("xyz", "quat", "fragment"), [
    ([0, 0, math.nan], [0, 0, 0, 1], "position [0.0, 0.0, nan]"),
    ([0, 0, 2e5], [0, 0, 0, 1], "within +-100000 m"),
    ([0, 0, 0], [0, 0, 0, 0], "norm 0"),
    ([0, 0, 0], [0, 0, 0, 1.01], "not a unit quaternion"),
    ([0, 0, 0], [math.nan, 0, 0, 1], "nan"),
    ([0, 0], [0, 0, 0, 1], "3 finite numbers"),
    ([0, 0, "up"], [0, 0, 0, 1], "must be numbers"),
])
def test_bad_poses(xyz: list[float], quat: list[float], fragment: str) -> None:
    _refused("INVALID_POSE", fragment, resource_string=BOX, xyz=xyz, quat_xyzw=quat)


def test_pose_that_puts_the_body_outside_the_world() -> None:
    entry = "{name: far, shape: sphere, size: [0.1], xyz: [60000, 0, 0]}"
    _refused("INVALID_POSE", "outside the world", resource_string=entry, xyz=[60000, 0, 0])


def test_size_is_refused_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_parsing(*args: object) -> None:
        raise AssertionError("parsed a resource that is too large")

    monkeypatch.setattr(spawn_module, "parse_yaml", no_parsing)
    monkeypatch.setattr(spawn_module.ET, "fromstring", no_parsing)
    ten_mb = "x" * (10 * 1024 * 1024)
    _refused("RESOURCE_PARSE_ERROR", "resource_string of 10485760 bytes is larger than the "
             "1048576 accepted", resource_string=ten_mb)
    _refused("RESOURCE_PARSE_ERROR", "larger than", resource_string="<robot>" + ten_mb)


def test_big_file_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("#" * (2 * 1024 * 1024))
    _refused("RESOURCE_PARSE_ERROR", str(big), "larger than", uri=str(big))


@pytest.mark.parametrize(("text", "fragments"), [
    ("[1, 2, 3]", ["not a body", "list"]),
    ("just words", ["not a body", "str"]),
    ("", None),  # NO_RESOURCE below
    ("   \n", ["is empty"]),
    ("ground: {height: 0}", ["ground: unknown key", "allowed: name, shape"]),
    ("{name: b, shape: box}", ["size: shape box needs size"]),
    ("{name: b, shape: blob, size: [1]}", ["shape: must be one of box, sphere"]),
    ("{name: b, shape: box, size: [0.1, 0.1, .nan]}", ["size[2]: must be finite"]),
    ("{name: b, shape: sphere, size: [0.1], xyz: [0, 0, .inf]}", ["xyz[2]: must be finite"]),
    ("{name: b, shape: sphere, size: [0.1], mass: -1}", ["mass: must be >= 1e-06"]),
    ("name: b\nshape: [unclosed", ["line 2", "YAML error"]),
    ("a: &x 1\nb: *x", ["aliases"]),
])
def test_yaml_that_is_not_a_body(text: str, fragments: list[str] | None) -> None:
    if fragments is None:
        _refused("NO_RESOURCE", "both empty", resource_string=text)
        return
    error = _refused("RESOURCE_PARSE_ERROR", "<resource_string>", *fragments,
                     resource_string=text)
    assert len(str(error)) < 600


@pytest.mark.parametrize(("urdf", "problem", "fragments"), [
    (_urdf(_link(_box_collision(), name="a") + _link(_box_collision(), name="b")
           + '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>'),
     "RESOURCE_PARSE_ERROR", ["exactly one <link>", "has 2 ('a', 'b')"]),
    (_urdf(""), "RESOURCE_PARSE_ERROR", ["has 0"]),
    (_urdf(_link(_box_collision() + _box_collision(xyz="0 0 0.1"))), "FEATURE_UNSUPPORTED",
     ["link 'body' has 2 collision shapes", "exactly one"]),
    (_urdf(_link("", _inertial())), "FEATURE_UNSUPPORTED", ["has 0 collision shapes"]),
    (_urdf(_link(_box_collision(size="0.2 nan 0.05"))), "RESOURCE_PARSE_ERROR",
     ["<box>", "size", "nan"]),
    (_urdf(_link(_box_collision(), _inertial(mass=0.0))), "RESOURCE_PARSE_ERROR",
     ["floating base needs mass > 0"]),
    (_urdf(_link(_box_collision(), _inertial(moments='ixx="-1" iyy="1" izz="1" ixy="0" '
                                             'ixz="0" iyz="0"'))),
     "RESOURCE_PARSE_ERROR", ["link 'body': inertia", "more than the 0.5 that is repaired"]),
    ('<robot name="r"><link name="a">', "RESOURCE_PARSE_ERROR", ["malformed XML"]),
    (_urdf(_link('<collision><geometry><mesh filename="package://nowhere/m.stl"/></geometry>'
                 '</collision>')), "MISSING_ASSETS", ["link 'body': mesh", "nowhere"]),
    ('<sdf version="1.9"><model name="m"/></sdf>', "FEATURE_UNSUPPORTED",
     ["model 'm' is 0 parts of a world", "one body (one link of one collision)"]),
    ('<mujoco model="m"/>', "UNSUPPORTED_FORMAT", ["MJCF"]),
    ("#usda 1.0\n", "UNSUPPORTED_FORMAT", ["USD"]),
    ("<html/>", "UNSUPPORTED_FORMAT", ["root element <html>"]),
])
def test_bad_urdf_and_foreign_formats(urdf: str, problem: str, fragments: list[str]) -> None:
    _refused(problem, *fragments, resource_string=urdf)


def test_bad_uris(tmp_path: Path) -> None:
    _refused("NOT_FOUND", "missing.yaml", uri=str(tmp_path / "missing.yaml"))
    _refused("NOT_FOUND", "cannot resolve", uri="package://no_such_package/body.yaml")
    for ext, fmt in ((".usd", "USD"), (".xacro", "xacro")):
        path = tmp_path / f"m{ext}"
        path.write_text("<x/>")
        _refused("UNSUPPORTED_FORMAT", fmt, str(path), uri=str(path))
    sdf = tmp_path / "m.sdf"
    sdf.write_text("<x/>")
    _refused("RESOURCE_PARSE_ERROR", "root element is <sdf>", uri=str(sdf))
    _refused("NOT_FOUND", "model://no_such_model", "GZ_SIM_RESOURCE_PATH",
             uri="model://no_such_model")
    urdf = tmp_path / "one.urdf"
    urdf.write_text(_urdf(_link(_box_collision())))
    _refused("RESOURCE_PARSE_ERROR", "a URDF holds one body", uri=f"{urdf}#body")
    assert spawn_body(uri=str(urdf)).body.name == "thing"


def test_missing_and_unreadable_meshes(tmp_path: Path) -> None:
    _refused("MISSING_ASSETS", "mesh", "gone.stl",
             resource_string="{name: m, shape: mesh, mesh: gone.stl, mass: 1}")
    junk = tmp_path / "junk.stl"
    junk.write_text("this is not a mesh")
    _refused("UNSUPPORTED_ASSETS", str(junk),
             resource_string=f"{{name: m, shape: mesh, mesh: {junk}, mass: 1}}")
    _refused("UNSUPPORTED_ASSETS", "link 'body': mesh", str(junk), resource_string=_urdf(
        _link(f'<collision><geometry><mesh filename="{junk}"/></geometry></collision>',
              _inertial())))


# ------------------------------------------------------------------------------------------
# SDF models

SDF_DATA = Path(__file__).parent / "data" / "sdf"


def _sdf_model(link: str, pose: str = "0 0 0 0 0 0", name: str = "thing") -> str:
    return f'<sdf version="1.9"><model name="{name}"><pose>{pose}</pose>{link}</model></sdf>'


SDF_LINK = ('<link name="l"><pose>0 0 0.1 0 0 0</pose><inertial><pose>0.02 0 0 0 0 0</pose>'
            "<mass>0.4</mass><inertia><ixx>0.001</ixx><iyy>0.002</iyy><izz>0.0025</izz>"
            '</inertia></inertial><collision name="c"><pose>0 0 0 0 0 0.3</pose><geometry><box>'
            "<size>0.2 0.1 0.05</size></box></geometry><surface><friction><ode><mu>0.4</mu>"
            "</ode></friction><bounce><restitution_coefficient>0.2</restitution_coefficient>"
            "</bounce></surface></collision></link>")


def test_sdf_model_is_placed_by_the_spawn_pose_not_its_own() -> None:
    """An SDF model (<model>, or <sdf> holding one) becomes the body load_world would make of
    it, with its model frame where the spawn pose puts it (its own <pose> replaced)."""
    world = load_world(f'<sdf version="1.9"><world name="w">{_sdf_model(SDF_LINK)[19:-6]}'
                       "</world></sdf>")
    want = world.body("thing")
    for text in (_sdf_model(SDF_LINK, "5 5 5 0 0 1"), _sdf_model(SDF_LINK)[19:-6]):
        spawned = spawn_body(resource_string=text, xyz=[1.0, 2.0, 3.0])
        got = spawned.body
        assert spawned.format == "sdf" and got.name == "thing"
        assert (got.mass, got.friction, got.restitution, got.geometry) == \
            (want.mass, want.friction, want.restitution, want.geometry)
        np.testing.assert_allclose(got.xyz, want.xyz + [1.0, 2.0, 3.0], atol=1e-12)
        assert _same_rotation(got.quat_xyzw, want.quat_xyzw)
        np.testing.assert_allclose(got.inertia, want.inertia, atol=1e-15)
        # the model frame sits at the spawn pose: body pose composed with frame_xyz
        origin = got.xyz + _matrix(got.quat_xyzw) @ spawned.frame_xyz
        np.testing.assert_allclose(origin, [1.0, 2.0, 3.0], atol=1e-12)


def test_sdf_model_from_a_model_folder_and_model_uri(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    shutil.copytree(SDF_DATA / "models", tmp_path / "models")
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(tmp_path / "models"))
    for uri in ("model://crate", str(tmp_path / "models" / "crate"),
                f"file://{tmp_path / 'models' / 'crate' / 'model.sdf'}"):
        spawned = spawn_body(uri=uri, xyz=[0.0, 0.0, 0.5])
        assert spawned.body.name == "crate" and spawned.body.geometry.size == (0.2, 0.15, 0.1)
        assert spawned.body.mass == 0.6 and spawned.body.friction == 0.6
        np.testing.assert_allclose(spawned.body.xyz, [0.0, 0.0, 0.5])
    _refused("RESOURCE_PARSE_ERROR", "an SDF model holds one body", uri="model://crate#body")
    sim = Simulation(world=load_world({"ground": True}), dt=0.001)
    sim.add_body(spawn_body(uri="model://crate", xyz=[0.0, 0.0, 0.3]).body)
    sim.step(800)
    assert sim.body_pose("crate")[0][2] == pytest.approx(0.05, abs=1e-3)


@pytest.mark.parametrize(("text", "problem", "fragments"), [
    (_sdf_model(SDF_LINK + SDF_LINK.replace('name="l"', 'name="m"')), "FEATURE_UNSUPPORTED",
     ["model 'thing' is 2 parts of a world (body 'thing__l', body 'thing__m')"]),
    (_sdf_model(SDF_LINK + SDF_LINK.replace('name="l"', 'name="m"')
                + '<joint name="j" type="revolute"><parent>l</parent><child>m</child><axis>'
                  "<xyz>0 0 1</xyz></axis></joint>"),
     "FEATURE_UNSUPPORTED", ["robot or URDF object 'thing'"]),
    (_sdf_model('<link name="l"><collision name="c"><geometry><mesh><uri>model://nowhere/m.stl'
                "</uri></mesh></geometry></collision></link>"),
     "MISSING_ASSETS", ["geometry/mesh/uri: cannot find 'model://nowhere/m.stl'"]),
    (_sdf_model(SDF_LINK.replace("0.2 0.1 0.05", "0.2 -0.1 0.05")), "RESOURCE_PARSE_ERROR",
     ["model[thing]/link[l]/collision[c]/geometry/box/size", "'0.2 -0.1 0.05'"]),
    ('<sdf version="1.9"><world name="w"/></sdf>', "RESOURCE_PARSE_ERROR",
     ["holds one <model>, not a <world>"]),
])
def test_bad_sdf_models(text: str, problem: str, fragments: list[str]) -> None:
    _refused(problem, *fragments, resource_string=text)
