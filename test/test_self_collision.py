"""The robot's pair filter (mb_sim.model.collision_filter): parent and child, SRDF pairs, the
world file's exclude_pairs, pairs overlapping at the reference pose, and self_collision off
(the root link's shapes included). Checked on a two-link arm above a base plate whose lower
link can fold down onto the plate: the plate and that link are not parent and child."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mb_sim
from mb_sim.errors import ModelError, WorldError

ARM = """<robot name="folding_arm">
  <link name="plate">
    <collision><origin xyz="0 0 0.05"/><geometry><box size="0.6 0.6 0.1"/></geometry></collision>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="plate"/><child link="upper"/><origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="200" velocity="10"/>
  </joint>
  <link name="upper">
    <inertial><origin xyz="0 0 0.15"/><mass value="1"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.15"/><geometry><box size="0.04 0.04 0.2"/></geometry></collision>
  </link>
  <joint name="elbow" type="revolute">
    <parent link="upper"/><child link="lower"/><origin xyz="0 0 0.3"/><axis xyz="0 1 0"/>
    <limit lower="-3.1" upper="3.1" effort="200" velocity="10"/>
  </joint>
  <link name="lower">
    <inertial><origin xyz="0 0 0.2"/><mass value="1"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.2"/><geometry><box size="0.04 0.04 0.4"/></geometry></collision>
  </link>
</robot>
"""
FOLDED = 3.0  # rad of the elbow: the lower link reaches 0.3 m down from the elbow at 0.4 m,
# into the plate (top at 0.1 m)


def _world(**robot: Any) -> mb_sim.World:
    return mb_sim.load_world({"ground": None, "robot": robot})


def _allowed(sim: mb_sim.Simulation, a: str, b: str) -> bool:
    names = sim.scene.geom_names
    return bool(sim.scene.arrays.geoms.pair_allowed[names.index(a), names.index(b)])


def _fold(sim: mb_sim.Simulation, seconds: float = 0.5) -> int:
    """Drive the elbow towards FOLDED for `seconds`; the most plate-lower contacts seen."""
    model = sim.model
    most = 0
    for _ in range(round(seconds / sim.dt)):
        q, qd = sim.q, sim.qd
        target = np.array([0.0, FOLDED])
        sim.set_effort(mb_sim.rnea(model, q, qd, 400.0 * (target - q) - 40.0 * qd))
        sim.step(1)
        c = sim.contacts
        most = max(most, sum({a, b} == {"plate", "lower"} for a, b in zip(c.body_a, c.body_b)))
    return most


def test_the_lower_link_lands_on_the_plate_unless_self_collision_is_off() -> None:
    model = mb_sim.load_urdf(ARM)
    on = mb_sim.Simulation(model, _world())
    assert _allowed(on, "plate", "lower")
    assert not _allowed(on, "plate", "upper")  # parent and child
    assert not _allowed(on, "upper", "lower")
    assert _fold(on) > 0
    assert on.q[1] < FOLDED - 0.3, "the plate stops the lower link"

    off = mb_sim.Simulation(model, _world(self_collision=False))
    assert not _allowed(off, "plate", "lower")  # the root link's static shapes too
    assert _fold(off) == 0
    assert off.q[1] == pytest.approx(FOLDED, abs=0.05)


HOVER = 2.36  # rad of the elbow: the lower link's lowest corner 2 mm above the plate


def test_a_link_held_still_near_the_fixed_base_gets_no_rows() -> None:
    """The lower link held 2 mm above the plate, inside the 5 mm envelope: the plate is the
    fixed base's static shape, and a contact between it and a link of its own robot that is
    apart and not closing is dropped, as between two links (`drop_receding_contacts`); the
    fold test above shows the plate still stops the link when it comes down."""
    model = mb_sim.load_urdf(ARM)
    sim = mb_sim.Simulation(model, _world(initial_positions={"elbow": HOVER}))
    target = np.array([0.0, HOVER])
    seen = 0
    for _ in range(300):
        q, qd = sim.q, sim.qd
        sim.set_effort(mb_sim.rnea(model, q, qd, 400.0 * (target - q) - 40.0 * qd))
        sim.step(1)
        c = sim.contacts
        seen += sum({a, b} == {"plate", "lower"} for a, b in zip(c.body_a, c.body_b))
    assert seen == 0
    assert sim.q[1] == pytest.approx(HOVER, abs=1e-3)


def test_pairs_overlapping_at_the_reference_pose_never_collide(
        caplog: pytest.LogCaptureFixture) -> None:
    model = mb_sim.load_urdf(ARM)
    with caplog.at_level(logging.INFO, logger="mb_sim"):
        sim = mb_sim.Simulation(model, _world(initial_positions={"elbow": FOLDED}))
    lines = [r.getMessage() for r in caplog.records if "reference pose" in r.getMessage()]
    assert len(lines) == 1, lines
    assert "'folding_arm'" in lines[0] and "(plate, lower)" in lines[0]
    assert not _allowed(sim, "plate", "lower")
    assert _fold(sim) == 0
    assert sim.q[1] == pytest.approx(FOLDED, abs=0.05)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="mb_sim"):  # apart at the reference pose
        assert _allowed(mb_sim.Simulation(model, _world()), "plate", "lower")
    assert not [r for r in caplog.records if "reference pose" in r.getMessage()]


def test_at_most_ten_overlapping_pairs_are_listed(caplog: pytest.LogCaptureFixture) -> None:
    links = "".join(
        f'<joint name="j{i}" type="revolute"><parent link="{"base" if i == 0 else f"l{i - 1}"}"/>'
        f'<child link="l{i}"/><axis xyz="0 0 1"/>'
        f'<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        f'<link name="l{i}"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" '
        f'ixy="0" ixz="0" iyz="0"/></inertial><collision><geometry><sphere radius="0.1"/>'
        f"</geometry></collision></link>" for i in range(7))
    model = mb_sim.load_urdf(f'<robot name="stack"><link name="base"/>{links}</robot>')
    with caplog.at_level(logging.INFO, logger="mb_sim"):
        mb_sim.Simulation(model, _world())
    lines = [r.getMessage() for r in caplog.records if "reference pose" in r.getMessage()]
    assert len(lines) == 1, lines
    assert "15 link pairs" in lines[0]  # 7 spheres at one point: 21 pairs, 6 adjacent
    assert lines[0].count("(l") == 10 and lines[0].endswith("and 5 more")


def test_srdf_pairs_never_collide_and_unknown_links_warn(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    srdf = tmp_path / "arm.srdf"
    srdf.write_text('<robot name="folding_arm">\n'
                    '  <disable_collisions link1="plate" link2="lower" reason="Never"/>\n'
                    '  <disable_collisions link1="lower" link2="gripper" reason="Adjacent"/>\n'
                    '</robot>\n')
    with caplog.at_level(logging.WARNING, logger="mb_sim"):
        model = mb_sim.load_urdf(ARM, srdf=srdf)
    assert model.collision_exclusions == (("plate", "lower"),)
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "'gripper'" in warnings[0] and str(srdf) in warnings[0]
    sim = mb_sim.Simulation(model, _world())
    assert not _allowed(sim, "plate", "lower")
    assert _fold(sim) == 0

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="mb_sim"):  # the world file's srdf key
        world = mb_sim.load_world({"robot": {"srdf": str(srdf)}})
        sim = mb_sim.Simulation(mb_sim.load_urdf(ARM), world)
    assert not _allowed(sim, "plate", "lower")
    assert any("'gripper'" in r.getMessage() for r in caplog.records)


def test_world_exclude_pairs() -> None:
    sim = mb_sim.Simulation(mb_sim.load_urdf(ARM), _world(exclude_pairs=[["lower", "plate"]]))
    assert not _allowed(sim, "plate", "lower")
    with pytest.raises(WorldError, match=r"<dict>: robot.exclude_pairs\[0\]\[1\].*'hand'"):
        mb_sim.Simulation(mb_sim.load_urdf(ARM), _world(exclude_pairs=[["lower", "hand"]]))


@pytest.mark.parametrize(("robot", "words"), [
    ({"self_collision": "no"}, ["robot.self_collision", "true or false"]),
    ({"exclude_pairs": [["a"]]}, ["robot.exclude_pairs[0]", "pair of link names"]),
    ({"exclude_pairs": [["a", "a"]]}, ["robot.exclude_pairs[0]", "two different links"]),
    ({"exclude_pairs": [["a", 3]]}, ["robot.exclude_pairs[0][1]", "non-empty string"]),
    ({"exclude_pairs": "a b"}, ["robot.exclude_pairs", "must be a list"]),
    ({"srdf": "/nonexistent/robot.srdf"}, ["robot.srdf", "/nonexistent/robot.srdf"]),
    ({"srdf": 5}, ["robot.srdf", "file path"]),
])
def test_world_robot_keys_are_checked(robot: dict[str, Any], words: list[str]) -> None:
    with pytest.raises(WorldError) as err:
        mb_sim.load_world({"robot": robot})
    for w in words:
        assert w in str(err.value)


def test_self_collision_moved_from_solver_to_robot() -> None:
    with pytest.raises(WorldError, match=r"solver.self_collision.*robot: \{self_collision"):
        mb_sim.load_world({"solver": {"self_collision": False}})


@pytest.mark.parametrize(("text", "words"), [
    ("", ["empty"]),
    ("<robot><disable_collisions link1='a'/></robot>", ["link1 and link2", "number 1"]),
    ("<robot><disable_collisions", ["malformed XML"]),
    ("<srdf/>", ["root element is <srdf>"]),
])
def test_bad_srdf_is_an_error_naming_the_file(tmp_path: Path, text: str,
                                              words: list[str]) -> None:
    path = tmp_path / "bad.srdf"
    path.write_text(text)
    for error, load in ((ModelError, lambda: mb_sim.load_urdf(ARM, srdf=path)),
                        (WorldError, lambda: mb_sim.load_world({"robot": {"srdf": str(path)}}))):
        with pytest.raises(error) as err:
            load()
        assert str(path) in str(err.value)
        for w in words:
            assert w in str(err.value)


def test_world_round_trip_keeps_the_robot_filter(tmp_path: Path) -> None:
    srdf = tmp_path / "arm.srdf"
    srdf.write_text('<robot><disable_collisions link1="plate" link2="lower"/></robot>')
    world = mb_sim.load_world({"robot": {"self_collision": False, "srdf": str(srdf),
                                         "exclude_pairs": [["upper", "plate"]]}})
    again = mb_sim.load_world(world.to_dict())
    r = again.robot
    assert (r.self_collision, r.srdf, r.srdf_pairs, r.exclude_pairs) == (
        False, str(srdf), (("plate", "lower"),), (("upper", "plate"),))


def test_empty_urdf_string_says_so() -> None:
    for empty in ("", "  \n"):
        with pytest.raises(ModelError, match="empty"):
            mb_sim.load_urdf(empty)


WAIST_ARM = ARM.replace('<robot name="folding_arm">\n  <link name="plate">', """<robot name="waist_arm">
  <link name="stand">
    <inertial><mass value="2"/><inertia ixx="0.02" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/>
    </inertial>
  </link>
  <joint name="waist" type="revolute">
    <parent link="stand"/><child link="plate"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="200" velocity="10"/>
  </joint>
  <link name="plate">
    <inertial><origin xyz="0 0 0.05"/><mass value="3"/>
      <inertia ixx="0.1" iyy="0.1" izz="0.2" ixy="0" ixz="0" iyz="0"/></inertial>""")


@pytest.mark.parametrize("floating", [False, True])
def test_rows_of_two_links_of_one_tree_are_those_of_their_whole_paths(floating: bool) -> None:
    """A contact between two links of one tree (the lower link folded onto the plate, both
    below the waist; floating: the stand is a free base): each row's J equals d . (J_a - J_b)
    of the points' whole paths to the root and the base (the columns they share cancel, so
    the rows are built without them), and its W equals H^-1 J^T from the mass matrix."""
    from mb_sim.dynamics.kinematics import point_jacobian

    model = mb_sim.load_urdf(WAIST_ARM, floating_base=floating)
    world = mb_sim.load_world({"ground": None, "gravity": [0, 0, 0], "robot": {}})
    sim = mb_sim.Simulation(model, world)
    names = sim.scene.geom_names
    lower, plate = names.index("lower"), names.index("plate")
    con, rows, work = sim._data.contacts, sim._data.rows, sim._data.tree
    nv = sim.qd.shape[0]
    q_at, qd_at = (slice(7, 10), slice(6, 9)) if floating else (slice(0, 3), slice(0, 3))
    target = np.array([0.3, 0.0, FOLDED])  # waist turned, elbow folding
    for _ in range(400):
        effort = 400.0 * (target - sim.q[q_at]) - 40.0 * sim.qd[qd_at]
        sim.set_effort(effort)
        start = sim.q.copy()
        sim.step(1)
        pairs = [c for c in range(con.count[0]) if {con.geom_a[c], con.geom_b[c]} == {lower, plate}]
        if pairs:
            break
    assert pairs, "the lower link never reached the plate"
    tree = sim.scene.arrays.tree
    H = mb_sim.crba(model, start)  # the rows are made at the step's start
    nj = model.n_joints
    if floating:  # the rows' velocities: the joints', then the base's [angular; linear]
        order = np.r_[6:6 + nj, 3:6, 0:3]  # where each is in crba's (base [linear; angular])
        H = H[np.ix_(order, order)]
    checked = 0
    for c in pairs:
        r0 = con.normal_row[c]
        jacobians = []
        for geom in (con.geom_a[c], con.geom_b[c]):
            body = int(sim.scene.arrays.geoms.index[geom])
            J, path = np.zeros((3, nv)), np.zeros(nv, dtype=np.int64)
            point_jacobian(tree, work.rot, work.pos, body, con.point[c], J, path, -1, True)
            jacobians.append(J)
        assert np.abs(jacobians[0][:, 0]).max() > 1e-3  # the waist moves each side's point
        whole = jacobians[0] - jacobians[1]
        directions = [con.normal[c], con.tangent1[c], con.tangent2[c]]
        for k, d in enumerate(directions):
            r = r0 + k
            assert rows.tree[r, 0] == 0 and rows.tree[r, 1] == -1
            first, count = rows.span[r, 0]
            assert (first, count) == (0, nv)
            want = d @ whole
            np.testing.assert_allclose(rows.J_t[r, 0, :nv], want, atol=1e-12)
            np.testing.assert_allclose(rows.W_t[r, 0, :nv], np.linalg.solve(H, want), atol=1e-9)
            checked += 1
    assert checked >= 3
