"""Bodies added, removed and moved between steps (Simulation.add_body, remove_body,
set_body_state): everything else carries over bit for bit, warm-start impulses included, and
a refused call changes nothing."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from mb_sim.model.spawn import spawn_body
from mb_sim.model.urdf import load_urdf
from mb_sim.model.world import Body, load_world
from mb_sim.sim import Simulation
from mb_sim.sim.state import State

ROOT = Path(__file__).resolve().parents[1]
STACK = ROOT / "config" / "worlds" / "box_stack.yaml"
ARM = ROOT / "urdf" / "arm.urdf"
FAR = "{name: far, shape: box, size: [0.2, 0.2, 0.2], mass: 2.0}"
"""High above the ground and far from everything: no contact within the tests' steps."""


def _far(xyz: tuple[float, float, float] = (-3.0, 2.0, 3.0)) -> Body:
    return spawn_body(resource_string=FAR, xyz=xyz).body


def _sim(*extra: Body) -> Simulation:
    world = load_world(STACK)
    world = dataclasses.replace(world, bodies=(*world.bodies, *extra))
    return Simulation(load_urdf(ARM), world, dt=0.001)


def _same(a: State, b: State) -> None:
    """Every field of the two states holds the same bits (the warm-start keys and impulses
    in use: the room for them is workspace capacity)."""
    n = int(a.warm_count[0])
    for name, value in zip(a.arrays()._fields, a.arrays()):
        other = getattr(b, name)
        if name in ("warm_key", "warm_value"):
            value, other = value[:n], other[:n]
        assert np.array_equal(value, other), name


def _as_now(sim: Simulation, name: str) -> Body:
    """The body `name` of sim as it is now, to add elsewhere."""
    i = sim.body_index(name)
    st = sim.state
    return dataclasses.replace(sim.world.body(name), xyz=st.body_pos[i].copy(),
                               quat_xyzw=st.body_quat[i].copy(),
                               linear_velocity=st.body_vel[i, :3].copy(),
                               angular_velocity=st.body_vel[i, 3:].copy())


def test_added_body_continues_as_if_always_there() -> None:
    """A stack (with its warm-started contacts) and an arm stepped 300 steps, then a body
    added where the same body is in a simulation that had it from the start: from there on
    both give the same bits in every field of the state."""
    with_it, without = _sim(_far()), _sim()
    with_it.step(300)
    without.step(300)
    assert without.state.warm_count[0] > 0  # the stack's contacts are warm-started
    without.add_body(_as_now(with_it, "far"))
    assert without.body_names == with_it.body_names
    _same(without.state, with_it.state)
    without.step(200)
    with_it.step(200)
    _same(without.state, with_it.state)


def test_removed_body_leaves_the_rest_as_if_never_there() -> None:
    with_it, without = _sim(_far()), _sim()
    with_it.step(300)
    without.step(300)
    with_it.remove_body("far")
    assert "far" not in with_it.body_names
    _same(with_it.state, without.state)
    with_it.step(200)
    without.step(200)
    _same(with_it.state, without.state)


def test_removing_a_body_in_contact_keeps_the_other_contacts_warm() -> None:
    """The top box of the stack removed: the warm start keeps every contact but the top box's
    (bottom-ground and middle-bottom), renumbered, and the rest continues."""
    sim = _sim()
    sim.step(300)
    before = int(sim.state.warm_count[0])
    sim.remove_body("box_top")
    after = int(sim.state.warm_count[0])
    assert 0 < after < before
    assert np.all(np.diff(sim.state.warm_key[:after]) > 0)
    sim.step(500)
    z = [sim.body_pose(n)[0][2] for n in ("box_bottom", "box_middle")]
    assert z == pytest.approx([0.1, 0.3], abs=2e-3)


def test_spawned_box_lands_on_the_stack_and_reset_keeps_it() -> None:
    sim = _sim()
    sim.step(100)
    sim.add_body(spawn_body(resource_string=FAR, name="new", xyz=(1.5, 0.0, 0.8)).body)
    sim.step(1000)
    assert sim.body_pose("new")[0][2] == pytest.approx(0.7, abs=3e-3)
    sim.reset()
    assert sim.time == 0.0
    assert sim.body_pose("new")[0].tolist() == [1.5, 0.0, 0.8]


def test_refused_calls_change_nothing() -> None:
    sim = _sim(_far())
    sim.step(300)
    saved = sim.save_state()
    names = sim.body_names
    with pytest.raises(ValueError, match="'box_top' is taken"):
        sim.add_body(dataclasses.replace(_far(), name="box_top"))
    with pytest.raises(ValueError, match="'arm' is taken|is taken"):
        sim.add_body(dataclasses.replace(_far(), name=sim.model.name))
    with pytest.raises(TypeError, match="Body"):
        sim.add_body("box")  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="nothing"):
        sim.remove_body("nothing")
    with pytest.raises(KeyError, match="nothing"):
        sim.set_body_state("nothing", xyz=[0, 0, 1])
    with pytest.raises(ValueError, match="position"):
        sim.set_body_state("far", xyz=[0, float("nan"), 1])
    with pytest.raises(ValueError, match="quaternion"):
        sim.set_body_state("far", xyz=[0, 0, 1], quat_xyzw=[0, 0, 0, 2])
    _same(sim.state, saved)
    assert sim.body_names == names
    static = _sim(spawn_body(resource_string="{name: post, shape: box, size: [0.1, 0.1, 1], "
                             "static: true}", xyz=(-1.0, -1.0, 0.5)).body)
    with pytest.raises(ValueError, match="'post' is static"):
        static.set_body_state("post", xyz=[0, 0, 1])


def test_set_body_state_moves_one_body_and_drops_only_its_warm_start() -> None:
    sim = _sim()
    sim.step(300)
    count = int(sim.state.warm_count[0])
    sim.set_body_state("box_top", xyz=[0.0, 1.0, 1.0], linear=[0.0, 0.0, 1.0])
    xyz, _ = sim.body_pose("box_top")
    assert xyz.tolist() == [0.0, 1.0, 1.0]
    assert sim.body_velocity("box_top")[0].tolist() == [0.0, 0.0, 1.0]
    assert 0 < int(sim.state.warm_count[0]) < count  # the middle box's contacts stay
    sim.step(10)
    assert sim.body_pose("box_top")[0][2] > 1.0


def test_entities_report_and_take_the_pose_of_the_resource_frame() -> None:
    """A one-link URDF whose collision sits off the link origin, spawned at a pose through
    mb_sim.ros.services.entities (what the node's services use, no rclpy): the entity reports that pose
    (the link frame's, not the centre of mass's), takes a new one the same way, and its bounds
    are in the link frame; a fixed-base robot and the robot's deletion are refused."""
    from mb_sim.ros.services.entities import Entities, EntityError

    sim = _sim()
    entities = Entities(sim, sim.body_names)
    urdf = ('<robot name="can"><link name="can"><collision><origin xyz="0 0 0.05"/><geometry>'
            '<cylinder radius="0.04" length="0.1"/></geometry></collision></link></robot>')
    quat = np.array([0.0, 0.0, np.sin(0.3), np.cos(0.3)])
    entities.spawn(spawn_body(resource_string=urdf, xyz=(-1.0, 1.0, 2.0), quat_xyzw=quat))
    state = entities.state("can")
    assert state.xyz == pytest.approx([-1.0, 1.0, 2.0], abs=1e-12)
    assert state.quat_xyzw == pytest.approx(quat, abs=1e-12)
    assert sim.body_pose("can")[0] == pytest.approx([-1.0, 1.0, 2.05], abs=1e-12)
    entities.set_state("can", ([0.0, 2.0, 1.0], [0.0, 0.0, 0.0, 1.0]), ([0.0, 0.0, 0.0],
                                                                        [0.0, 0.0, 1.0]))
    state = entities.state("can")
    assert state.xyz == pytest.approx([0.0, 2.0, 1.0], abs=1e-12)
    assert state.angular.tolist() == [0.0, 0.0, 1.0]
    lo, hi = entities.bounds("can")
    assert lo == pytest.approx([-0.04, -0.04, 0.0]) and hi == pytest.approx([0.04, 0.04, 0.1])
    assert entities.kind(sim.model.name) == "robot" and entities.spawned() == ["can"]
    with pytest.raises(EntityError, match="fixed base") as fixed:
        entities.set_state(sim.model.name, ([0, 0, 0], [0, 0, 0, 1]), None)
    assert fixed.value.code == "OPERATION_FAILED"
    with pytest.raises(EntityError, match="cannot be deleted"):
        entities.delete(sim.model.name)
    assert entities.delete_spawned() == ["can"] and sim.body_names == entities.original
