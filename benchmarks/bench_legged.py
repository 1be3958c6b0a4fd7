"""The floating-base quadruped standing on the ground, mb_sim next to MuJoCo on the same model.

    .venv/bin/python benchmarks/bench_legged.py [--seconds 5] [--no-mujoco]

urdf/quadruped.urdf with a floating base starts in its standing pose with its feet on the
ground of config/worlds/flat.yaml's ground (friction as there) and is held there by the
quadruped demo's joint PD (`mb_sim.control.pd_effort`, the gains of quadruped_controller),
dt = 1 ms. Both simulators get the same efforts law each step, computed from their own state;
only the step call is timed, in windows of WINDOW steps taken in turn by the two, so that a
busy moment of the machine slows both alike. Printed: us per step and the ratio, the contacts of a step, the
trunk height at the end and its range over the last second, the largest foot slip. MuJoCo
gets the MJCF of `mujoco_scene.mjcf` (the same lumped bodies, a free joint for the base,
Newton solver, elliptic cones). Prints numbers, asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import numpy as np

import mb_sim
from mb_sim.control import pd_effort, standing_pose

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mujoco_scene import mjcf

ROOT = Path(__file__).resolve().parents[1]
DT = 0.001
KP, KD = 80.0, 1.0  # quadruped_controller's gains
FEET = ("fl_foot", "fr_foot", "rl_foot", "rr_foot")
WARMUP = 200
WINDOW = 100
Run = Generator[None, None, dict[str, Any] | None]
"""A simulator's run: it stops after each window of timed steps; its value is its results."""


def setup() -> tuple[mb_sim.Model, Any, np.ndarray, float]:
    """(model, world, standing pose, trunk height that puts the feet on the ground)."""
    model = mb_sim.load_urdf(ROOT / "urdf" / "quadruped.urdf", floating_base=True)
    stand = standing_pose(model.joint_names)
    probe = mb_sim.Simulation(model, gravity=(0, 0, 0))
    probe.set_state(q=np.concatenate([[0, 0, 0, 0, 0, 0, 1], stand]))
    foot_z = min(probe.link_pose(f)[0][2] for f in FEET)
    radius = 0.02
    flat = mb_sim.load_world(ROOT / "config" / "worlds" / "flat.yaml")
    world = mb_sim.load_world({"ground": {"friction": flat.ground.friction},
                               "robot": {"floating": True, "xyz": [0, 0, radius - foot_z]}})
    return model, world, stand, radius - foot_z


def run_mb_sim(model: Any, world: Any, stand: np.ndarray, steps: int) -> Run:
    sim = mb_sim.Simulation(model, world, dt=DT)
    sim.set_state(q=dict(zip(model.joint_names, stand)))
    limit = model.effort_limit
    zero = np.zeros(model.n_joints)
    heights, feet0, contacts, wall = [], None, 0, 0.0
    for k in range(WARMUP + steps):
        sim.set_effort(pd_effort(sim.joint_positions, sim.joint_velocities, stand, zero, KP,
                                 KD, limit))
        t0 = time.perf_counter()
        sim.step()
        if k >= WARMUP:
            wall += time.perf_counter() - t0
            contacts += int(sim._data.contacts.count[0])
            heights.append(sim.q[2])
        if k == WARMUP:
            feet0 = np.array([sim.link_pose(f)[0][:2] for f in FEET])
        if k >= WARMUP and (k - WARMUP + 1) % WINDOW == 0:
            yield
    feet = np.array([sim.link_pose(f)[0][:2] for f in FEET])
    return {"us": 1e6 * wall / steps, "contacts": contacts / steps, "heights": heights,
            "slip": float(np.linalg.norm(feet - feet0, axis=1).max())}


def run_mujoco(model: Any, world: Any, stand: np.ndarray, steps: int) -> Run:
    try:
        import mujoco
    except ImportError:
        return None
    m = mujoco.MjModel.from_xml_string(mjcf(model, world, DT))
    d = mujoco.MjData(m)
    qadr = [m.jnt_qposadr[m.joint(n).id] for n in model.joint_names]
    vadr = [m.jnt_dofadr[m.joint(n).id] for n in model.joint_names]
    d.qpos[qadr] = stand
    mujoco.mj_forward(m, d)
    feet_ids = [m.body(_foot_body(model, f)).id for f in FEET]
    limit = model.effort_limit
    zero = np.zeros(model.n_joints)
    heights, feet0, contacts, wall = [], None, 0, 0.0
    for k in range(WARMUP + steps):
        d.ctrl[:] = pd_effort(d.qpos[qadr], d.qvel[vadr], stand, zero, KP, KD, limit)
        t0 = time.perf_counter()
        mujoco.mj_step(m, d)
        if k >= WARMUP:
            wall += time.perf_counter() - t0
            contacts += d.ncon
            heights.append(d.qpos[2])
        if k == WARMUP:
            feet0 = d.xpos[feet_ids, :2].copy()
        if k >= WARMUP and (k - WARMUP + 1) % WINDOW == 0:
            yield
    slip = float(np.linalg.norm(d.xpos[feet_ids, :2] - feet0, axis=1).max())
    return {"us": 1e6 * wall / steps, "contacts": contacts / steps, "heights": heights,
            "slip": slip, "version": mujoco.__version__}


def in_turn(runs: list[Run]) -> list[dict[str, Any] | None]:
    """The runs' results, their windows taken in turn."""
    results: list[dict[str, Any] | None] = [None] * len(runs)
    live = list(range(len(runs)))
    while live:
        for i in list(live):
            try:
                next(runs[i])
            except StopIteration as end:
                results[i] = end.value
                live.remove(i)
    return results


def _foot_body(model: mb_sim.Model, foot: str) -> str:
    """The MJCF body carrying a foot link (the link of the joint that moves its body)."""
    b = model.link_body[foot]
    joint = model.joint_names[b]
    return next(k for k, j in model.link_joint.items() if j == joint)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="simulated seconds")
    parser.add_argument("--no-mujoco", action="store_true")
    args = parser.parse_args()
    steps = round(args.seconds / DT)
    model, world, stand, z0 = setup()
    runs = [run_mb_sim(model, world, stand, steps)]
    if not args.no_mujoco:
        runs.append(run_mujoco(model, world, stand, steps))
    mine, *theirs = in_turn(runs)
    assert mine is not None
    results = {"mb_sim": mine}
    for mj in theirs:
        if mj is not None:
            results[f"MuJoCo {mj['version']}"] = mj
    print(f"quadruped standing, {model.n_joints} joints + floating base, {steps} steps of "
          f"{DT * 1e3:g} ms, trunk started at {z0:.4f} m")
    last = round(1.0 / DT)
    print(f"{'':28}" + "".join(f"{name:>20}" for name in results))
    rows = [
        ("us / step", lambda r: f"{r['us']:.1f}"),
        ("real-time factor", lambda r: f"{1e3 * DT * 1e3 / r['us']:.1f}"),
        ("contacts (mean)", lambda r: f"{r['contacts']:.1f}"),
        ("trunk z end, m", lambda r: f"{r['heights'][-1]:.4f}"),
        ("trunk z range last s, mm", lambda r: f"{1e3 * np.ptp(r['heights'][-last:]):.3f}"),
        ("foot slip max, mm", lambda r: f"{1e3 * r['slip']:.3f}"),
    ]
    for label, cell in rows:
        print(f"{label:28}" + "".join(f"{cell(r):>20}" for r in results.values()))
    if len(results) == 2:
        a, b = results.values()
        print(f"ratio mb_sim / MuJoCo: {a['us'] / b['us']:.1f}")


if __name__ == "__main__":
    main()
