"""Robot descriptions from public robot packages, loaded and stepped as a new user would: a table.

    .venv/bin/python benchmarks/messy_urdfs.py --root DIR [--only SUBSTRING] [--steps 200]
    <pybullet venv>/bin/python benchmarks/messy_urdfs.py --root DIR --pybullet

DIR holds the packages' checkouts, each in a folder named `owner+repository` (as
`git clone https://github.com/owner/repository DIR/owner+repository`), and `pybullet_data`
(the folder of that name from the `pybullet` wheel: `pip install pybullet` in a virtual
environment of its own, then link or copy `site-packages/pybullet_data` into DIR). `CORPUS`
below names the files, the xacro arguments each needs, and the folder given as
`package_dirs` (the checkout and the checkouts it includes from: what a user who cloned them would point
at). Files or checkouts
that are missing are reported, not skipped silently.

For each file: `mb_sim.load_urdf(file, package_dirs, xacro_args=...)` (fixed base), then
`mb_sim.Simulation(model)` with no world (the robot alone, self-collision on) and `--steps`
steps of 1 ms with zero effort; "stepped" means every joint position and velocity stayed
finite. ROS_PACKAGE_PATH and AMENT_PREFIX_PATH are removed from the environment first: no ROS
install is assumed. With `--pybullet` the same files (URDF only: PyBullet reads no xacro) are
loaded by PyBullet in DIRECT mode (`useFixedBase`, its search path set to the file's folder)
and stepped as many times, for comparison.

Numbers only; it asserts nothing. Loading a robot's meshes takes seconds for the larger ones.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Entry:
    path: str
    """`owner+repository/path/in/it` or `pybullet_data/path`, under --root."""
    xacro_args: dict[str, str] = field(default_factory=dict)
    density: float | bool | None = None
    """`inertia_from_geometry` when given (None: the default, which gives links without
    mass that of their collision shapes when the robot needs it; False: never)."""
    needs: tuple[str, ...] = ()
    """Other checkouts it includes from, given as package_dirs too."""

    @property
    def checkout(self) -> str:
        return self.path.split("/", 1)[0]


CORPUS: tuple[Entry, ...] = (
    # PyBullet's asset folders (pybullet_data)
    Entry("pybullet_data/franka_panda/panda.urdf"),
    Entry("pybullet_data/kuka_iiwa/model.urdf"),
    Entry("pybullet_data/xarm/xarm6_robot.urdf"),
    Entry("pybullet_data/husky/husky.urdf"),
    Entry("pybullet_data/racecar/racecar.urdf"),
    Entry("pybullet_data/r2d2.urdf"),
    Entry("pybullet_data/a1/a1.urdf"),
    Entry("pybullet_data/aliengo/aliengo.urdf"),
    Entry("pybullet_data/laikago/laikago_toes.urdf"),
    Entry("pybullet_data/mini_cheetah/mini_cheetah.urdf"),
    Entry("pybullet_data/quadruped/minitaur.urdf"),
    Entry("pybullet_data/humanoid/humanoid.urdf"),
    Entry("pybullet_data/cartpole.urdf"),
    Entry("pybullet_data/biped/biped2d_pybullet.urdf"),
    Entry("pybullet_data/pr2_gripper.urdf"),
    # ROS packages: plain URDF files
    Entry("ros+urdf_tutorial/urdf/05-visual.urdf"),
    Entry("ros+urdf_tutorial/urdf/07-physics.urdf"),
    Entry("ROBOTIS-GIT+turtlebot3/turtlebot3_description/urdf/turtlebot3_burger.urdf"),
    Entry("ROBOTIS-GIT+turtlebot3/turtlebot3_description/urdf/turtlebot3_waffle_pi.urdf"),
    Entry("moveit+moveit_resources/panda_description/urdf/panda.urdf"),
    Entry("moveit+moveit_resources/fanuc_description/urdf/fanuc.urdf"),
    Entry("ANYbotics+anymal_c_simple_description/urdf/anymal.urdf"),
    Entry("unitreerobotics+unitree_ros/robots/go1_description/urdf/go1.urdf"),
    Entry("unitreerobotics+unitree_ros/robots/a1_description/urdf/a1.urdf"),
    Entry("unitreerobotics+unitree_ros/robots/g1_description/g1_29dof.urdf"),
    Entry("unitreerobotics+unitree_ros/robots/h1_description/urdf/h1.urdf"),
    Entry("Kinovarobotics+ros2_kortex/kortex_description/robots/gen3_lite.urdf"),
    Entry("ros-industrial+abb/abb_irb2400_support/urdf/irb2400.urdf"),
    Entry("ros-industrial+kuka_experimental/kuka_kr120_support/urdf/kr120r2500pro.urdf"),
    # ROS packages: xacro
    Entry("ros+urdf_tutorial/urdf/08-macroed.urdf.xacro"),
    Entry("UniversalRobots+Universal_Robots_ROS2_Description/urdf/ur.urdf.xacro",
          {"name": "ur", "ur_type": "ur5e"}),
    Entry("frankaemika+franka_description/robots/fr3/fr3.urdf.xacro"),
    Entry("frankaemika+franka_description/robots/fer/fer.urdf.xacro"),
    Entry("moveit+moveit_resources/panda_description/urdf/panda.urdf.xacro"),
    Entry("moveit+moveit_resources/panda_moveit_config/config/panda.urdf.xacro"),
    Entry("Kinovarobotics+ros2_kortex/kortex_description/robots/gen3.xacro", {"dof": "7"}),
    Entry("husky+husky/husky_description/urdf/husky.urdf.xacro"),
    Entry("pal-robotics+tiago_robot/tiago_description/robots/tiago.urdf.xacro",
          needs=("pal-robotics+pmb2_robot", "pal-robotics+pal_urdf_utils",
                 "pal-robotics+pal_hey5")),
    Entry("unitreerobotics+unitree_ros/robots/a1_description/xacro/robot.xacro"),
    Entry("ros-industrial+abb/abb_irb2400_support/urdf/irb2400.xacro"),
    Entry("ros-industrial+kuka_experimental/kuka_kr10_support/urdf/kr10r1100sixx.xacro"),
    # the five above without <inertial>s (which load by default: their links take the mass of
    # their collision shapes), with inertia_from_geometry false: refused, naming the joint
    Entry("moveit+moveit_resources/panda_description/urdf/panda.urdf", density=False),
    Entry("moveit+moveit_resources/fanuc_description/urdf/fanuc.urdf", density=False),
    Entry("ros-industrial+abb/abb_irb2400_support/urdf/irb2400.urdf", density=False),
    Entry("ros-industrial+abb/abb_irb2400_support/urdf/irb2400.xacro", density=False),
    Entry("ros-industrial+kuka_experimental/kuka_kr10_support/urdf/kr10r1100sixx.xacro",
          density=False),
)


def _brief(exc: BaseException) -> str:
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= 160 else text[:157] + "..."


class _Counter(logging.Handler):
    """Counts the library's warnings and keeps the first one."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0
        self.first = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        if not self.first:
            self.first = record.getMessage()[:100]


def run_mb_sim(path: Path, entry: Entry, package_dirs: list[Path], steps: int) -> list[str]:
    """[loaded, stepped, warnings, seconds] for one file with mb_sim."""
    import numpy as np

    import mb_sim

    counter = _Counter()
    logging.getLogger("mb_sim").addHandler(counter)
    start = time.perf_counter()
    try:
        try:
            model = mb_sim.load_urdf(path, package_dirs, xacro_args=entry.xacro_args or None,
                                     inertia_from_geometry=entry.density)
        except Exception as exc:  # noqa: BLE001 (the table reports it)
            return ["error: " + _brief(exc), "-", str(counter.count),
                    f"{time.perf_counter() - start:.1f}"]
        loaded = f"ok ({model.n_joints} joints)"
        if entry.density is not None:
            loaded += f" (inertia_from_geometry={entry.density})"
        try:
            sim = mb_sim.Simulation(model, dt=0.001)
            sim.step(n=steps)
            finite = bool(np.all(np.isfinite(sim.q)) and np.all(np.isfinite(sim.qd)))
            stepped = "ok" if finite else "not finite"
        except Exception as exc:  # noqa: BLE001
            stepped = "error: " + _brief(exc)
        return [loaded, stepped, str(counter.count), f"{time.perf_counter() - start:.1f}"]
    finally:
        logging.getLogger("mb_sim").removeHandler(counter)


@contextlib.contextmanager
def _quiet_c_output() -> Iterator[None]:
    """PyBullet's importer prints to the process's stdout and stderr: sent to /dev/null."""
    sys.stdout.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def run_pybullet(path: Path, steps: int) -> list[str]:
    """[loaded, stepped, -, seconds] for one URDF with PyBullet."""
    if path.name.endswith(".xacro"):
        return ["(xacro)", "-", "-", "-"]
    with _quiet_c_output():
        return _pybullet(path, steps)


def _pybullet(path: Path, steps: int) -> list[str]:
    import pybullet as p

    start = time.perf_counter()
    client = p.connect(p.DIRECT)
    try:
        p.setAdditionalSearchPath(str(path.parent), physicsClientId=client)
        try:
            robot = p.loadURDF(str(path), useFixedBase=True, physicsClientId=client)
        except p.error as exc:
            return ["error: " + _brief(exc), "-", "-", f"{time.perf_counter() - start:.1f}"]
        p.setGravity(0, 0, -9.81, physicsClientId=client)
        for _ in range(steps):
            p.stepSimulation(physicsClientId=client)
        n = p.getNumJoints(robot, physicsClientId=client)
        states = p.getJointStates(robot, range(n), physicsClientId=client) if n else []
        finite = all(math.isfinite(s[0]) and math.isfinite(s[1]) for s in states)
        return [f"ok ({n} joints)", "ok" if finite else "not finite", "-",
                f"{time.perf_counter() - start:.1f}"]
    finally:
        p.disconnect(physicsClientId=client)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True, type=Path, help="folder of the checkouts")
    parser.add_argument("--only", default="", help="run the files whose path holds this")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--pybullet", action="store_true", help="load with PyBullet instead")
    args = parser.parse_args()
    for name in ("ROS_PACKAGE_PATH", "AMENT_PREFIX_PATH"):
        os.environ.pop(name, None)
    logging.getLogger("mb_sim").setLevel(logging.WARNING)  # counted, not printed
    logging.getLogger("mb_sim").propagate = False
    print("| file | loaded | stepped | warnings | s |")
    print("| --- | --- | --- | --- | --- |")
    for entry in CORPUS:
        if args.only not in entry.path:
            continue
        path = args.root / entry.path
        if not path.is_file():
            cells = ["missing: " + str(path), "-", "-", "-"]
        elif args.pybullet:
            cells = run_pybullet(path, args.steps)
        else:
            dirs = [args.root / name for name in (entry.checkout, *entry.needs)]
            cells = run_mb_sim(path, entry, dirs, args.steps)
        print(f"| {entry.path} | " + " | ".join(c.replace("|", "/") for c in cells) + " |",
              flush=True)


if __name__ == "__main__":
    sys.exit(main())
