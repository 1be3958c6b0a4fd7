"""The compiled step as a whole: the check stage, state save/restore and queries in the middle of
a run, workspace growth, and n steps in one call against n calls."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mb_sim
from mb_sim.errors import SimulationError
from mb_sim.sim import arguments
from mb_sim.sim.data import allocate_data

ROOT = Path(__file__).resolve().parents[1]
ARM = ROOT / "urdf" / "arm.urdf"
TABLE = ROOT / "config" / "worlds" / "table.yaml"
PRESS = np.array([0.0, 0.77, 0.0, 1.236, 0.0, 1.136, 0.0])  # the hand on the table top


def arm_on_table(dt: float = 0.001) -> mb_sim.Simulation:
    sim = mb_sim.Simulation(mb_sim.load_urdf(ARM), mb_sim.load_world(TABLE), dt=dt)
    sim.set_initial_state(q=PRESS)
    sim.set_effort(np.array([0.0, 5.0, 0.0, 3.0, 0.0, 1.0, 0.0]))
    return sim


def snapshot(sim: mb_sim.Simulation) -> list[np.ndarray]:
    s = sim.state
    return [s.q.copy(), s.qd.copy(), s.body_pos.copy(), s.body_quat.copy(), s.body_vel.copy(),
            np.array([sim.time])]


def assert_same_bits(a: list[np.ndarray], b: list[np.ndarray]) -> None:
    for x, y in zip(a, b):
        assert x.tobytes() == y.tobytes()


def test_n_steps_in_one_call_equal_n_calls() -> None:
    one, many = arm_on_table(), arm_on_table()
    one.step(300)
    for _ in range(300):
        many.step(1)
    assert_same_bits(snapshot(one), snapshot(many))
    assert len(one.contacts) > 0


def test_a_nan_in_the_state_stops_the_step_and_names_the_joint() -> None:
    sim = arm_on_table()
    sim.step(50)
    sim.state.effort[3] = np.nan  # slipped past set_effort, which refuses it
    before = snapshot(sim)
    with pytest.raises(SimulationError, match=r"joint 'joint4'.*t = 0\.050000"):
        sim.step(10)
    assert_same_bits(before, snapshot(sim))  # the state of the step before
    sim.state.effort[3] = 0.0
    sim.step(10)  # and the simulation goes on from there
    assert np.all(np.isfinite(sim.q))


def test_a_body_that_blows_up_is_named() -> None:
    world = mb_sim.load_world({"bodies": [{"name": "ball", "shape": "sphere", "size": [0.1],
                                           "xyz": [0, 0, 1.0]}]})
    sim = mb_sim.Simulation(None, world)
    sim.step(5)
    sim.state.body_vel[0, 3] = np.inf
    before = snapshot(sim)
    with pytest.raises(SimulationError, match="body 'ball'"):
        sim.step()
    assert_same_bits(before, snapshot(sim))


def test_a_step_too_long_for_the_scene_raises_instead_of_going_on_with_nan(monkeypatch) -> None:
    monkeypatch.setattr(arguments, "DT_RANGE", (1e-6, 1.0))  # the API refuses dt > 0.05 s
    sim = mb_sim.Simulation(mb_sim.load_urdf(ARM), dt=0.5)  # 500 times the usual step
    sim.set_state(q=[0.3, 0.77, 0.2, 1.236, 0.1, 1.136, 0.0])
    sim.set_effort(np.full(7, 2.0))
    with pytest.raises(SimulationError, match=r"joint '\w+' became non-finite"):
        sim.step(1000)
    assert 0.0 < sim.time < 500.0
    assert np.all(np.isfinite(sim.q)) and np.all(np.isfinite(sim.qd))


def test_save_and_restore_in_the_middle_of_a_run_continue_with_the_same_bits() -> None:
    straight, detour = arm_on_table(), arm_on_table()
    straight.step(200)
    detour.step(100)
    saved = detour.save_state()
    detour.set_effort(np.full(7, 3.0))
    detour.step(50)  # something else happens, then is undone
    detour.restore_state(saved)
    detour.set_effort(np.array([0.0, 5.0, 0.0, 3.0, 0.0, 1.0, 0.0]))
    detour.step(100)
    assert_same_bits(snapshot(straight), snapshot(detour))


def test_queries_between_steps_change_nothing() -> None:
    quiet, asked = arm_on_table(), arm_on_table()
    quiet.step(200)
    for _ in range(200):
        asked.step()
        asked.link_pose("link7")
        asked.link_poses()
        asked.energy()
        _ = asked.contacts
    assert_same_bits(snapshot(quiet), snapshot(asked))


def boxes_falling() -> mb_sim.Simulation:
    """Boxes that land one after another: the contact count grows while the run goes on."""
    bodies = [{"name": f"box{i}", "shape": "box", "size": [0.1, 0.1, 0.1],
               "xyz": [0.3 * i, 0.0, 0.06 + 0.05 * i]} for i in range(8)]
    return mb_sim.Simulation(None, mb_sim.load_world({"ground": {}, "bodies": bodies}))


def test_the_workspace_grows_between_steps_without_changing_the_result() -> None:
    roomy, tight = boxes_falling(), boxes_falling()
    tight._data = allocate_data(tight.scene.arrays, contact_capacity=2)
    tight._bind()
    counts = []
    for _ in range(300):
        roomy.step()
        tight.step()
        counts.append(len(tight.contacts))
    assert counts[0] < counts[-1] // 2  # the contacts more than doubled during the run
    assert tight._data.contacts.depth.shape[0] >= max(counts) > 2
    assert_same_bits(snapshot(roomy), snapshot(tight))


def test_a_body_without_inertia_reaching_a_division_is_a_simulation_error() -> None:
    """A zero articulated inertia divides by zero in ABA (checks at load refuse such a robot;
    here one is forced past them): NaN, not a bare ZeroDivisionError, and the state of the
    step before."""
    import dataclasses

    model = mb_sim.load_urdf(ARM)
    hollow = dataclasses.replace(model, spatial_inertia=np.concatenate(
        [model.spatial_inertia[:-1], np.zeros((1, 6, 6))]))
    sim = mb_sim.Simulation(hollow)
    before = snapshot(sim)
    with pytest.raises(SimulationError, match=r"joint '\w+' became non-finite.*t = 0\.000000"):
        sim.step(5)
    assert_same_bits(before, snapshot(sim))


def test_an_arithmetic_error_raised_in_the_step_leaves_the_state_before(monkeypatch) -> None:
    """Interpreted kernels (NUMBA_DISABLE_JIT=1) raise ZeroDivisionError where compiled ones
    give NaN: the same SimulationError, and the state before the faulty step."""
    from mb_sim.sim import step

    def faulty(sim_record, n: int) -> None:
        step.step(sim_record, 3)  # three good steps, then one that fails half-way
        step.remember(sim._d, sim._s)
        sim.state.q[:] = 1e300
        raise ZeroDivisionError("float division by zero")

    reference = arm_on_table()
    reference.step(3)
    sim = arm_on_table()
    monkeypatch.setattr(sim, "_compiled_step", lambda: faulty)  # what Simulation.step calls
    with pytest.raises(SimulationError, match=r"ZeroDivisionError.*t = 0\.003000.*fastest: "):
        sim.step(10)
    assert_same_bits(snapshot(reference), snapshot(sim))
