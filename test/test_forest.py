"""Several robots and URDF objects in one simulation (the forest, docs/architecture.md):
closed forms across trees, objects as their primitive twins, each robot's API on its own
entries, trees added and removed between steps, and determinism."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import mb_sim

ARM = Path(__file__).resolve().parents[1] / "urdf" / "arm.urdf"
QUADRUPED = Path(__file__).resolve().parents[1] / "urdf" / "quadruped.urdf"

L, R, M = 0.5, 0.05, 1.0
"""Pendulum length (pivot to the bob's centre), bob radius and mass."""


def _pendulum_urdf(folder: Path) -> Path:
    """A pendulum swinging about y: a massless pivot link, a bob (a solid sphere) at distance
    L below it on a massless rod."""
    text = f"""<?xml version="1.0"?>
<robot name="pendulum">
  <link name="pivot"/>
  <link name="bob">
    <inertial><origin xyz="0 0 {-L}"/><mass value="{M}"/>
      <inertia ixx="{0.4 * M * R * R}" iyy="{0.4 * M * R * R}" izz="{0.4 * M * R * R}"
               ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 {-L}"/><geometry><sphere radius="{R}"/></geometry></collision>
  </link>
  <joint name="swing" type="continuous">
    <parent link="pivot"/><child link="bob"/><axis xyz="0 1 0"/>
  </joint>
</robot>
"""
    path = folder / "pendulum.urdf"
    path.write_text(text)
    return path


def _pendulum_pair(folder: Path, restitution: float, angle: float) -> mb_sim.Simulation:
    """Two identical pendulums whose bobs touch when both hang: `left` released from
    `angle` (a rotation about +y: its bob out towards -x), `right` at rest."""
    urdf = str(_pendulum_urdf(folder))
    world = mb_sim.load_world({
        "ground": None,
        "solver": {"restitution_threshold": 0.01},
        "robots": [
            {"name": "left", "urdf": urdf, "xyz": [0.0, 0.0, 1.0], "friction": 0.0,
             "restitution": restitution, "initial_positions": {"swing": angle}},
            {"name": "right", "urdf": urdf, "xyz": [2 * R, 0.0, 1.0], "friction": 0.0,
             "restitution": restitution},
        ]})
    return mb_sim.Simulation(world=world, dt=0.0005)


@pytest.mark.parametrize("restitution", [1.0, 0.0])
def test_a_pendulum_strikes_its_twin_as_the_closed_form_says(tmp_path, restitution) -> None:
    """Released from 30 degrees, the left bob strikes the right one at the bottom with
    omega = sqrt(2 m g L (1 - cos a) / I), I = m L^2 + 2/5 m r^2. e = 1: the striker stops and
    the other rises to the release angle; e = 0: both move on at omega / 2 (angular momentum
    about the pivots, the impulse acting at L on each). Swinging towards +x is a negative
    rate about +y."""
    angle = math.radians(30.0)
    sim = _pendulum_pair(tmp_path, restitution, angle)
    left, right = sim.robot("left"), sim.robot("right")
    inertia = M * L * L + 0.4 * M * R * R
    omega = math.sqrt(2.0 * M * 9.81 * L * (1.0 - math.cos(angle)) / inertia)
    hit = None
    for _ in range(4000):
        sim.step()
        if right.qd[0] != 0.0:
            hit = sim.time
            break
    assert hit is not None, "the bobs never touched"
    sim.step(40)  # the collision is over within a few steps
    wl, wr = -float(left.qd[0]), -float(right.qd[0])
    if restitution == 1.0:
        assert abs(wl) < 0.02 * omega
        assert wr == pytest.approx(omega, rel=0.02)
        highest = 0.0
        for _ in range(3000):
            sim.step()
            highest = max(highest, -float(right.q[0]))
        assert highest == pytest.approx(angle, rel=0.02)
    else:
        assert wl == pytest.approx(0.5 * omega, rel=0.02)
        assert wr == pytest.approx(0.5 * omega, rel=0.02)


def test_each_robot_has_its_own_entries_and_commands_move_only_it(tmp_path) -> None:
    world = mb_sim.load_world({
        "ground": None,
        "robots": [{"name": "a", "urdf": str(ARM), "xyz": [0.0, 0.0, 0.0]},
                   {"name": "b", "urdf": str(ARM), "xyz": [0.0, 2.0, 0.0]}]})
    sim = mb_sim.Simulation(world=world)
    assert sim.robot_names == ("a", "b")
    a, b = sim.robot("a"), sim.robot("b")
    b.set_interfaces({name: "position" for name in b.joint_names})
    b.set_position_target(np.zeros(7))
    a.set_effort({"joint1": 5.0})
    sim.step(200)
    assert abs(a.q[0]) > 1e-3
    np.testing.assert_allclose(b.q, 0.0, atol=1e-3)
    assert a.link_pose("tool0")[0][1] < 1.0 < b.link_pose("tool0")[0][1]
    with pytest.raises(ValueError, match=r"sim\.robot\(name\)"):
        _ = sim.q
    with pytest.raises(ValueError, match=r"sim\.robot\(name\)"):
        sim.set_effort(np.zeros(7))
    with pytest.raises(KeyError, match="robots: \\['a', 'b'\\]"):
        sim.robot("c")
    before = b.effort.copy()
    with pytest.raises(KeyError, match="joint8"):
        b.set_effort({"joint8": 1.0})
    np.testing.assert_array_equal(b.effort, before)


def test_saved_states_of_several_robots_replay_bit_for_bit(tmp_path) -> None:
    world = mb_sim.load_world({
        "robots": [{"name": "arm", "urdf": str(ARM)},
                   {"name": "dog", "urdf": str(QUADRUPED), "floating": True,
                    "xyz": [1.5, 0.0, 0.45]}]})
    sim = mb_sim.Simulation(world=world)
    sim.robot("arm").set_effort(np.linspace(-2.0, 2.0, 7))
    sim.step(100)
    saved = sim.save_state()
    sim.step(300)
    first = (sim.state.q.copy(), sim.state.qd.copy())
    sim.restore_state(saved)
    sim.step(300)
    np.testing.assert_array_equal(sim.state.q, first[0])
    np.testing.assert_array_equal(sim.state.qd, first[1])
    again = mb_sim.Simulation(world=world)
    again.robot("arm").set_effort(np.linspace(-2.0, 2.0, 7))
    again.step(400)
    np.testing.assert_array_equal(again.state.q, first[0])


def test_a_robot_added_and_removed_leaves_the_others_bit_for_bit(tmp_path) -> None:
    """add_robot and remove_robot between steps: the robot already there continues exactly as
    it would have alone; the new one starts at its initial positions and falls."""
    world = mb_sim.load_world({"robots": [{"name": "arm", "urdf": str(ARM)}]})
    alone = mb_sim.Simulation(world=world)
    both = mb_sim.Simulation(world=world)
    for sim in (alone, both):
        sim.robot("arm").set_effort(np.linspace(-3.0, 3.0, 7))
        sim.step(50)
    dog = mb_sim.load_urdf(QUADRUPED, floating_base=True)
    placement = mb_sim.model.world.RobotPlacement(xyz=np.array([2.0, 0.0, 0.6]), floating=True)
    both.add_robot(dog, "dog", placement)
    assert both.robot_names == ("arm", "dog")
    alone.step(200)
    both.step(200)
    np.testing.assert_array_equal(both.robot("arm").q, alone.robot("arm").q)
    assert both.robot("dog").q[2] < 0.6
    both.remove_robot("dog")
    alone.step(100)
    both.step(100)
    np.testing.assert_array_equal(both.robot("arm").q, alone.robot("arm").q)
    both.reset()
    assert both.robot_names == ("arm",)


def _object_urdf(folder: Path, name: str, size: tuple[float, float, float],
                 mass: float) -> Path:
    """A one-link URDF object: a box of `size` (m) and `mass` (0: no inertial)."""
    inertial = ""
    if mass > 0.0:
        x, y, z = size
        inertial = (f'<inertial><mass value="{mass}"/><inertia ixx="{mass * (y * y + z * z) / 12}" '
                    f'iyy="{mass * (x * x + z * z) / 12}" izz="{mass * (x * x + y * y) / 12}" '
                    'ixy="0" ixz="0" iyz="0"/></inertial>')
    text = (f'<robot name="{name}"><link name="{name}_link">{inertial}<collision><geometry>'
            f'<box size="{size[0]} {size[1]} {size[2]}"/></geometry></collision></link></robot>')
    path = folder / f"{name}.urdf"
    path.write_text(text)
    return path


def test_urdf_objects_rest_as_their_primitive_twins(tmp_path) -> None:
    """A URDF table (fixed) and a URDF crate (floating) dropped on it end where a static
    box body and a free box body of the same sizes and mass end (within 1 mm)."""
    table = _object_urdf(tmp_path, "table", (0.8, 0.6, 0.04), 0.0)
    crate = _object_urdf(tmp_path, "crate", (0.1, 0.08, 0.06), 0.4)
    objects = mb_sim.load_world({"robots": [
        {"name": "table", "urdf": str(table), "xyz": [0.0, 0.0, 0.5]},
        {"name": "crate", "urdf": str(crate), "floating": True, "xyz": [0.05, 0.02, 0.6],
         "rpy": [0.0, 0.0, 0.3]}]})
    twins = mb_sim.load_world({"bodies": [
        {"name": "table", "shape": "box", "size": [0.8, 0.6, 0.04], "xyz": [0.0, 0.0, 0.5],
         "static": True},
        {"name": "crate", "shape": "box", "size": [0.1, 0.08, 0.06], "mass": 0.4,
         "xyz": [0.05, 0.02, 0.6], "rpy": [0.0, 0.0, 0.3]}]})
    a, b = mb_sim.Simulation(world=objects), mb_sim.Simulation(world=twins)
    assert a.object_names == ("table", "crate") and a.robot_names == ()
    a.step(1500)
    b.step(1500)
    xyz_a, quat_a = a.body_pose("crate")
    xyz_b, quat_b = b.body_pose("crate")
    assert xyz_a[2] == pytest.approx(0.52 + 0.03, abs=1e-3)
    np.testing.assert_allclose(xyz_a, xyz_b, atol=1e-3)
    assert abs(abs(float(quat_a @ quat_b)) - 1.0) < 1e-6
    assert {"crate", "table"} <= set(a.contacts.entity_a + a.contacts.entity_b)


def test_a_box_resting_across_two_robots_stays_put(tmp_path) -> None:
    """Two identical one-link robots (paddles held by position servos) side by side; a box
    laid across both settles and stays, each robot carrying half of it."""
    paddle = tmp_path / "paddle.urdf"
    paddle.write_text(
        '<robot name="paddle"><link name="post"/><link name="blade">'
        '<inertial><origin xyz="0 0 0.1"/><mass value="1"/><inertia ixx="0.01" iyy="0.01" '
        'izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial><collision><origin xyz="0 0 0.1"/>'
        '<geometry><box size="0.1 0.1 0.02"/></geometry></collision></link>'
        '<joint name="lift" type="prismatic"><parent link="post"/><child link="blade"/>'
        '<axis xyz="0 0 1"/><limit lower="-0.2" upper="0.2" effort="100" velocity="1"/>'
        '</joint></robot>')
    world = mb_sim.load_world({"ground": None, "robots": [
        {"name": "left", "urdf": str(paddle), "xyz": [-0.1, 0.0, 0.0]},
        {"name": "right", "urdf": str(paddle), "xyz": [0.1, 0.0, 0.0]}],
        "bodies": [{"name": "plank", "shape": "box", "size": [0.3, 0.08, 0.02], "mass": 0.5,
                    "xyz": [0.0, 0.0, 0.121]}]})
    sim = mb_sim.Simulation(world=world)
    for name in ("left", "right"):
        view = sim.robot(name)
        view.set_interfaces({"lift": "position"})
        view.set_position_target({"lift": 0.0})
    sim.step(1000)
    start = sim.body_pose("plank")[0].copy()
    sim.step(1000)
    np.testing.assert_allclose(sim.body_pose("plank")[0], start, atol=1e-4)
    assert start[2] == pytest.approx(0.12, abs=2e-3)
    left, right = (sim.robot(n).applied_effort[0] for n in ("left", "right"))
    weight = 9.81 * (1.0 + 0.25)  # the blade and half the plank
    assert left == pytest.approx(weight, rel=0.02) and right == pytest.approx(weight, rel=0.02)
