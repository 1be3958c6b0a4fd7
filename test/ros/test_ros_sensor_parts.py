"""The sensor and drive parts of sim_node on their own, without a ROS graph: where a sensor's
messages go (topics, frames, static transforms) for robots with and without a namespace or a
prefix, for the world and a body; the messages' fields from a declaration; the odometry's
transform to the root link when the odometry's child frame is a link below it.

References: the declarations' own numbers, the optical rotation written out as a matrix, and
a rigid transform composed by hand (numpy), not the node's quaternion helpers.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from mb_sim.model.sensors import Noise, SensorSpec
from mb_sim.ros.topics.drive_topics import DriveFrames
from mb_sim.ros.topics.sensor_topics import RobotPlace, mounting, topic_names
from mb_sim.ros.wire import sensor_messages as sm
from mb_sim.rotations import matrix_from_quat

ROBOTS = {
    "bot": RobotPlace("bot1", "", ("base_link", "lidar_link", "camera_link")),
    "arm": RobotPlace("cell", "cell/", ("base", "hand")),
    "plank": RobotPlace("", "plank/", ("plank",), world=True),
}


def spec(**kw: object) -> SensorSpec:
    return SensorSpec(**{"name": "s", "type": "lidar", **kw}).check()  # type: ignore[arg-type]


@pytest.mark.parametrize("declared, topics", [
    ({"type": "lidar"}, {"scan": "scan"}),
    ({"type": "lidar", "vertical_samples": 4}, {"points": "points"}),
    ({"type": "lidar", "topic": "front/scan"}, {"scan": "front/scan"}),
    ({"name": "bot/cam", "type": "camera"}, {"image": "cam/image_raw", "info": "cam/camera_info"}),
    ({"type": "depth_camera", "topic": "rgbd"},
     {"image": "rgbd/depth/image_raw", "info": "rgbd/depth/camera_info",
      "points": "rgbd/depth/points"}),
    ({"type": "imu"}, {"imu": "imu"}),
])
def test_topic_names(declared: dict, topics: dict) -> None:
    assert topic_names(spec(**declared)) == topics


def test_a_link_named_as_frame_is_used_as_it_is() -> None:
    where = mounting(spec(link="bot/lidar_link", frame_id="lidar_link", robot="bot"), ROBOTS,
                     "world")
    assert (where.robot, where.namespace, where.frame, where.static) == \
        ("bot", "bot1", "lidar_link", [])


def test_own_frame_hangs_from_its_link_with_the_prefix() -> None:
    where = mounting(spec(name="laser", link="hand", xyz=(0.1, 0.0, 0.2),
                          rpy=(0.0, 0.0, math.pi / 2)), ROBOTS, "world")
    assert (where.robot, where.namespace, where.frame) == ("arm", "cell", "cell/laser")
    (parent, child, (xyz, quat)), = where.static
    assert (parent, child) == ("cell/hand", "cell/laser")
    assert xyz == pytest.approx([0.1, 0.0, 0.2])
    assert matrix_from_quat(quat) == pytest.approx(
        np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]]), abs=1e-12)


def test_camera_publishes_in_its_optical_frame() -> None:
    where = mounting(spec(type="camera", link="bot/camera_link", frame_id="camera_link",
                          robot="bot"), ROBOTS, "world")
    assert where.frame == "camera_link_optical"
    (parent, child, (xyz, quat)), = where.static
    assert (parent, child) == ("camera_link", "camera_link_optical")
    # optical z forward (the sensor's x), x right (its -y), y down (its -z)
    assert matrix_from_quat(quat) == pytest.approx(
        np.array([[0, 0, 1], [-1, 0, 0], [0, -1, 0]]), abs=1e-12)
    assert xyz == pytest.approx([0, 0, 0])


@pytest.mark.parametrize("link, parent", [("world", "world_frame"), ("crate", "crate")])
def test_world_and_body_sensors_are_the_nodes(link: str, parent: str) -> None:
    where = mounting(spec(name="eye", link=link), ROBOTS, "world_frame")
    assert (where.robot, where.namespace, where.frame) == ("", "", "eye")
    assert [(p, c) for p, c, _ in where.static] == [(parent, "eye")]


def test_a_urdf_objects_sensor_is_the_worlds_under_its_prefixed_link() -> None:
    where = mounting(spec(name="plank/tag", link="plank/plank", robot="plank"), ROBOTS, "world")
    assert (where.robot, where.namespace, where.frame) == ("", "", "plank/tag")
    assert [(p, c) for p, c, _ in where.static] == [("plank/plank", "plank/tag")]


def test_laser_scan_and_camera_info_fields() -> None:
    s = spec(samples=5, min_angle=-1.0, max_angle=1.0, min_range=0.2, max_range=7.0, rate=20.0)
    msg = sm.laser_scan(s, "f")
    assert (msg.angle_min, msg.angle_max) == pytest.approx((-1.0, 1.0))
    assert msg.angle_increment == pytest.approx(0.5)
    assert (msg.range_min, msg.range_max, msg.scan_time) == pytest.approx((0.2, 7.0, 0.05))
    cam = spec(type="camera", width=64, height=48, hfov=math.pi / 2)
    info = sm.camera_info(cam, "opt")
    f = 32.0  # (w / 2) / tan(45 deg)
    assert list(info.k) == pytest.approx([f, 0, 32, 0, f, 24, 0, 0, 1])
    assert list(info.p) == pytest.approx([f, 0, 32, 0, 0, f, 24, 0, 0, 0, 1, 0])
    assert (info.width, info.height, info.distortion_model) == (64, 48, "plumb_bob")


def test_clouds_leave_out_rays_without_a_range() -> None:
    s = spec(samples=3, min_angle=-0.5, max_angle=0.5, vertical_samples=2,
             min_vertical_angle=-0.2, max_vertical_angle=0.2)
    ranges = np.array([[1.0, np.inf, 2.0], [-np.inf, 3.0, 4.0]])
    points = sm.LidarPoints(s)(ranges)
    assert np.linalg.norm(points, axis=1) == pytest.approx([1.0, 2.0, 3.0, 4.0])
    first = points[0]  # row -0.2 rad, sample -0.5 rad
    assert first == pytest.approx([math.cos(-0.2) * math.cos(-0.5),
                                   math.cos(-0.2) * math.sin(-0.5), math.sin(-0.2)])
    cam = spec(type="depth_camera", width=4, height=2, hfov=math.pi / 2)
    depth = np.array([[1.0, np.inf, 2.0, 2.0], [3.0, 3.0, -np.inf, 1.0]], dtype=np.float32)
    cloud = sm.DepthPoints(cam)(depth)
    assert cloud[:, 2] == pytest.approx([1.0, 2.0, 2.0, 3.0, 3.0, 1.0])
    f = 2.0
    assert cloud[0] == pytest.approx([(0.5 - 2) * 1.0 / f, (0.5 - 1) * 1.0 / f, 1.0])


def test_imu_covariance_is_the_declared_noise() -> None:
    msg = sm.imu("imu_link", spec(type="imu", noise=Noise(stddev=0.02)))
    assert msg.angular_velocity_covariance[0] == pytest.approx(4e-4)
    assert msg.linear_acceleration_covariance[8] == pytest.approx(4e-4)
    assert msg.angular_velocity_covariance[1] == 0.0


def test_odometry_puts_the_child_link_at_the_odometry_pose() -> None:
    """odom -> root link for a child frame 0.11 m below the root link: the root sits 0.11 m
    above the odometry pose, whatever the heading."""
    poses = {"base_link": (np.array([1.0, 2.0, 0.11]), np.array([0.0, 0.0, 0.0, 1.0])),
             "base_footprint": (np.array([1.0, 2.0, 0.0]), np.array([0.0, 0.0, 0.0, 1.0]))}
    view = SimpleNamespace(model=SimpleNamespace(base_link="base_link",
                                                 link_names=("base_link", "base_footprint")),
                           link_poses=lambda: poses)
    drive = SimpleNamespace(base_frame="base_footprint", odom_frame="odom")
    frames = DriveFrames(view, drive, "p/", "")
    assert (frames.odom, frames.child, frames.root) == ("odom", "p/base_footprint",
                                                        "p/base_link")
    start_xyz, _start_q = frames.start
    assert start_xyz == pytest.approx([1.0, 2.0, 0.0])
    yaw = 0.7
    odo = SimpleNamespace(x=0.5, y=-0.25, quaternion=np.array([0, 0, math.sin(yaw / 2),
                                                                math.cos(yaw / 2)]))
    xyz, quat = frames.root_pose(odo)
    assert xyz == pytest.approx([0.5, -0.25, 0.11])
    assert matrix_from_quat(quat) == pytest.approx(
        np.array([[math.cos(yaw), -math.sin(yaw), 0], [math.sin(yaw), math.cos(yaw), 0],
                  [0, 0, 1]]), abs=1e-12)
