"""A Gazebo-ready robot description as users have them (urdf/nav_bot.urdf): its `<gazebo>`
sensor blocks become mb_sim sensors and its diff-drive plugin a drive that takes velocity
commands and gives odometry."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import mb_sim
from mb_sim.errors import ModelError
from mb_sim.model.gazebo import gazebo_blocks

NAV_BOT = Path(__file__).resolve().parents[1] / "urdf" / "nav_bot.urdf"


def _sim(ground: float = 0.8) -> mb_sim.Simulation:
    world = mb_sim.load_world({"ground": {"friction": ground}, "robot": {
        "floating": True, "xyz": [0.0, 0.0, 0.11]}})
    return mb_sim.Simulation(mb_sim.load_urdf(NAV_BOT, floating_base=True), world)


def test_the_gazebo_blocks_become_sensors_and_a_drive() -> None:
    sim = _sim()
    assert sim.sensor_names == ("lidar", "imu", "depth_camera", "camera")
    lidar = sim.sensor("lidar")
    assert (lidar.type, lidar.samples, lidar.min_range, lidar.max_range, lidar.rate) == (
        "lidar", 360, 0.12, 12.0, 10.0)
    assert lidar.noise.stddev == 0.01 and lidar.topic == "scan"
    assert lidar.frame_id == "lidar_link" and lidar.link.endswith("/lidar_link")
    depth = sim.sensor("depth_camera")
    assert (depth.type, depth.width, depth.height, depth.rate) == ("depth_camera", 320, 240,
                                                                   15.0)
    assert sim.sensor("imu").noise.stddev == 0.0002
    drive = sim.drives["mb_sim_nav_bot"]
    assert drive.spec.left_joints == ("left_wheel_joint",)
    assert (drive.spec.wheel_separation, drive.spec.wheel_radius) == (0.35, 0.08)
    assert drive.spec.base_frame == "base_footprint" and drive.spec.odom_rate == 30.0
    assert sim.robot("mb_sim_nav_bot").interfaces["left_wheel_joint"] == "velocity"


def test_a_velocity_command_drives_the_base_one_metre() -> None:
    """0.25 m/s (a TurtleBot's top speed) for 4 s of simulated time, then 0: the base
    travels 1 m (within 2 %) straight ahead, and its odometry says so; a last command left
    standing is dropped after the timeout."""
    sim = _sim()
    drive = sim.drives["mb_sim_nav_bot"]
    robot = sim.robot("mb_sim_nav_bot")
    sim.step(300)  # settle on the wheels
    start = robot.base_pose()[0].copy()
    drive.reset(sim.time)
    t0 = sim.time
    while sim.time < t0 + 4.0 - 1e-9:
        drive.command(0.25, 0.0, sim.time)
        sim.step(10)
        drive.update_odometry(sim.time)
    drive.command(0.0, 0.0, sim.time)
    for _ in range(100):
        sim.step(10)
        drive.update_odometry(sim.time)
    end = robot.base_pose()[0]
    travelled = float(np.linalg.norm((end - start)[:2]))
    assert travelled == pytest.approx(1.0, rel=0.02)
    assert abs(float(end[1] - start[1])) < 0.02
    assert drive.odometry.x == pytest.approx(travelled, rel=0.02)
    assert abs(drive.odometry.v) < 1e-3  # stopped
    drive.command(0.4, 0.0, sim.time)
    for _ in range(150):  # no command after this one: the timeout (0.5 s) stops the wheels
        assert drive.timed_out(sim.time) == (sim.time - drive.command_time > 0.5)
        sim.step(10)
        drive.update_odometry(sim.time)
    assert abs(drive.odometry.v) < 1e-3


def test_a_lidar_on_the_robot_sees_a_wall_ahead() -> None:
    sim = _sim()
    sim.add_body(mb_sim.model.world.load_body(
        {"name": "wall", "shape": "box", "size": [0.1, 4.0, 1.0], "xyz": [2.0, 0.0, 0.5],
         "static": True}, "<test>", "."))
    sim.step(200)
    scan = sim.read_sensor("lidar")
    ahead = scan[180]  # sample 180 of 360 from -pi: straight ahead
    lidar_x = sim.sensor_pose("lidar")[0][0]
    assert ahead == pytest.approx(2.0 - 0.05 - lidar_x, abs=0.05)  # noise 0.01


def test_bad_gazebo_blocks_are_named() -> None:
    text = NAV_BOT.read_text().replace("<samples>360</samples>", "<samples>lots</samples>")
    with pytest.raises(ModelError, match=r"sensor 'lidar'.*samples.*'lots'"):
        gazebo_blocks(text, "bot.urdf")
    text = NAV_BOT.read_text().replace("<wheel_radius>0.08</wheel_radius>", "")
    with pytest.raises(ModelError, match=r"diff drive: wheel_radius"):
        gazebo_blocks(text, "bot.urdf", ("left_wheel_joint", "right_wheel_joint"))
    assert math.isfinite(gazebo_blocks(NAV_BOT.read_text(), "x").drive.wheel_radius)
