"""World files: loading, defaults, validation errors, mesh bodies, the scenes in config/worlds."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from mb_sim.errors import WorldError
from mb_sim.model.mass import box_properties
from mb_sim.model.world import (
    Body,
    SolverSettings,
    World,
    combine_friction,
    combine_restitution,
    load_world,
)
from mb_sim.rotations import matrix_from_quat, quat_from_rpy, rpy_matrix

ROOT = Path(__file__).resolve().parents[1]
WORLDS = sorted((ROOT / "config" / "worlds").glob("*.yaml"))
ASSETS = Path(__file__).parent / "assets"

BASE = """\
gravity: [0, 0, -9.81]
ground: {height: 0.0, friction: 0.8, restitution: 0.0}
robot: {xyz: [0, 0, 0], rpy: [0, 0, 0]}
bodies:
  - name: box1
    shape: box
    size: [0.1, 0.1, 0.1]
    mass: 0.5
    xyz: [0.5, 0.0, 0.05]
    rpy: [0, 0, 0]
    linear_velocity: [0, 0, 0]
    angular_velocity: [0, 0, 0]
    static: false
    friction: 0.6
    restitution: 0.0
  - name: door
    shape: box
    size: [0.04, 0.9, 2.0]
    density: 500
    xyz: [1.0, 0.45, 1.0]
joints:
  - name: hinge
    type: revolute
    parent: world
    child: door
    anchor: [1.0, 0.0, 1.0]
    axis: [0, 0, 1]
    limits: [-1.5, 1.5]
    friction: 20.0
solver: {iterations: 30}
"""


def base() -> dict[str, Any]:
    return yaml.safe_load(BASE)


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Mutation that sets a dotted key path like 'bodies.0.mass' (list indices as numbers)."""

    def apply(d: dict[str, Any]) -> None:
        keys = path.split(".")
        node: Any = d
        for k in keys[:-1]:
            node = node[int(k)] if isinstance(node, list) else node[k]
        last = keys[-1]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return apply


def _del(path: str) -> Callable[[dict[str, Any]], None]:
    def apply(d: dict[str, Any]) -> None:
        keys = path.split(".")
        node: Any = d
        for k in keys[:-1]:
            node = node[int(k)] if isinstance(node, list) else node[k]
        del node[keys[-1]]

    return apply


def _all(*fns: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def apply(d: dict[str, Any]) -> None:
        for f in fns:
            f(d)

    return apply


def _rename_top(d: dict[str, Any]) -> None:
    d["gravty"] = d.pop("gravity")


def _dup_joint(d: dict[str, Any]) -> None:
    d["joints"].append(copy.deepcopy(d["joints"][0]))


def _as_mesh(uri: str) -> Callable[[dict[str, Any]], None]:
    return _all(_set("bodies.0.shape", "mesh"), _del("bodies.0.size"), _set("bodies.0.mesh", uri))


INF = float("inf")
NAN = float("nan")

# (id, mutation, key path in the message, value text in the message, extra text or None)
BAD: list[tuple[str, Callable[[dict[str, Any]], None], str, str, str | None]] = [
    ("unknown_top_key", _rename_top, "gravty", "[0, 0, -9.81]", "did you mean 'gravity'"),
    ("unknown_body_key", _set("bodies.0.frction", 0.5), "bodies[0].frction", "0.5",
     "did you mean 'friction'"),
    ("unknown_joint_key", _set("joints.0.axsi", [0, 0, 1]), "joints[0].axsi", "[0, 0, 1]",
     "did you mean 'axis'"),
    ("mass_wrong_type", _set("bodies.0.mass", "heavy"), "bodies[0].mass", "'heavy'", "number"),
    ("mass_negative", _set("bodies.0.mass", -1.0), "bodies[0].mass", "-1.0", ">= 1e-06"),
    ("mass_zero", _set("bodies.0.mass", 0), "bodies[0].mass", "0", ">= 1e-06"),
    ("mass_nan", _set("bodies.0.mass", NAN), "bodies[0].mass", "nan", "finite"),
    ("xyz_inf", _set("bodies.0.xyz", [0, INF, 0]), "bodies[0].xyz[1]", "inf", "finite"),
    ("xyz_bool", _set("bodies.0.xyz", [0, True, 0]), "bodies[0].xyz[1]", "True", "number"),
    ("size_zero", _set("bodies.0.size", [0.1, 0.0, 0.1]), "bodies[0].size[1]", "0.0", ">= 1e-06"),
    ("size_negative", _all(_set("bodies.0.shape", "sphere"), _set("bodies.0.size", [-0.1])),
     "bodies[0].size[0]", "-0.1", ">= 1e-06"),
    ("size_length", _set("bodies.0.size", [0.1, 0.1]), "bodies[0].size", "[0.1, 0.1]", "3"),
    ("size_missing", _del("bodies.0.size"), "bodies[0].size", "", "needs size"),
    ("density_zero", _set("bodies.1.density", 0), "bodies[1].density", "0", ">= 0.001"),
    ("density_negative", _set("bodies.1.density", -5.0), "bodies[1].density", "-5.0", ">= 0.001"),
    ("mass_and_density", _set("bodies.0.density", 100), "bodies[0].density", "100",
     "not both"),
    ("friction_negative", _set("bodies.0.friction", -0.1), "bodies[0].friction", "-0.1",
     ">= 0"),
    ("restitution_above_one", _set("bodies.0.restitution", 1.5), "bodies[0].restitution",
     "1.5", "<= 1"),
    ("restitution_negative", _set("bodies.0.restitution", -0.2), "bodies[0].restitution",
     "-0.2", ">= 0"),
    ("ground_friction", _set("ground.friction", -1.0), "ground.friction", "-1.0", ">= 0"),
    ("ground_restitution", _set("ground.restitution", 2), "ground.restitution", "2", "<= 1"),
    ("ground_unknown", _set("ground.heigth", 1.0), "ground.heigth", "1.0",
     "did you mean 'height'"),
    ("duplicate_body", _set("bodies.1.name", "box1"), "bodies[1].name", "'box1'", "duplicate"),
    ("body_named_world", _set("bodies.0.name", "world"), "bodies[0].name", "'world'",
     "reserved"),
    ("body_name_missing", _del("bodies.0.name"), "bodies[0].name", "", "missing"),
    ("body_not_mapping", _set("bodies.0", "box1"), "bodies[0]", "'box1'", "mapping"),
    ("bodies_not_list", _set("bodies", {"name": "x"}), "bodies", "{'name': 'x'}", "list"),
    ("shape_unknown", _set("bodies.0.shape", "sphre"), "bodies[0].shape", "'sphre'",
     "did you mean 'sphere'"),
    ("static_not_bool", _set("bodies.0.static", "yes please"), "bodies[0].static",
     "'yes please'", "true or false"),
    ("static_moving", _all(_set("bodies.0.static", True),
                           _set("bodies.0.linear_velocity", [1.0, 0, 0])),
     "bodies[0].linear_velocity", "[1.0, 0, 0]", "static"),
    ("inertia_triangle", _set("bodies.0.inertia", [1.0, 1.0, 3.0]), "bodies[0].inertia",
     "[1.0, 1.0, 3.0]", "triangle"),
    ("inertia_negative", _set("bodies.0.inertia", [-1.0, 1.0, 1.0]), "bodies[0].inertia",
     "[-1.0, 1.0, 1.0]", "positive definite"),
    ("inertia_shape", _set("bodies.0.inertia", [1.0, 2.0]), "bodies[0].inertia", "[1.0, 2.0]",
     "ixx"),
    ("inertia_without_mass", _all(_del("bodies.0.mass"), _set("bodies.0.inertia", [1, 1, 1])),
     "bodies[0].inertia", "[1, 1, 1]", "needs mass or density"),
    ("quat_zero", _all(_del("bodies.0.rpy"), _set("bodies.0.quat_xyzw", [0, 0, 0, 0])),
     "bodies[0].quat_xyzw", "[0, 0, 0, 0]", "zero"),
    ("rpy_and_quat", _set("bodies.0.quat_xyzw", [0, 0, 0, 1]), "bodies[0].quat_xyzw",
     "[0, 0, 0, 1]", "not both"),
    ("mesh_missing", _all(_set("bodies.0.shape", "mesh"), _del("bodies.0.size")),
     "bodies[0].mesh", "", "needs a mesh file"),
    ("mesh_file_missing", _as_mesh("meshes/missing.stl"), "bodies[0].mesh",
     "'meshes/missing.stl'", "missing.stl"),
    ("mesh_file_junk", _as_mesh("junk.stl"), "bodies[0].mesh", "'junk.stl'", "junk.stl"),
    ("mesh_file_flat", _as_mesh("flat.obj"), "bodies[0].mesh", "'flat.obj'", "flat"),
    ("mesh_with_size", _all(_as_mesh("cube.stl"), _set("bodies.0.size", [1, 1, 1])),
     "bodies[0].size", "[1, 1, 1]", "scale"),
    ("mesh_scale_zero", _all(_as_mesh("cube.stl"), _set("bodies.0.scale", [1, 0, 1])),
     "bodies[0].scale[1]", "0", ">= 1e-06"),
    ("mesh_key_on_box", _set("bodies.0.mesh", "cube.stl"), "bodies[0].mesh", "'cube.stl'",
     "only used by shape mesh"),
    ("joint_parent_unknown", _set("joints.0.parent", "nobody"), "joints[0].parent",
     "'nobody'", "names no body"),
    ("joint_child_unknown", _set("joints.0.child", "dor"), "joints[0].child", "'dor'",
     "did you mean 'door'"),
    ("joint_same_bodies", _set("joints.0.parent", "door"), "joints[0].child", "'door'",
     "same body"),
    ("joint_child_world", _set("joints.0.child", "world"), "joints[0].child", "'world'",
     "world"),
    ("joint_child_missing", _del("joints.0.child"), "joints[0].child", "", "missing"),
    ("joint_static_to_world", _set("bodies.1.static", True), "joints[0].child", "'door'",
     "static"),
    ("joint_type_unknown", _set("joints.0.type", "hinge"), "joints[0].type", "'hinge'",
     "revolute"),
    ("joint_axis_zero", _set("joints.0.axis", [0, 0, 0]), "joints[0].axis", "[0, 0, 0]",
     "zero"),
    ("joint_limits_reversed", _set("joints.0.limits", [1.0, -1.0]), "joints[0].limits",
     "[1.0, -1.0]", "lower"),
    ("joint_limits_length", _set("joints.0.limits", [1.0]), "joints[0].limits", "[1.0]", "2"),
    ("joint_limits_inf", _set("joints.0.limits", [-INF, 1.0]), "joints[0].limits[0]", "-inf",
     "finite"),
    ("joint_friction_negative", _set("joints.0.friction", -20.0), "joints[0].friction",
     "-20.0", ">= 0"),
    ("ball_with_limits", _all(_set("joints.0.type", "ball"), _del("joints.0.axis")),
     "joints[0].limits", "[-1.5, 1.5]", "no limits"),
    ("ball_with_axis", _all(_set("joints.0.type", "ball"), _del("joints.0.limits")),
     "joints[0].axis", "[0, 0, 1]", "not used"),
    ("fixed_with_friction", _all(_set("joints.0.type", "fixed"), _del("joints.0.axis"),
                                 _del("joints.0.limits")),
     "joints[0].friction", "20.0", "no friction"),
    ("joint_duplicate", _dup_joint, "joints[1].name", "'hinge'", "duplicate"),
    ("solver_iterations_zero", _set("solver.iterations", 0), "solver.iterations", "0", ">= 1"),
    ("solver_iterations_float", _set("solver.iterations", 2.5), "solver.iterations", "2.5",
     "integer"),
    ("solver_unknown", _set("solver.iteration", 10), "solver.iteration", "10",
     "did you mean 'iterations'"),
    ("solver_baumgarte", _set("solver.baumgarte", 1.5), "solver.baumgarte", "1.5", "<= 1"),
    ("solver_d_max", _set("solver.d_max", 0.0), "solver.d_max", "0.0", "> 0"),
    ("solver_tolerance", _set("solver.tolerance", -1e-7), "solver.tolerance", "-1e-07", ">= 0"),
    ("solver_bool", _set("solver.warm_start", "maybe"), "solver.warm_start",
     "'maybe'", "true or false"),
    ("robot_bool", _set("robot.self_collision", "maybe"), "robot.self_collision",
     "'maybe'", "true or false"),
    ("gravity_length", _set("gravity", [0, -9.81]), "gravity", "[0, -9.81]", "3"),
    ("gravity_string", _set("gravity", "down"), "gravity", "'down'", "list"),
    ("robot_limit_e", _set("robot.joint_limit_restitution", 2.0),
     "robot.joint_limit_restitution", "2.0", "<= 1"),
    ("robot_unknown", _set("robot.ryp", [0, 0, 0]), "robot.ryp", "[0, 0, 0]",
     "did you mean 'rpy'"),
    ("robot_initial_position", _set("robot.initial_positions", {"joint1": "up"}),
     "robot.initial_positions.joint1", "'up'", "number"),
]


@pytest.fixture
def mesh_dir(tmp_path: Path) -> Path:
    shutil.copy(ASSETS / "cube.stl", tmp_path / "cube.stl")
    (tmp_path / "junk.stl").write_bytes(b"\x00\x01 this is not a mesh")
    (tmp_path / "flat.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\n")
    return tmp_path


@pytest.mark.parametrize(("mutate", "key_path", "value", "extra"),
                         [pytest.param(*case[1:], id=case[0]) for case in BAD])
def test_bad_world_error_names_file_key_path_and_value(
        mesh_dir: Path, mutate: Callable[[dict[str, Any]], None], key_path: str, value: str,
        extra: str | None) -> None:
    d = base()
    load_world(d, base_dir=mesh_dir)  # the unmodified description is valid
    mutate(d)
    path = mesh_dir / "bad_world.yaml"
    path.write_text(yaml.safe_dump(d, sort_keys=False))
    with pytest.raises(WorldError) as err:
        load_world(path)
    msg = str(err.value)
    assert "bad_world.yaml" in msg
    assert f": {key_path}: " in msg
    if value:
        assert f"(got {value})" in msg
    if extra:
        assert extra in msg


def test_errors_from_text_and_dict_are_labelled(tmp_path: Path) -> None:
    with pytest.raises(WorldError, match=r"^<string>: bodies\[0\]\.mass: .*\(got -2\)"):
        load_world("bodies:\n  - {name: a, shape: sphere, size: [0.1], mass: -2}\n")
    with pytest.raises(WorldError, match=r"^<dict>: ground\.friction: .*\(got -1\)"):
        load_world({"ground": {"friction": -1}})


@pytest.mark.parametrize(("text", "fragment"), [
    ("bodies:\n  - {name: a, shape: box\n", "YAML error"),
    ("gravity: [0, 0, -9.81]\nground: {}\ngravity: [0, 0, 0]\n", "duplicate key 'gravity'"),
    ("bodies:\n  - name: a\n    shape: sphere\n    size: [0.1]\n    size: [0.2]\n",
     "duplicate key 'size'"),
    ("", "empty"),
    ("- just\n- a list\n", "mapping"),
])
def test_yaml_level_errors_name_the_file(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "broken_world.yaml"
    path.write_text(text)
    with pytest.raises(WorldError) as err:
        load_world(path)
    assert "broken_world.yaml" in str(err.value)
    assert fragment in str(err.value)


def test_duplicate_key_error_gives_its_line(tmp_path: Path) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text("ground: {}\nsolver: {iterations: 3}\nsolver: {iterations: 4}\n")
    with pytest.raises(WorldError, match=r"dup\.yaml: line 3.*first on line 2"):
        load_world(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(WorldError, match="nothere.yaml.*does not exist"):
        load_world(str(tmp_path / "nothere.yaml"))


# --------------------------------------------------------------------------------------------
# Defaults and semantics


def test_defaults() -> None:
    w = load_world("bodies:\n  - {name: ball, shape: sphere, size: [0.1]}\n")
    assert w.source == "<string>"
    np.testing.assert_allclose(w.gravity, [0, 0, -9.81])
    assert w.ground is None
    assert w.joints == ()
    s = w.solver
    assert (s.iterations, s.tolerance, s.velocity_tolerance, s.restitution_threshold,
            s.envelope, s.baumgarte, s.slop, s.d_max, s.max_passes, s.warm_start) == (
        30, 1e-6, 1e-4, 0.2, 0.005, 0.2, 0.001, 1e-6, 100, True)
    assert w.solver == SolverSettings()
    r = w.robot
    np.testing.assert_allclose(r.xyz, 0.0)
    np.testing.assert_allclose(r.quat_xyzw, [0, 0, 0, 1])
    assert (r.friction, r.restitution, r.joint_limit_restitution) == (0.8, 0.0, 0.0)
    assert dict(r.initial_positions) == {}
    assert (r.self_collision, r.srdf, r.srdf_pairs, r.exclude_pairs) == (True, None, (), ())
    b = w.body("ball")
    assert b.mass == pytest.approx(1000.0 * 4 / 3 * math.pi * 0.001)  # density 1000
    assert (b.static, b.friction, b.restitution) == (False, 0.8, 0.0)
    np.testing.assert_allclose(b.quat_xyzw, [0, 0, 0, 1])
    np.testing.assert_allclose(b.com, 0.0)
    assert b.geometry.xyz == (0.0, 0.0, 0.0)


@pytest.mark.parametrize(("value", "expected"), [
    ("{}", (0.0, 0.8, 0.0)), ("true", (0.0, 0.8, 0.0)), ("null", None), ("false", None),
    ("{height: -0.5, friction: 0.3, restitution: 0.9}", (-0.5, 0.3, 0.9)),
])
def test_ground_forms(value: str, expected: tuple[float, float, float] | None) -> None:
    g = load_world(f"ground: {value}\n").ground
    if expected is None:
        assert g is None
    else:
        assert (g.height, g.friction, g.restitution) == expected
        np.testing.assert_allclose(g.normal, [0, 0, 1])


def test_yaml_exponent_without_dot_is_a_float() -> None:
    w = load_world("solver: {d_max: 1e-6, tolerance: 5E-9, envelope: 2.5e-3}\n")
    assert w.solver.d_max == 1e-6
    assert w.solver.tolerance == 5e-9
    assert w.solver.envelope == 2.5e-3


def test_sources_path_text_and_dict_agree(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(BASE)
    worlds = [load_world(path), load_world(str(path)), load_world(BASE), load_world(base())]
    assert worlds[0].source == str(path.resolve())
    ref = worlds[0].to_dict()
    for w in worlds[1:]:
        _assert_same_dict(w.to_dict(), ref)


def test_base_world_values() -> None:
    w = load_world(BASE)
    box, door = w.bodies
    assert box.mass == 0.5
    np.testing.assert_allclose(box.inertia, 0.5 / 12 * 0.02 * np.eye(3))
    assert door.mass == pytest.approx(500 * 0.04 * 0.9 * 2.0)
    np.testing.assert_allclose(door.inertia, box_properties((0.04, 0.9, 2.0), 500).inertia)
    j = w.joints[0]
    assert (j.name, j.type, j.parent, j.child, j.limits, j.friction) == (
        "hinge", "revolute", None, "door", (-1.5, 1.5), 20.0)
    assert j.collide_connected is False
    np.testing.assert_allclose(j.child_anchor_local, [0.0, -0.45, 0.0], atol=1e-15)
    np.testing.assert_allclose(j.parent_anchor_local, [1.0, 0.0, 1.0])


def test_static_body_has_infinite_mass() -> None:
    w = load_world("bodies:\n  - {name: t, shape: box, size: [1, 1, 0.1], static: true, "
                   "mass: 3}\n")
    b = w.body("t")
    assert b.static and b.mass == 0.0 and b.inv_mass == 0.0
    np.testing.assert_array_equal(b.inertia, 0.0)
    np.testing.assert_array_equal(b.inv_inertia, 0.0)
    with pytest.raises(KeyError, match="nobody"):
        w.body("nobody")


def test_inertia_forms_agree() -> None:
    full = [[0.3, 0.01, -0.02], [0.01, 0.4, 0.03], [-0.02, 0.03, 0.5]]
    six = [0.3, 0.4, 0.5, 0.01, -0.02, 0.03]
    mats = []
    for inertia in (full, six):
        w = load_world({"bodies": [{"name": "a", "shape": "box", "size": [1, 1, 1], "mass": 2,
                                    "inertia": inertia}]})
        mats.append(w.bodies[0].inertia)
    np.testing.assert_array_equal(mats[0], mats[1])
    np.testing.assert_array_equal(mats[0], np.array(full))
    w = load_world({"bodies": [{"name": "a", "shape": "box", "size": [1, 1, 1], "mass": 2,
                                "inertia": [0.3, 0.4, 0.5]}]})
    np.testing.assert_array_equal(w.bodies[0].inertia, np.diag([0.3, 0.4, 0.5]))


def test_com_key_offsets_the_geometry_and_shifts_inertia() -> None:
    rpy = [0.0, 0.0, math.pi / 2]
    w = load_world({"bodies": [{"name": "a", "shape": "box", "size": [0.4, 0.2, 0.2],
                                "mass": 2.0, "com": [0.1, 0.0, 0.0], "xyz": [1, 2, 3],
                                "rpy": rpy}]})
    b = w.bodies[0]
    assert b.geometry.xyz == pytest.approx((-0.1, 0.0, 0.0))
    np.testing.assert_allclose(b.xyz, [1.0, 2.1, 3.0], atol=1e-15)  # COM rotated onto +y
    centred = box_properties((0.4, 0.2, 0.2), 1.0).inertia * 2.0 / 0.016
    np.testing.assert_allclose(b.inertia, centred + 2.0 * 0.01 * np.diag([0, 1, 1]))


def test_mesh_body_relative_to_world_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    scene = tmp_path / "scene"
    (scene / "meshes").mkdir(parents=True)
    shutil.copy(ASSETS / "cube.stl", scene / "meshes" / "part.stl")
    (scene / "w.yaml").write_text(
        "bodies:\n"
        "  - name: part\n    shape: mesh\n    mesh: meshes/part.stl\n    scale: [0.2, 0.1, 0.4]\n"
        "    density: 500\n    xyz: [1, 0, 0]\n    rpy: [0.1, 0.2, 0.3]\n")
    monkeypatch.chdir(tmp_path)  # a different folder: the mesh is found next to the world file
    b = load_world(scene / "w.yaml").bodies[0]
    com_shape = np.array([0.1, 0.05, 0.2])
    assert b.geometry.kind == "mesh"
    assert b.geometry.mesh == str((scene / "meshes" / "part.stl").resolve())
    assert b.geometry.scale == (0.2, 0.1, 0.4)
    np.testing.assert_allclose(b.geometry.xyz, -com_shape, atol=1e-12)
    rot = rpy_matrix([0.1, 0.2, 0.3])
    np.testing.assert_allclose(b.xyz, [1, 0, 0] + rot @ com_shape, atol=1e-12)
    box = box_properties((0.2, 0.1, 0.4), 500.0)
    assert b.mass == pytest.approx(box.mass)
    np.testing.assert_allclose(b.inertia, box.inertia, atol=1e-12)


def test_mesh_body_from_package_uri(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    share = tmp_path / "ws" / "parts_pkg" / "meshes"
    share.mkdir(parents=True)
    shutil.copy(ASSETS / "pyramid.obj", share / "pyramid.obj")
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path / "ws"))
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path / "empty_prefix"))
    w = load_world({"bodies": [{"name": "p", "shape": "mesh", "mass": 4.0,
                                "mesh": "package://parts_pkg/meshes/pyramid.obj"}]})
    b = w.bodies[0]
    np.testing.assert_allclose(b.xyz, [0, 0, 0.75], atol=1e-12)
    np.testing.assert_allclose(np.diag(b.inertia), [4 * 0.5375, 4 * 0.5375, 4 * 0.4])
    with pytest.raises(WorldError, match=r"<dict>: bodies\[0\]\.mesh: .*no_pkg"):
        load_world({"bodies": [{"name": "p", "shape": "mesh",
                                "mesh": "package://no_pkg/meshes/pyramid.obj"}]})


def test_joint_local_frames_reproduce_the_anchors() -> None:
    w = load_world({
        "bodies": [
            {"name": "a", "shape": "box", "size": [0.2, 0.1, 0.1], "mass": 1,
             "xyz": [0.3, 0.1, 1.0], "rpy": [0.4, -0.3, 1.2]},
            {"name": "b", "shape": "capsule", "size": [0.05, 0.3], "mass": 1,
             "xyz": [0.7, 0.0, 1.2], "rpy": [1.0, 0.2, -0.5]},
        ],
        "joints": [{"name": "p", "type": "prismatic", "parent": "a", "child": "b",
                    "anchor": [0.5, 0.05, 1.1], "child_anchor": [0.52, 0.05, 1.1],
                    "axis": [1, 1, 0], "limits": [-0.1, 0.2], "friction": 3.0,
                    "collide_connected": True}],
    })
    j = w.joints[0]
    a, b = w.bodies
    np.testing.assert_allclose(a.xyz + a.rotation @ j.parent_anchor_local, j.anchor, atol=1e-14)
    np.testing.assert_allclose(b.xyz + b.rotation @ j.child_anchor_local, j.child_anchor,
                               atol=1e-14)
    np.testing.assert_allclose(j.axis, np.array([1, 1, 0]) / math.sqrt(2))
    np.testing.assert_allclose(a.rotation @ j.parent_axis_local, j.axis, atol=1e-14)
    np.testing.assert_allclose(b.rotation @ j.child_axis_local, j.axis, atol=1e-14)
    assert j.collide_connected is True and j.limits == (-0.1, 0.2) and j.friction == 3.0


def test_world_is_read_only() -> None:
    w = load_world(BASE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.bodies[0].mass = 2.0  # type: ignore[misc]
    with pytest.raises(ValueError):
        w.bodies[0].xyz[0] = 1.0
    with pytest.raises(TypeError):
        w.robot.initial_positions["j"] = 1.0  # type: ignore[index]


def test_rotations_agree() -> None:
    rng = np.random.default_rng(1)
    for rpy in rng.uniform(-math.pi, math.pi, (20, 3)):
        q = quat_from_rpy(rpy)
        assert np.linalg.norm(q) == pytest.approx(1.0)
        np.testing.assert_allclose(matrix_from_quat(q), rpy_matrix(rpy), atol=1e-12)


@pytest.mark.parametrize(("a", "b"), [(0.0, 0.0), (0.3, 0.3), (0.8, 0.8), (1.0, 1.0),
                                      (0.2, 0.9), (0.0, 0.7)])
def test_combination_rules(a: float, b: float) -> None:
    mu, e = combine_friction(a, b), combine_restitution(a, b)
    assert mu == combine_friction(b, a) and e == combine_restitution(b, a)
    if a == b:
        assert mu == pytest.approx(a) and e == a
    assert min(a, b) <= mu <= max(a, b)
    assert e == max(a, b)
    if a == 0.0:
        assert mu == 0.0


# --------------------------------------------------------------------------------------------
# The scene files


def _assert_same_dict(a: Any, b: Any, where: str = "") -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for k in a:
            _assert_same_dict(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same_dict(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and not isinstance(b, bool):
        assert b == pytest.approx(a, rel=1e-12, abs=1e-14), where
    else:
        assert a == b, where


def _assert_same_world(a: World, b: World) -> None:
    np.testing.assert_array_equal(a.gravity, b.gravity)
    assert (a.ground is None) == (b.ground is None)
    if a.ground is not None:
        assert dataclasses.astuple(a.ground) == dataclasses.astuple(b.ground)
    assert a.solver == b.solver
    assert a.body_names == b.body_names
    for x, y in zip(a.bodies, b.bodies):
        for f in dataclasses.fields(Body):
            u, v = getattr(x, f.name), getattr(y, f.name)
            if f.name == "geometry":
                assert (u.kind, u.size, u.mesh, u.scale) == (v.kind, v.size, v.mesh, v.scale)
                np.testing.assert_allclose(u.xyz, v.xyz, atol=1e-14)
            elif isinstance(u, np.ndarray):
                np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-14)
            else:
                assert u == v, f"{x.name}.{f.name}"
    assert [j.name for j in a.joints] == [j.name for j in b.joints]
    for x, y in zip(a.joints, b.joints):
        for f in dataclasses.fields(x):
            u, v = getattr(x, f.name), getattr(y, f.name)
            if isinstance(u, np.ndarray):
                np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-14)
            else:
                assert u == v, f"{x.name}.{f.name}"


def test_all_expected_scenes_exist() -> None:
    names = {p.stem for p in WORLDS}
    assert {"table", "cube_drop", "sphere_bounce", "box_slide", "incline", "box_stack", "door",
            "ball_chain", "ball_chain_apart"} <= names


@pytest.mark.parametrize("path", WORLDS, ids=[p.stem for p in WORLDS])
def test_scene_loads_and_round_trips(path: Path, tmp_path: Path) -> None:
    w = load_world(path)
    assert w.source == str(path.resolve())
    assert w.bodies or w.robot.urdf  # a scene of bodies, or one made for a robot
    assert w.description
    again = load_world(w.to_dict())
    _assert_same_world(w, again)
    assert again.description == w.description
    dumped = tmp_path / path.name
    dumped.write_text(yaml.safe_dump(w.to_dict(), sort_keys=False))
    _assert_same_world(w, load_world(dumped))


def test_world_names_its_robot(tmp_path: Path) -> None:
    w = _scene("newtons_cradle")
    assert w.robot.urdf == str((ROOT / "urdf" / "scenarios" / "newtons_cradle.urdf").resolve())
    assert load_world(w.to_dict()).robot.urdf == w.robot.urdf
    bad = tmp_path / "bad.yaml"
    bad.write_text("robot: {urdf: missing/robot.urdf}\n")
    with pytest.raises(WorldError, match=r"robot\.urdf") as err:
        load_world(bad)
    assert "bad.yaml" in str(err.value) and "missing/robot.urdf" in str(err.value)


def _scene(name: str) -> World:
    return load_world(ROOT / "config" / "worlds" / f"{name}.yaml")


def test_table_scene() -> None:
    w = _scene("table")
    top = w.body("table_top")
    assert top.static and top.geometry.kind == "box"
    sx, sy, sz = top.geometry.size
    top_z = top.xyz[2] + sz / 2
    assert top_z == pytest.approx(0.30)
    assert top.xyz[0] - sx / 2 == pytest.approx(0.35) and top.xyz[0] + sx / 2 == pytest.approx(1.0)
    movable = [b for b in w.bodies if not b.static]
    boxes = [b for b in movable if b.geometry.kind == "box"]
    balls = [b for b in movable if b.geometry.kind == "sphere"]
    assert len(boxes) == 3 and len(balls) == 1
    for b in boxes:
        assert all(0.05 <= s <= 0.08 for s in b.geometry.size), b.name
        assert 0.2 <= b.mass <= 0.5, b.name
    for b in movable:
        assert np.linalg.norm(b.xyz - w.robot.xyz) < 0.6, b.name
        half_h = b.geometry.size[0] if b.geometry.kind == "sphere" else b.geometry.size[2] / 2
        assert b.xyz[2] - half_h == pytest.approx(top_z), f"{b.name} rests on the top"
        reach = max(b.geometry.size) if b.geometry.kind == "sphere" else \
            0.5 * float(np.linalg.norm(b.geometry.size[:2]))
        assert top.xyz[0] - sx / 2 <= b.xyz[0] - reach and b.xyz[0] + reach <= top.xyz[0] + sx / 2
        assert abs(b.xyz[1]) + reach <= sy / 2
    for i, a in enumerate(movable):  # footprints (bounding circles) do not overlap
        for b in movable[i + 1:]:
            ra = max(a.geometry.size) if a.geometry.kind == "sphere" else \
                0.5 * float(np.linalg.norm(a.geometry.size[:2]))
            rb = max(b.geometry.size) if b.geometry.kind == "sphere" else \
                0.5 * float(np.linalg.norm(b.geometry.size[:2]))
            assert np.linalg.norm(a.xyz[:2] - b.xyz[:2]) > ra + rb, (a.name, b.name)


def test_cube_drop_scene() -> None:
    w = _scene("cube_drop")
    cube = w.body("cube")
    assert cube.mass == 2.0 and cube.geometry.size == (0.2, 0.2, 0.2)
    wxyz = np.array([1.0, 0.2, 0.4, 0.1]) / np.linalg.norm([1.0, 0.2, 0.4, 0.1])
    np.testing.assert_allclose(cube.quat_xyzw, np.r_[wxyz[1:], wxyz[0]])
    np.testing.assert_allclose(cube.inertia, 2.0 * 0.04 / 6 * np.eye(3), rtol=1e-12)
    np.testing.assert_allclose(cube.linear_velocity, 0.0)
    np.testing.assert_allclose(cube.angular_velocity, 0.0)
    assert cube.xyz[2] == pytest.approx(1.0)
    assert combine_restitution(cube.restitution, w.ground.restitution) == 1.0
    assert combine_friction(cube.friction, w.ground.friction) == 0.0


def test_sphere_bounce_scene() -> None:
    w = _scene("sphere_bounce")
    s = w.body("sphere")
    assert s.restitution == 0.8 and w.ground.restitution == 0.8
    assert s.xyz[2] - s.geometry.size[0] - w.ground.height == pytest.approx(1.0)


def test_box_slide_scene() -> None:
    w = _scene("box_slide")
    b = w.body("box")
    assert combine_friction(b.friction, w.ground.friction) == pytest.approx(0.5)
    np.testing.assert_allclose(b.linear_velocity, [2.0, 0, 0])
    assert b.xyz[2] - b.geometry.size[2] / 2 == pytest.approx(w.ground.height)


def test_incline_scene() -> None:
    w = _scene("incline")
    ramp = w.body("ramp")
    assert ramp.static
    normal = ramp.rotation[:, 2]
    tilt = math.acos(normal[2])
    assert 0.1 < tilt < 1.2
    for name in ("slider", "sticker"):
        b = w.body(name)
        local = ramp.rotation.T @ (b.xyz - ramp.xyz)
        assert local[2] == pytest.approx(ramp.geometry.size[2] / 2 + b.geometry.size[2] / 2,
                                         abs=1e-7)
        assert abs(local[0]) + b.geometry.size[0] / 2 < ramp.geometry.size[0] / 2
        np.testing.assert_allclose(b.rotation, ramp.rotation, atol=1e-12)
    slide = combine_friction(w.body("slider").friction, ramp.friction)
    stick = combine_friction(w.body("sticker").friction, ramp.friction)
    assert slide < math.tan(tilt) < stick


def test_box_stack_scene() -> None:
    w = _scene("box_stack")
    boxes = sorted((b for b in w.bodies if not b.static), key=lambda b: b.xyz[2])
    assert len(boxes) == 3
    assert boxes[0].xyz[2] - boxes[0].geometry.size[2] / 2 == pytest.approx(w.ground.height)
    for lower, upper in itertools.pairwise(boxes):
        gap = (upper.xyz[2] - upper.geometry.size[2] / 2) - (lower.xyz[2] +
                                                             lower.geometry.size[2] / 2)
        assert gap == pytest.approx(0.0, abs=1e-12)
        np.testing.assert_allclose(upper.xyz[:2], lower.xyz[:2])


def test_door_scene() -> None:
    w = _scene("door")
    (j,) = w.joints
    door = w.body(j.child)
    assert j.type == "revolute" and j.parent is None and j.friction == 20.0
    np.testing.assert_allclose(np.abs(j.axis), [0, 0, 1])
    # hinge along the door's edge: half the door's width from its centre
    assert abs(j.child_anchor_local[1]) == pytest.approx(door.geometry.size[1] / 2)
    # initial twist is a rotation about the hinge line
    np.testing.assert_allclose(np.cross(door.angular_velocity, j.axis), 0.0, atol=1e-12)
    np.testing.assert_allclose(door.linear_velocity,
                               np.cross(door.angular_velocity, door.xyz - j.anchor), atol=1e-12)
    assert door.xyz[2] - door.geometry.size[2] / 2 > w.ground.height  # clear of the floor


@pytest.mark.parametrize(("name", "gap"), [("ball_chain", 0.0), ("ball_chain_apart", 0.05)])
def test_ball_chain_scenes(name: str, gap: float) -> None:
    w = _scene(name)
    assert len(w.bodies) == 5 and len(w.joints) == 5
    assert all(j.type == "ball" for j in w.joints)
    assert w.joints[0].parent is None
    for k, j in enumerate(w.joints):
        assert j.child == w.bodies[k].name
        if k:
            assert j.parent == w.bodies[k - 1].name
        assert np.linalg.norm(j.child_anchor - j.anchor) == pytest.approx(gap, abs=1e-12)
        parent = w.body(j.parent) if j.parent else None
        start = j.anchor if parent is None else parent.xyz + parent.rotation @ j.parent_anchor_local
        np.testing.assert_allclose(start, j.anchor, atol=1e-12)
    zs = {round(float(b.xyz[2]), 12) for b in w.bodies}
    assert len(zs) == 1  # released lying horizontally
    assert all(not np.any(b.linear_velocity) and not np.any(b.angular_velocity)
               for b in w.bodies)
    lowest = w.joints[0].anchor[2] - sum(b.geometry.size[0] for b in w.bodies) - 5 * gap
    assert lowest > w.ground.height


# --- hostile input: aliases, size, ranges, paths (issue: bad input never crashes or hangs) --


def test_yaml_aliases_are_refused(tmp_path: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n"
        for p, c in zip("abcdefgh", "bcdefghi"))
    path = tmp_path / "bomb.yaml"
    path.write_text(bomb)
    with pytest.raises(WorldError, match=r"bomb\.yaml: line 2.*alias \*a.*no YAML aliases"):
        load_world(path)
    with pytest.raises(WorldError, match="alias"):
        load_world("gravity: &g [0, 0, -9.81]\nbodies: *g\n")


def test_input_size_is_capped(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    path.write_text("description: '" + "x" * (2 * 1024 * 1024) + "'\n")
    with pytest.raises(WorldError, match=r"huge\.yaml: .*larger than"):
        load_world(path)


def test_messages_never_format_a_whole_value() -> None:
    big = {"bodies": [{"name": "a", "shape": "sphere", "size": [0.1], "mass": 1.0,
                       "xyz": [[0.0] * 100000, 0, 0]}]}
    with pytest.raises(WorldError) as err:
        load_world(big)
    assert len(str(err.value)) < 300 and "bodies[0].xyz[0]" in str(err.value)
    with pytest.raises(WorldError) as err:
        load_world({"gravity": [10 ** 5000, 0, 0]})
    assert "gravity[0]" in str(err.value) and len(str(err.value)) < 300


@pytest.mark.parametrize(("key_path", "value", "allowed"), [
    ("gravity", [0, 0, 1e300], "gravity[2]: must be >= -1000 and <= 1000"),
    ("bodies.0.xyz", [1e300, 0, 0], "bodies[0].xyz[0]: must be >= -100000"),
    ("bodies.0.linear_velocity", [0, 1e300, 0], "bodies[0].linear_velocity[1]: must be"),
    ("bodies.0.angular_velocity", [0, 0, 1e5], "bodies[0].angular_velocity[2]: must be"),
    ("bodies.0.size", [1e-200, 0.1, 0.1], "bodies[0].size[0]: must be >= 1e-06 and <= 1e+06"),
    ("bodies.0.size", [1e300, 0.1, 0.1], "bodies[0].size[0]: must be >= 1e-06"),
    ("bodies.0.mass", 1e300, "bodies[0].mass: must be >= 1e-06 and <= 1e+06"),
    ("bodies.0.mass", 1e-200, "bodies[0].mass: must be >= 1e-06"),
    ("solver.envelope", 1e300, "solver.envelope: must be >= 0 and <= 0.1"),
    ("solver.iterations", 10 ** 9, "solver.iterations: must be >= 1 and <= 10000"),
    ("ground.height", float("nan"), "ground.height: must be finite"),
    ("robot.initial_positions", {"joint1": float("inf")},
     "robot.initial_positions.joint1: must be finite"),
])
def test_numbers_outside_their_range(key_path: str, value: Any, allowed: str) -> None:
    d = base()
    _set(key_path, value)(d)
    with pytest.raises(WorldError) as err:
        load_world(d)
    assert f"<dict>: {allowed}" in str(err.value)


@pytest.mark.parametrize("size", [[1e-6, 1e-6, 1e-6], [1e6, 1e6, 1e6]])
def test_extreme_sizes_give_a_world_error_not_an_arithmetic_one(size: list[float]) -> None:
    d = {"bodies": [{"name": "a", "shape": "box", "size": size}]}
    with pytest.raises(WorldError, match=r"bodies\[0\]\.size: gives a mass"):
        load_world(d)
    d["bodies"][0]["mass"] = 1.0
    body = load_world(d).bodies[0]
    assert np.all(np.isfinite(body.inv_inertia))


def test_path_like_strings_are_paths(tmp_path: Path) -> None:
    with pytest.raises(WorldError, match=r"dir/missing: world\.yaml: world file does not exist"):
        load_world("dir/missing: world.yaml")
    with pytest.raises(WorldError, match="is a directory"):
        load_world(str(tmp_path))
    with pytest.raises(WorldError, match="is a directory"):
        load_world(tmp_path)
    (tmp_path / "bin.yaml").write_bytes(bytes(range(256)))
    with pytest.raises(WorldError, match=r"bin\.yaml: not a world file"):
        load_world(tmp_path / "bin.yaml")


def test_deeply_nested_yaml() -> None:
    with pytest.raises(WorldError, match="<string>"):
        load_world("a: " + "[" * 100000 + "]" * 100000 + "\nb: 1\n")


def test_check_initial_positions() -> None:
    import mb_sim
    from mb_sim.model.world import check_initial_positions

    model = mb_sim.load_urdf(str(ROOT / "urdf" / "arm.urdf"))
    joint = model.joint_names[0]
    hi = float(model.upper[0])
    check_initial_positions(load_world({"robot": {"initial_positions": {joint: hi}}}), model)
    with pytest.raises(WorldError, match=rf"<dict>: robot\.initial_positions\.{joint}: .*limits"
                                         rf".*\(got {hi + 0.5}\)"):
        check_initial_positions(
            load_world({"robot": {"initial_positions": {joint: hi + 0.5}}}), model)
    with pytest.raises(WorldError, match=r"<dict>: robot\.initial_positions\.jiont1: no movable"):
        check_initial_positions(load_world({"robot": {"initial_positions": {"jiont1": 0.0}}}),
                                model)


@pytest.mark.parametrize("world", [
    {"bodies": [{"name": "a", "shape": "box", "size": [1, 1, 1], "x" * 100000: 1}]},
    {"robot": {"initial_positions": {"j" * 100000: float("nan")}}},
    {"bodies": [{"name": "a", "shape": "box", "size": [1, 1, 1], "mass": [0.0] * 100000,
                 "density": 1.0}]},
    {"bodies": [{"name": f"b{i}" + "x" * 1000, "shape": "sphere", "size": [0.1]}
                for i in range(50)],
     "joints": [{"name": "j", "type": "ball", "child": "nobody"}]},
])
def test_long_keys_names_and_values_are_cut(world: dict[str, Any]) -> None:
    with pytest.raises(WorldError) as err:
        load_world(world)
    assert len(str(err.value)) < 1500, len(str(err.value))


def test_body_colors_given_defaulted_and_checked() -> None:
    from mb_sim.model.world import PALETTE, STATIC_COLOR

    world = load_world({"bodies": [
        {"name": "a", "shape": "sphere", "size": [0.1], "color": [0.1, 0.2, 0.3]},
        {"name": "b", "shape": "sphere", "size": [0.1], "color": [0.1, 0.2, 0.3, 0.4]},
        {"name": "c", "shape": "sphere", "size": [0.1]},
        {"name": "d", "shape": "box", "size": [1, 1, 1], "static": True},
        {"name": "e", "shape": "sphere", "size": [0.1]}]})
    colors = [b.color for b in world.bodies]
    assert colors[:2] == [(0.1, 0.2, 0.3, 1.0), (0.1, 0.2, 0.3, 0.4)]
    assert colors[2:] == [PALETTE[2], STATIC_COLOR, PALETTE[3]]  # moving bodies take turns
    assert [b.color for b in load_world(world.to_dict()).bodies] == colors
    for bad, why in (([1, 2, 0], r"bodies\[0\]\.color\[1\]: must be >= 0 and <= 1"),
                     ("red", r"bodies\[0\]\.color: must be \[r, g, b\] or \[r, g, b, a\]"),
                     ([0.5, 0.5], r"bodies\[0\]\.color: must be")):
        with pytest.raises(WorldError, match=why):
            load_world({"bodies": [{"name": "a", "shape": "sphere", "size": [0.1],
                                    "color": bad}]})
