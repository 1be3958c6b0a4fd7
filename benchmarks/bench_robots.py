"""Real robots in a user's own loop: example-robot-data robots stepped by mb_sim next to
MuJoCo loading the same URDF, in the same process.

    .venv/bin/python benchmarks/bench_robots.py [--seconds 1] [--robots ur5 panda ...]
        [--no-mujoco] [--self-collision] [--api arrays|natural|both]

Each robot is fixed in the air (its root where the URDF puts it, no ground), its joints held
by a PD at the middle of their limits; the loop reads q and qd, computes the PD and writes the
efforts every step of dt = 1 ms, as a script, an RL environment or a controller test does.
mb_sim: the robot's `arrays` (views written in place, checked by the step), and with `--api
natural` (or `both`) the calls a user writes first, `sim.q`, `sim.qd`, `sim.set_effort(tau)`;
MuJoCo 4: d.qpos, d.qvel, d.qfrc_applied, mj_step. No collision in either (MuJoCo's geoms get contype = conaffinity = 0;
mb_sim's world `self_collision: false`, no ground). With --self-collision, mb_sim also runs
with its default self-collision on, again with its hulls exact (`hull_tolerance: 0`, not
simplified), and, for a robot whose SRDF example-robot-data publishes, with that SRDF's
excluded pairs (`robot: {srdf: ...}`, as a MoveIt user runs it). Held at its pose a robot
may lean on itself: baxter's upper shoulder and upper elbow cylinders lie 1.7-2.1 mm apart,
inside the 5 mm envelope, talos's base and torso hulls 0.3-0.5 mm, and pr2 makes 16
contacts; their SRDFs exclude those pairs. Printed per robot: us per step of each
loop (the PD included), the ratio mb_sim / MuJoCo, mb_sim with self-collision against
without and its contacts a step, the same with exact hulls, and with the SRDF; and the
median ratio. Numbers only, no pass/fail. A robot's loops run side by side: each is timed in
WINDOWS windows of its steps, taken in turn with the robot's other loops, and its time is its
fastest window's, so that a busy moment of the machine slows one window, not one loop.

MuJoCo loads each URDF with `<mujoco><compiler balanceinertia="true" discardvisual="true"
strippath="false"/></mujoco>` added and its collision meshes given as absolute paths (Collada
files converted to STL in metres first, as mb_sim reads them, once, into a temporary folder).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import numpy as np

import mb_sim
from mb_sim.model.mesh import HULL_TOLERANCE, MeshError, load_mesh, resolve_uri

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test"))
from robot_walk import hold_pose, load_fixed, package_dirs, quiet, robots_dir

DT = 0.001
OMEGA = 20.0
WINDOWS = 10
Loop = Callable[[int], int]
"""n steps of a user loop; returns the contacts they counted (summed over the steps)."""
ROBOTS = {
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "panda": "panda_description/urdf/panda.urdf",
    "z1": "z1_description/urdf/z1.urdf",
    "xarm7": "xarm_description/urdf/xarm7.urdf",
    "kinova": "kinova_description/robots/kinova.urdf",
    "so101": "so_arm_description/urdf/so101.urdf",
    "solo12": "solo_description/robots/solo12.urdf",
    "go2": "go2_description/urdf/go2.urdf",
    "g1": "g1_description/urdf/g1_29dof_rev_1_0.urdf",
    "pr2": "pr2_description/urdf/pr2.urdf",
    "baxter": "baxter_description/urdf/baxter.urdf",
    "tiago_dual": "tiago_description/robots/tiago_dual.urdf",
    "talos": "talos_data/robots/talos_reduced.urdf",
}
SRDFS = {
    "ur5": "ur_description/srdf/ur5.srdf",
    "panda": "panda_description/srdf/panda.srdf",
    "z1": "z1_description/srdf/z1.srdf",
    "xarm7": "xarm_description/srdf/xarm7.srdf",
    "kinova": "kinova_description/srdf/kinova.srdf",
    "solo12": "solo_description/srdf/solo.srdf",
    "go2": "go2_description/srdf/go2.srdf",
    "pr2": "pr2_description/srdf/pr2.srdf",
    "baxter": "baxter_description/srdf/baxter_manipulation.srdf",
    "talos": "talos_data/srdf/talos.srdf",
}
"""The SRDF example-robot-data publishes beside a robot: the link pairs its authors excluded
from collision checking (adjacent, always or never in contact, or by choice)."""


def mb_sim_loop(rel: str, self_collision: bool, hull_tolerance: float = HULL_TOLERANCE,
                api: str = "arrays", srdf: str | None = None) -> Loop:
    """The user loop in mb_sim (through the robot's `arrays`, or the natural calls `sim.q`,
    `sim.qd`, `sim.set_effort`), the pairs of `srdf` (relative to the robots' folder)
    excluded from collision."""
    model = load_fixed(rel)
    q0 = hold_pose(model)
    robot = {"self_collision": self_collision, "hull_tolerance": hull_tolerance,
             "initial_positions": dict(zip(model.joint_names, q0.tolist()))}
    if srdf is not None:
        robot["srdf"] = str(robots_dir() / srdf)
    world = mb_sim.load_world({"ground": None, "robot": robot})
    sim = mb_sim.Simulation(model, world, dt=DT)
    a = sim._robot().arrays
    H = np.diag(mb_sim.crba(model, sim.q))[-model.n_joints:]
    kp, kd = H * OMEGA**2, H * 2.0 * OMEGA

    def arrays(n: int) -> int:
        contacts = 0
        for _ in range(n):
            a.effort[:] = kp * (q0 - a.joint_positions) - kd * a.joint_velocities
            sim.step()
            contacts += int(sim._data.contacts.count[0])
        return contacts

    def natural(n: int) -> int:
        contacts = 0
        for _ in range(n):
            sim.set_effort(kp * (q0 - sim.q) - kd * sim.qd)
            sim.step()
            contacts += int(sim._data.contacts.count[0])
        return contacts

    return natural if api == "natural" else arrays


def timed(loops: dict[str, Loop], seconds: float) -> dict[str, dict[str, float]]:
    """us per step of each loop (its fastest of WINDOWS windows, the loops taken in turn) and
    its mean contacts, over `seconds` of simulated time each."""
    steps = max(round(seconds / DT / WINDOWS), 1)
    best = dict.fromkeys(loops, math.inf)
    contacts = dict.fromkeys(loops, 0)
    for run in loops.values():
        run(50)  # compiled, settled
    for _ in range(WINDOWS):
        for name, run in loops.items():
            t0 = time.perf_counter()
            contacts[name] += run(steps)
            best[name] = min(best[name], 1e6 * (time.perf_counter() - t0) / steps)
    return {name: {"us": best[name], "contacts": contacts[name] / (steps * WINDOWS)}
            for name in loops}


def mujoco_xml(rel: str, folder: Path) -> str:
    """The URDF made loadable by MuJoCo (module docstring)."""
    import trimesh

    path = robots_dir() / rel
    root = ET.fromstring(path.read_text())
    for j in root.iter("joint"):
        if j.get("type") == "floating":
            j.set("type", "fixed")
    for link in root.iter("link"):
        for visual in link.findall("visual"):
            link.remove(visual)
    for mesh in root.iter("mesh"):
        try:
            found = resolve_uri(mesh.get("filename", ""), str(path.parent), package_dirs())
        except MeshError:
            continue
        if found.lower().endswith(".dae"):
            out = folder / (Path(found).stem + f"_{abs(hash(found))}.stl")
            if not out.exists():  # in metres, as mb_sim reads it (the Collada unit applied)
                verts, tris = load_mesh(found)
                trimesh.Trimesh(verts, tris, process=False).export(out)
            found = str(out)
        mesh.set("filename", found)
    ext = ET.SubElement(root, "mujoco")
    ET.SubElement(ext, "compiler", balanceinertia="true", discardvisual="true",
                  strippath="false")
    return ET.tostring(root, encoding="unicode")


def mujoco_loop(rel: str, folder: Path) -> Loop | None:
    try:
        import mujoco
    except ImportError:
        return None
    try:
        m = mujoco.MjModel.from_xml_string(mujoco_xml(rel, folder))
    except ValueError as exc:  # MuJoCo refuses some URDFs (e.g. a link's inertia)
        print(f"  {rel}: MuJoCo does not load it: {str(exc).splitlines()[0]}")
        return None
    m.opt.timestep = DT
    m.geom_contype[:] = 0
    m.geom_conaffinity[:] = 0
    d = mujoco.MjData(m)
    model = load_fixed(rel)
    joints = [m.joint(name) for name in model.joint_names]
    qadr = np.array([m.jnt_qposadr[j.id] for j in joints])
    vadr = np.array([m.jnt_dofadr[j.id] for j in joints])
    q0 = hold_pose(model)
    d.qpos[qadr] = q0
    mujoco.mj_forward(m, d)
    H = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, H)
    kp, kd = np.diag(H)[vadr] * OMEGA**2, np.diag(H)[vadr] * 2.0 * OMEGA
    force = np.zeros(m.nv)

    def loop(n: int) -> int:
        for _ in range(n):
            force[vadr] = kp * (q0 - d.qpos[qadr]) - kd * d.qvel[vadr]
            d.qfrc_applied[:] = force
            mujoco.mj_step(m, d)
        return 0

    return loop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="simulated seconds timed")
    parser.add_argument("--robots", nargs="+", default=list(ROBOTS), choices=list(ROBOTS))
    parser.add_argument("--no-mujoco", action="store_true")
    parser.add_argument("--self-collision", action="store_true")
    parser.add_argument("--api", choices=["arrays", "natural", "both"], default="arrays",
                        help="the loop's reads and writes: the robot's arrays, the natural "
                        "calls sim.q, sim.qd, sim.set_effort, or both (two columns)")
    args = parser.parse_args()
    print(f"user loop (PD from q, qd; efforts written; dt {DT * 1e3:g} ms), fixed in the air, "
          f"{args.seconds:g} s each")
    header = f"{'robot':<12}{'dof':>5}{'mb_sim us':>11}{'MuJoCo us':>11}{'ratio':>7}"
    if args.api == "both":
        header += f"{'natural us':>12}{'ratio':>7}"
    if args.self_collision:
        header += (f"{'self-coll us':>14}{'vs off':>8}{'contacts':>10}{'exact hulls us':>16}"
                   f"{'with srdf us':>14}{'vs off':>8}{'contacts':>10}")
    print(header)
    ratios, natural_ratios = [], []
    with quiet(), tempfile.TemporaryDirectory() as tmp:
        for name in args.robots:
            rel = ROBOTS[name]
            first = "natural" if args.api == "natural" else "arrays"
            loops = {"mine": mb_sim_loop(rel, False, api=first)}
            mujoco = None if args.no_mujoco else mujoco_loop(rel, Path(tmp))
            if mujoco is not None:
                loops["mujoco"] = mujoco
            if args.api == "both":
                loops["natural"] = mb_sim_loop(rel, False, api="natural")
            if args.self_collision:
                loops["coll"] = mb_sim_loop(rel, True)
                loops["exact"] = mb_sim_loop(rel, True, 0.0)
                if name in SRDFS:
                    loops["srdf"] = mb_sim_loop(rel, True, srdf=SRDFS[name])
            got = timed(loops, args.seconds)
            mine, theirs = got["mine"], got.get("mujoco")
            n = load_fixed(rel).n_joints
            line = f"{name:<12}{n:>5}{mine['us']:>11.1f}"
            if theirs is not None:
                ratios.append(mine["us"] / theirs["us"])
                line += f"{theirs['us']:>11.1f}{ratios[-1]:>7.2f}"
            else:
                line += f"{'':>11}{'':>7}"
            if args.api == "both":
                nat = got["natural"]
                line += f"{nat['us']:>12.1f}"
                if theirs is not None:
                    natural_ratios.append(nat["us"] / theirs["us"])
                    line += f"{natural_ratios[-1]:>7.2f}"
            if args.self_collision:
                coll, exact = got["coll"], got["exact"]
                line += (f"{coll['us']:>14.1f}{coll['us'] / mine['us']:>8.2f}"
                         f"{coll['contacts']:>10.1f}{exact['us']:>16.1f}")
                if "srdf" in got:
                    srdf = got["srdf"]
                    line += (f"{srdf['us']:>14.1f}{srdf['us'] / mine['us']:>8.2f}"
                             f"{srdf['contacts']:>10.1f}")
            print(line, flush=True)
    if ratios:
        print(f"median ratio mb_sim / MuJoCo ({first}): {statistics.median(ratios):.2f} "
              f"(max {max(ratios):.2f})")
    if natural_ratios:
        print(f"median ratio mb_sim / MuJoCo (natural): {statistics.median(natural_ratios):.2f}"
              f" (max {max(natural_ratios):.2f})")


if __name__ == "__main__":
    main()
