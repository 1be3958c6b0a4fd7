"""Step time as scenes grow, mb_sim next to MuJoCo on the same shapes, masses, friction and dt.

    .venv/bin/python benchmarks/bench_scaling.py [--seconds 1] [--sizes 8 27 64 125] [--no-mujoco]

1. Stacks: N free boxes (0.1 m, 1 kg, friction 0.8) standing in n x n stacks n high on the
   ground (N = n^3), dt = 1 ms, starting at rest in contact. Printed per N: us per step of
   each simulator and their ratio, mean contacts, and whether the stacks still stand: the
   largest horizontal drift of any box and the largest sinking of a box, in mm, after the run.
2. Chains: N revolute links (bench_dynamics.chain_urdf) swinging under gravity from straight
   out, no contacts, dt = 1 ms: us per step of both and the ratio.
Both simulators step the same number of steps; each is timed over the whole run after a short
warm-up (numba compiles or loads its cache first). Prints numbers, asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import mb_sim

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_dynamics import chain_urdf
from mujoco_scene import free_body_qpos_address, mjcf

DT = 0.001
SIZE = 0.1
WARMUP = 50


def stack_world(n: int) -> dict[str, Any]:
    bodies = []
    for i in range(n):
        for j in range(n):
            for k in range(n):
                bodies.append({"name": f"box_{i}_{j}_{k}", "shape": "box", "size": [SIZE] * 3,
                               "mass": 1.0, "friction": 0.8,
                               "xyz": [2.5 * SIZE * i, 2.5 * SIZE * j, SIZE * (k + 0.5)]})
    return {"ground": {"friction": 0.8}, "bodies": bodies}


def run_mb_sim(model: Any, world: Any, steps: int) -> tuple[float, float, mb_sim.Simulation]:
    """(us per step, mean contacts, the simulation after the run)."""
    sim = mb_sim.Simulation(model, world, dt=DT)
    sim.step(WARMUP)
    contacts = 0
    t0 = time.perf_counter()
    for _ in range(steps):
        sim.step()
        contacts += int(sim._data.contacts.count[0])
    wall = time.perf_counter() - t0
    return 1e6 * wall / steps, contacts / steps, sim


def run_mujoco(model: Any, world: Any, steps: int) -> tuple[float, float, Any, Any] | None:
    try:
        import mujoco
    except ImportError:
        return None
    m = mujoco.MjModel.from_xml_string(mjcf(model, world, DT))
    d = mujoco.MjData(m)
    for _ in range(WARMUP):
        mujoco.mj_step(m, d)
    contacts = 0
    t0 = time.perf_counter()
    for _ in range(steps):
        mujoco.mj_step(m, d)
        contacts += d.ncon
    wall = time.perf_counter() - t0
    return 1e6 * wall / steps, contacts / steps, m, d


def drift_mm(world: Any, positions: dict[str, np.ndarray]) -> tuple[float, float]:
    """(largest horizontal drift, largest sinking) of the boxes, mm."""
    side, sink = 0.0, 0.0
    for b in world.bodies:
        p = positions[b.name]
        side = max(side, float(np.hypot(*(p[:2] - np.asarray(b.xyz)[:2]))))
        sink = max(sink, float(np.asarray(b.xyz)[2] - p[2]))
    return 1e3 * side, 1e3 * sink


def stacks(sizes: list[int], steps: int, with_mujoco: bool) -> None:
    print(f"stacks of boxes, dt = {DT * 1e3:g} ms, {steps} steps")
    print(f"{'N':>5} {'mb_sim us':>10} {'MuJoCo us':>10} {'ratio':>6} {'contacts':>14} "
          f"{'drift mm (mb_sim / MuJoCo)':>28} {'sink mm':>16}")
    for n_boxes in sizes:
        n = round(n_boxes ** (1.0 / 3.0))
        world = mb_sim.load_world(stack_world(n))
        us, con, sim = run_mb_sim(None, world, steps)
        mine = drift_mm(world, {b: sim.body_pose(b)[0] for b in sim.body_names})
        theirs: tuple[float, float] = (float("nan"), float("nan"))
        mj_us, mj_con = float("nan"), float("nan")
        if with_mujoco and (out := run_mujoco(None, world, steps)) is not None:
            mj_us, mj_con, m, d = out
            theirs = drift_mm(world, {b.name: d.qpos[free_body_qpos_address(m, b.name):][:3]
                                      for b in world.bodies})
        print(f"{n ** 3:5d} {us:10.1f} {mj_us:10.1f} {us / mj_us:6.2f} "
              f"{con:6.1f} / {mj_con:5.1f} {mine[0]:12.3f} / {theirs[0]:8.3f}    "
              f"{mine[1]:6.3f} / {theirs[1]:6.3f}")


def chains(sizes: list[int], steps: int, with_mujoco: bool) -> None:
    print(f"\nchains of revolute links, dt = {DT * 1e3:g} ms, {steps} steps")
    print(f"{'N':>5} {'mb_sim us':>10} {'MuJoCo us':>10} {'ratio':>6}")
    empty = mb_sim.load_world({})
    for n in sizes:
        model = mb_sim.load_urdf(chain_urdf(n))
        us, _, _ = run_mb_sim(model, empty, steps)
        mj_us = float("nan")
        if with_mujoco and (out := run_mujoco(model, empty, steps)) is not None:
            mj_us = out[0]
        print(f"{n:5d} {us:10.1f} {mj_us:10.1f} {us / mj_us:6.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1.0, help="simulated seconds per run")
    ap.add_argument("--sizes", type=int, nargs="+", default=[8, 27, 64, 125])
    ap.add_argument("--no-mujoco", action="store_true")
    a = ap.parse_args()
    steps = round(a.seconds / DT)
    stacks(a.sizes, steps, not a.no_mujoco)
    chains(a.sizes, steps, not a.no_mujoco)


if __name__ == "__main__":
    main()
