"""Lidars in the default scene: rays per second next to MuJoCo's mj_multiRay, and what a lidar
costs the simulation. (Cameras draw triangles instead of casting rays: bench_camera.py.)

    .venv/bin/python benchmarks/bench_rays.py [--seconds 2] [--no-mujoco]

Scene: the default arm on the table world (config/worlds/table.yaml), as bench_step.py. A
sensor frame above the table's edge looks across it.
1. Rays per second of three lidars cast from that frame into the scene's collision geometry:
   a 360-sample ring (a 2-D lidar), 16 rows of 1,800 (a VLP-16-like 3-D lidar, +-15 degrees)
   and 128 rows of 1,024 (an OS1-128-like one, +-22.5 degrees); mb_sim
   (`Simulation.read_sensor`: the scene posed, the rays cast, the reading made) next to
   `mujoco.mj_multiRay` on the MuJoCo twin of the scene (benchmarks/mujoco_scene.py; its rays
   from the same point, the same directions; MuJoCo's cost is the cast alone).
2. What lidars cost the step: the default scene stepped for `--seconds` of simulated time,
   without sensors, with the ring read at 10 Hz and with the 16-row lidar at 10 Hz (read
   when their tick comes), as CPU seconds per simulated second (below 1: faster than real
   time on one core) and each lidar's share of the step's CPU.
Numbers only, no pass/fail.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import mb_sim
from mb_sim.model.sensors import SensorSpec
from mb_sim.sensing.patterns import lidar_rays

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mujoco_scene import mjcf

ROOT = Path(__file__).resolve().parents[1]
EYE = {"xyz": (0.2, -0.6, 0.7), "rpy": (0.0, 0.35, 0.9)}
PATTERNS = {
    "lidar 360": SensorSpec("ring", "lidar", samples=360, max_range=20.0, **EYE),
    "lidar 16x1800": SensorSpec("vlp16", "lidar", samples=1800, vertical_samples=16,
                                min_vertical_angle=-0.2618, max_vertical_angle=0.2618,
                                max_range=20.0, **EYE),
    "lidar 128x1024": SensorSpec("os128", "lidar", samples=1024, vertical_samples=128,
                                 min_vertical_angle=-0.3927, max_vertical_angle=0.3927,
                                 max_range=20.0, **EYE),
}
RATES = {"lidar 360": 10.0, "lidar 16x1800": 10.0, "lidar 128x1024": 10.0}


def scene() -> mb_sim.Simulation:
    model = mb_sim.load_urdf(ROOT / "urdf" / "arm.urdf")
    world = mb_sim.load_world(ROOT / "config" / "worlds" / "table.yaml")
    return mb_sim.Simulation(model, world=world)


def per_second(fn: Any, budget: float = 1.0) -> float:
    """Calls of fn per second, over about `budget` seconds (after one call)."""
    fn()
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < budget:
        fn()
        count += 1
    return count / (time.perf_counter() - start)


def mujoco_rays(sim: mb_sim.Simulation, spec: SensorSpec) -> float | None:
    """mj_multiRay's rays per second for the sensor's pattern from its pose."""
    try:
        import mujoco
    except ImportError:
        return None
    m = mujoco.MjModel.from_xml_string(mjcf(sim.model, sim.world, sim.dt))
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    xyz, quat = sim.sensor_pose(spec.name)
    R = mb_sim.rotations.matrix_from_quat(quat)
    dirs = lidar_rays(spec)
    vec = np.ascontiguousarray((dirs @ R.T).reshape(-1))
    n = dirs.shape[0]
    geomid, dist = np.zeros(n, dtype=np.int32), np.zeros(n)

    def cast() -> None:
        mujoco.mj_multiRay(m, d, np.asarray(xyz, dtype=float), vec, None, True, -1, geomid,
                           dist, None, n, 20.0)

    return n * per_second(cast)


def rays_table(use_mujoco: bool) -> None:
    sim = scene()
    print(f"{'lidar':<16}{'rays':>9}{'mb_sim rays/s':>16}{'MuJoCo rays/s':>16}{'ratio':>8}")
    for label, spec in PATTERNS.items():
        sim.add_sensor(spec)
        mine = spec.rays * per_second(lambda s=spec: sim.read_sensor(s.name))
        theirs = mujoco_rays(sim, spec) if use_mujoco else None
        cells = (f"{theirs:>16.3g}{theirs / mine:>8.2f}" if theirs else f"{'':>16}{'':>8}")
        print(f"{label:<16}{spec.rays:>9}{mine:>16.3g}" + cells, flush=True)


def run(seconds: float, sensors: tuple[str, ...]) -> float:
    """CPU seconds per simulated second of the default scene with these sensors read at
    their rates (their tick: the first step at or after k / rate)."""
    sim = scene()
    specs = [PATTERNS[s] for s in sensors]
    for spec in specs:
        sim.add_sensor(spec)
    rates = RATES
    next_read = {s.name: 0.0 for s in specs}
    sim.step(200)  # compiled, settled
    steps = round(seconds / sim.dt)
    start = time.process_time()
    for _ in range(steps):
        sim.step()
        for label, spec in zip(sensors, specs):
            if sim.time >= next_read[spec.name] - 1e-12:
                sim.read_sensor(spec.name)
                next_read[spec.name] += 1.0 / rates[label]
    return (time.process_time() - start) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="simulated seconds")
    parser.add_argument("--no-mujoco", action="store_true")
    args = parser.parse_args()
    rays_table(not args.no_mujoco)
    plain = run(args.seconds, ())
    ring = run(args.seconds, ("lidar 360",))
    rows = run(args.seconds, ("lidar 16x1800",))
    print(f"\nCPU s per simulated s: no sensors {plain:.3f}; lidar 360 @ 10 Hz {ring:.3f} "
          f"(+{100 * (ring / plain - 1):.1f} %); lidar 16x1800 @ 10 Hz {rows:.3f} "
          f"(+{100 * (rows / plain - 1):.1f} %) (real time on one core: below 1)")


if __name__ == "__main__":
    main()
