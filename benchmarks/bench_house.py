"""A house of static mesh models with one wheeled robot driving and its lidar read at its rate:
how long the world takes to load and how fast it runs.

    .venv/bin/python benchmarks/bench_house.py WORLD --resource-path DIR [DIR ...] \
        [--include model://turtlebot3_waffle --at "1 -1 0.01 0"] [--seconds 10] [--lidar-hz 10]

WORLD is a Gazebo world as published (AWS RoboMaker's small house: `worlds/small_house.world`
of aws-robotics/aws-robomaker-small-house-world, its `models/` on the resource path, 85 mesh
collisions in centimetres); `--include` adds the robot a user spawns into it (TurtleBot3
Waffle's `model.sdf` from ROBOTIS-GIT/turtlebot3_simulations' `turtlebot3_gazebo/models`,
its 360-ray lidar, DiffDrive and ball-jointed casters).

Each measurement runs in a fresh process with a mesh cache of its own (`MB_SIM_CACHE`), so
the first is what a user meets the first time (meshes read, hulls and triangle sets built),
the second what every later start costs (the same cache kept):

- `load_world`: the SDF read, every mesh loaded at its Collada unit, bodies made;
- `Simulation(...)`: the scene compiled (static meshes' BVHs, collision filter);
- first step (kernels from the kernel cache; the first compile is `bench_startup.py`'s);
- the run: `--seconds` of simulated time at 1 ms, the robot driven at 0.2 m/s (turning
  0.3 rad/s) through `sim.drives`, each lidar read at `--lidar-hz`: wall time per simulated
  second split into stepping and lidar readings, and the real-time factor (simulated seconds
  per wall second) with the lidar, the rays of the last reading that hit something, how far
  the robot went (the chord of its arc) and its contacts at the end.

Numbers only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _with_include(path: Path, uri: str, pose: str) -> str:
    """The world's SDF text with one more <include> of `uri` at `pose` (x y z yaw)."""
    x, y, z, yaw = pose.split()
    text = path.read_text()
    end = text.rfind("</world>")
    if end < 0:
        raise ValueError(f"{path}: no </world> to add the include to")
    include = f"<include><uri>{uri}</uri><pose>{x} {y} {z} 0 0 {yaw}</pose></include>"
    return text[:end] + include + text[end:]


def measure(args: argparse.Namespace) -> dict[str, float | int | str]:
    """One process's numbers (module docstring)."""
    start = time.perf_counter()
    import mb_sim

    imported = time.perf_counter()
    path = Path(args.world)
    source = _with_include(path, args.include, args.at) if args.include else path
    world = mb_sim.load_world(source, base_dir=path.parent)
    loaded = time.perf_counter()
    sim = mb_sim.Simulation(world=world, dt=0.001)
    made = time.perf_counter()
    sim.step(1)
    first = time.perf_counter()
    lidars = [n for n in sim.sensor_names if sim.sensor(n).type == "lidar"]
    drives = list(sim.drives.values())
    for drive in drives:
        drive.command(0.2, 0.3, sim.time)
    root = next(iter(sim.drives), "")
    before = np.array(sim.robot(root).base_pose()[0]) if root else np.zeros(3)
    steps, every = round(args.seconds * 1000), max(1, round(1000 / args.lidar_hz))
    stepping = reading = 0.0
    hits = 0
    for k in range(0, steps, every):
        t0 = time.perf_counter()
        sim.step(min(every, steps - k))
        t1 = time.perf_counter()
        for drive in drives:
            drive.command(0.2, 0.3, sim.time)
        for name in lidars:
            hits = int(np.isfinite(sim.read_sensor(name)).sum())
        reading += time.perf_counter() - t1
        stepping += t1 - t0
    after = np.array(sim.robot(root).base_pose()[0]) if root else np.zeros(3)
    wall = stepping + reading
    return {"import": imported - start, "load": loaded - imported, "simulation": made - loaded,
            "first_step": first - made, "bodies": len(world.bodies),
            "robots": len(world.robots), "lidars": ",".join(lidars) or "none",
            "lidar_hits": hits, "step_us": 1e6 * stepping / steps,
            "lidar_ms": 1e3 * reading / max(1, steps // every * max(1, len(lidars))),
            "rtf": args.seconds / wall, "moved": float(np.linalg.norm((after - before)[:2])),
            "contacts": len(sim.contacts)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("world")
    parser.add_argument("--resource-path", nargs="*", default=[])
    parser.add_argument("--include", default="model://turtlebot3_waffle")
    parser.add_argument("--at", default="1 -1 0.01 0", help="x y z yaw of the included robot")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--lidar-hz", type=float, default=10.0)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args)))
        return
    env = dict(os.environ)
    env["GZ_SIM_RESOURCE_PATH"] = os.pathsep.join(
        [*args.resource_path, env.get("GZ_SIM_RESOURCE_PATH", "")]).strip(os.pathsep)
    with tempfile.TemporaryDirectory() as cache:
        env["MB_SIM_CACHE"] = cache
        rows = []
        for label in ("first start (empty mesh cache)", "later start (mesh cache kept)"):
            out = subprocess.run([sys.executable, __file__, "--child", *sys.argv[1:]], env=env,
                                 capture_output=True, text=True, check=False)
            if out.returncode != 0:
                sys.exit(f"{label}: failed:\n{out.stderr[-3000:]}")
            rows.append((label, json.loads(out.stdout.strip().splitlines()[-1])))
    r = rows[0][1]
    print(f"{Path(args.world).name} + {args.include or 'no robot'}: {r['bodies']} bodies, "
          f"{r['robots']} robots, lidars {r['lidars']} read at {args.lidar_hz:g} Hz; "
          f"{args.seconds:g} s simulated at 1 ms\n")
    print("| start | import s | load_world s | Simulation s | first step s | step us | "
          "lidar ms/reading | lidar hits | RTF with lidar | moved m | contacts |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, r in rows:
        print(f"| {label} | {r['import']:.2f} | {r['load']:.2f} | {r['simulation']:.2f} | "
              f"{r['first_step']:.2f} | {r['step_us']:.0f} | {r['lidar_ms']:.2f} | {r['lidar_hits']} | "
              f"{r['rtf']:.1f} | {r['moved']:.2f} | {r['contacts']} |")


if __name__ == "__main__":
    main()
