"""Gazebo robot models as a Nav2 user brings them: what each becomes, and a short drive.

    .venv/bin/python benchmarks/gazebo_robots.py MODEL [MODEL ...] [--speed 0.2] [--time 2]

Each MODEL is an SDF file or a model folder (its model.config names the file), e.g. the
TurtleBot3 models of `ROBOTIS-GIT/turtlebot3_simulations` (`turtlebot3_gazebo/models/
turtlebot3_waffle`) or `nav2_minimal_tb3_sim/urdf/gz_waffle.sdf.xacro` expanded by `xacro`.
It is read as `spawn_entity` reads it (`mb_sim.model.world.sdf.spawn_tree`, the model frame at
the origin) and put on the built-in ground plane. Printed per model: its joints (ball joints
as such), each sensor's ROS topics and frame and each plugin's as the node serves them (gz-sim's
names, `mb_sim.model.gz_names`); then, after 0.5 s to settle, `--speed` m/s for `--time` s
through its diff drive, a stop and 1 s more: the distance driven along and across its heading,
its roll and pitch at the end (nothing tipped), and its wheel odometry.

Numbers only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import math
import time
from pathlib import Path

import numpy as np

import mb_sim
from mb_sim.model.world.sdf import model_file_of, spawn_tree

GROUND = ('<sdf version="1.9"><world name="default"><include><uri>model://ground_plane</uri>'
          "</include></world></sdf>")


def _roll_pitch(quat: np.ndarray) -> tuple[float, float]:
    x, y, z, w = quat
    roll = math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = math.asin(max(-1.0, min(1.0, 2 * (w * y - z * x))))
    return roll, pitch


def report(path: Path, speed: float, seconds: float) -> None:
    file = Path(model_file_of(str(path), ".")) if path.is_dir() else path
    placed = spawn_tree(file.read_text(), str(file), str(file.parent))
    if placed is None:
        print(f"## {path}\n\none body, not a robot\n")
        return
    world = dataclasses.replace(mb_sim.load_world(GROUND), robots=(placed,))
    sim = mb_sim.Simulation(world=world, dt=0.001)
    name = sim.robot_names[0]
    robot = sim.robot(name)
    print(f"## {path}\n\nrobot {name!r}: joints {', '.join(robot.joint_names)}; ball joints "
          f"{sorted(robot.model.ball_joints) or 'none'}\n")
    print("| sensor or plugin | topics | frame |\n| --- | --- | --- |")
    for sensor_name in sim.sensor_names:
        spec = sim.sensor(sensor_name)
        topics = ", ".join(f"{role} {topic}" for role, topic in spec.ros_topics)
        print(f"| {spec.type} {sensor_name} ({spec.rate:g} Hz) | {topics} | {spec.frame_id} |")
    drive = sim.drives.get(name)
    if drive is not None:
        s = drive.spec
        print(f"| diff drive ({s.odom_rate:g} Hz) | in {s.command_topic}, odometry "
              f"{s.odom_topic}, tf {s.tf_topic} | {s.odom_frame} -> "
              f"{s.base_frame or 'root link'} |")
    for jsp in sim.gazebo[name].joint_state_publishers:
        rate = f"{jsp.rate:g} Hz" if jsp.rate else "every step"
        print(f"| joint states ({rate}) | {jsp.topic}: {', '.join(jsp.joints) or 'every joint'}"
              " | |")
    if drive is None:
        print("\nno diff drive\n")
        return
    sim.step(500)
    start, quat = robot.base_pose()
    heading = math.atan2(2 * (quat[3] * quat[2] + quat[0] * quat[1]),
                         1 - 2 * (quat[1] ** 2 + quat[2] ** 2))
    drive.reset(sim.time)
    began = time.perf_counter()
    drive.command(speed, 0.0, sim.time)
    sim.step(round(seconds * 1000))
    drive.command(0.0, 0.0, sim.time)
    sim.step(1000)
    wall = time.perf_counter() - began
    end, quat = robot.base_pose()
    moved = end - start
    along = moved[0] * math.cos(heading) + moved[1] * math.sin(heading)
    across = -moved[0] * math.sin(heading) + moved[1] * math.cos(heading)
    roll, pitch = _roll_pitch(quat)
    odometry = drive.update_odometry(sim.time)
    print(f"\n{speed:g} m/s for {seconds:g} s, then stopped: {along:.4f} m along its heading, "
          f"{across:+.4f} m across, roll {math.degrees(roll):+.2f} deg, pitch "
          f"{math.degrees(pitch):+.2f} deg; wheel odometry {odometry.x:.4f} m "
          f"({(seconds + 1.0) * 1000 / wall:.0f} steps/s)\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="+", type=Path)
    parser.add_argument("--speed", type=float, default=0.2)
    parser.add_argument("--time", type=float, default=2.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    for path in args.models:
        report(path, args.speed, args.time)


if __name__ == "__main__":
    main()
