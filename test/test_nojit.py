"""The compiled kernels are plain numpy code: with NUMBA_DISABLE_JIT=1 they give the same
numbers (run in a fresh interpreter, since numba reads the variable at import)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import json, numpy as np, mb_sim
model = mb_sim.load_urdf("urdf/arm.urdf")
world = mb_sim.load_world("config/worlds/table.yaml")
sim = mb_sim.Simulation(model, world=world, dt=0.001, ft_sensors=model.joint_names)
sim.set_initial_state(q=[-0.9, 0.4, 0.0, 1.9, 0.0, 0.0, 0.0])
sim.set_effort([20.0, 0, 0, 0, 0, 0, 0])
sim.step(60)
rng = np.random.default_rng(3)
q, qd, tau = rng.uniform(-1, 1, (3, 7))
box = mb_sim.load_urdf("test/assets/floating_box.urdf", floating_base=True)
drop = mb_sim.Simulation(box, mb_sim.load_world({"ground": {}, "robot": {"floating": True,
                         "xyz": [0, 0, 0.12], "rpy": [0.3, 0.2, 0.1]}}), integrator="rk4",
                      contact_sensors=["base"])
drop.step(60)
terrain = mb_sim.Simulation(world=mb_sim.load_world({"bodies": [
    {"name": "hills", "shape": "heightfield", "heights": [[0, 0.4, 0.1], [0.3, 1, 0.2],
                                                          [0, 0.5, 0.1]], "size": [1, 1, 0.1]},
    {"name": "pyramid", "shape": "mesh", "mesh": "test/assets/pyramid.obj", "static": True,
     "scale": 0.2, "xyz": [1, 0, 0]},
    {"name": "ball", "shape": "sphere", "size": [0.05], "mass": 0.2, "xyz": [0.1, 0.05, 0.2]},
    {"name": "box", "shape": "box", "size": [0.1, 0.1, 0.1], "mass": 0.5, "xyz": [-0.2, 0, 0.2],
     "rpy": [0.3, 0.2, 0.1]},
    {"name": "can", "shape": "cylinder", "size": [0.05, 0.1], "mass": 0.5, "xyz": [1, 0, 0.3]}]}))
terrain.step(200)
from mb_sim.model.sensors import SensorSpec
room = mb_sim.Simulation(model, world=mb_sim.load_world("config/worlds/table.sdf"))
for kind in ("camera", "depth_camera"):
    room.add_sensor(SensorSpec(kind, kind, xyz=(-0.4, -0.9, 0.9), rpy=(0, 0.45, 0.9),
                               width=48, height=36, hfov=1.0))
room.step(5)
depth = room.read_sensor("depth_camera")
print(json.dumps({
    "colour": room.read_sensor("camera").tolist(),
    "depth": np.where(np.isfinite(depth), depth, -1.0).tolist(),
    "q": sim.q.tolist(), "bodies": sim.state.body_pos.tolist(), "contacts": len(sim.contacts),
    "sensors": [[*w.force, *w.torque] for w in (*sim.read_ft_sensors().values(),
                                                 *drop.read_contact_sensors().values())],
    "floating": drop.q.tolist(), "floating_contacts": len(drop.contacts),
    "terrain": terrain.state.body_pos.tolist(), "terrain_contacts": len(terrain.contacts),
    "aba": mb_sim.aba(model, q, qd, tau).tolist(), "rnea": mb_sim.rnea(model, q, qd, tau).tolist(),
    "crba": mb_sim.crba(model, q).tolist(),
}))
"""


def run(disable_jit: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env["NUMBA_DISABLE_JIT"] = "1" if disable_jit else "0"
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_kernels_run_and_agree_without_numba():
    compiled, interpreted = run(False), run(True)
    assert compiled["contacts"] == interpreted["contacts"] > 0
    assert compiled["floating_contacts"] == interpreted["floating_contacts"] > 0
    assert compiled["terrain_contacts"] == interpreted["terrain_contacts"] > 0
    for key in ("aba", "rnea", "crba"):
        np.testing.assert_allclose(interpreted[key], compiled[key], rtol=1e-12, atol=1e-12)
    assert all(any(abs(x) > 0 for x in w) for w in compiled["sensors"])  # the box landed
    for key in ("q", "bodies", "floating", "sensors", "terrain"):
        np.testing.assert_allclose(interpreted[key], compiled[key], rtol=1e-9, atol=1e-9)
    depth = np.array(compiled["depth"])
    assert (depth > 0).sum() > 1000 and len(np.unique(np.reshape(compiled["colour"], (-1, 3)),
                                                       axis=0)) > 5  # the table and more
    for key in ("colour", "depth"):  # the rasteriser, the same pixels
        np.testing.assert_array_equal(interpreted[key], compiled[key])
