"""Many robots in one world: N copies of the quadruped standing on flat ground, mb_sim next to
MuJoCo on the same model, so that the cost of N robots can be compared with N times one.

    .venv/bin/python benchmarks/bench_many.py [--counts 1 4 16] [--seconds 2] [--no-mujoco]

Each copy of urdf/quadruped.urdf (floating base) starts in its standing pose, feet on the
ground, on a grid 1 m apart, held by the quadruped demo's joint PD as in bench_legged.py
(dt = 1 ms). One mb_sim world (`robots:`, one entry per copy) and one MuJoCo model (the same
lumped bodies, a free joint each, Newton solver) per count; both get the same effort law from
their own state each step, through each one's array interface (mb_sim: each robot's view,
MuJoCo: d.ctrl). Only the step calls are timed, in windows of 100 steps taken in turn by the
two (`bench_legged.in_turn`), so that a busy moment of the machine slows both alike. Printed per count: us per step, us per robot
and step, the ratio mb_sim / MuJoCo, and the ratio of each against its own one-robot time
(N robots should cost N times one). Numbers only, no pass/fail.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import mb_sim
from mb_sim.control import pd_effort

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_legged import DT, KD, KP, WARMUP, WINDOW, Run, in_turn, setup
from mujoco_scene import mjcf

ROOT = Path(__file__).resolve().parents[1]
SPACING = 1.0


def grid(count: int) -> list[tuple[float, float]]:
    """(x, y) of `count` robots on a square grid SPACING apart."""
    side = int(np.ceil(np.sqrt(count)))
    return [(SPACING * (i % side), SPACING * (i // side)) for i in range(count)]


def world_of(count: int, height: float, friction: float) -> Any:
    urdf = str(ROOT / "urdf" / "quadruped.urdf")
    return mb_sim.load_world({
        "ground": {"friction": friction},
        "robots": [{"name": f"dog{i}", "urdf": urdf, "floating": True, "xyz": [x, y, height]}
                   for i, (x, y) in enumerate(grid(count))]})


def run_mb_sim(world: Any, stand: np.ndarray, steps: int) -> Run:
    sim = mb_sim.Simulation(world=world, dt=DT)
    robots = [sim.robot(name) for name in sim.robot_names]
    for r in robots:
        r.set_state(q=dict(zip(r.joint_names, stand)))
    limit = robots[0].model.effort_limit
    zero = np.zeros(len(stand))
    wall = 0.0
    for k in range(WARMUP + steps):
        for r in robots:
            r.set_effort(pd_effort(r.joint_positions, r.joint_velocities, stand, zero, KP, KD,
                                   limit))
        t0 = time.perf_counter()
        sim.step()
        if k >= WARMUP:
            wall += time.perf_counter() - t0
            if (k - WARMUP + 1) % WINDOW == 0:
                yield
    heights = [float(r.q[2]) for r in robots]
    return {"us": 1e6 * wall / steps, "z": (min(heights), max(heights))}


def run_mujoco(world: Any, model: Any, stand: np.ndarray, steps: int) -> Run:
    try:
        import mujoco
    except ImportError:
        return None
    robots = [(model, entry, f"{entry.name}/") for entry in world.robots]
    m = mujoco.MjModel.from_xml_string(mjcf(None, world, DT, robots=robots))
    d = mujoco.MjData(m)
    qadr, vadr = [], []
    for entry in world.robots:
        ids = [m.joint(f"{entry.name}/{n}").id for n in model.joint_names]
        qadr.append(np.array([m.jnt_qposadr[i] for i in ids]))
        vadr.append(np.array([m.jnt_dofadr[i] for i in ids]))
        d.qpos[qadr[-1]] = stand
    mujoco.mj_forward(m, d)
    limit = model.effort_limit
    zero = np.zeros(len(stand))
    n = len(stand)
    wall = 0.0
    for k in range(WARMUP + steps):
        for i, (qa, va) in enumerate(zip(qadr, vadr)):
            d.ctrl[i * n:(i + 1) * n] = pd_effort(d.qpos[qa], d.qvel[va], stand, zero, KP, KD,
                                                  limit)
        t0 = time.perf_counter()
        mujoco.mj_step(m, d)
        if k >= WARMUP:
            wall += time.perf_counter() - t0
            if (k - WARMUP + 1) % WINDOW == 0:
                yield
    heights = [float(d.qpos[m.jnt_qposadr[m.joint(f"{e.name}/{model.joint_names[0]}").id] - 7
                              + 2]) for e in world.robots]
    return {"us": 1e6 * wall / steps, "z": (min(heights), max(heights)),
            "version": mujoco.__version__}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--seconds", type=float, default=2.0, help="simulated seconds")
    parser.add_argument("--no-mujoco", action="store_true")
    args = parser.parse_args()
    steps = round(args.seconds / DT)
    model, flat, stand, height = setup()
    print(f"{steps} steps of {DT * 1e3:g} ms; quadrupeds {SPACING:g} m apart, standing PD")
    print(f"{'robots':>6} {'mb_sim us':>10} {'/robot':>8} {'MuJoCo us':>10} {'/robot':>8} "
          f"{'ratio':>6} {'mb_sim vs N x 1':>16} {'MuJoCo vs N x 1':>16} {'trunk z':>16}")
    one: dict[str, float] = {}
    for count in args.counts:
        world = world_of(count, height, flat.ground.friction)
        runs = [run_mb_sim(world, stand, steps)]
        if not args.no_mujoco:
            runs.append(run_mujoco(world, model, stand, steps))
        results = in_turn(runs)
        mine, theirs = results[0], results[1] if len(results) > 1 else None
        assert mine is not None
        one.setdefault("mb", mine["us"])
        line = (f"{count:>6} {mine['us']:>10.1f} {mine['us'] / count:>8.1f} ")
        if theirs is not None:
            one.setdefault("mj", theirs["us"])
            line += (f"{theirs['us']:>10.1f} {theirs['us'] / count:>8.1f} "
                     f"{mine['us'] / theirs['us']:>6.2f} "
                     f"{mine['us'] / (count * one['mb']):>16.2f} "
                     f"{theirs['us'] / (count * one['mj']):>16.2f} ")
        else:
            line += f"{'':>10} {'':>8} {'':>6} {mine['us'] / (count * one['mb']):>16.2f} {'':>16} "
        line += f"{mine['z'][0]:>7.3f}..{mine['z'][1]:.3f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
