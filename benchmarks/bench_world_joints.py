"""Cost of the impulse-kept world joints (Bender et al. n.d.) on the five-box ball chain.

    .venv/bin/python benchmarks/bench_world_joints.py [--seconds 2] [--dt 0.002] [--repeats 200]

1. Step time: config/worlds/ball_chain.yaml stepped for `--seconds` of simulated time (the
   first 2 s of the swing, before the links touch each other), once with the world-joint
   rows targeting the predicted error (the default) and once with rows targeting zero
   relative velocity (`sim.world_joints.predictive = False`, so that the keeping loop does
   more of the work). Printed: us per step of Simulation.step, corrections (joint impulses of
   the keeping loop) per step, and the largest number of passes in a step.
2. Kernel throughput: the keeping loop alone (`keep_world_joints`), started from the state
   of config/worlds/ball_chain_apart.yaml (every joint 5 cm apart) and of the swinging chain
   with its rows skipped, timed over `--repeats` calls on fresh copies of the velocities:
   corrections per second and ns per correction. Bender et al. n.d. reports 200,000 correction
   steps per second on a 1.7 GHz PC.
Numba compiles (or loads its cache) during a warm-up run first. Numbers only.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import mb_sim
from mb_sim.solver.world_joints import blocks, frames, keep_world_joints

WORLDS = Path(__file__).resolve().parent.parent / "config" / "worlds"


def step_time(seconds: float, dt: float, predictive: bool) -> dict[str, float]:
    sim = mb_sim.Simulation(None, world=mb_sim.load_world(WORLDS / "ball_chain.yaml"), dt=dt)
    joints = sim.world_joints
    joints.predictive = predictive
    n = round(seconds / dt)
    corrections = 0
    passes = 0
    t0 = time.perf_counter()
    for _ in range(n):
        sim.step()
        corrections += joints.last_corrections
        passes = max(passes, joints.last_passes)
    wall = time.perf_counter() - t0
    return {"us_step": 1e6 * wall / n, "corr_step": corrections / n, "max_passes": float(passes)}


def kernel_throughput(world: str, dt: float, repeats: int, steps_before: int,
                      max_passes: int) -> tuple[float, float, int]:
    """(corrections per second, ns per correction, corrections per call) of the keeping loop
    on the velocities of `world` after `steps_before` steps plus one free-motion update."""
    sim = mb_sim.Simulation(None, world=mb_sim.load_world(WORLDS / world), dt=dt)
    sim.step(steps_before)
    sim.world_joints.max_passes = max_passes
    frames(sim._m, sim._d, sim._s)
    blocks(sim._m, sim._d)
    vb0 = sim.state.body_vel.copy()
    vb0[:, :3] += dt * sim.gravity
    stats = sim._data.joints.stats
    vb = vb0.copy()
    keep_world_joints(sim._m, sim._d, vb)
    per_call = stats[1]
    copies = [vb0.copy() for _ in range(repeats)]
    t0 = time.perf_counter()
    total = 0
    for v in copies:
        keep_world_joints(sim._m, sim._d, v)
        total += int(stats[1])
    wall = time.perf_counter() - t0
    return total / wall, 1e9 * wall / max(total, 1), int(per_call)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--dt", type=float, default=0.002)
    ap.add_argument("--repeats", type=int, default=200)
    a = ap.parse_args()
    step_time(0.1, a.dt, True)  # warm-up: compile or load the numba cache
    print(f"machine: {platform.processor() or platform.machine()}, python "
          f"{platform.python_version()}")
    print(f"ball_chain.yaml, dt = {a.dt * 1e3:g} ms, {a.seconds:g} s simulated")
    print(f"{'rows':>12} {'us/step':>9} {'corr/step':>10} {'max passes':>11}")
    for predictive in (True, False):
        r = step_time(a.seconds, a.dt, predictive)
        label = "predictive" if predictive else "target 0"
        print(f"{label:>12} {r['us_step']:9.1f} {r['corr_step']:10.2f} "
              f"{r['max_passes']:11.0f}")
    print()
    print("keeping loop alone (no rows before it), fresh velocities each call:")
    print(f"{'start state':>34} {'corr/call':>10} {'corr/s':>12} {'ns/corr':>9}")
    for world, before, label in (("ball_chain_apart.yaml", 0, "apart chain, first step"),
                                 ("ball_chain.yaml", 300, "swinging chain at t = 0.6 s")):
        rate, ns, per_call = kernel_throughput(world, a.dt, a.repeats, before, 10_000)
        print(f"{label:>34} {per_call:10d} {rate:12.0f} {ns:9.0f}")


if __name__ == "__main__":
    main()
