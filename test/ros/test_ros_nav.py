"""What a wheeled robot senses and how it drives, through a real sim_node and real DDS:
urdf/nav_bot.urdf in config/worlds/nav_room.yaml (lidar, IMU, depth and colour cameras, the
gz-sim diff-drive plugin).

References are independent of the node's message code: the room's geometry from the world
file, the pinhole of the camera from its declared field of view, the library's own reading of
the same sensor, and the optical rotation written out as a matrix.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from geometry_msgs.msg import Twist, TwistStamped
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from ros_helpers import REPO, STARTUP_TIMEOUT, reach, wait_until
from sensor_msgs.msg import CameraInfo, Image, Imu, LaserScan, PointCloud2
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from mb_sim.ros.wire.conversions import time_to_seconds

pytestmark = pytest.mark.usefixtures("ros_context")

NAV_WORLD = REPO / "config" / "worlds" / "nav_room.yaml"
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
SENSOR = qos_profile_sensor_data
# The room (nav_room.yaml): inner faces of the walls at x = -1.5 and y = -2.5; the lidar sits
# 0.08 m ahead of base_link (nav_bot.urdf), the robot at the origin facing +x.
LIDAR_X = 0.08
WEST_FACE = -1.5
SOUTH_FACE = -2.5


def stamp(msg: Any) -> float:
    return time_to_seconds(msg.header.stamp)


def wait_topic(probe: Any, sim: Any, topic: str) -> None:
    assert wait_until(lambda: probe.node.count_publishers(topic) > 0
                      or sim.proc.poll() is not None, STARTUP_TIMEOUT), sim.output
    assert sim.proc.poll() is None, sim.output


def statics(got: list[tuple[float, TFMessage]]) -> dict[str, Any]:
    """Every static transform received, by child frame."""
    return {t.child_frame_id: t for _, msg in got for t in msg.transforms}


def optical_matrix(q: Any) -> np.ndarray:
    x, y, z, w = q.x, q.y, q.z, q.w
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def check_scan(scan: LaserScan) -> None:
    """The declared geometry and REP 117 ranges that see the room's walls."""
    n = 360
    assert scan.header.frame_id == "lidar_link"
    assert scan.angle_min == pytest.approx(-3.14159, abs=1e-6)
    assert scan.angle_max == pytest.approx(3.14159, abs=1e-6)
    assert scan.angle_increment == pytest.approx(2 * 3.14159 / (n - 1), rel=1e-6)
    assert (scan.range_min, scan.range_max) == pytest.approx((0.12, 12.0))
    assert scan.scan_time == pytest.approx(0.1)
    ranges = np.array(scan.ranges)
    assert ranges.shape == (n,)
    assert np.all(np.isfinite(ranges) | np.isposinf(ranges) | np.isneginf(ranges))
    back = ranges[[0, n - 1]]  # +-pi: straight back at the west wall
    assert back == pytest.approx([LIDAR_X - WEST_FACE] * 2, abs=0.05)
    k = round((-math.pi / 2 - scan.angle_min) / scan.angle_increment)
    angle = scan.angle_min + k * scan.angle_increment
    assert ranges[k] == pytest.approx(-SOUTH_FACE / math.cos(angle + math.pi / 2), abs=0.05)


def check_rates(scans: list[Any], imus: list[Any], depths: list[Any]) -> None:
    """Stamps one period of simulated time apart, none missing."""
    times = np.array([stamp(m) for _, m in scans])
    assert np.median(np.diff(times)) == pytest.approx(0.1, abs=1e-3), times
    span = times[-1] - times[0]
    assert len(times) == pytest.approx(span / 0.1 + 1, abs=2)
    assert np.median(np.diff([stamp(m) for _, m in imus])) == pytest.approx(0.01, abs=1e-3)
    assert np.median(np.diff([stamp(m) for _, m in depths])) == \
        pytest.approx(1 / 15, abs=1.5e-3)


def check_cameras(image: Image, info: CameraInfo, depths: list[Any],
                  cloud: PointCloud2) -> None:
    """Images and camera info (REP 118, the pinhole from hfov), and the depth cloud: x, y, z
    float32 in the optical frame, one point per finite pixel of the depth image."""
    assert (image.width, image.height, image.encoding, image.step) == (320, 240, "rgb8", 960)
    assert len(image.data) == 320 * 240 * 3
    assert image.header.frame_id == "camera_link_optical"
    depth = depths[-1][1]
    assert (depth.width, depth.height, depth.encoding, depth.step) == (320, 240, "32FC1", 1280)
    assert depth.header.frame_id == "camera_link_optical"
    f = 160 / math.tan(1.047 / 2)
    assert list(info.k) == pytest.approx([f, 0, 160, 0, f, 120, 0, 0, 1])
    assert list(info.p) == pytest.approx([f, 0, 160, 0, 0, f, 120, 0, 0, 0, 1, 0])
    assert info.distortion_model == "plumb_bob" and list(info.d) == [0.0] * 5
    assert info.header.frame_id == "camera_link_optical"
    assert [(fd.name, fd.offset, fd.datatype) for fd in cloud.fields] == \
        [("x", 0, 7), ("y", 4, 7), ("z", 8, 7)]
    assert cloud.point_step == 12 and cloud.height == 1 and cloud.is_dense
    assert cloud.header.frame_id == "camera_link_optical"
    same = [m for _, m in depths if stamp(m) == stamp(cloud)]
    assert same, "a depth image of the cloud's stamp"
    pixels = np.frombuffer(bytes(same[0].data), dtype="<f4").reshape(240, 320)
    finite = np.isfinite(pixels)
    assert cloud.width == int(finite.sum()) > 0
    points = np.frombuffer(bytes(cloud.data), dtype="<f4").reshape(-1, 3)
    assert points[:, 2] == pytest.approx(pixels[finite], rel=1e-6)  # z: the depth
    v, u = np.nonzero(finite)  # pixel (u, v) of depth z at ((u + 1/2 - cx) z / f, ...)
    assert points[:, 0] == pytest.approx((u + 0.5 - 160) * pixels[finite] / f, abs=1e-4)
    assert points[:, 1] == pytest.approx((v + 0.5 - 120) * pixels[finite] / f, abs=1e-4)


def check_frames(frames: dict[str, Any]) -> None:
    """The optical frame under camera_link, z forward, x right, y down; the lidar's frame is
    its link's; world -> odom."""
    optical = frames["camera_link_optical"]
    assert optical.header.frame_id == "camera_link"
    R = optical_matrix(optical.transform.rotation)
    assert R @ np.array([0, 0, 1]) == pytest.approx([1, 0, 0], abs=1e-9)
    assert R @ np.array([1, 0, 0]) == pytest.approx([0, -1, 0], abs=1e-9)
    assert R @ np.array([0, 1, 0]) == pytest.approx([0, 0, -1], abs=1e-9)
    assert frames["lidar_link"].header.frame_id == "base_link"
    assert frames["odom"].header.frame_id == "world"


def test_sensors_publish_scans_images_clouds_and_frames(start_sim: Any, probe: Any) -> None:
    sim = start_sim({"world_file": str(NAV_WORLD)})
    scans = probe.collect(LaserScan, "/scan", SENSOR)
    images = probe.collect(Image, "/camera/image_raw", SENSOR)
    infos = probe.collect(CameraInfo, "/camera/camera_info", SENSOR)
    depths = probe.collect(Image, "/depth_camera/depth/image_raw", SENSOR)
    clouds = probe.collect(PointCloud2, "/depth_camera/depth/points", SENSOR)
    imus = probe.collect(Imu, "/imu", SENSOR)
    static = probe.collect(TFMessage, "/tf_static", LATCHED)
    wait_topic(probe, sim, "/scan")
    assert wait_until(lambda: len(scans) >= 25 and len(depths) >= 3 and len(clouds) >= 3
                      and len(images) >= 3 and len(infos) >= 3 and len(imus) >= 50
                      and static, 60), (len(scans), len(depths), sim.output)
    check_scan(scans[-1][1])
    check_rates(scans, imus, depths)
    check_cameras(images[-1][1], infos[-1][1], depths, clouds[-1][1])
    check_frames(statics(static))
    # The IMU declared as a sensor: its frame, the only publisher on /imu.
    assert imus[-1][1].header.frame_id == "imu_link"
    assert imus[-1][1].linear_acceleration.z == pytest.approx(9.81, abs=0.3)
    assert probe.node.count_publishers("/imu") == 1
    for topic in ("/scan", "/camera/image_raw", "/depth_camera/depth/points", "/imu"):
        (info,) = probe.node.get_publishers_info_by_topic(topic)  # (discovery has no depth)
        assert info.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT, topic


def odom_x(got: list[tuple[float, Odometry]]) -> float:
    return got[-1][1].pose.pose.position.x


def steps(probe: Any, sim: Any, count: int = 1) -> None:
    for _ in range(count):
        resp = probe.call(Trigger, "/sim_node/step", Trigger.Request(), timeout=60)
        assert resp.success, (resp.message, sim.output)


def test_cmd_vel_drives_one_metre_and_stops_on_timeout(start_sim: Any, probe: Any) -> None:
    """0.25 m/s for 4 s of simulated time, a command every 0.4 s: 1 m by odom within 2 %;
    then no command: the timeout stops the base."""
    sim = start_sim({"world_file": str(NAV_WORLD), "start_paused": True, "step_count": 400})
    odom = probe.collect(Odometry, "/odom", 10)
    tf = probe.collect(TFMessage, "/tf", 100)
    cmd = probe.publisher(Twist, "/cmd_vel", 10)
    wait_topic(probe, sim, "/odom")
    assert probe.matched("/odom")
    go = Twist()
    go.linear.x = 0.25
    for _ in range(10):
        reach(cmd, go)
        time.sleep(0.05)  # the executor hands the command to the physics thread
        steps(probe, sim)
    assert wait_until(lambda: odom and stamp(odom[-1][1]) >= 3.999, 10)
    x = odom_x(odom)
    assert x == pytest.approx(1.0, rel=0.02), x
    last = odom[-1][1]
    assert abs(last.pose.pose.position.y) < 0.02
    assert last.header.frame_id == "odom" and last.child_frame_id == "base_footprint"
    assert last.pose.covariance[0] > 0 and last.twist.covariance[35] > 0
    # No new command: the timeout (0.5 s) stops it within about a second.
    steps(probe, sim, 4)
    assert wait_until(lambda: stamp(odom[-1][1]) >= 5.599, 10)
    moved = odom_x(odom) - x
    assert 0.0 < moved < 0.25 * 0.5 + 0.05, moved
    assert abs(odom[-1][1].twist.twist.linear.x) < 0.01
    # REP 105: odom -> base_link comes from the drive alone, at its odometry rate.
    edges = [(t.header.frame_id, stamp(t)) for _, m in tf for t in m.transforms
             if t.child_frame_id == "base_link"]
    assert edges and {parent for parent, _ in edges} == {"odom"}
    stamps = sorted({s for _, s in edges})
    assert len(stamps) == len(edges), "one odom -> base_link per stamp"
    gaps = np.diff(stamps)
    assert np.median(gaps) == pytest.approx(1 / 30, abs=1.5e-3)


def test_stamped_cmd_vel_nan_refused_and_no_world_to_odom(start_sim: Any, probe: Any) -> None:
    sim = start_sim({"world_file": str(NAV_WORLD), "start_paused": True, "step_count": 400,
                     "enable_stamped_cmd_vel": True, "publish_world_to_odom": False,
                     "sensor_qos_reliable": True})
    odom = probe.collect(Odometry, "/odom", 10)
    static = probe.collect(TFMessage, "/tf_static", LATCHED)
    cmd = probe.publisher(TwistStamped, "/cmd_vel", 10)
    wait_topic(probe, sim, "/odom")
    graph = probe.node  # discovery reports each endpoint on its own
    assert wait_until(lambda: graph.get_subscriptions_info_by_topic("/cmd_vel")
                      and graph.get_publishers_info_by_topic("/scan"), 10)
    infos = probe.node.get_subscriptions_info_by_topic("/cmd_vel")
    assert [i.topic_type for i in infos] == ["geometry_msgs/msg/TwistStamped"]
    (scan,) = probe.node.get_publishers_info_by_topic("/scan")
    assert scan.qos_profile.reliability == ReliabilityPolicy.RELIABLE  # sensor_qos_reliable
    bad = TwistStamped()
    bad.twist.linear.x = math.nan
    reach(cmd, bad)
    assert sim.wait_for_output("/cmd_vel: refused a command with linear.x = nan", 10), \
        sim.output
    go = TwistStamped()
    go.twist.linear.x = 0.25
    reach(cmd, go)
    time.sleep(0.05)
    steps(probe, sim)
    assert wait_until(lambda: odom and stamp(odom[-1][1]) >= 0.399, 10)
    assert odom_x(odom) > 0.05
    assert wait_until(lambda: static, 10)
    frames = statics(static)
    assert "odom" not in frames, "publish_world_to_odom: false"
    assert "camera_link_optical" in frames
    # ~/reset: the odometry starts again from the origin.
    count = len(odom)
    assert probe.call(Trigger, "/sim_node/reset", Trigger.Request()).success
    assert wait_until(lambda: len(odom) > count and stamp(odom[-1][1]) == 0.0, 10)
    assert odom_x(odom) == 0.0
    assert stats(probe)["drives"]["mb_sim_nav_bot"] == {"applied": 1, "refused": 1}
    assert sim.proc.poll() is None


def test_recorded_bag_has_sensors(start_sim: Any, probe: Any, tmp_path: Path) -> None:
    """Nobody subscribes, a bag records: the sensors are read and written, readable by rosbags
    and by the mcap package."""
    bag = tmp_path / "nav_bag"
    sim = start_sim({"world_file": str(NAV_WORLD), "record": str(bag)})
    assert sim.wait_for_output("recording to", STARTUP_TIMEOUT), sim.output
    time.sleep(3.0)
    assert sim.stop() == 0, sim.output
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    wanted = {"/scan", "/camera/image_raw", "/depth_camera/depth/image_raw",
              "/depth_camera/depth/points", "/camera/camera_info", "/imu", "/odom"}
    with AnyReader([bag], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
        topics = {c.topic for c in reader.connections}
        assert wanted <= topics, topics
        conns = [c for c in reader.connections if c.topic == "/scan"]
        scans = [reader.deserialize(raw, c.msgtype) for c, _, raw in reader.messages(conns)]
        assert scans and all(len(s.ranges) == 360 for s in scans)
        conns = [c for c in reader.connections if c.topic == "/camera/image_raw"]
        image = next(reader.deserialize(raw, c.msgtype) for c, _, raw in reader.messages(conns))
        assert (image.width, image.height, image.encoding) == (320, 240, "rgb8")
    files = list(bag.glob("*.mcap"))
    if files:
        from mcap.reader import make_reader

        with open(files[0], "rb") as f:
            seen = {channel.topic for _, channel, _ in make_reader(f).iter_messages()}
        assert wanted <= seen


NS_WORLD = Path(__file__).resolve().parent / "data" / "nav_ns.yaml"


def stats(probe: Any) -> dict[str, Any]:
    import json

    return json.loads(probe.call(Trigger, "/sim_node/stats", Trigger.Request()).message)


def test_namespaced_robot_sensors_world_sensor_and_lazy_reading(start_sim: Any,
                                                               probe: Any) -> None:
    """A robot in namespace bot1 publishes its sensors and drive there, its sensor frames on
    /bot1/tf_static; a world lidar publishes on the node's /scan, its frame from world on
    /tf_static; a sensor nobody subscribes to is never read (~/stats counts readings)."""
    sim = start_sim({"world_file": str(NS_WORLD)})
    own_static = probe.collect(TFMessage, "/bot1/tf_static", LATCHED)
    global_static = probe.collect(TFMessage, "/tf_static", LATCHED)
    wait_topic(probe, sim, "/bot1/scan")
    # Discovery reports each endpoint on its own: one topic seen says nothing of the others.
    for topic in ("/bot1/odom", "/bot1/camera/image_raw", "/bot1/depth_camera/depth/points",
                  "/bot1/imu", "/scan"):
        assert wait_until(lambda t=topic: probe.node.count_publishers(t) == 1, 10), \
            (topic, probe.node.count_publishers(topic))
    assert wait_until(lambda: probe.node.count_subscribers("/bot1/cmd_vel") == 1, 10)
    assert wait_until(lambda: stats(probe)["sim_time"] > 1.0, 30)
    counts = stats(probe)["sensors"]
    assert counts == {"room_scan": 0, "room_cloud": 0, "lidar": 0, "imu": 0,
                      "depth_camera": 0, "camera": 0}
    scans = probe.collect(LaserScan, "/bot1/scan", SENSOR)
    room = probe.collect(LaserScan, "/scan", SENSOR)
    assert wait_until(lambda: len(scans) >= 3 and len(room) >= 2, 30), sim.output
    counts = stats(probe)["sensors"]
    assert counts["lidar"] >= 3 and counts["room_scan"] >= 2, counts
    assert counts["camera"] == 0 and counts["depth_camera"] == 0, counts
    # The robot's lidar sees the wall 2 m ahead (its face at x = 2.0, the lidar at 0.08).
    ahead = np.array(scans[-1][1].ranges)[180]
    assert ahead == pytest.approx(2.0 - LIDAR_X, abs=0.05)
    assert room[-1][1].header.frame_id == "room_scan"
    assert len(room[-1][1].ranges) == 91
    assert wait_until(lambda: own_static and global_static, 10)
    own, everyone = statics(own_static), statics(global_static)
    assert own["camera_link_optical"].header.frame_id == "camera_link"
    assert own["odom"].header.frame_id == "world"
    assert "camera_link_optical" not in everyone
    placed = everyone["room_scan"]
    assert placed.header.frame_id == "world"
    assert (placed.transform.translation.y, placed.transform.translation.z) == \
        pytest.approx((-1.0, 0.3))
    # The 3-D lidar: a cloud of its finite rays in its own frame, hung from the wall's frame.
    clouds = probe.collect(PointCloud2, "/points", SENSOR)
    assert wait_until(lambda: clouds, 30), sim.output
    cloud = clouds[-1][1]
    assert cloud.header.frame_id == "room_cloud"
    assert [f.name for f in cloud.fields] == ["x", "y", "z"] and cloud.point_step == 12
    points = np.frombuffer(bytes(cloud.data), dtype="<f4").reshape(-1, 3)
    assert 0 < len(points) < 12 * 5 and cloud.width == len(points)
    assert np.all(np.isfinite(points)) and np.all(np.linalg.norm(points, axis=1) <= 20.0)
    assert np.all(points[:, 2] < 0.0), "only the rows looking down hit (the ground)"
    assert everyone["room_cloud"].header.frame_id == "wall"
    tf = probe.collect(TFMessage, "/bot1/tf", 100)
    assert wait_until(lambda: any(t.child_frame_id == "base_link" for _, m in tf
                                  for t in m.transforms), 10)
    parents = {t.header.frame_id for _, m in tf for t in m.transforms
               if t.child_frame_id == "base_link"}
    assert parents == {"odom"}


def test_sensors_see_a_spawned_body_and_keep_running(start_sim: Any, probe: Any) -> None:
    """A box spawned 1 m ahead (simulation_interfaces, the scene compiled anew): the lidar
    keeps publishing and sees it; deleted, the lidar sees past it again."""
    from simulation_interfaces import srv

    sim = start_sim({"world_file": str(NAV_WORLD)})
    scans = probe.collect(LaserScan, "/scan", SENSOR)
    wait_topic(probe, sim, "/scan")
    assert wait_until(lambda: len(scans) >= 2, 30), sim.output
    ahead = 180  # about +0.009 rad: straight ahead

    def forward() -> float:
        return float(np.array(scans[-1][1].ranges)[ahead])

    before = forward()
    assert before > 1.5
    request = srv.SpawnEntity.Request()
    request.name = "block"
    request.entity_resource.resource_string = "{shape: box, size: [0.2, 0.4, 0.6], mass: 2.0}"
    request.initial_pose.pose.position.x = 1.0
    request.initial_pose.pose.position.z = 0.31
    resp = probe.call(srv.SpawnEntity, "/sim_node/spawn_entity", request, timeout=30)
    assert resp.result.result == 1, resp.result.error_message
    face = 1.0 - 0.1 - LIDAR_X
    assert wait_until(lambda: abs(forward() - face) < 0.05, 20), (forward(), sim.output)
    delete = srv.DeleteEntity.Request()
    delete.entity = "block"
    resp = probe.call(srv.DeleteEntity, "/sim_node/delete_entity", delete, timeout=30)
    assert resp.result.result == 1, resp.result.error_message
    assert wait_until(lambda: forward() > 1.5, 20), (forward(), sim.output)
    assert "step failed" not in sim.output, sim.output


def test_recorded_drive_replays(start_sim: Any, probe: Any, tmp_path: Path) -> None:
    """A bag of the robot driven through cmd_vel (commands, timeout) replays bit for bit:
    the replay applies the recorded cmd_vel to the drive as the node did."""
    from mb_sim.replay import replay_bag

    bag = tmp_path / "drive_bag"
    sim = start_sim({"world_file": str(NAV_WORLD), "start_paused": True, "step_count": 300,
                     "record": str(bag)})
    odom = probe.collect(Odometry, "/odom", 10)
    cmd = probe.publisher(Twist, "/cmd_vel", 10)
    wait_topic(probe, sim, "/odom")
    assert sim.wait_for_output("recording to", 30), sim.output
    go = Twist()
    for speed, turn in ((0.3, 0.0), (0.2, 0.8), (0.0, 0.0), (0.25, -0.5)):
        go.linear.x, go.angular.z = speed, turn
        reach(cmd, go)
        time.sleep(0.05)
        steps(probe, sim)
    steps(probe, sim, 3)  # no command: the timeout stops it
    assert wait_until(lambda: odom and stamp(odom[-1][1]) >= 2.099, 30), \
        (stamp(odom[-1][1]) if odom else None, sim.output)
    assert odom_x(odom) > 0.2
    assert sim.stop() == 0, sim.output
    result = replay_bag(bag)
    assert result.ok, result.divergence
    assert result.commands >= 4 and result.compared > 100, result
