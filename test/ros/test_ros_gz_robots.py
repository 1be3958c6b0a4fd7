"""Robots from SDF in a real sim_node, served as gz-sim and a ros_gz bridge serve them
(docs/sensors.md, "Robots from SDF"): gz_bot (test/data/sdf/gz_room/gz_bot: two drive wheels,
two ball-jointed sphere casters, a lidar, a camera, an IMU, gz-sim's DiffDrive and
JointStatePublisher) in a walled room (room.sdf), included by the world file or spawned with
simulation_interfaces' SpawnEntity as `ros_gz_sim create` spawns it.

References are independent of the node's code: the names as gz_bot's model.sdf declares them
and as gz-sim's sources name what it leaves out (written out here), the room's walls as
room.sdf places them (the lidar's ranges computed from them), the pinhole of the camera from
its field of view, the drive's distance from the speed commanded.
"""

from __future__ import annotations

import math
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from geometry_msgs.msg import Twist
from launch_helpers import COMMANDS, Launched, run
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from ros_helpers import REPO, STARTUP_TIMEOUT, reach, wait_until
from sensor_msgs.msg import CameraInfo, Image, Imu, JointState, LaserScan, PointCloud2
from tf2_msgs.msg import TFMessage

from mb_sim.ros.wire.conversions import time_to_seconds

pytestmark = pytest.mark.usefixtures("ros_context")

ROOM = REPO / "test" / "data" / "sdf" / "gz_room" / "room.sdf"
BOT = ROOM.parent / "gz_bot"
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
SENSOR = qos_profile_sensor_data
# room.sdf: the walls' inner faces; gz_bot's lidar 0.16 m above its chassis' origin.
EAST, WEST, NORTH, SOUTH = 2.5, -1.5, 1.8, -1.2
LIDAR_NOISE = 0.01
"""The lidar's declared <noise><stddev>, m."""

GZ_TOPICS = {  # gz_bot's model.sdf: each <topic>, made absolute, and its companions
    "/scan": "sensor_msgs/msg/LaserScan", "/scan/points": "sensor_msgs/msg/PointCloud2",
    "/camera/image_raw": "sensor_msgs/msg/Image",
    "/camera/camera_info": "sensor_msgs/msg/CameraInfo", "/imu": "sensor_msgs/msg/Imu",
    "/odom": "nav_msgs/msg/Odometry", "/cmd_vel": "geometry_msgs/msg/Twist",
    "/joint_states": "sensor_msgs/msg/JointState", "/tf": "tf2_msgs/msg/TFMessage",
    "/tf_static": "tf2_msgs/msg/TFMessage", "/robot_description": "std_msgs/msg/String"}


def stamp(msg: Any) -> float:
    return time_to_seconds(msg.header.stamp)


def room_ranges(x: float, y: float, yaw: float, angles: np.ndarray) -> np.ndarray:
    """The distance from (x, y) to the room's walls along each angle (from the heading)."""
    out = []
    for a in angles:
        c, s = math.cos(yaw + a), math.sin(yaw + a)
        hits = [(wall - x) / c for wall in (EAST, WEST) if abs(c) > 1e-12] + \
            [(wall - y) / s for wall in (NORTH, SOUTH) if abs(s) > 1e-12]
        out.append(min(t for t in hits if t > 0))
    return np.array(out)


def entity_pose(probe: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    from simulation_interfaces.srv import GetEntityState

    resp = probe.call(GetEntityState, "/sim_node/get_entity_state",
                      GetEntityState.Request(entity=name))
    assert resp.result.result == 1, resp.result.error_message
    p, q = resp.state.pose.position, resp.state.pose.orientation
    return np.array([p.x, p.y, p.z]), np.array([q.x, q.y, q.z, q.w])


def yaw_of(q: np.ndarray) -> float:
    x, y, z, w = q
    return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def check_scan(scan: LaserScan, position: np.ndarray, quat: np.ndarray) -> None:
    """Every ray within 5 declared standard deviations of the room's distance from where the
    lidar stands (its frame: its link, as <gz_frame_id> says); the spread as declared."""
    assert scan.header.frame_id == "lidar_link"
    assert (scan.angle_min, scan.angle_max) == pytest.approx((-3.14159, 3.14159), abs=1e-6)
    assert (scan.range_min, scan.range_max) == pytest.approx((0.08, 10.0))
    ranges = np.array(scan.ranges)
    assert ranges.shape == (360,)
    angles = scan.angle_min + scan.angle_increment * np.arange(360)
    expected = room_ranges(position[0], position[1], yaw_of(quat), angles)
    error = ranges - expected
    assert np.all(np.abs(error) < 5 * LIDAR_NOISE + 0.002), np.abs(error).max()
    assert 0.7 * LIDAR_NOISE < error.std() < 1.3 * LIDAR_NOISE, error.std()


def steps(probe: Any, count: int) -> None:
    from simulation_interfaces.srv import StepSimulation

    resp = probe.call(StepSimulation, "/sim_node/step_simulation",
                      StepSimulation.Request(steps=count), timeout=120)
    assert resp.result.result == 1, resp.result.error_message


def test_an_sdf_world_robot_publishes_what_its_sdf_declares(start_sim: Any, probe: Any) -> None:
    """room.sdf includes gz_bot: the node serves its <topic>s at the top (no namespace: the
    world's only robot), in the frames gz-sim gives them (<gz_frame_id>, else the scoped
    name), camera_info beside the image, the JointStatePublisher's joints on /joint_states,
    the DiffDrive's odometry; the lidar sees the room as it is."""
    sim = start_sim({"world_file": str(ROOM), "start_paused": True})
    scans = probe.collect(LaserScan, "/scan", SENSOR)
    clouds = probe.collect(PointCloud2, "/scan/points", SENSOR)
    images = probe.collect(Image, "/camera/image_raw", SENSOR)
    infos = probe.collect(CameraInfo, "/camera/camera_info", SENSOR)
    imus = probe.collect(Imu, "/imu", SENSOR)
    states = probe.collect(JointState, "/joint_states", 10)
    odom = probe.collect(Odometry, "/odom", 10)
    static = probe.collect(TFMessage, "/tf_static", LATCHED)
    assert wait_until(lambda: probe.node.count_publishers("/scan") > 0
                      or sim.proc.poll() is not None, STARTUP_TIMEOUT), sim.output
    graph = probe.node

    def types() -> dict[str, list[str]]:
        return dict(graph.get_topic_names_and_types())

    assert wait_until(lambda: all(types().get(name) == [kind]
                                  for name, kind in GZ_TOPICS.items()), 30), sorted(types())
    for topic in ("/scan", "/camera/image_raw", "/imu", "/odom", "/joint_states"):
        assert wait_until(lambda t=topic: graph.count_publishers(t) == 1, 10), topic
    for topic in ("/scan", "/scan/points", "/camera/image_raw", "/camera/camera_info", "/imu",
                  "/joint_states", "/odom", "/tf_static"):  # what steps publish reaches us
        assert probe.matched(topic), topic
    steps(probe, 500)
    assert wait_until(lambda: scans and clouds and images and infos and len(imus) >= 40
                      and len(states) >= 10 and odom and static, 30), \
        (len(scans), len(images), len(imus), len(states), sim.output)
    position, quat = entity_pose(probe, "gz_bot")
    assert abs(position[0]) < 1e-3 and abs(position[1]) < 1e-3  # it stood still
    check_scan(scans[-1][1], position, quat)
    cloud = clouds[-1][1]
    assert cloud.header.frame_id == "lidar_link" and cloud.width == 360  # every ray hits
    points = np.frombuffer(bytes(cloud.data), dtype="<f4").reshape(-1, 3)
    assert np.linalg.norm(points, axis=1) == pytest.approx(
        np.array(scans[-1][1].ranges), abs=1e-5)  # the scan's reading as points
    image, info = images[-1][1], infos[-1][1]
    assert (image.width, image.height, image.encoding) == (160, 120, "rgb8")
    assert image.header.frame_id == info.header.frame_id == "camera_link"  # as gz: no optical
    f = 80 / math.tan(1.047 / 2)
    assert list(info.k) == pytest.approx([f, 0, 80, 0, f, 60, 0, 0, 1])
    imu = imus[-1][1]
    assert imu.header.frame_id == "gz_bot::chassis::imu"  # gz-sensors' scoped name
    assert imu.linear_acceleration.z == pytest.approx(9.8, abs=0.3)  # SDF's default gravity
    frames = {t.child_frame_id: t for _, m in static for t in m.transforms}
    assert frames["gz_bot::chassis::imu"].header.frame_id == "chassis"
    assert frames["lidar_link"].header.frame_id == "chassis"
    assert frames["camera_link"].header.frame_id == "chassis"
    assert not [name for name in frames if name.endswith("_optical")]
    state = states[-1][1]
    assert list(state.name) == ["left_wheel_joint", "right_wheel_joint"]
    gaps = np.diff([stamp(m) for _, m in states])
    assert np.median(gaps) == pytest.approx(1 / 30, abs=1.5e-3)  # its <update_rate>
    last = odom[-1][1]
    assert (last.header.frame_id, last.child_frame_id) == ("odom", "chassis")
    assert "JointStatePublisher (joints left_wheel_joint, right_wheel_joint)" in sim.output
    assert sim.stop() == 0 and "Traceback" not in sim.output, sim.output


def test_cmd_vel_from_the_ros2_cli_drives_it_straight_on_its_casters(
        probe: Any, cli: dict[str, str], tmp_path: Path) -> None:
    """docs/node.md's commands as written: `ros2 run` of the room, `ros2 topic pub` of 0.2 m/s,
    `ros2 service call` of 2000 steps (2 s), `ros2 topic pub` of a stop (gz's DiffDrive keeps
    the last command: no timeout): gz_bot drives 0.35-0.42 m straight ahead on its ball casters,
    level; its wheel odometry agrees; `ros2 topic echo` shows its scan; Ctrl-C ends it all."""
    odom = probe.collect(Odometry, "/odom", 10)
    sim = Launched(cli, "run_gz_room", tmp_path / "node.log")
    try:
        sim.wait_for("simulating 1 robot: 'gz_bot'")
        assert wait_until(lambda: probe.node.count_subscribers("/cmd_vel") > 0, 30)
        assert probe.matched("/odom")
        steps(probe, 300)  # it settles on its wheels and casters
        start, _ = entity_pose(probe, "gz_bot")
        run(cli, "cmd_vel_go")
        assert wait_until(lambda: _drive_applied(probe) == 1, 30), sim.output
        stepped = run(cli, "step_2000", timeout=120)
        assert "Result(result=1," in stepped, stepped  # RESULT_OK, once the 2000 steps are done
        run(cli, "cmd_vel_stop")
        assert wait_until(lambda: _drive_applied(probe) == 2, 30), sim.output
        steps(probe, 1000)
        end, quat = entity_pose(probe, "gz_bot")
        moved = end - start
        assert 0.35 <= moved[0] <= 0.42, moved
        assert abs(moved[1]) < 0.01 and abs(moved[2]) < 0.005, moved
        assert abs(quat[0]) < 0.01 and abs(quat[1]) < 0.01  # level: nothing tipped
        assert wait_until(lambda: odom and stamp(odom[-1][1]) >= 3.29, 10)
        assert odom[-1][1].pose.pose.position.x == pytest.approx(moved[0], abs=0.01)
        out = _echo_while_stepping(cli, probe, "echo_scan", "frame_id:")
        assert "frame_id: lidar_link" in out and "angle_min: -3.14159" in out, out
    finally:
        rc = sim.ctrl_c()
    assert rc == 0 and "Traceback" not in sim.output and "[ERROR]" not in sim.output, sim.output


def _echo_while_stepping(cli: dict[str, str], probe: Any, name: str, wanted: str,
                         timeout: float = 60.0) -> str:
    """COMMANDS[name] (a `ros2 topic echo --once`) while the paused node steps 0.2 s at a
    time, started again until it prints `wanted` (the ros2 daemon may not know the topic
    yet: the command then ends at once); its last output."""
    deadline = time.monotonic() + timeout
    out = ""
    while wanted not in out and time.monotonic() < deadline:
        echo = subprocess.Popen(["bash", "-c", "exec " + COMMANDS[name]], env=cli,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            while echo.poll() is None and time.monotonic() < deadline:
                steps(probe, 200)
            out = echo.communicate(timeout=10)[0]
        finally:
            if echo.poll() is None:
                echo.kill()
                echo.wait()
    return out


def _drive_applied(probe: Any) -> int:
    """The cmd_vel commands gz_bot's drive applied (~/stats)."""
    import json

    from std_srvs.srv import Trigger

    stats = json.loads(probe.call(Trigger, "/sim_node/stats", Trigger.Request()).message)
    return int(stats["drives"].get("gz_bot", {}).get("applied", -1))


def _spawn(probe: Any, name: str, namespace: str, xyz: tuple[float, float, float]) -> Any:
    from simulation_interfaces.srv import SpawnEntity

    req = SpawnEntity.Request(name=name, entity_namespace=namespace)
    req.entity_resource.uri = str(BOT)  # the model folder: its model.config names model.sdf
    p = req.initial_pose.pose.position
    p.x, p.y, p.z = xyz
    req.initial_pose.pose.orientation.w = 1.0
    return probe.call(SpawnEntity, "/sim_node/spawn_entity", req, 120.0)


def _topics(env: dict[str, str], wanted: list[str], absent: list[str] = (),
            timeout: float = 30.0) -> set[str]:
    """`ros2 topic list` until every `wanted` topic is listed and no `absent` one."""
    end = time.monotonic() + timeout
    while True:
        out = subprocess.run(["ros2", "topic", "list"], env=env, capture_output=True,
                             text=True, timeout=60, check=False)
        listed = set(out.stdout.split())
        if (set(wanted) <= listed and not listed & set(absent)) or time.monotonic() > end:
            return listed
        time.sleep(1.0)


def test_the_model_spawned_serves_the_same_topics_and_leaves_with_them(
        start_sim: Any, probe: Any, cli: dict[str, str], tmp_path: Path) -> None:
    """The room without gz_bot (a world of walls: no robot yet); gz_bot's model folder
    spawned through SpawnEntity without a namespace serves the same topics as the world
    file's (at the top, as `ros_gz_sim create` gives them; `ros2 topic list`) and sees the
    room; a second one spawned in namespace `second` serves them under /second and drives
    from /second/cmd_vel; deleted, its topics leave the graph."""
    walls = tmp_path / "walls.sdf"
    walls.write_text(re.sub(r"<include>\s*<uri>model://gz_bot</uri>.*?</include>", "",
                            ROOM.read_text(), flags=re.DOTALL))
    sim = start_sim({"world_file": str(walls), "start_paused": True})
    scans = probe.collect(LaserScan, "/scan", SENSOR)
    second = probe.collect(LaserScan, "/second/scan", SENSOR)
    second_states = probe.collect(JointState, "/second/joint_states", 10)
    second_odom = probe.collect(Odometry, "/second/odom", 10)
    assert wait_until(lambda: probe.node.count_publishers("/clock") > 0
                      or sim.proc.poll() is not None, STARTUP_TIMEOUT), sim.output
    assert sim.wait_for_output("simulating 0 robots", 30), sim.output
    assert "[WARN]" not in sim.output, sim.output
    resp = _spawn(probe, "gz_bot", "", (0.0, 0.0, 0.0))
    assert resp.result.result == 1, resp.result.error_message
    listed = _topics(cli, list(GZ_TOPICS))
    assert set(GZ_TOPICS) <= listed, sorted(listed)
    assert probe.matched("/scan")
    steps(probe, 200)
    assert wait_until(lambda: scans, 30), sim.output
    position, quat = entity_pose(probe, "gz_bot")
    check_scan(scans[-1][1], position, quat)  # the room alone: the second one not yet there
    resp = _spawn(probe, "bot2", "second", (1.5, 1.0, 0.0))
    assert resp.result.result == 1, resp.result.error_message
    theirs = [f"/second{t}" for t in GZ_TOPICS if t not in ("/tf_static",)]
    listed = _topics(cli, theirs)
    assert set(theirs) <= listed, sorted(listed)
    for topic in ("/second/scan", "/second/joint_states", "/second/odom"):
        assert probe.matched(topic), topic
    cmd = probe.publisher(Twist, "/second/cmd_vel", 10)
    go = Twist()
    go.linear.x = 0.2
    reach(cmd, go)
    time.sleep(0.1)  # the executor hands it to the physics thread
    steps(probe, 1000)
    assert wait_until(lambda: second and second_states and second_odom, 30), sim.output
    assert second[-1][1].header.frame_id == "lidar_link"  # its own tree, on /second/tf
    assert list(second_states[-1][1].name) == ["left_wheel_joint", "right_wheel_joint"]
    assert second_odom[-1][1].pose.pose.position.x > 0.1  # its drive took /second/cmd_vel
    assert entity_pose(probe, "gz_bot")[0][0] == pytest.approx(position[0], abs=1e-3)
    from simulation_interfaces.srv import ResetSimulation

    reset = probe.call(ResetSimulation, "/sim_node/reset_simulation",
                       ResetSimulation.Request(scope=ResetSimulation.Request.SCOPE_TIME))
    assert reset.result.result == 1, reset.result.error_message
    count = len(scans)
    steps(probe, 300)  # the sensors read again from time 0, the spawned ones too
    assert wait_until(lambda: len(scans) > count and len(second) and
                      stamp(scans[-1][1]) <= 0.3 + 1e-9 and stamp(second[-1][1]) <= 0.3 + 1e-9,
                      30), [stamp(m) for _, m in scans[-3:]]

    from simulation_interfaces.srv import DeleteEntity

    resp = probe.call(DeleteEntity, "/sim_node/delete_entity",
                      DeleteEntity.Request(entity="bot2"), 60.0)
    assert resp.result.result == 1, resp.result.error_message
    gone = ["/second/scan/points", "/second/camera/image_raw", "/second/imu",
            "/second/robot_description", "/second/tf"]
    listed = _topics(cli, [], absent=gone)
    assert not set(gone) & listed, sorted(listed)
    assert probe.node.count_publishers("/second/scan") == 0
    assert probe.node.count_subscribers("/second/cmd_vel") == 0
    assert probe.node.count_publishers("/scan") == 1  # the first one stays
    assert sim.stop() == 0 and "Traceback" not in sim.output, sim.output


def test_a_recorded_run_replays_bit_for_bit(start_sim: Any, probe: Any, tmp_path: Path) -> None:
    """A bag of gz_bot driven through a turn (its cmd_vel recorded, its joint_states those
    of its JointStatePublisher: the wheels alone; its casters' ball joints in TF) replays bit
    for bit: the same commands at the same steps give the same wheel states."""
    from mb_sim.testing import replay_bag

    bag = tmp_path / "gz_bot_run"
    sim = start_sim({"world_file": str(ROOM), "start_paused": True, "record": str(bag)})
    assert sim.wait_for_output("recording to", STARTUP_TIMEOUT), sim.output
    cmd = probe.publisher(Twist, "/cmd_vel", 10)
    steps(probe, 200)
    turn = Twist()
    turn.linear.x, turn.angular.z = 0.2, 0.5
    reach(cmd, turn)
    time.sleep(0.1)  # the executor hands it to the physics thread
    steps(probe, 1500)
    assert sim.stop() == 0, sim.output
    result = replay_bag(bag)
    assert result.ok and result.commands == 1 and result.compared >= 40, str(result)
