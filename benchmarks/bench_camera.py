"""Cameras at the resolutions real robots declare: mb_sim's rasteriser next to MuJoCo's
`Renderer` (EGL; here Mesa's llvmpipe software rasteriser) on the same scene, in one process.

    MUJOCO_GL=egl .venv/bin/python benchmarks/bench_camera.py [--seconds 2] [--no-mujoco]

Scene: a 10 x 8 m room (ground, four walls), 8 cylinders (pillars), 4 boxes (furniture), an
81,920-triangle mesh (an icosphere of subdivision 6, a statue) and a 20,480-triangle one
(subdivision 5): about 103,000 triangles drawn. The camera stands in a corner looking across
the room. Rows:
- 1920 x 1080 colour + depth, one drawing giving both (`Rasteriser.render`), on one thread
  and on RENDER_THREADS threads; MuJoCo: one `render()` for colour, one for depth;
- 1920 x 1080 colour, and depth, through `Simulation.read_sensor` (what a node publishes);
- 640 x 480 depth through `read_sensor`, on RENDER_THREADS threads and on one.
Each: the median milliseconds per frame over `--seconds` (wall clock, and the CPU time of
every thread of the process: on a shared machine the first grows with the others' load, the
second much less), frames per second. MuJoCo is measured on the same scene (the same shapes,
MuJoCo's own tessellation of primitives) with the same pinhole (fovy from the horizontal
field of view and the aspect); its CPU time includes llvmpipe's threads.

Then what cameras cost the simulation: the default arm on the table world (as bench_step.py)
stepped for `--seconds` of simulated time without sensors and with a 320 x 240 depth camera
at 15 Hz and a 640 x 480 colour camera at 10 Hz (read when their tick comes), as CPU seconds
per simulated second (below 1: faster than real time on one core). Numbers only, no
pass/fail.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np

import mb_sim
from mb_sim.model.sensors import SensorSpec
from mb_sim.sensing import suite
from mb_sim.sensing.raster import RENDER_THREADS, Rasteriser
from mb_sim.sensing.visuals import scene_visuals

ROOT = Path(__file__).resolve().parents[1]
EYE = {"xyz": (-4.3, -3.3, 1.6), "rpy": (0.0, 0.25, 0.62)}
HFOV = 1.2
PILLARS = [(-2.0 + 2.0 * i, y) for i in range(4) for y in (-2.0, 2.0)]
BOXES = [((1.0, -0.5, 0.4), (1.2, 0.6, 0.8)), ((-1.5, 0.5, 0.5), (0.8, 0.8, 1.0)),
         ((3.0, 1.0, 0.3), (1.5, 0.8, 0.6)), ((-3.5, 2.8, 0.9), (0.5, 1.5, 1.8))]


def make_meshes(folder: Path) -> tuple[Path, Path]:
    import trimesh

    big = trimesh.creation.icosphere(subdivisions=6, radius=0.6)
    small = trimesh.creation.icosphere(subdivisions=5, radius=0.4)
    paths = folder / "statue.stl", folder / "ball.stl"
    big.export(paths[0])
    small.export(paths[1])
    return paths


def world_dict(meshes: tuple[Path, Path]) -> dict[str, Any]:
    wall = {"shape": "box", "static": True, "color": [0.85, 0.83, 0.78]}
    bodies = [
        {**wall, "name": "wall_s", "size": [10.2, 0.1, 2.5], "xyz": [0.0, -4.05, 1.25]},
        {**wall, "name": "wall_n", "size": [10.2, 0.1, 2.5], "xyz": [0.0, 4.05, 1.25]},
        {**wall, "name": "wall_w", "size": [0.1, 8.0, 2.5], "xyz": [-5.05, 0.0, 1.25]},
        {**wall, "name": "wall_e", "size": [0.1, 8.0, 2.5], "xyz": [5.05, 0.0, 1.25]},
    ]
    for i, (x, y) in enumerate(PILLARS):
        bodies.append({"name": f"pillar{i}", "shape": "cylinder", "size": [0.15, 2.5],
                       "xyz": [x, y, 1.25], "static": True, "color": [0.7, 0.7, 0.72]})
    for i, (xyz, size) in enumerate(BOXES):
        bodies.append({"name": f"box{i}", "shape": "box", "size": list(size), "xyz": list(xyz),
                       "static": True, "color": [0.56, 0.42, 0.30]})
    bodies.append({"name": "statue", "shape": "mesh", "mesh": str(meshes[0]), "static": True,
                   "xyz": [1.0, 1.5, 0.6], "color": [0.8, 0.75, 0.6]})
    bodies.append({"name": "ball", "shape": "mesh", "mesh": str(meshes[1]), "static": True,
                   "xyz": [-1.0, -1.0, 0.4], "color": [0.3, 0.5, 0.8]})
    return {"ground": {}, "gravity": [0, 0, -9.81], "bodies": bodies}


def timed(fn: Any, seconds: float) -> tuple[float, float]:
    """Median seconds of fn over about `seconds` (after one call): wall clock, and CPU time of
    the process's threads."""
    fn()
    times, cpu = [], []
    start = time.perf_counter()
    while time.perf_counter() - start < seconds or len(times) < 3:
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(times), statistics.median(cpu)


def mujoco_xml(meshes: tuple[Path, Path], width: int, height: int) -> str:
    fovy = math.degrees(2.0 * math.atan(math.tan(0.5 * HFOV) * height / width))
    geoms = []
    world = world_dict(meshes)
    for b in world["bodies"]:
        rgba = " ".join(str(c) for c in [*b["color"], 1.0])
        pos = " ".join(str(v) for v in b["xyz"])
        if b["shape"] == "box":
            half = " ".join(str(0.5 * s) for s in b["size"])
            geoms.append(f'<geom type="box" size="{half}" pos="{pos}" rgba="{rgba}"/>')
        elif b["shape"] == "cylinder":
            r, length = b["size"]
            geoms.append(f'<geom type="cylinder" size="{r} {0.5 * length}" pos="{pos}" '
                         f'rgba="{rgba}"/>')
        else:
            geoms.append(f'<geom type="mesh" mesh="{b["name"]}" pos="{pos}" rgba="{rgba}"/>')
    assets = "".join(f'<mesh name="{b["name"]}" file="{b["mesh"]}"/>' for b in world["bodies"]
                     if b["shape"] == "mesh")
    R = mb_sim.rotations.rpy_matrix(np.array(EYE["rpy"]))
    # MuJoCo's camera looks along its -z with +y up: x = -y_sensor, y = z_sensor
    xyaxes = " ".join(str(v) for v in (*(-R[:, 1]), *R[:, 2]))
    pos = " ".join(str(v) for v in EYE["xyz"])
    return (f'<mujoco><visual><global offwidth="{width}" offheight="{height}"/>'
            f'<quality shadowsize="0"/></visual><asset>{assets}</asset><worldbody>'
            '<light directional="true" dir="-0.5 0.1 -0.9" castshadow="false"/>'
            '<geom type="plane" size="50 50 0.1" rgba="0.55 0.56 0.58 1"/>'
            + "".join(geoms) +
            f'<camera name="eye" pos="{pos}" xyaxes="{xyaxes}" fovy="{fovy}"/>'
            '</worldbody></mujoco>')


def mujoco_times(meshes: tuple[Path, Path], width: int, height: int, seconds: float
                 ) -> tuple[tuple[float, float], tuple[float, float]] | None:
    try:
        import mujoco
    except ImportError:
        return None
    m = mujoco.MjModel.from_xml_string(mujoco_xml(meshes, width, height))
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    renderer = mujoco.Renderer(m, height=height, width=width)

    def colour() -> None:
        renderer.update_scene(d, camera="eye")
        renderer.render()

    colour_s = timed(colour, seconds)
    renderer.enable_depth_rendering()
    depth_s = timed(colour, seconds)
    renderer.close()
    return colour_s, depth_s


def row(label: str, mine: tuple[float, float], peer: tuple[float, float] | None = None) -> None:
    """A row: mb_sim's wall ms, CPU ms and frames/s, then MuJoCo's and the ratio of the wall
    times (MuJoCo / mb_sim)."""
    cells = f"{1e3 * mine[0]:10.1f}{1e3 * mine[1]:9.1f}{1.0 / mine[0]:10.1f}"
    if peer is not None:
        cells += (f"{1e3 * peer[0]:12.1f}{1e3 * peer[1]:9.1f}{1.0 / peer[0]:10.1f}"
                  f"{peer[0] / mine[0]:9.2f}")
    print(f"{label:<42}{cells}", flush=True)


def both(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    return a[0] + b[0], a[1] + b[1]


def step_cost(seconds: float, cameras: bool) -> float:
    """CPU seconds per simulated second of the default scene, with the two cameras read at
    their rates (their tick: the first step at or after k / rate) when `cameras`."""
    sim = mb_sim.Simulation(mb_sim.load_urdf(ROOT / "urdf" / "arm.urdf"),
                            world=mb_sim.load_world(ROOT / "config" / "worlds" / "table.yaml"))
    eye = {"xyz": (0.2, -0.6, 0.7), "rpy": (0.0, 0.35, 0.9)}
    specs = [(SensorSpec("depth", "depth_camera", width=320, height=240, far=20.0, **eye), 15.0),
             (SensorSpec("colour", "camera", width=640, height=480, far=20.0, **eye), 10.0)]
    if not cameras:
        specs = []
    for spec, _ in specs:
        sim.add_sensor(spec)
        sim.read_sensor(spec.name)  # the visual scene made, the kernels loaded
    next_read = {spec.name: 0.0 for spec, _ in specs}
    sim.step(200)
    start = time.process_time()
    for _ in range(round(seconds / sim.dt)):
        sim.step()
        for spec, rate in specs:
            if sim.time >= next_read[spec.name] - 1e-12:
                sim.read_sensor(spec.name)
                next_read[spec.name] += 1.0 / rate
    return (time.process_time() - start) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--no-mujoco", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        meshes = make_meshes(Path(folder))
        sim = mb_sim.Simulation(world=mb_sim.load_world(world_dict(meshes)))
        values = scene_visuals(sim)
        print(f"scene: {values.tri.shape[0]} triangles, {values.visual_owner.shape[0]} visuals; "
              f"camera {EYE}, hfov {HFOV}")
        hd = SensorSpec("hd", "camera", width=1920, height=1080, hfov=HFOV, far=30.0, **EYE)
        hd_depth = SensorSpec("hd_depth", "depth_camera", width=1920, height=1080, hfov=HFOV,
                              far=30.0, **EYE)
        vga = SensorSpec("vga", "depth_camera", width=640, height=480, hfov=HFOV, far=30.0,
                         **EYE)
        for spec in (hd, hd_depth, vga):
            sim.add_sensor(spec)
        R, p = sim._sensing.pose("hd")
        sim._sensing._pose_scene()
        cw = sim._sensing._cw_arrays
        f = 0.5 * 1920 / math.tan(0.5 * HFOV)
        intrinsics = (f, 960.0, 540.0, 0.05, 30.0)
        peer = None if args.no_mujoco else mujoco_times(meshes, 1920, 1080, args.seconds)
        print(f"{'':<42}{'mb_sim ms':>10}{'CPU ms':>9}{'frames/s':>10}{'MuJoCo ms':>12}"
              f"{'CPU ms':>9}{'frames/s':>10}{'ratio':>9}")
        for threads in sorted({1, RENDER_THREADS}):
            raster = Rasteriser(values, 1920, 1080, threads=threads)
            drawn = timed(lambda r=raster: r.render(R @ suite.OPTICAL, p, intrinsics,
                                                    cw.owner_pos, cw.owner_rot, -2, True),
                          args.seconds)
            row(f"1920x1080 colour + depth, {threads} thread(s)", drawn,
                None if peer is None else both(*peer))
        row("1920x1080 colour, read_sensor", timed(lambda: sim.read_sensor("hd"), args.seconds),
            None if peer is None else peer[0])
        row("1920x1080 depth, read_sensor", timed(lambda: sim.read_sensor("hd_depth"),
                                                   args.seconds),
            None if peer is None else peer[1])
        small = None if args.no_mujoco else mujoco_times(meshes, 640, 480, args.seconds)
        for threads in sorted({RENDER_THREADS, 1}, reverse=True):
            sim.read_sensor("vga")
            sim._sensing._rasters["vga"].threads = threads
            row(f"640x480 depth, read_sensor, {threads} thread(s)",
                timed(lambda: sim.read_sensor("vga"), args.seconds),
                None if small is None else small[1])
        if peer is not None:
            print("MuJoCo: colour + depth = one render() each; ratio = MuJoCo ms / mb_sim ms "
                  "(wall clock)")
    plain, cameras = step_cost(args.seconds, False), step_cost(args.seconds, True)
    print(f"\nthe default scene, CPU s per simulated s: no sensors {plain:.3f}; depth 320x240 @ "
          f"15 Hz + colour 640x480 @ 10 Hz {cameras:.3f} (real time on one core: below 1)")


if __name__ == "__main__":
    main()
