"""Sweeps (mb_sim.sweep): specs, scenarios, the same table serially and on Ray workers.

- a bad spec is refused with the file, key and value;
- parameters reach the simulation (world values, URDF values, start state, gains);
- 64 scenarios on 2 local Ray workers give the serial table bit for bit (Parquet and CSV), in
  whatever order the scenarios finish;
- a worker killed in the middle of a sweep has its scenarios run again: nothing is lost or
  doubled, and the table is still the serial one;
- the command line joins a running cluster with --address.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

import mb_sim
from mb_sim.sweep import SpecError, load_spec, read, run, run_chunk, write
from mb_sim.sweep.scenario import build

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "config" / "sweeps" / "arm_table.yaml"

HELPER = '''
import os, time

def paused_once(sim):
    """A metric (the first joint's position) that, in a worker of a run with
    MB_SIM_TEST_PAUSE set to a folder, first announces its process there and waits to be
    killed, until the folder holds 'killed'."""
    folder = os.environ.get("MB_SIM_TEST_PAUSE")
    if folder and not os.path.exists(os.path.join(folder, "killed")):
        open(os.path.join(folder, f"{os.getpid()}.pid"), "w").close()
        deadline = time.time() + 60
        while not os.path.exists(os.path.join(folder, "killed")) and time.time() < deadline:
            time.sleep(0.05)
    return float(sim.joint_positions[0])
'''


def example(tmp_path: Path, duration: float = 0.05, metrics: list | None = None) -> Path:
    """The shipped example spec (64 scenarios), shorter, written beside a helper module."""
    spec = yaml.safe_load(EXAMPLE.read_text())
    spec["robot"] = str(ROOT / "urdf" / "arm.urdf")
    spec["world"] = str(ROOT / "config" / "worlds" / "table.yaml")
    spec["duration"] = duration
    spec["output"] = "out.parquet"
    if metrics is not None:
        spec["metrics"] = metrics
    (tmp_path / "sweep_helpers.py").write_text(HELPER)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def same(a: list[dict], b: list[dict]) -> bool:
    """Rows equal value for value, bit for bit (NaN equal to NaN)."""
    if len(a) != len(b) or [list(r) for r in a] != [list(r) for r in b]:
        return False
    for ra, rb in zip(a, b, strict=True):
        for k in ra:
            x, y = ra[k], rb[k]
            if isinstance(x, float) and isinstance(y, float):
                if np.float64(x).tobytes() != np.float64(y).tobytes():
                    return False
            elif x != y:
                return False
    return True


@pytest.mark.parametrize("change,message", [
    ({"duration": -1}, r"duration: must be a number in \[0, 1e\+06\] \(got '-1'\)"),
    ({"integrator": "euler"}, r"integrator: must be semi_implicit_euler or rk4"),
    ({"parameters": {"grid": {"mass": [1]}}}, r"parameters.grid.mass: a parameter name starts"),
    ({"parameters": {"random": {"values": {"world.gravity.2": {"gauss": [0, 1]}}}}},
     r"parameters.random.values.world.gravity.2: must be one of"),
    ({"metrics": ["speed"]}, r"metrics: must be an import path module:function \(got 'speed'\)"),
    ({"output": "out.xlsx"}, r"output: must be a path ending in .parquet or .csv"),
    ({"robot": "nowhere.urdf"}, r"robot: no such file"),
    ({"extra": 1}, r"extra: unknown key"),
])
def test_bad_specs_name_the_key_and_value(tmp_path, change, message):
    spec = yaml.safe_load(example(tmp_path).read_text())
    spec.update(change)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    with pytest.raises(SpecError, match=message) as e:
        load_spec(path)
    assert str(path) in str(e.value)


def test_parameters_reach_the_simulation(tmp_path):
    spec = load_spec(example(tmp_path))
    sim, controller = build(spec, {
        "world.bodies.box_red.mass": 0.7, "world.ground.friction": 0.3,
        "robot.link.link3.mass": 6.0, "robot.joint.joint2.damping": 1.5,
        "initial.q.joint1": 0.25, "initial.qd.joint4": -0.5, "controller.pd.kp": 123.0,
    })
    assert sim.scene.arrays.bodies.inv_mass[sim.body_index("box_red")] == pytest.approx(1 / 0.7)
    assert sim.world.ground.friction == 0.3
    base = mb_sim.load_urdf(str(ROOT / "urdf" / "arm.urdf"))
    i = base.joint_names.index("joint3")  # link3 is joint3's child
    assert sim.model.mass[i] == pytest.approx(6.0)
    np.testing.assert_allclose(sim.model.inertia[i], base.inertia[i] * 6.0 / base.mass[i])
    assert sim.model.damping[1] == 1.5
    assert sim.joint_positions[0] == 0.25 and sim.joint_velocities[3] == -0.5
    assert controller["pd"]["kp"] == 123.0
    sim.reset()
    assert sim.joint_positions[0] == 0.25  # the start of the scenario


def test_scenarios_are_the_grid_times_seeded_draws(tmp_path):
    spec = load_spec(example(tmp_path))
    scenarios = spec.scenarios()
    assert len(scenarios) == 64 and scenarios == load_spec(example(tmp_path)).scenarios()
    frictions = [s["world.bodies.table_top.friction"] for s in scenarios]
    assert frictions == [f for f in (0.2, 0.4, 0.6, 0.8) for _ in range(16)]
    kp = np.array([s["controller.pd.kp"] for s in scenarios])
    assert kp.min() >= 100 and kp.max() <= 400 and len(set(kp)) == 64


def test_two_workers_give_the_serial_table_bit_for_bit(tmp_path):
    path = example(tmp_path)
    serial = run(path, output=tmp_path / "serial.parquet")
    assert len(serial) == 64 and not any(row["error"] for row in serial)
    assert min(row["contacts.max"] for row in serial) > 0  # the hand and the boxes touch
    assert len({row["q.joint1"] for row in serial}) == 64
    spec = load_spec(path)
    backwards = [row for index, values in reversed(list(enumerate(spec.scenarios())))
                 for _, row in run_chunk(spec, [(index, values)])]
    assert same(serial, backwards[::-1])  # any order of completion gives the same rows
    distributed = run(path, workers=2, output=tmp_path / "ray.parquet")
    assert same(serial, distributed)
    assert same(read(tmp_path / "serial.parquet"), read(tmp_path / "ray.parquet"))
    assert (tmp_path / "serial.parquet").read_bytes() == (tmp_path / "ray.parquet").read_bytes()
    write(serial, tmp_path / "serial.csv")
    written = read(tmp_path / "serial.csv")
    assert [float(r["q.joint2"]) for r in written] == [r["q.joint2"] for r in serial]


def test_a_killed_worker_loses_and_doubles_nothing(tmp_path, monkeypatch):
    path = example(tmp_path, metrics=["final_q", "sweep_helpers:paused_once"])
    monkeypatch.syspath_prepend(str(tmp_path))
    serial = run(path, output=tmp_path / "serial.csv")
    pause = tmp_path / "pause"
    pause.mkdir()
    monkeypatch.setenv("MB_SIM_TEST_PAUSE", str(pause))  # the workers inherit it
    killed: list[int] = []

    def kill_one() -> None:
        deadline = time.time() + 120
        while time.time() < deadline and not killed:
            pids = sorted(pause.glob("*.pid"))
            if pids:
                pid = int(pids[0].stem)
                os.kill(pid, signal.SIGKILL)  # a Ray worker of this sweep, in mid-scenario
                killed.append(pid)
            time.sleep(0.05)
        (pause / "killed").touch()

    killer = threading.Thread(target=kill_one)
    killer.start()
    try:
        distributed = run(path, workers=2, output=tmp_path / "ray.csv")
    finally:
        (pause / "killed").touch()
        killer.join()
    assert killed, "no worker announced itself"
    assert [row["scenario"] for row in distributed] == list(range(64))
    assert same(serial, distributed)
    assert (tmp_path / "serial.csv").read_bytes() == (tmp_path / "ray.csv").read_bytes()


def test_command_line_joins_a_running_cluster(tmp_path):
    """--address: a cluster started here (loopback only) runs the command's scenarios."""
    from mb_sim.sweep import cluster

    path = example(tmp_path, metrics=["final_q", "energy"])
    serial = run(path, output=tmp_path / "serial.parquet")
    cluster.start(workers=2, address=None)
    try:
        import ray

        address = ray.get_runtime_context().gcs_address
        assert address.startswith("127.0.0.1:")
        env = dict(os.environ, RAY_ADDRESS="")
        out = subprocess.run([sys.executable, "-m", "mb_sim.sweep", str(path), "--address",
                              address, "--output", str(tmp_path / "cluster.parquet")],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
                             check=False)
    finally:
        cluster.stop()
    assert out.returncode == 0, out.stderr
    assert "64 scenarios" in out.stdout
    assert same(serial, read(tmp_path / "cluster.parquet"))


def test_command_line_refuses_a_bad_spec(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("duration: 1\nworld: nowhere.yaml\n")
    out = subprocess.run([sys.executable, "-m", "mb_sim.sweep", str(bad), "--output",
                          str(tmp_path / "x.csv")], capture_output=True, text=True, timeout=120,
                         check=False)
    assert out.returncode == 2 and "world: no such file" in out.stderr
    assert "Traceback" not in out.stderr
