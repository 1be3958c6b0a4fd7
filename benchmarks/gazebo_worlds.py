"""Gazebo SDF worlds and models loaded and stepped as a user of Gazebo would try them: a table.

    .venv/bin/python benchmarks/gazebo_worlds.py DIR [DIR ...] [--steps 500] [--only SUBSTRING]
        [--resource-path DIR ...] [--models] [--include URI --at "x y z yaw"]

Every `.sdf` and `.world` file below the folders given (gz-sim's `examples/worlds`, say, from
`git clone https://github.com/gazebosim/gz-sim`; a ROS package's `worlds/`) is read with
`mb_sim.load_world` (the model folders of `GZ_SIM_RESOURCE_PATH`, to which `--resource-path`
prepends folders, and the local Fuel cache as they are: nothing is downloaded) and, when it
loads, simulated `--steps` steps of 1 ms. With `--models` the folders are model libraries
(osrf/gazebo_models, a package's `models/`): each model folder's SDF file (the one its
model.config names) is read as a world of that model. `--include URI --at POSE` adds one
`<include>` to every world, at that pose (x y z yaw): the robot a user spawns into it, as
`--include model://turtlebot3_waffle --at "-2 -0.5 0.01 0"` does for TurtleBot3's worlds.

Each row: the file; the outcome: `stepped` (every body and robot finite, none escaped),
`escaped` (a body or a floating robot ended below the ground plane by more than ESCAPE_DEPTH,
faster than ESCAPE_SPEED, or not finite: named), or the refusal's kind; what the world became
(bodies, robots and URDF objects, world joints, sensors) and its meshes; or the refusal's
reason. Meshes: every mesh that collides (world bodies, robot and object links) has its extent
as mb_sim collides it (a static body's triangle set, else the exact hull) compared with the
extent of the file's vertices read independently (trimesh, node transforms applied) times its
Collada unit read independently (pycollada's `assetInfo.unitmeter`) times its scale: `N meshes
at true size (k in inch, ...)`, and the files that are not. A summary counts the worlds that
loaded, stepped and escaped, the meshes checked, and lists every refusal with its reason,
grouped by kind (a Fuel model not in the cache, a missing file, a malformed file, ...).

Numbers only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import mb_sim
from mb_sim.model.mesh import MeshError, convex_hull_vertices, load_mesh
from mb_sim.model.triangles import mesh_triangles
from mb_sim.model.world.sdf.files import model_file

ESCAPE_DEPTH = 0.05
"""m: a body or floating robot ending deeper than this below the ground plane fell through."""
ESCAPE_SPEED = 50.0
"""m/s: faster than anything in a scene that starts at rest (free fall for 0.5 s: 4.9 m/s)."""
SIZE_TOLERANCE = 1e-6
"""Relative: a mesh's extent as mb_sim collides it and as read independently agree to this."""


@dataclass
class MeshCheck:
    """The meshes of one world: how many were checked, by unit, and those not at true size."""

    units: Counter[str] = field(default_factory=Counter)
    wrong: list[str] = field(default_factory=list)

    def text(self) -> str:
        checked = sum(self.units.values())
        if not checked:
            return "no meshes"
        other = ", ".join(f"{n} in {u}" for u, n in sorted(self.units.items()) if u != "m")
        right = checked - len(self.wrong)
        out = f"{right}/{checked} meshes at true size" + (f" ({other})" if other else "")
        return out + (f"; not: {'; '.join(self.wrong[:3])}" if self.wrong else "")


@functools.cache
def _reference(path: str) -> tuple[np.ndarray, str]:
    """(extent of the file's vertices in metres, its unit's name), read without mb_sim: trimesh
    for the vertices (as written, node transforms applied), pycollada for a Collada unit."""
    import trimesh

    mesh = trimesh.load(path, force="mesh", process=False, skip_materials=True)
    extent = np.ptp(np.asarray(mesh.vertices, dtype=float), axis=0)
    unit, name = 1.0, "m"
    if path.lower().endswith(".dae"):
        import collada

        info = collada.Collada(path, ignore=[collada.common.DaeError]).assetInfo
        if info.unitmeter is not None:
            unit = float(info.unitmeter)
            name = "m" if unit == 1.0 else (info.unitname or f"{unit:g} m")
    return extent * unit, name


def _check_mesh(geometry: Any, static: bool, out: MeshCheck) -> None:
    """Compare one mesh geometry's collided extent with the independent one (module
    docstring)."""
    path, scale = geometry.mesh, np.abs(np.asarray(geometry.scale, dtype=float))
    try:
        want, unit = _reference(path)
    except Exception as exc:  # noqa: BLE001 - the independent reader's failure is a row note
        out.wrong.append(f"{Path(path).name}: reference reader failed ({type(exc).__name__})")
        return
    try:
        if static:
            points = mesh_triangles(path, tuple(scale)).corners.reshape(-1, 3)
        else:
            points = convex_hull_vertices(path, tuple(scale))
    except MeshError:  # a flat mesh has no hull: its vertices
        points = load_mesh(path, tuple(scale))[0]
    got = np.ptp(points, axis=0)
    out.units[unit] += 1
    if not np.allclose(got, want * scale, rtol=SIZE_TOLERANCE, atol=1e-9):
        out.wrong.append(f"{Path(path).name}: {np.round(got, 4).tolist()} m, expected "
                         f"{np.round(want * scale, 4).tolist()} m")


def _meshes(sim: mb_sim.Simulation, world: mb_sim.World) -> MeshCheck:
    out = MeshCheck()
    for body in world.bodies:
        if body.geometry.kind == "mesh" and body.geometry.mesh:
            _check_mesh(body.geometry, body.static, out)
    for name in (*sim.robot_names, *sim.object_names):
        model = sim.robot(name).model
        for shapes in model.collision_geometries.values():
            for g in shapes:
                if g.kind == "mesh" and g.mesh and g.mesh_error is None:
                    _check_mesh(g, False, out)
    return out


def _escaped(sim: mb_sim.Simulation, world: mb_sim.World) -> list[str]:
    """The bodies and floating robots that escaped (module docstring), with why."""
    floor = world.ground.height - ESCAPE_DEPTH if world.ground is not None else -np.inf
    out = []
    moving = [b.name for b in world.bodies if not b.static]
    for name in moving:
        xyz = sim.body_pose(name)[0]
        speed = float(np.linalg.norm(sim.body_velocity(name)[0]))
        if not (np.all(np.isfinite(xyz)) and xyz[2] >= floor and speed <= ESCAPE_SPEED):
            out.append(f"{name} at z {xyz[2]:.3g} m, {speed:.3g} m/s")
    for name in (*sim.robot_names, *sim.object_names):
        robot = sim.robot(name)
        poses = robot.link_poses()
        if not all(np.all(np.isfinite(p[0])) for p in poses.values()) or \
                not np.all(np.isfinite(robot.q)):
            out.append(f"{name} not finite")
        elif robot.floating_base:
            xyz = robot.base_pose()[0]
            speed = float(np.linalg.norm(robot.base_velocity()[0]))
            if xyz[2] < floor or speed > ESCAPE_SPEED:
                out.append(f"{name} at z {xyz[2]:.3g} m, {speed:.3g} m/s")
    return out


def _kind(exc: Exception) -> str:
    """What kind of refusal an error is, for the summary."""
    text = str(exc)
    if "fuel." in text and "cannot find" in text:
        return "Fuel model not in the cache"
    if "cannot find" in text or "does not exist" in text or "no such file" in text.lower():
        return "a file not found"
    if "moves no mass" in text or "needs mass" in text:
        return "massless links"
    if "in a closed loop of joints" in text:
        return "a body of several collisions (a closed loop, or a ball joint to the world)"
    if re.search(r"\bball\b|spherical", text):
        return "ball joints"
    if "triangle inequality" in text or "inertia" in text:
        return "an invalid inertia"
    if "malformed" in text or "ParseError" in text:
        return "malformed file"
    return type(exc).__name__


def _shortened(text: str, head: int = 220, tail: int = 160) -> str:
    """A long message cut in its middle (its start says what, its end how to fix it)."""
    return text if len(text) <= head + tail + 5 else f"{text[:head]} ... {text[-tail:]}"


def _with_include(path: Path, uri: str, pose: str) -> str:
    """The world's SDF text with one more <include> of `uri` at `pose` (x y z yaw)."""
    x, y, z, yaw = (pose.split() + ["0", "0", "0", "0"])[:4]
    text = path.read_text(encoding="utf-8-sig")
    include = (f"<include><uri>{uri}</uri><pose>{x} {y} {z} 0 0 {yaw}</pose></include>")
    end = text.rfind("</world>")
    if end < 0:
        raise ValueError(f"{path}: no </world> to add the include to")
    return text[:end] + include + text[end:]


def _row(path: Path, steps: int, include: tuple[str, str] | None
         ) -> tuple[str, str, Exception | None]:
    """(outcome, text, the refusal) of one world."""
    start = time.perf_counter()
    try:
        source: Any = path if include is None else _with_include(path, *include)
        world = mb_sim.load_world(source, base_dir=path.parent if include else None)
        sim = mb_sim.Simulation(world=world, dt=0.001)
    except Exception as exc:  # noqa: BLE001 - every failure is a row of the table
        return _kind(exc), _shortened(str(exc).split("\n")[0]), exc
    meshes = _meshes(sim, world)
    try:
        sim.step(steps)
        escaped = _escaped(sim, world)
    except (ValueError, FloatingPointError) as exc:  # a state the checks refuse: not finite
        escaped = [str(exc).split("\n")[0][:120]]
    made = (f"{len(world.bodies)} bodies, {len(world.robots)} robots/objects, "
            f"{len(world.joints)} world joints, {len(world.sensors)} world sensors; "
            f"{meshes.text()}")
    outcome = "stepped" if not escaped else "escaped"
    why = f"; escaped: {', '.join(escaped[:3])}" if escaped else ""
    return outcome, f"{made}{why}; {time.perf_counter() - start:.1f} s", None


def _files(args: argparse.Namespace) -> list[Path]:
    if not args.models:
        return sorted(p for folder in args.folders for pattern in ("*.sdf", "*.world")
                      for p in folder.rglob(pattern) if args.only in str(p))
    out = []
    for folder in args.folders:
        for model in sorted(p for p in folder.iterdir() if p.is_dir()):
            path, _ = model_file(str(model))
            if path is not None and args.only in path:
                out.append(Path(path))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--only", default="")
    parser.add_argument("--resource-path", action="append", default=[], type=Path,
                        help="a folder of model folders, put before GZ_SIM_RESOURCE_PATH")
    parser.add_argument("--models", action="store_true",
                        help="the folders hold model folders: each model is a world")
    parser.add_argument("--include", default=None, help="a model URI added to every world")
    parser.add_argument("--at", default="0 0 0 0", help="its pose: x y z yaw")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    if args.resource_path:
        paths = [str(p.resolve()) for p in args.resource_path]
        os.environ["GZ_SIM_RESOURCE_PATH"] = os.pathsep.join(
            [*paths, *filter(None, [os.environ.get("GZ_SIM_RESOURCE_PATH")])])
    include = (args.include, args.at) if args.include else None
    files = _files(args)
    outcomes: Counter[str] = Counter()
    refusals: dict[str, list[str]] = defaultdict(list)
    checked, wrong = Counter(), 0
    print("| world | outcome | what it became, or the refusal |\n| --- | --- | --- |")
    for path in files:
        outcome, text, exc = _row(path, args.steps, include)
        outcomes[outcome] += 1
        label = str(path.relative_to(path.parents[1])) if args.models else path.name
        if exc is not None:
            refusals[outcome].append(f"{label}: {text}")
        m = re.search(r"(\d+)/(\d+) meshes at true size", text)
        if m:
            checked["meshes"] += int(m.group(2))
            wrong += int(m.group(2)) - int(m.group(1))
        print(f"| {label} | {outcome} | {text.replace('|', '/')} |", flush=True)
    loaded = outcomes["stepped"] + outcomes["escaped"]
    print(f"\n{len(files)} worlds: {loaded} load, {outcomes['stepped']} step without a body "
          f"escaping, {outcomes['escaped']} with one escaping; {checked['meshes']} meshes "
          f"checked, {checked['meshes'] - wrong} at their true size")
    for kind, rows in sorted(refusals.items(), key=lambda kv: -len(kv[1])):
        print(f"\nrefused, {kind} ({len(rows)}):")
        for row in rows:
            print(f"- {row}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
