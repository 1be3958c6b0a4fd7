"""Gazebo SDF worlds loaded and stepped as a user of Gazebo would try them: a table.

    .venv/bin/python benchmarks/gazebo_worlds.py DIR [DIR ...] [--steps 500] [--only SUBSTRING]

Every `.sdf` and `.world` file below the folders given (gz-sim's `examples/worlds`, say, from
`git clone https://github.com/gazebosim/gz-sim`) is read with `mb_sim.load_world` (the model
folders of `GZ_SIM_RESOURCE_PATH` and the local Fuel cache as they are: nothing is
downloaded) and, when it loads, simulated `--steps` steps of 1 ms. Each row: the file, what
the world became (bodies, robots and URDF objects, world joints, sensors), whether every body
stayed finite, the seconds, or the first line of the error. A summary counts the worlds that
loaded and stepped, and groups the errors by kind (a Fuel model not in the cache, a malformed
file, ...).

Numbers only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import logging
import time
from collections import Counter
from pathlib import Path

import numpy as np

import mb_sim


def _row(path: Path, steps: int) -> tuple[str, str]:
    """(outcome, text) of one world: "stepped", "diverged", or the error's kind."""
    start = time.perf_counter()
    try:
        world = mb_sim.load_world(path)
    except Exception as exc:  # noqa: BLE001 - every failure is a row of the table
        text = str(exc).split("\n")[0]
        kind = "Fuel model not in the cache" if "fuel." in text and "cannot find" in text \
            else type(exc).__name__
        return kind, text[:200]
    sim = mb_sim.Simulation(world=world, dt=0.001)
    sim.step(steps)
    finite = all(np.all(np.isfinite(sim.body_pose(b)[0])) for b in sim.body_names) and all(
        np.all(np.isfinite(sim.robot(r).q)) for r in (*sim.robot_names, *sim.object_names))
    made = (f"{len(world.bodies)} bodies, {len(world.robots)} robots/objects, "
            f"{len(world.joints)} world joints, {len(world.sensors)} world sensors")
    return ("stepped" if finite else "diverged"), \
        f"{made}; {time.perf_counter() - start:.1f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    files = sorted(p for folder in args.folders for pattern in ("*.sdf", "*.world")
                   for p in folder.rglob(pattern) if args.only in str(p))
    outcomes: Counter[str] = Counter()
    print("| world | outcome | what it became, or the error |\n| --- | --- | --- |")
    for path in files:
        outcome, text = _row(path, args.steps)
        outcomes[outcome] += 1
        print(f"| {path.name} | {outcome} | {text.replace('|', '/')} |", flush=True)
    print(f"\n{len(files)} worlds: " + ", ".join(f"{n} {k}" for k, n in outcomes.most_common()))


if __name__ == "__main__":
    main()
