"""The Python API of `Simulation` refuses bad arguments with messages that name the argument and
the value, and a refused call changes nothing: the state is bit-identical before and after."""

from __future__ import annotations

import logging
import math
import re
import runpy
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

import mb_sim
from mb_sim.sim import loading, simulation
from mb_sim.sim.data import allocate_data

ROOT = Path(__file__).resolve().parents[1]
ARM = ROOT / "urdf" / "arm.urdf"
TABLE = ROOT / "config" / "worlds" / "table.yaml"
START = np.array([0.0, 0.77, 0.0, 1.236, 0.0, 1.136, 0.0])


@pytest.fixture(scope="module")
def model() -> mb_sim.Model:
    return mb_sim.load_urdf(ARM)


@pytest.fixture(scope="module")
def table() -> mb_sim.World:
    return mb_sim.load_world(TABLE)


@pytest.fixture
def sim(model: mb_sim.Model, table: mb_sim.World) -> mb_sim.Simulation:
    """The arm on the table, some steps into a run (warm start and contacts in the state)."""
    s = mb_sim.Simulation(model, world=table, dt=0.001)
    s.set_initial_state(q=START)
    s.set_effort([0.0, 5.0, 0.0, 3.0, 0.0, 1.0, 0.0])
    s.step(30)
    return s


def state_bits(sim: mb_sim.Simulation) -> list[bytes]:
    return [getattr(sim.state, f.name).tobytes() for f in fields(sim.state)]


def refused(sim: mb_sim.Simulation, call, error, match: str) -> None:
    """call(sim) raises `error` with a message matching `match`, and changes nothing."""
    before, initial = state_bits(sim), [getattr(sim._initial, f.name).tobytes()
                                        for f in fields(sim._initial)]
    with pytest.raises(error, match=match):
        call(sim)
    assert state_bits(sim) == before
    assert [getattr(sim._initial, f.name).tobytes() for f in fields(sim._initial)] == initial


GOOD_Q = START.tolist()
NAN_QD = [0.0, math.nan, 0, 0, 0, 0, 0]
BAD_STATES = [
    # (q, qd, error, message)
    (GOOD_Q, NAN_QD, ValueError, r"qd for joint 'joint2' is nan"),
    ([math.inf] + GOOD_Q[1:], None, ValueError, r"q for joint 'joint1' is inf"),
    (GOOD_Q[:6], None, ValueError, r"q needs 7 values .* got shape \(6,\)"),
    ([GOOD_Q], None, ValueError, r"q needs 7 values .* got shape \(1, 7\)"),
    (["0"] * 7, None, TypeError, r"q must be numbers"),
    (None, [1e10] + [0] * 6, ValueError, r"qd for joint 'joint1' is 1e\+10; allowed: \|qd\| <= 10000"),
    ([1e10] + GOOD_Q[1:], None, ValueError, r"q for joint 'joint1' is 1e\+10; allowed: \|q\| <= 100000"),
    ([0, 90.0, 0, 0, 0, 0, 0], None, ValueError,
     (r"joint limits .*'joint2' = 90 \(limits \[-1\.76\d*, 1\.76\d*\]\) "
      r"\(q is in radians, not degrees\); set_state\(\.\.\., clamp=True\)")),
    ({"joint9": 0.1}, None, KeyError, r"unknown joint 'joint9'"),
    ({"joint2": "0.1"}, None, TypeError, r"q for joint 'joint2' must be a number, got '0\.1'"),
    ({"joint2": 0.1}, {"joint3": math.nan}, ValueError, r"qd for joint 'joint3' is nan"),
]


@pytest.mark.parametrize("q, qd, error, match", BAD_STATES)
def test_set_state_refuses_and_changes_nothing(sim, q, qd, error, match) -> None:
    refused(sim, lambda s: s.set_state(q=q, qd=qd), error, match)


@pytest.mark.parametrize("q, qd, error, match", BAD_STATES)
def test_set_initial_state_refuses_and_changes_nothing(sim, q, qd, error, match) -> None:
    refused(sim, lambda s: s.set_initial_state(q=q, qd=qd), error, match)


def test_set_state_accepts_a_position_within_the_tolerance_beyond_a_limit(sim, model) -> None:
    q = START.copy()
    q[1] = model.upper[1] + 0.5 * simulation.LIMIT_TOLERANCE
    sim.set_state(q=q)
    assert sim.q.tobytes() == q.tobytes()


def test_set_state_clamps_on_request_with_a_warning(sim, model, caplog) -> None:
    q = START.copy()
    q[1], q[3] = 5.0, -7.0
    with caplog.at_level(logging.WARNING, logger="mb_sim"):
        sim.set_state(q=q, qd={"joint1": 0.5}, clamp=True)
    expected = q.copy()
    expected[1], expected[3] = model.upper[1], model.lower[3]
    assert sim.q.tobytes() == expected.tobytes()
    assert sim.qd[0] == 0.5
    assert re.search(r"clamped to the joint limits: 'joint2' = 5 .*'joint4' = -7", caplog.text)


def test_a_mapping_sets_only_the_named_joints(sim) -> None:
    q, qd = sim.q, sim.qd
    sim.set_state(q={"joint3": 0.25}, qd={"joint5": np.float32(-1.0)})
    q[2], qd[4] = 0.25, -1.0
    assert sim.q.tobytes() == q.tobytes() and sim.qd.tobytes() == qd.tobytes()


@pytest.mark.parametrize("effort, error, match", [
    ([1.0, math.nan, 0, 0, 0, 0, 0], ValueError, r"effort for joint 'joint2' is nan"),
    ({"joint4": math.inf}, ValueError, r"effort for joint 'joint4' is inf"),
    ([1.0] * 8, ValueError, r"effort needs 7 values"),
    ("1234567", TypeError, r"effort must be numbers"),
    ({"joint4": None}, TypeError, r"effort for joint 'joint4' must be a number, got None"),
    ({"nope": 1.0}, KeyError, r"unknown joint 'nope'"),
])
def test_set_effort_refuses_and_changes_nothing(sim, effort, error, match) -> None:
    refused(sim, lambda s: s.set_effort(effort), error, match)


def test_efforts_beyond_the_limit_are_clamped_with_one_warning(sim, model, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="mb_sim"):
        sim.set_effort({"joint1": 1e9})
        sim.set_effort({"joint1": -1e9})
    assert sim.effort[0] == -model.effort_limit[0]
    assert caplog.text.count("exceeds its limit") == 1


def test_an_array_of_efforts_is_clamped_with_one_warning_per_joint(sim, model, caplog) -> None:
    """The compiled path of a float64 array: clamped as the other paths, each joint warned
    about once, a NaN or an infinity refused with nothing changed."""
    limit = model.effort_limit[:model.n_joints]
    tau = np.zeros(model.n_joints)
    tau[0], tau[2] = 2.0 * limit[0], -3.0 * limit[2]
    with caplog.at_level(logging.WARNING, logger="mb_sim"):
        for _ in range(3):
            sim.set_effort(tau)
        tau[4] = 10.0 * limit[4]
        sim.set_effort(tau)
    expected = np.clip(tau, -limit, limit)
    assert sim.effort.tobytes() == expected.tobytes()
    assert caplog.text.count("exceeds its limit") == 3
    assert "'joint1'" in caplog.text and "'joint3'" in caplog.text and "'joint5'" in caplog.text
    for bad, word in ((math.nan, "nan"), (math.inf, "inf")):
        wrong = np.zeros(model.n_joints)
        wrong[1] = bad
        refused(sim, lambda s, w=wrong: s.set_effort(w), ValueError,
                rf"effort for joint 'joint2' is {word}")


def test_efforts_written_into_the_arrays_are_clamped_at_every_step_with_one_warning(
        sim, model, caplog) -> None:
    """Efforts written straight into `Robot.arrays` are checked by the step: clamped at every
    step they exceed their limit, each joint warned about once however many steps clamp it
    (the step reports a joint's first clamp only, so a loop that clamps at every step pays
    for no report after the first), a joint clamped later warned about then."""
    limit = model.effort_limit[:model.n_joints]
    effort = sim.robot(sim.robot_names[0]).arrays.effort
    reports = []
    report = sim._report_clamps
    sim._report_clamps = lambda: (reports.append(sim.time), report())
    with caplog.at_level(logging.WARNING, logger="mb_sim"):
        for _ in range(5):
            effort[0] = 2.0 * limit[0]
            sim.step()
            assert effort[0] == limit[0]
        assert len(reports) == 1
        assert caplog.text.count("was beyond its bound") == 1 and "'joint1'" in caplog.text
        effort[2] = -3.0 * limit[2]
        effort[0] = 2.0 * limit[0]
        sim.step(3)
        assert effort[2] == -limit[2] and effort[0] == limit[0]
    assert len(reports) == 2
    assert caplog.text.count("was beyond its bound") == 2 and "'joint3'" in caplog.text


def test_restore_state_refuses_nan_and_changes_nothing(sim) -> None:
    saved = sim.save_state()
    sim.step(5)
    for name, index in (("q", 3), ("qd", 0), ("body_pos", (2, 1)), ("effort", 6),
                        ("body_vel", (4, 5))):
        bad = saved.copy()
        getattr(bad, name)[index] = math.nan
        refused(sim, lambda s, b=bad: s.restore_state(b), ValueError,
                rf"the state's {name} holds a non-finite value \((joint|body) '")


def test_restore_state_refuses_a_state_of_another_simulation(sim, model) -> None:
    robot_alone = mb_sim.Simulation(model).save_state()
    refused(sim, lambda s: s.restore_state(robot_alone), ValueError,
            r"body_pos has shape \(0, 3\), this simulation's \(\d+, 3\).*another simulation")
    refused(sim, lambda s: s.restore_state({"q": START}), TypeError, r"needs a State")


def test_reset_returns_to_the_initial_state_bit_for_bit(sim) -> None:
    initial = [getattr(sim._initial, f.name).tobytes() for f in fields(sim._initial)]
    sim.step(20)
    sim.reset()
    assert state_bits(sim) == initial


def boxes_falling(capacity: int = 0) -> mb_sim.Simulation:
    bodies = [{"name": f"box{i}", "shape": "box", "size": [0.1, 0.1, 0.1],
               "xyz": [0.3 * i, 0.0, 0.06 + 0.05 * i]} for i in range(8)]
    sim = mb_sim.Simulation(None, mb_sim.load_world({"ground": {}, "bodies": bodies}))
    if capacity:
        sim._data = allocate_data(sim.scene.arrays, contact_capacity=capacity)
        sim._bind()
    return sim


def test_restore_after_the_workspace_grew_continues_with_the_same_bits() -> None:
    """A state saved before the workspace grew (smaller warm-start buffers), restored after."""
    straight, tight = boxes_falling(), boxes_falling(capacity=2)
    straight.step(150)
    tight.step(150)
    saved = tight.save_state()
    small = saved.warm_key.shape[0]
    tight.step(150)
    assert tight.state.warm_key.shape[0] > small  # it grew
    tight.restore_state(saved)
    tight.step(150)
    straight.step(150)
    assert state_bits(tight)[:7] == state_bits(straight)[:7]


@pytest.mark.parametrize("n, error, match", [
    (-5, ValueError, r"step\(n\): n must be a non-negative integer, got -5"),
    (2.9, TypeError, r"step\(n\): n must be a non-negative integer, got 2\.9 \(float\)"),
    (math.nan, TypeError, r"got nan \(float\)"),
    ("3", TypeError, r"got '3' \(str\)"),
    (True, TypeError, r"got True"),
    (None, TypeError, r"got None"),
    (np.float64(3.0), TypeError, r"got np\.float64\(3\.0\) \(float64\)"),
])
def test_step_refuses_what_is_not_a_count(sim, n, error, match) -> None:
    refused(sim, lambda s: s.step(n), error, match)


def test_step_takes_python_and_numpy_integers(sim) -> None:
    t = sim.time
    sim.step(0)
    assert sim.time == t
    sim.step(np.int64(3))
    sim.step(np.uint8(2))
    assert sim.time == pytest.approx(t + 0.005)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"dt": "0.001"}, TypeError, r"dt must be a number of seconds, got '0\.001' \(str\)"),
    ({"dt": True}, TypeError, r"dt must be a number of seconds, got True"),
    ({"dt": 0.0}, ValueError, r"dt must be within \[1e-06, 0\.05\] s, got 0\.0"),
    ({"dt": -0.001}, ValueError, r"got -0\.001"),
    ({"dt": math.nan}, ValueError, r"got nan"),
    ({"dt": 1.0}, ValueError, r"got 1\.0"),
    ({"dt": 1e-7}, ValueError, r"got 1e-07"),
    ({"gravity": [0, -9.81]}, ValueError, r"gravity must be 3 numbers .* got 2 value\(s\)"),
    ({"gravity": [[0, 0, -9.81]]}, ValueError, r"gravity must be 3 numbers"),
    ({"gravity": ["0", "0", "-9.81"]}, TypeError, r"gravity must be 3 numbers"),
    ({"gravity": [0, 0, math.nan]}, ValueError, r"gravity .* got \[0, 0, nan\]"),
    ({"gravity": [0, 0, -1e300]}, ValueError, r"each within \+-1000, got \[0, 0, -1e\+300\]"),
    ({"gravity": 9.81}, ValueError, r"got 1 value"),
    ({"integrator": "euler"}, ValueError, r"integrator must be one of .* got 'euler'"),
    ({"integrator": ["rk4"]}, ValueError, r"integrator must be one of"),
])
def test_constructor_refuses_bad_arguments(model, kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        mb_sim.Simulation(model, **kwargs)


def test_constructor_refuses_paths_for_model_and_world(model) -> None:
    with pytest.raises(TypeError, match=r"model must be a Model \(mb_sim\.load_urdf\)"):
        mb_sim.Simulation(str(ARM))
    with pytest.raises(TypeError, match=r"world must be a World \(mb_sim\.load_world\)"):
        mb_sim.Simulation(model, str(TABLE))


def test_a_long_step_is_accepted_with_a_warning(model, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="mb_sim"):
        sim = mb_sim.Simulation(model, dt=0.02)
    assert sim.dt == 0.02 and "dt = 0.02 s is above 0.01 s" in caplog.text
    with pytest.raises(ValueError, match=r"dt must be within"):
        sim.set_options(dt=0.5)
    assert sim.dt == 0.02


def test_a_world_without_a_robot_says_so_once(table, monkeypatch, caplog) -> None:
    monkeypatch.setattr(loading, "_robotless_reported", set())
    with caplog.at_level(logging.INFO, logger="mb_sim"):
        sim = mb_sim.Simulation(world=table)
        mb_sim.Simulation(world=table)
    assert sim.nv == 0
    lines = [r for r in caplog.records if "names no robot" in r.getMessage()]
    assert len(lines) == 1 and lines[0].name == "mb_sim"
    assert "table.yaml" in lines[0].getMessage()
    assert "Simulation(mb_sim.load_urdf(path), world)" in lines[0].getMessage()


def test_a_world_that_names_its_robot_loads_it_without_a_word(monkeypatch, caplog) -> None:
    monkeypatch.setattr(loading, "_robotless_reported", set())
    description = mb_sim.load_world(TABLE).to_dict()
    description["robot"]["urdf"] = str(ARM)
    with caplog.at_level(logging.INFO, logger="mb_sim"):
        sim = mb_sim.Simulation(world=mb_sim.load_world(description))
    assert sim.nv == 7 and "names no robot" not in caplog.text


def test_the_readme_example_runs(monkeypatch, tmp_path) -> None:
    """The first Python example of docs/api.md, run as it is (it passes the model and the
    world: the table world names no robot)."""
    section = (ROOT / "docs" / "api.md").read_text()
    example = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)
    assert "mb_sim.Simulation(model, world=world" in example
    monkeypatch.chdir(ROOT)
    script = tmp_path / "readme_example.py"
    script.write_text(example)
    scope = runpy.run_path(str(script))
    assert scope["sim"].nv == 7 and scope["sim"].time == 0.0
