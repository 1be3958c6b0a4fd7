"""Interpreted while compiling (`mb_sim.compiling.interpreted`): a first start steps at once.

In this process the kernels are compiled (the suite runs after `make kernels`), so the
interpreted start is begun by hand with a stand-in for the background compile: kernels called
meanwhile run as Python (nothing is compiled for them), a simulation and the public dynamics
made meanwhile work on namedtuples, and when the stand-in ends they go on compiled, on the
same arrays, from where they were, agreeing with a simulation compiled from its start. A
fresh process with an empty kernel cache then takes its first step interpreted, and its
background compile ends with it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from kernel_sources import compiling_env

import mb_sim
from mb_sim._jit import JIT, njit
from mb_sim.compiling import interpreted

pytestmark = pytest.mark.skipif(not JIT, reason="interpreted starts are for compiled kernels "
                                "(NUMBA_DISABLE_JIT is set)")

ROOT = Path(__file__).resolve().parents[1]


@njit
def _inner(x: np.ndarray) -> float:
    return float(x.sum())


@njit
def _outer(x: np.ndarray) -> float:
    return _inner(x) + 1.0


class StandIn:
    """The background compile's stand-in: running until `finish`."""

    def __init__(self) -> None:
        self.returncode: int | None = None

    def finish(self) -> None:
        self.returncode = 0

    def poll(self) -> int | None:
        return self.returncode

    def wait(self) -> int:
        self.finish()
        return 0


@pytest.fixture
def background() -> Iterator[StandIn]:
    stand_in = StandIn()
    interpreted.begin(stand_in)
    try:
        yield stand_in
    finally:
        stand_in.finish()
        interpreted.end()
    assert not interpreted.ACTIVE


def test_kernels_called_meanwhile_run_as_python(background: StandIn) -> None:
    x = np.arange(4.0)
    assert _outer(x) == 7.0
    assert not _outer.overloads and not _inner.overloads  # nothing compiled for them
    background.finish()
    interpreted.end()
    assert _outer(x) == 7.0
    assert _outer.overloads  # compiled (or loaded) now


def _scene() -> tuple[mb_sim.Model, mb_sim.World]:
    return (mb_sim.load_urdf(str(ROOT / "urdf/arm.urdf")),
            mb_sim.load_world(str(ROOT / "config/worlds/table.yaml")))


def _drive(sim: mb_sim.Simulation, steps: int) -> None:
    for k in range(steps):
        sim.set_effort(np.full(sim.robot(sim.robot_names[0]).n_joints, 2.0 * np.sin(0.01 * k)))
        sim.step(1)


def test_a_simulation_made_interpreted_goes_on_compiled(background: StandIn) -> None:
    from numba import typeof

    from mb_sim.compiling.step_plan import signature
    from mb_sim.dynamics import TreeDynamics as Dynamics

    model, world = _scene()
    reference = mb_sim.Simulation(model, world=world, dt=0.002)  # compiled, made before

    sim = mb_sim.Simulation(model, world=world, dt=0.002)
    dynamics = Dynamics(model)
    assert isinstance(sim._sim, tuple) and isinstance(dynamics.record, tuple)  # namedtuples
    name, link = sim.robot_names[0], model.link_names[-1]
    _drive(sim, 60)
    _drive(reference, 60)
    assert interpreted.ACTIVE
    np.testing.assert_allclose(sim.q, reference.q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(sim.robot(name).link_pose(link)[0],
                               reference.robot(name).link_pose(link)[0], atol=1e-9)
    q_then, qd, tau = sim.q.copy(), np.zeros(model.nv), np.full(model.nv, 0.5)
    qdd_then = dynamics.aba(q_then, qd, tau)

    background.finish()
    _drive(sim, 60)  # the first of these ends the interpreted start
    _drive(reference, 60)
    assert not interpreted.ACTIVE
    declared = signature()  # the types the kernel cache holds the step for
    assert typeof(sim._sim) == declared.sim
    assert (typeof(sim._m), typeof(sim._d), typeof(sim._s)) == (
        declared.model, declared.data, declared.state)
    assert not isinstance(sim._step, interpreted.Deferred)
    assert not isinstance(dynamics._aba, interpreted.Deferred)
    np.testing.assert_allclose(sim.q, reference.q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(sim.qd, reference.qd, rtol=0, atol=1e-7)
    assert sim.time == pytest.approx(reference.time)
    np.testing.assert_allclose(sim.robot(name).link_pose(link)[0],
                               reference.robot(name).link_pose(link)[0], atol=1e-9)
    compiled_dynamics = Dynamics(model)
    np.testing.assert_allclose(qdd_then, compiled_dynamics.aba(q_then, qd, tau), atol=1e-9)
    np.testing.assert_allclose(dynamics.aba(q_then, qd, tau), qdd_then, atol=1e-9)


def test_a_lidar_read_meanwhile_waits_for_the_compile(background: StandIn) -> None:
    """Drawn interpreted, an image would take minutes: a camera's or lidar's reading waits
    for the background compile (`settle`), then reads compiled; an IMU reads at once."""
    from mb_sim.model.sensors import SensorSpec

    model, world = _scene()
    sim = mb_sim.Simulation(model, world=world, dt=0.002)
    sim.add_sensor(SensorSpec("down", "lidar", xyz=(0.3, 0.0, 1.5), rpy=(0.0, 1.5708, 0.0),
                              samples=5, max_range=5.0))
    sim.add_sensor(SensorSpec("imu", "imu", link=model.link_names[-1]))
    sim.step(2)
    sim.read_sensor("imu")
    assert interpreted.ACTIVE  # an IMU reads interpreted
    ranges = sim.read_sensor("down")
    assert not interpreted.ACTIVE and background.poll() == 0
    # rays from -pi to pi about the lidar's z, pitched down: the middle one hits the floor
    assert ranges.shape == (5,) and ranges[2] == pytest.approx(1.5, abs=1e-9)


def test_a_first_start_steps_before_the_compile_and_leaves_nothing_behind(
        tmp_path: Path) -> None:
    """An empty kernel cache: the first step is taken interpreted while the background
    compile runs; the process exits at once, and the background compile with it."""
    script = (
        "import mb_sim\n"
        "from mb_sim.compiling import interpreted\n"
        f"model = mb_sim.load_urdf({str(ROOT / 'urdf/arm.urdf')!r})\n"
        f"world = mb_sim.load_world({str(ROOT / 'config/worlds/table.yaml')!r})\n"
        "sim = mb_sim.Simulation(model, world=world, dt=0.001)\n"
        "sim.step(3)\n"
        "print('interpreted', interpreted.ACTIVE, interpreted._tier.background.pid, sim.time)\n")
    env = compiling_env(tmp_path / "kernels")
    env.pop(interpreted.VARIABLE, None)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    words = out.stdout.split()
    assert words[:2] == ["interpreted", "True"], out.stdout + out.stderr
    assert float(words[3]) == pytest.approx(0.003)
    assert "compiles them" in out.stderr  # it said what happens
    pid = int(words[2])
    assert not os.path.exists(f"/proc/{pid}") or "zombie" in Path(
        f"/proc/{pid}/status").read_text().lower()
