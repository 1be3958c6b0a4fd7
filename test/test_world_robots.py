"""The robots: list of world files: names, namespaces, TF modes, duplicates, invalid ROS names,
robot: beside robots:, round trips, error paths inside entries; and the schema itself (valid
JSON Schema, one place to add a key, errors chosen and worded as documented)."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from mb_sim.errors import WorldError
from mb_sim.model.world import (
    SCHEMA,
    RobotPlacement,
    World,
    check_gains,
    check_initial_positions,
    keys_markdown,
    load_body,
    load_world,
    schema,
)

ROOT = Path(__file__).resolve().parents[1]
ARM = str(ROOT / "urdf" / "arm.urdf")


def two_arms() -> dict[str, Any]:
    return {
        "ground": {},
        "robots": [
            {"name": "left", "urdf": ARM, "xyz": [0, 0.4, 0],
             "initial_positions": {"joint2": 0.3}, "gains": {"joint1": {"p": 1, "i": 0, "d": 2}}},
            {"name": "right", "urdf": ARM, "xyz": [0, -0.4, 0], "namespace": "cell1/right",
             "tf": "prefixed", "inertia_from_geometry": 500, "ft_sensors": ["joint6"]},
        ],
        "bodies": [{"name": "box", "shape": "box", "size": [0.1, 0.1, 0.1], "xyz": [0.5, 0, 0.05]}],
        "joints": [{"name": "slide", "type": "prismatic", "child": "box"}],
    }


def error(world: Any) -> str:
    with pytest.raises(WorldError) as err:
        load_world(world)
    return str(err.value)


def test_robots_entries_become_placements() -> None:
    w = load_world(two_arms())
    left, right = w.robots
    assert (left.name, left.namespace, left.tf, left.key) == ("left", "left", "namespaced",
                                                              "robots[0]")
    assert (right.name, right.namespace, right.tf, right.key) == ("right", "cell1/right",
                                                                  "prefixed", "robots[1]")
    assert left.urdf == right.urdf == str(Path(ARM).resolve())
    np.testing.assert_array_equal(left.xyz, [0, 0.4, 0])
    assert dict(left.initial_positions) == {"joint2": 0.3}
    assert dict(left.gains) == {"joint1": (1.0, 0.0, 2.0)}
    assert (left.inertia_from_geometry, right.inertia_from_geometry) == (None, 500.0)
    assert isinstance(right.inertia_from_geometry, float)
    assert right.ft_sensors == ("joint6",)


def test_robot_mapping_is_a_list_of_one() -> None:
    w = load_world({"robot": {"urdf": ARM}})
    (r,) = w.robots
    assert (r.name, r.namespace, r.tf, r.key) == (None, "", "namespaced", "robot")
    assert w.robot is r
    named = load_world({"robot": {"name": "arm", "inertia_from_geometry": 800.0}}).robot
    assert (named.name, named.namespace, named.inertia_from_geometry) == ("arm", "arm", 800.0)
    assert load_world({"robot": {"namespace": "r1/arm"}}).robot.namespace == "r1/arm"
    assert load_world({"robot": {"name": "arm", "namespace": ""}}).robot.namespace == ""


def test_world_robot_property() -> None:
    none = load_world({"ground": {}})
    assert none.robots == ()
    r = none.robot
    assert isinstance(r, RobotPlacement) and r.urdf is None and r.name is None
    many = load_world(two_arms())
    with pytest.raises(WorldError, match=r"2 robots \(left, right\).*world\.robots.*"
                                         r"sim\.robot\(name\)"):
        _ = many.robot


def test_robot_and_robots_together_is_an_error() -> None:
    d = two_arms()
    d["robot"] = {"xyz": [0, 0, 0]}
    assert error(d).startswith("<dict>: robots: give robot or robots, not both (got [")


@pytest.mark.parametrize(("key", "where"), [("name", "robots[1].name"),
                                            ("urdf", "robots[1].urdf")])
def test_name_and_urdf_are_required_in_robots(key: str, where: str) -> None:
    d = two_arms()
    del d["robots"][1][key]
    assert error(d) == f"<dict>: {where}: required key is missing"


@pytest.mark.parametrize("name", ["1arm", "arm-1", "", "a b", "arm/left", "_arm", "arm.1", 7,
                                  None])
def test_invalid_ros_names(name: Any) -> None:
    d = two_arms()
    d["robots"][1]["name"] = name
    msg = error(d)
    assert msg.startswith("<dict>: robots[1].name: must be ")
    assert f"(got {name!r})" in msg
    if isinstance(name, str):
        assert "ROS name: a letter, then letters, digits or _" in msg


@pytest.mark.parametrize("namespace", ["/abs", "a//b", "a/", "1a", "a b", "a/-b", "a/b/"])
def test_invalid_namespaces(namespace: str) -> None:
    d = two_arms()
    d["robots"][1]["namespace"] = namespace
    assert error(d) == (f"<dict>: robots[1].namespace: must be a relative ROS namespace: names "
                        f"of a letter, then letters, digits or _, joined by / (got "
                        f"{namespace!r})")


@pytest.mark.parametrize("namespace", ["", "a", "cell_1/arm2/Left"])
def test_valid_namespaces(namespace: str) -> None:
    d = two_arms()
    d["robots"][1]["namespace"] = namespace
    assert load_world(d).robots[1].namespace == namespace


@pytest.mark.parametrize(("change", "where", "fragment"), [
    (lambda d: d["robots"][1].update(name="left"), "robots[1].name",
     "duplicate robot name (also robots[0]) (got 'left')"),
    (lambda d: d["robots"][1].update(namespace="left"), "robots[1].namespace",
     "duplicate namespace (also robots[0]"),
    (lambda d: (d["robots"][0].update(namespace="right"), d["robots"][1].pop("namespace")),
     "robots[1].namespace",
     "duplicate namespace (also robots[0]"),
    (lambda d: d["bodies"][0].update(name="right"), "bodies[0].name",
     "is the name of the robot robots[1] (got 'right')"),
    (lambda d: d["joints"][0].update(name="left"), "joints[0].name",
     "is the name of the robot robots[0] (got 'left')"),
])
def test_duplicate_names_and_namespaces(change: Any, where: str, fragment: str) -> None:
    d = two_arms()
    change(d)
    msg = error(d)
    assert msg.startswith(f"<dict>: {where}: ") and fragment in msg, msg


def test_tf_mode_is_a_choice() -> None:
    d = two_arms()
    d["robots"][0]["tf"] = "prefix"
    assert error(d) == ("<dict>: robots[0].tf: must be one of namespaced, prefixed (did you mean "
                        "'prefixed'?) (got 'prefix')")


@pytest.mark.parametrize("density", [0, -1.0, 1e7, "heavy", [500.0]])
def test_inertia_from_geometry_range(density: Any) -> None:
    for d, where in ((two_arms(), "robots[1]"), ({"robot": {}}, "robot")):
        entry = d["robots"][1] if "robots" in d else d["robot"]
        entry["inertia_from_geometry"] = density
        msg = error(d)
        assert msg.startswith(f"<dict>: {where}.inertia_from_geometry: must be "), msg
        assert f"(got {density!r})" in msg
    assert load_world({"robot": {"inertia_from_geometry": None}}).robot.inertia_from_geometry \
        is None
    for value in (True, False):  # the default, and off (docs/robots.md)
        assert load_world({"robot": {"inertia_from_geometry": value}}).robot \
            .inertia_from_geometry is value


@pytest.mark.parametrize(("change", "message"), [
    (lambda r: r["initial_positions"].update(joint2="up"),
     "robots[0].initial_positions.joint2: must be a number (got 'up')"),
    (lambda r: r["gains"]["joint1"].pop("d"), "robots[0].gains.joint1.d: required key is missing"),
    (lambda r: r["gains"]["joint1"].update(p=-1),
     "robots[0].gains.joint1.p: must be >= 0 and <= 1e+09 (got -1)"),
    (lambda r: r.update(urdf="missing/arm.urdf"), "robots[0].urdf: "),
    (lambda r: r.update(xyz=[0, 0]), "robots[0].xyz: must have 3 elements, has 2 (got [0, 0])"),
    (lambda r: r.update(quat_xyzw=[0, 0, 0, 1], rpy=[0, 0, 0]),
     "robots[0].quat_xyzw: give rpy or quat_xyzw, not both"),
    (lambda r: r.update(exclude_pairs=[["link1", "link1"]]),
     "robots[0].exclude_pairs[0]: must name two different links"),
    (lambda r: r.update(contact_sensors=["link7", "link7"]),
     "robots[0].contact_sensors[1]: is named twice (got 'link7')"),
    (lambda r: r.update(namspace="a"), ("robots[0].namspace: unknown key (did you mean "
                                        "'namespace'?)")),
    (lambda r: r["initial_positions"].update({1: 0.5}),
     "robots[0].initial_positions.1: must be a non-empty string (got 1)"),
])
def test_errors_inside_an_entry_name_its_path(change: Any, message: str) -> None:
    d = two_arms()
    change(d["robots"][0])
    assert message in error(d)


def test_entry_checks_against_the_model_name_the_entry() -> None:
    import mb_sim

    model = mb_sim.load_urdf(ARM)
    d = two_arms()
    d["robots"][1]["initial_positions"] = {"joint2": 9.0}
    d["robots"][1]["gains"] = {"jiont1": {"p": 1, "i": 1, "d": 1}}
    w = load_world(d)
    check_initial_positions(w, model, robot=w.robots[0])
    with pytest.raises(WorldError, match=r"^<dict>: robots\[1\]\.initial_positions\.joint2: "
                                         r"must be within the joint limits"):
        check_initial_positions(w, model, robot=w.robots[1])
    with pytest.raises(WorldError, match=r"^<dict>: robots\[1\]\.gains\.jiont1: no movable "
                                         r"joint .*did you mean 'joint1'"):
        check_gains(w, model, robot=w.robots[1])


def _placements_equal(a: RobotPlacement, b: RobotPlacement) -> None:
    for f in dataclasses.fields(RobotPlacement):
        u, v = getattr(a, f.name), getattr(b, f.name)
        if isinstance(u, np.ndarray):
            np.testing.assert_allclose(u, v, rtol=1e-15)
        else:
            assert u == v, f.name


@pytest.mark.parametrize("world", [two_arms(), {"robot": {"urdf": ARM, "namespace": "a/b"}},
                                   {"robot": {"name": "arm"}}, {"ground": True}])
def test_round_trip(world: dict[str, Any], tmp_path: Path) -> None:
    w = load_world(world)
    out = w.to_dict()
    assert ("robots" in out) == ("robots" in world)
    assert ("robot" in out) == ("robot" in world)
    path = tmp_path / "again.yaml"
    path.write_text(yaml.safe_dump(out, sort_keys=False))
    for again in (load_world(out), load_world(path)):
        assert len(again.robots) == len(w.robots)
        for a, b in zip(w.robots, again.robots):
            _placements_equal(a, b)
        assert again.to_dict() == out


def test_robots_made_in_code_are_written_as_they_load() -> None:
    w = load_world({"robot": {"urdf": ARM}})
    two = dataclasses.replace(w, robots=(dataclasses.replace(w.robot, name="a", namespace="a"),
                                         dataclasses.replace(w.robot, name="b", namespace="")))
    out = two.to_dict()
    assert [r["name"] for r in out["robots"]] == ["a", "b"] and "robot" not in out
    assert [(r.name, r.namespace, r.key) for r in load_world(out).robots] == [
        ("a", "a", "robots[0]"), ("b", "", "robots[1]")]
    one = dataclasses.replace(w, robots=(RobotPlacement(name="c"),))
    assert load_world(one.to_dict()).robot.name == "c"


def test_objects_are_robots_entries(tmp_path: Path) -> None:
    (tmp_path / "mug.urdf").write_text(
        '<robot name="mug"><link name="mug"><inertial><mass value="0.3"/>'
        '<inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>'
        '<collision><geometry><cylinder radius="0.04" length="0.1"/></geometry></collision>'
        "</link></robot>")
    (tmp_path / "w.yaml").write_text(
        "robots:\n  - {name: mug, urdf: mug.urdf, floating: true, xyz: [0, 0, 0.05]}\n"
        "  - {name: tray, urdf: mug.urdf}\n")
    w = load_world(tmp_path / "w.yaml")
    assert [(r.name, r.floating, r.urdf) for r in w.robots] == [
        ("mug", True, str(tmp_path / "mug.urdf")), ("tray", False, str(tmp_path / "mug.urdf"))]


# ------------------------------------------------------------------------ the schema


def test_schema_is_valid_json_schema() -> None:
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(SCHEMA)
    assert schema.schema_json().startswith("{")


def test_a_key_added_to_the_schema_is_accepted_and_documented(monkeypatch: Any) -> None:
    d = {"bodies": [{"name": "a", "shape": "sphere", "size": [0.1], "floats": True}]}
    assert "bodies[0].floats: unknown key" in error(d)
    monkeypatch.setitem(schema.BODY, "floats", schema.boolean("lighter than water", False))
    assert load_world(d).bodies[0].name == "a"
    assert "| `floats` | true, false | `false` | lighter than water |" in keys_markdown()
    d["bodies"][0]["floats"] = "yes"
    assert "bodies[0].floats: must be true or false (got 'yes')" in error(d)


def test_the_shallowest_error_is_reported_then_the_first() -> None:
    d = two_arms()
    d["robots"][0]["xyz"] = [0, 0, "z"]
    del d["robots"][1]["urdf"]
    assert error(d) == "<dict>: robots[1].urdf: required key is missing"
    two = {"bodies": [{"name": "a", "shape": "sphere", "size": [0.1], "mass": -1},
                      {"name": "b", "shape": "sphere", "size": [0.1], "mass": -2}]}
    assert error(two).startswith("<dict>: bodies[0].mass: must be >= 1e-06")
    mixed = {"robot": {"initial_positions": {1: "x", "j": "y"}}}
    assert error(mixed).startswith("<dict>: robot.initial_positions.")


def test_deeply_nested_values_are_cut_not_walked() -> None:
    deep: Any = 0.1
    for _ in range(5000):
        deep = [deep]
    msg = error({"bodies": [{"name": "a", "shape": "sphere", "size": deep}]})
    assert msg.startswith("<dict>: bodies[0].size[0]: must be a number (got [[[[") and \
        len(msg) < 300
    d = {"bodies": [{"name": "a", "shape": "sphere", "size": [0.1], "color": [1, 0, 0]}]}
    original = copy.deepcopy(d)
    load_world(d)
    assert d == original  # the document is not changed


def test_load_body_names_its_place() -> None:
    with pytest.raises(WorldError, match=r"^spawn\.yaml: bodies\[2\]\.size: shape box needs "):
        load_body({"shape": "box"}, "spawn.yaml", ROOT, "bodies[2]")
    body = load_body({"shape": "sphere", "size": [0.1]}, "spawn.yaml", ROOT)
    assert body.name == "" and body.geometry.size == (0.1,)


def test_world_records_are_read_only() -> None:
    w = load_world(two_arms())
    assert isinstance(w, World)
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.robots[0].name = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        w.robots[0].gains["j"] = (1.0, 1.0, 1.0)  # type: ignore[index]


def test_a_moved_key_says_where_it_went() -> None:
    assert error({"solver": {"self_collision": False}}) == (
        "<dict>: solver.self_collision: is a setting of the robot now: robot: "
        "{self_collision: ...} (got False)")
    assert "self_collision" not in error({"solver": {"iteratoins": 3}}).split("allowed:")[1]
