"""Cameras at the resolutions real robots declare: mb_sim's rasteriser next to MuJoCo's
`Renderer` (EGL; here Mesa's llvmpipe software rasteriser) on the same scene, in one process.

    MUJOCO_GL=egl .venv/bin/python benchmarks/bench_camera.py [--seconds 2] [--no-mujoco]

Scene: a 10 x 8 m room (ground, four walls), 8 cylinders (pillars), 4 boxes (furniture), an
81,920-triangle mesh (an icosphere of subdivision 6, a statue) and a 20,480-triangle one
(subdivision 5): about 105,000 triangles drawn. The camera stands in a corner looking across
the room. Rows:
- 1920 x 1080 colour + depth, one drawing giving both (`Rasteriser.render`), on one thread
  and on RENDER_THREADS threads; MuJoCo: one `render()` for colour, one for depth;
- 1920 x 1080 colour, and depth, through `Simulation.read_sensor` (what a node publishes);
- 640 x 480 depth through `read_sensor`.
Each: the median milliseconds per frame over `--seconds` and frames per second. MuJoCo is
measured on the same scene (the same shapes, MuJoCo's own tessellation of primitives) with
the same pinhole (fovy from the horizontal field of view and the aspect). Numbers only, no
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


def timed(fn: Any, seconds: float) -> float:
    """Median seconds of fn over about `seconds` (after one call)."""
    fn()
    times = []
    start = time.perf_counter()
    while time.perf_counter() - start < seconds or len(times) < 3:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


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
                 ) -> tuple[float, float] | None:
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


def row(label: str, seconds: float, peer: float | None = None) -> None:
    cells = f"{1e3 * seconds:10.1f}{1.0 / seconds:10.1f}"
    if peer is not None:
        cells += f"{1e3 * peer:12.1f}{1.0 / peer:10.1f}{peer / seconds:9.2f}"
    print(f"{label:<46}{cells}", flush=True)


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
        print(f"{'':<46}{'mb_sim ms':>10}{'frames/s':>10}{'MuJoCo ms':>12}{'frames/s':>10}"
              f"{'ratio':>9}")
        for threads in sorted({1, RENDER_THREADS}):
            raster = Rasteriser(values, 1920, 1080, threads=threads)
            both = timed(lambda r=raster: r.render(R @ suite.OPTICAL, p, intrinsics,
                                                   cw.owner_pos, cw.owner_rot, -2, True),
                         args.seconds)
            row(f"1920x1080 colour + depth, {threads} thread(s)", both,
                None if peer is None else peer[0] + peer[1])
        row("1920x1080 colour, read_sensor", timed(lambda: sim.read_sensor("hd"), args.seconds),
            None if peer is None else peer[0])
        row("1920x1080 depth, read_sensor", timed(lambda: sim.read_sensor("hd_depth"),
                                                   args.seconds),
            None if peer is None else peer[1])
        small = None if args.no_mujoco else mujoco_times(meshes, 640, 480, args.seconds)
        row("640x480 depth, read_sensor", timed(lambda: sim.read_sensor("vga"), args.seconds),
            None if small is None else small[1])
        if peer is not None:
            print("MuJoCo: colour + depth = one render() each; ratio = MuJoCo ms / mb_sim ms")


if __name__ == "__main__":
    main()
