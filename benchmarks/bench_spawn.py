"""Cost of adding and removing a body between two steps (`Simulation.add_body`,
`remove_body`: the scene compiled again, the state carried over by names).

    .venv/bin/python benchmarks/bench_spawn.py [--sizes 10 100] [--repeats 20]

The arm (urdf/arm.urdf) in a world of N boxes (0.1 m, 1 kg) resting on the ground in rows,
stepped 200 steps so their contacts are warm-started; then, `repeats` times: one box spawned
from world-file YAML onto the free corner (`spawn_body` + `add_body`, timed apart), 10 steps,
the box removed (`remove_body`), 10 steps. Prints the median and the best in µs per
operation. The steps are not timed. Prints numbers, asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import mb_sim
from mb_sim.model.spawn import spawn_body

ROOT = Path(__file__).resolve().parents[1]
SIZE = 0.1
BOX = f"{{name: spawned, shape: box, size: [{SIZE}, {SIZE}, {SIZE}], mass: 1.0}}"


def world(n: int) -> dict:
    bodies = [{"name": f"box_{i}", "shape": "box", "size": [SIZE] * 3, "mass": 1.0,
               "xyz": [0.6 + 0.25 * (i % 10), -1.2 + 0.25 * (i // 10), SIZE / 2]}
              for i in range(n)]
    return {"ground": {"friction": 0.8}, "bodies": bodies}


def run(n: int, repeats: int) -> dict[str, list[float]]:
    sim = mb_sim.Simulation(mb_sim.load_urdf(ROOT / "urdf" / "arm.urdf"),
                            mb_sim.load_world(world(n)), dt=0.001)
    sim.step(200)
    times: dict[str, list[float]] = {"spawn_body (parse)": [], "add_body": [],
                                     "remove_body": []}
    for _ in range(repeats + 1):  # the first round warms caches up and is not counted
        t0 = time.perf_counter()
        body = spawn_body(resource_string=BOX, xyz=(-1.0, -1.0, SIZE / 2)).body
        t1 = time.perf_counter()
        sim.add_body(body)
        t2 = time.perf_counter()
        sim.step(10)
        t3 = time.perf_counter()
        sim.remove_body("spawned")
        t4 = time.perf_counter()
        sim.step(10)
        for key, dt in zip(times, (t1 - t0, t2 - t1, t4 - t3)):
            times[key].append(1e6 * dt)
    return {key: value[1:] for key, value in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    print(f"{'bodies':>7}  {'operation':<20} {'median us':>10} {'best us':>10}")
    for n in args.sizes:
        for key, values in run(n, args.repeats).items():
            print(f"{n:>7}  {key:<20} {statistics.median(values):>10.0f} {min(values):>10.0f}")


if __name__ == "__main__":
    main()
