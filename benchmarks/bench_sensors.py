"""What force-torque and contact sensors cost per step: bench_step's scene (the arm pressing on
the table, dt = 1 ms) run with no sensor, with F/T at every arm joint and a contact sensor on
the hand, and with F/T at one joint (the wrist) only, in turns in one process, so that all see
the same machine load.

    .venv/bin/python benchmarks/bench_sensors.py [--seconds 3] [--repeats 5]

Each variant steps the same window from the same state with the same controller (only the
step calls are timed); the sensors are read every 4 ms (250 Hz, the node's publish_rate),
outside the timed calls. Prints the best pass of each, us/step, and the difference to none.
"""

from __future__ import annotations

import argparse
import time

import bench_step as bench

import mb_sim

VARIANTS = {
    "no sensor": ((), ()),
    "F/T at joint7": (("joint7",), ()),
    "F/T at 7 joints + contact on hand": (None, (bench.TOOL_LINK,)),
}


def timed(sim: mb_sim.Simulation, setup: bench.Setup, n: int) -> float:
    clock, total = time.perf_counter, 0.0
    for k in range(n):
        bench.command(sim, setup)
        t0 = clock()
        sim.step()
        total += clock() - t0
        if k % 4 == 3:
            sim.read_ft_sensors()
            sim.read_contact_sensors()
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    setup = bench.build_setup()
    n = round(args.seconds / bench.DT)
    sims = {}
    for name, (ft, contact) in VARIANTS.items():
        sim = bench.make_mb_sim(setup)
        sim.set_ft_sensors(sim.joint_names if ft is None else ft)
        sim.set_contact_sensors(contact)
        bench.mb_warmup(sim, setup, 0.5)
        sims[name] = (sim, sim.save_state())
    best = dict.fromkeys(VARIANTS, float("inf"))
    for _ in range(args.repeats):
        for name, (sim, saved) in sims.items():
            sim.restore_state(saved)
            best[name] = min(best[name], timed(sim, setup, n))
    plain = best["no sensor"]
    print(f"{n} steps of bench_step's scene, best of {args.repeats} passes in turns")
    for name, seconds in best.items():
        print(f"  {name:36}{1e6 * seconds / n:8.1f} us/step  {1e6 * (seconds - plain) / n:+6.1f}"
              f" us  ({100 * (seconds / plain - 1):+.1f} %)")


if __name__ == "__main__":
    main()
