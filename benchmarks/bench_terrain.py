"""The quadruped standing on a plane, on a 100,000-triangle terrain mesh and on a heightfield:
mb_sim next to PyBullet (a static triangle mesh) and MuJoCo (a heightfield), in one run.

    .venv/bin/python benchmarks/bench_terrain.py [--seconds 2] [--repeats 3] [--cells 224]

Terrain: the rolling ground of tools/make_meshes.py (`rough_terrain`) sampled on a grid of
(cells + 1)^2 points over 10 x 10 m, 0.1 m from its lowest to its highest point; 224 cells a
side make 2 x 224^2 = 100,352 triangles. mb_sim gets it as a static mesh body (an OBJ file:
its triangles, through the mesh's BVH) and as a heightfield of the same grid; PyBullet as a
static concave triangle mesh (GEOM_FORCE_CONCAVE_TRIMESH); MuJoCo as an hfield of the same
grid (MuJoCo turns meshes into their convex hulls, so it has no triangle-mesh case). The
plane scenes put the same robot on a ground plane.

Robot: urdf/quadruped.urdf with a floating base, in its standing pose, dropped from 2 cm
above the terrain under its feet and held by the quadruped demo's joint PD
(`mb_sim.control.pd_effort`, kp 80, kd 1), dt = 1 ms, friction 0.9. Each simulator computes
the efforts from its own state; only the step calls are timed: `--seconds` of simulated time
after one second of settling, `--repeats` passes alternating between the scenes (so all see
the same machine load), the best pass printed with the contacts of the last step and the trunk
height. The target (issue 28): mb_sim on the 100k-triangle mesh at most 1.5 times mb_sim on
the plane. Prints numbers, asserts nothing.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import mb_sim
from mb_sim.control import pd_effort, standing_pose
from mb_sim.model.triangles import grid

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from make_meshes import rough_terrain, write_obj
from mujoco_scene import mjcf

URDF = ROOT / "urdf" / "quadruped.urdf"
DT = 0.001
KP, KD = 80.0, 1.0
MU = 0.9
SIZE = 10.0
HEIGHT = 0.1
FOOT_DROP = 0.02
TRUNK_ABOVE_FEET = 0.299  # m: trunk origin above the foot centres, less the foot radius
Step = Callable[[], None]


def terrain(cells: int) -> np.ndarray:
    return rough_terrain(cells + 1, SIZE)


def ground_height(heights: np.ndarray) -> float:
    """The highest ground within 0.3 m of the origin (under the robot)."""
    n = heights.shape[0]
    r = max(2, round(0.3 / (SIZE / (n - 1))))
    c = n // 2
    return float(heights[c - r:c + r + 1, c - r:c + r + 1].max() * HEIGHT)


def mb_sim_scene(kind: str, heights: np.ndarray, folder: str) -> tuple[Step, Callable[[], Any]]:
    model = mb_sim.load_urdf(URDF, floating_base=True)
    z0 = 0.0 if kind == "plane" else ground_height(heights)
    robot = {"floating": True, "friction": MU, "xyz": [0, 0, z0 + TRUNK_ABOVE_FEET + 0.02
                                                        + FOOT_DROP]}
    world: dict[str, Any] = {"robot": robot}
    if kind == "plane":
        world["ground"] = {"friction": MU}
    elif kind == "mesh":
        path = Path(folder) / "terrain.obj"
        write_obj(path, *grid(heights, (SIZE, SIZE, HEIGHT)))
        world["bodies"] = [{"name": "terrain", "shape": "mesh", "mesh": str(path),
                            "static": True, "friction": MU}]
    else:
        world["bodies"] = [{"name": "terrain", "shape": "heightfield",
                            "heights": heights.tolist(), "size": [SIZE, SIZE, HEIGHT],
                            "friction": MU}]
    sim = mb_sim.Simulation(model, mb_sim.load_world(world), dt=DT)
    stand = standing_pose(model.joint_names)
    sim.set_state(q=dict(zip(model.joint_names, stand)))
    zero, limit = np.zeros(model.n_joints), model.effort_limit

    def step() -> None:
        sim.set_effort(pd_effort(sim.joint_positions, sim.joint_velocities, stand, zero, KP, KD,
                                 limit))
        sim.step()

    return step, lambda: (len(sim.contacts.depths), float(sim.q[2]))


def pybullet_scene(kind: str, heights: np.ndarray) -> tuple[Step, Callable[[], Any]] | None:
    try:
        import pybullet as pb
    except ImportError:
        return None
    client = pb.connect(pb.DIRECT)
    pb.setGravity(0, 0, -9.81, physicsClientId=client)
    pb.setTimeStep(DT, physicsClientId=client)
    if kind == "plane":
        shape = pb.createCollisionShape(pb.GEOM_PLANE, physicsClientId=client)
        z0 = 0.0
    else:
        verts, tris = grid(heights, (SIZE, SIZE, HEIGHT))
        shape = pb.createCollisionShape(pb.GEOM_MESH, vertices=verts.tolist(),
                                        indices=tris.reshape(-1).tolist(),
                                        flags=pb.GEOM_FORCE_CONCAVE_TRIMESH,
                                        physicsClientId=client)
        z0 = ground_height(heights)
    ground = pb.createMultiBody(0, shape, physicsClientId=client)
    pb.changeDynamics(ground, -1, lateralFriction=MU, physicsClientId=client)
    robot = pb.loadURDF(str(URDF), [0, 0, z0 + TRUNK_ABOVE_FEET + 0.02 + FOOT_DROP],
                        physicsClientId=client)
    model = mb_sim.load_urdf(URDF, floating_base=True)
    index = {pb.getJointInfo(robot, j, physicsClientId=client)[1].decode(): j
             for j in range(pb.getNumJoints(robot, physicsClientId=client))}
    joints = [index[n] for n in model.joint_names]
    stand = standing_pose(model.joint_names)
    for j, q in zip(joints, stand):
        pb.resetJointState(robot, j, q, physicsClientId=client)
    for j in range(-1, pb.getNumJoints(robot, physicsClientId=client)):
        pb.changeDynamics(robot, j, lateralFriction=MU, physicsClientId=client)
    pb.setJointMotorControlArray(robot, joints, pb.VELOCITY_CONTROL, forces=[0.0] * len(joints),
                                 physicsClientId=client)
    zero, limit = np.zeros(len(joints)), model.effort_limit

    def step() -> None:
        states = pb.getJointStates(robot, joints, physicsClientId=client)
        q = np.array([s[0] for s in states])
        qd = np.array([s[1] for s in states])
        pb.setJointMotorControlArray(robot, joints, pb.TORQUE_CONTROL,
                                     forces=pd_effort(q, qd, stand, zero, KP, KD, limit).tolist(),
                                     physicsClientId=client)
        pb.stepSimulation(physicsClientId=client)

    def report() -> tuple[int, float]:
        pos = pb.getBasePositionAndOrientation(robot, physicsClientId=client)[0]
        return len(pb.getContactPoints(robot, physicsClientId=client)), float(pos[2])

    return step, report


def mujoco_scene(kind: str, heights: np.ndarray) -> tuple[Step, Callable[[], Any]] | None:
    try:
        import mujoco
    except ImportError:
        return None
    model = mb_sim.load_urdf(URDF, floating_base=True)
    z0 = 0.0 if kind == "plane" else ground_height(heights)
    world = mb_sim.load_world({"ground": {"friction": MU} if kind == "plane" else None,
                               "robot": {"floating": True, "friction": MU,
                                         "xyz": [0, 0, z0 + TRUNK_ABOVE_FEET + 0.02
                                                 + FOOT_DROP]}})
    xml = mjcf(model, world, DT)
    if kind != "plane":
        n = heights.shape[0]
        data = " ".join(f"{h:.6f}" for h in heights.reshape(-1))
        xml = xml.replace("<worldbody>", (
            f"<asset><hfield name=\"terrain\" nrow=\"{n}\" ncol=\"{n}\" "
            f"size=\"{SIZE / 2} {SIZE / 2} {HEIGHT} 0.1\" elevation=\"{data}\"/></asset>"
            "<worldbody><geom name=\"terrain\" type=\"hfield\" hfield=\"terrain\" "
            f"friction=\"{MU} 0.005 0.0001\"/>"), 1)
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    qadr = [m.jnt_qposadr[m.joint(n).id] for n in model.joint_names]
    vadr = [m.jnt_dofadr[m.joint(n).id] for n in model.joint_names]
    stand = standing_pose(model.joint_names)
    d.qpos[qadr] = stand
    zero, limit = np.zeros(model.n_joints), model.effort_limit

    def step() -> None:
        d.ctrl[:] = pd_effort(d.qpos[qadr], d.qvel[vadr], stand, zero, KP, KD, limit)
        mujoco.mj_step(m, d)

    return step, lambda: (int(d.ncon), float(d.qpos[2]))


def timed(step: Step, steps: int) -> float:
    """Microseconds per step over `steps` calls (the controller included: the same small
    share for each simulator)."""
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    return 1e6 * (time.perf_counter() - t0) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cells", type=int, default=224)
    args = parser.parse_args()
    heights = terrain(args.cells)
    steps = round(args.seconds / DT)
    scenes: dict[str, tuple[Step, Callable[[], Any]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        t0 = time.perf_counter()
        for kind in ("plane", "mesh", "heightfield"):
            scenes[f"mb_sim {kind}"] = mb_sim_scene(kind, heights, folder)
        load = time.perf_counter() - t0
    for kind in ("plane", "mesh"):
        scene = pybullet_scene(kind, heights)
        if scene is not None:
            scenes[f"PyBullet {kind}"] = scene
    for kind in ("plane", "hfield"):
        scene = mujoco_scene(kind, heights)
        if scene is not None:
            scenes[f"MuJoCo {kind}"] = scene
    for step, _ in scenes.values():  # settle (and compile)
        timed(step, round(1.0 / DT))
    best = dict.fromkeys(scenes, math.inf)
    for _ in range(args.repeats):
        for name, (step, _) in scenes.items():
            best[name] = min(best[name], timed(step, steps))
    print(f"quadruped standing, dt = 1 ms, {steps} steps timed, best of {args.repeats}; terrain "
          f"{args.cells + 1}^2 points, {2 * args.cells ** 2} triangles over {SIZE:g} x {SIZE:g} "
          f"m, {HEIGHT:g} m high (mb_sim's three scenes built in {load:.1f} s)")
    print(f"{'scene':22}{'us / step':>12}{'contacts':>10}{'trunk z, m':>12}")
    for name, (_, report) in scenes.items():
        contacts, z = report()
        print(f"{name:22}{best[name]:12.1f}{contacts:10d}{z:12.4f}")
    plane = best["mb_sim plane"]
    print(f"mb_sim mesh / plane: {best['mb_sim mesh'] / plane:.2f} (target at most 1.5); "
          f"heightfield / plane: {best['mb_sim heightfield'] / plane:.2f}")


if __name__ == "__main__":
    main()
