"""sim_node outputs for the IMU and floating robots: imu, odom, the REP 105 frame tree, and the
loading parameters (xacro_args, strict), end to end through a real node and real DDS.

References are independent of the node's conversions: URDF rpy angles through transforms3d,
free fall in closed form, and the library (`mb_sim.Simulation`) run in the test process.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from nav_msgs.msg import Odometry
from rclpy.node import NodeNameNonExistentError
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from ros_helpers import DATA, STARTUP_TIMEOUT, reach, wait_until
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from transforms3d.euler import euler2quat
from transforms3d.quaternions import qmult, quat2mat

import mb_sim
from mb_sim.ros.wire.conversions import GROUND_TRUTH_VARIANCE, time_to_seconds
from mb_sim.testing import replay_bag

pytestmark = pytest.mark.usefixtures("ros_context")

LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
G = 9.81
DT = 0.001
IMU_ARM = DATA / "imu_arm.urdf"
FLOATER = DATA / "floater.urdf"
FALL_WORLD = DATA / "floater_fall.yaml"
PLACED_WORLD = DATA / "floater_placed.yaml"


def urdf_quat(rpy: tuple[float, float, float]) -> np.ndarray:
    """Rotation of URDF rpy angles (fixed axes x, y, z) as a quaternion in (x, y, z, w) order."""
    w, x, y, z = euler2quat(*rpy, axes="sxyz")
    return np.array([x, y, z, w])


def mat(q_xyzw: np.ndarray) -> np.ndarray:
    x, y, z, w = q_xyzw
    return quat2mat([w, x, y, z])


def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    w, x, y, z = qmult([a[3], *a[:3]], [b[3], *b[:3]])
    return np.array([x, y, z, w])


def same_rotation(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    return abs(abs(float(np.dot(a, b))) - 1.0) < atol


def vec(v: Any) -> np.ndarray:
    return np.array([v.x, v.y, v.z])


def quat(q: Any) -> np.ndarray:
    return np.array([q.x, q.y, q.z, q.w])


def wait_topic(probe: Any, sim: Any, topic: str) -> None:
    assert wait_until(lambda: probe.node.count_publishers(topic) > 0
                      or sim.proc.poll() is not None, STARTUP_TIMEOUT), sim.output
    assert sim.proc.poll() is None, sim.output


def topics_of_node(probe: Any, node: str, timeout: float = 10.0) -> set[str]:
    """The topics that node `node` publishes, once discovery has seen it (the tests give each
    node a name of its own: a node of an earlier test may linger in the graph for a while)."""
    end = time.monotonic() + timeout
    while True:
        try:
            return {name for name, _ in
                    probe.node.get_publisher_names_and_types_by_node(node, "/")}
        except NodeNameNonExistentError:  # not discovered yet
            if time.monotonic() > end:
                raise
            time.sleep(0.1)


# --- the IMU on a fixed-base robot ------------------------------------------------------------


@pytest.mark.parametrize(("imu_link", "rpy"), [("imu_mount", (0.5, -0.3, 1.0)),
                                                ("", (0.0, 0.0, 0.0))])
def test_imu_on_a_resting_fixed_base_robot_reads_gravity_up(
        start_sim: Any, probe: Any, imu_link: str, rpy: tuple[float, float, float]) -> None:
    """The column stands still under gravity; an IMU on the tilted mount (or, by default, on
    the root link) reads +9.81 m/s^2 along the world's up axis, expressed in its own frame."""
    node = f"sim_imu_{imu_link or 'root'}"
    sim = start_sim({"urdf_file": str(IMU_ARM), "imu_link": imu_link, "status_period": 0.0,
                     "publish_rate": 100.0}, node=node)
    imu = probe.collect(Imu, "imu", qos_profile_sensor_data)
    assert wait_until(lambda: len(imu) >= 20 or sim.proc.poll() is not None,
                      STARTUP_TIMEOUT), sim.output
    expected_q = urdf_quat(rpy)  # column at yaw 0, base at the world origin
    up_in_link = mat(expected_q).T @ np.array([0.0, 0.0, G])
    if imu_link:  # the tilted mount: "up" is far from the mount's own z axis
        assert np.linalg.norm(up_in_link - [0.0, 0.0, G]) > 1.0
    for _, m in imu[-10:]:
        assert m.header.frame_id == (imu_link or "base_link")
        assert same_rotation(quat(m.orientation), expected_q, 1e-12)
        np.testing.assert_allclose(vec(m.linear_acceleration), up_in_link, rtol=0, atol=1e-6)
        np.testing.assert_allclose(vec(m.angular_velocity), 0.0, rtol=0, atol=1e-9)
        for cov in (m.orientation_covariance, m.angular_velocity_covariance,
                    m.linear_acceleration_covariance):
            np.testing.assert_array_equal(np.reshape(cov, (3, 3)),
                                          np.eye(3) * GROUND_TRUTH_VARIANCE)
    # at publish_rate in simulated time (best effort: a reading may be missing in between)
    periods = np.diff([time_to_seconds(m.header.stamp) for _, m in imu[-10:]]) / 0.01
    assert (periods >= 1.0 - 1e-6).all()
    np.testing.assert_allclose(periods, np.round(periods), atol=1e-6)
    # a fixed-base robot has no odometry
    topics = topics_of_node(probe, node)
    assert "/imu" in topics and "/joint_states" in topics and "/odom" not in topics


def test_imu_off_and_unknown_imu_link(start_sim: Any, probe: Any) -> None:
    sim = start_sim({"urdf_file": str(IMU_ARM), "imu_enabled": False, "status_period": 0.0},
                    node="sim_imu_off")
    js = probe.collect(JointState, "joint_states")
    assert wait_until(lambda: bool(js) or sim.proc.poll() is not None, STARTUP_TIMEOUT), \
        sim.output
    topics = topics_of_node(probe, "sim_imu_off")
    assert "/joint_states" in topics and "/imu" not in topics

    bad = start_sim({"urdf_file": str(IMU_ARM), "imu_link": "no_such_link"})
    assert bad.wait(timeout=STARTUP_TIMEOUT) == 1, bad.output
    fatal = [line for line in bad.output.splitlines() if "[FATAL]" in line]
    assert len(fatal) == 1 and "imu_link" in fatal[0] and "no_such_link" in fatal[0], bad.output
    assert "imu_mount" in fatal[0] and "Traceback" not in bad.output


# --- loading: xacro and strict ---------------------------------------------------------------


def test_xacro_urdf_file_with_arguments(start_sim: Any, probe: Any) -> None:
    sim = start_sim({"urdf_file": str(DATA / "tool.urdf.xacro"), "status_period": 0.0,
                     "xacro_args": ["tool:=gripper", "mass:=2.5"]})
    js = probe.collect(JointState, "joint_states")
    desc = probe.collect(String, "robot_description", LATCHED)
    assert wait_until(lambda: (js and desc) or sim.proc.poll() is not None, STARTUP_TIMEOUT), \
        sim.output
    assert list(js[-1][1].name) == ["gripper_joint"]
    # RViz gets the expanded URDF, not the xacro source
    xml = desc[-1][1].data
    assert '<link name="gripper"' in xml and "$(arg" not in xml and "xacro:" not in xml
    assert mb_sim.load_urdf(xml).mass[0] == 2.5


@pytest.mark.parametrize("strict", [False, True])
def test_strict_makes_inertia_repairs_errors(start_sim: Any, strict: bool) -> None:
    sim = start_sim({"urdf_file": str(DATA / "repaired.urdf"), "strict": strict,
                     "status_period": 0.0})
    if strict:
        assert sim.wait(timeout=STARTUP_TIMEOUT) == 1, sim.output
        fatal = [line for line in sim.output.splitlines() if "[FATAL]" in line]
        assert len(fatal) == 1 and "'column'" in fatal[0] and "triangle" in fatal[0], sim.output
    else:
        assert sim.wait_for_output("simulating", STARTUP_TIMEOUT), sim.output
        warning = [line for line in sim.output.splitlines() if "repaired" in line]
        assert warning and "'column'" in warning[0] and "[WARN]" in warning[0], sim.output
        assert sim.stop() == 0
    assert "Traceback" not in sim.output


# --- a floating robot in free fall -----------------------------------------------------------


def reference(world_file: str, steps: int) -> Any:
    """The library's own run of the floating test robot: `steps` steps of free fall."""
    model = mb_sim.load_urdf(str(FLOATER), floating_base=True)
    ref = mb_sim.Simulation(model, world=mb_sim.load_world(world_file), dt=DT)
    ref.step(steps)
    return ref


@pytest.mark.parametrize(
    ("params", "base_frame", "odom_frame"),
    [({"world_file": str(FALL_WORLD)}, "trunk", "odom"),
     ({"world_file": str(PLACED_WORLD), "floating_base": True, "base_frame": "base_footprint",
       "odom_frame": "odom_gt", "initial_positions": {"hip": 0.3}}, "base_footprint",
      "odom_gt")],
    ids=["world_floating", "floating_base_parameter"],
)
def test_floating_robot_in_free_fall(start_sim: Any, probe: Any, params: dict[str, Any],
                                     base_frame: str, odom_frame: str) -> None:
    steps_per_call = 100
    sim = start_sim({"urdf_file": str(FLOATER), "start_paused": True, "imu_link": "imu_mount",
                     "step_count": steps_per_call, "status_period": 0.0, **params})
    odom = probe.collect(Odometry, "odom", 10)
    imu = probe.collect(Imu, "imu", qos_profile_sensor_data)
    js = probe.collect(JointState, "joint_states", 100)
    tf = probe.collect(TFMessage, "/tf", 100)
    tf_static = probe.collect(TFMessage, "/tf_static", LATCHED)
    wait_topic(probe, sim, "/odom")
    wait_topic(probe, sim, "/imu")
    for topic in ("odom", "imu", "joint_states", "/tf", "/tf_static"):
        assert probe.matched(topic), topic  # what the steps below publish reaches the probe
    calls = 0

    def stamped(got: list, t: float) -> Any:
        return next((m for _, m in reversed(got)
                     if abs(time_to_seconds(m.header.stamp) - t) < 1e-9), None)

    # imu is best effort: step until a reading after the last step has come through
    while calls < 2 or stamped(imu, calls * steps_per_call * DT) is None:
        assert calls < 10, (len(imu), sim.output)
        assert probe.call(Trigger, "/sim_node/step", Trigger.Request(),
                          timeout=30.0).success  # a busy machine can hold an answer 10 s
        calls += 1
        wait_until(lambda c=calls: stamped(imu, c * steps_per_call * DT) is not None, 1.0)
    n = calls * steps_per_call
    t = n * DT
    assert wait_until(lambda: stamped(odom, t) is not None and stamped(js, t) is not None, 5.0)
    o, i, j = stamped(odom, t), stamped(imu, t), stamped(js, t)

    # joint_states: the joints only; the hip does not move in free fall
    assert list(j.name) == ["hip"]
    hip = params.get("initial_positions", {}).get("hip", 0.0)
    np.testing.assert_allclose(j.position, [hip], rtol=0, atol=1e-9)

    # odom: the frames, and the pose and twist of free fall in closed form
    assert (o.header.frame_id, o.child_frame_id) == (odom_frame, base_frame)
    q0 = urdf_quat((0.3, -0.2, 0.5))
    pos, ori = vec(o.pose.pose.position), quat(o.pose.pose.orientation)
    assert same_rotation(ori, q0, 1e-9)  # no torque, no spin: the attitude stays
    # semi-implicit Euler: v_k = -g k dt exactly, z_n = z0 - g dt^2 n (n + 1) / 2
    np.testing.assert_allclose(pos, [0.5, -0.2, 2.0 - G * DT * DT * n * (n + 1) / 2],
                               rtol=0, atol=1e-9)
    assert abs(pos[2] - (2.0 - G * t * t / 2)) < G * DT * t  # the continuous fall, to O(dt)
    v_world = np.array([0.0, 0.0, -G * t])
    np.testing.assert_allclose(vec(o.twist.twist.linear), mat(q0).T @ v_world, rtol=0,
                               atol=1e-9)  # in the base frame, as nav_msgs requires
    np.testing.assert_allclose(vec(o.twist.twist.angular), 0.0, atol=1e-9)
    np.testing.assert_array_equal(np.reshape(o.pose.covariance, (6, 6)),
                                  np.eye(6) * GROUND_TRUTH_VARIANCE)

    # the library's own run agrees to rounding
    ref = reference(params["world_file"], n)
    xyz, q = ref.base_pose()
    lin, ang = ref.base_velocity()
    np.testing.assert_allclose(pos, xyz, rtol=0, atol=1e-12)
    assert same_rotation(ori, q, 1e-12)
    np.testing.assert_allclose(vec(o.twist.twist.linear), lin, rtol=0, atol=1e-12)
    np.testing.assert_allclose(vec(o.twist.twist.angular), ang, rtol=0, atol=1e-12)

    # imu on the tilted mount: the attitude of trunk x mount, and no specific force in free fall
    assert i.header.frame_id == "imu_mount"
    assert same_rotation(quat(i.orientation), product(q0, urdf_quat((0.2, 0.4, -0.6))), 1e-9)
    np.testing.assert_allclose(vec(i.linear_acceleration), 0.0, rtol=0, atol=1e-6)
    np.testing.assert_allclose(vec(i.angular_velocity), 0.0, rtol=0, atol=1e-9)

    # TF: world -> odom (static identity) -> base (moving, = odom) [-> trunk] -> leg
    assert wait_until(lambda: bool(tf_static), 5.0)
    static = {(tr.header.frame_id, tr.child_frame_id): tr.transform
              for _, m in tf_static for tr in m.transforms}
    ident = static[("world", odom_frame)]
    assert vec(ident.translation).tolist() == [0.0, 0.0, 0.0]
    assert quat(ident.rotation).tolist() == [0.0, 0.0, 0.0, 1.0]
    assert ("trunk", "imu_mount") in static
    assert not any(child == "trunk" and parent == "world" for parent, child in static)
    if base_frame != "trunk":
        assert quat(static[(base_frame, "trunk")].rotation).tolist() == [0.0, 0.0, 0.0, 1.0]
    moving = next(m for _, m in reversed(tf)
                  if abs(time_to_seconds(m.transforms[0].header.stamp) - t) < 1e-9)
    edges = {(tr.header.frame_id, tr.child_frame_id): tr.transform for tr in moving.transforms}
    base = edges[(odom_frame, base_frame)]
    np.testing.assert_array_equal(vec(base.translation), pos)
    np.testing.assert_array_equal(quat(base.rotation), ori)
    assert ("trunk", "leg") in edges
    parents: dict[str, str] = {}
    for parent, child in [*static, *edges]:
        assert parents.setdefault(child, parent) == parent, f"{child} has two parents"
    assert sim.stop() == 0 and "Traceback" not in sim.output


def test_floating_robot_is_recorded_with_odom_and_imu_and_replays(
        start_sim: Any, probe: Any, tmp_path: Path) -> None:
    """The hip driven during the fall turns the trunk too; the bag holds odom and imu, and
    the replay (floating base rebuilt from the bag) reproduces joint_states bit for bit."""
    from rosbags.rosbag2 import Reader

    bag = tmp_path / "fall"
    sim = start_sim({"urdf_file": str(FLOATER), "world_file": str(FALL_WORLD),
                     "record": str(bag), "status_period": 0.0, "command_timeout": 0.1})
    assert sim.wait_for_output("recording to", STARTUP_TIMEOUT), sim.output
    # The writer keeps every message (depth 100 > 41), and the node acknowledges the first
    # before the others go out (`reach`): a reliable writer drops what its history no longer
    # holds for a reader that matched late, as under load, and the node cannot apply what
    # never arrived.
    pub = probe.publisher(JointState, "joint_commands", 100)
    sent = reach(pub, JointState(name=["hip"], effort=[0.5]))
    for k in range(40):
        pub.publish(JointState(name=["hip"], effort=[0.5 if k < 20 else -0.3]))
        sent += 1
        time.sleep(0.02)

    def stats() -> dict[str, Any]:
        return json.loads(probe.call(Trigger, "/sim_node/stats", Trigger.Request()).message)

    # every command is applied before the node stops (a loaded machine takes longer than 0.3 s)
    assert wait_until(lambda: stats()["commands"]["applied"] == sent, 30.0, period=0.2), \
        (stats(), sim.output)
    assert sim.stop() == 0 and "Traceback" not in sim.output, sim.output

    with Reader(bag) as reader:
        counts = Counter(c.topic for c, _, _ in reader.messages())
    assert counts["/joint_commands"] == sent
    assert counts["/odom"] > 0 and counts["/odom"] == counts["/tf"]  # both at tf_rate
    assert counts["/imu"] == counts["/joint_states"] > 0
    result = replay_bag(bag)
    assert result.ok and result.commands == sent, result
    assert result.compared == counts["/joint_states"]


def test_floating_box_resting_on_the_ground(start_sim: Any, probe: Any) -> None:
    """A free box dropped onto the ground: once it rests, odom holds it 0.1 m up and still and
    its IMU reads +9.81 m/s^2 up. With odom_frame = world_frame, world -> base directly."""
    sim = start_sim({"urdf_file": str(Path(__file__).parents[1] / "assets" / "floating_box.urdf"),
                     "world_file": str(DATA / "box_drop.yaml"), "start_paused": True,
                     "step_count": 1000, "odom_frame": "world", "status_period": 0.0})
    odom = probe.collect(Odometry, "odom", 10)
    imu = probe.collect(Imu, "imu", qos_profile_sensor_data)
    tf_static = probe.collect(TFMessage, "/tf_static", LATCHED)
    tf = probe.collect(TFMessage, "/tf", 100)
    wait_topic(probe, sim, "/imu")
    for topic in ("odom", "imu", "/tf", "/tf_static"):
        assert probe.matched(topic), topic
    for _ in range(5):  # imu is best effort: step until a reading after t = 1 s has come
        assert probe.call(Trigger, "/sim_node/step", Trigger.Request()).success
        if wait_until(lambda: any(time_to_seconds(m.header.stamp) >= 1.0 for _, m in imu), 1.0):
            break
    assert imu and odom and tf, sim.output
    t = time_to_seconds(imu[-1][1].header.stamp)
    assert t >= 1.0
    assert wait_until(lambda: time_to_seconds(odom[-1][1].header.stamp) == t, 5.0)
    o, i = odom[-1][1], imu[-1][1]
    assert (o.header.frame_id, o.child_frame_id) == ("world", "base")
    np.testing.assert_allclose(vec(o.pose.pose.position), [0.0, 0.0, 0.1], atol=1e-4)
    np.testing.assert_allclose(vec(o.twist.twist.linear), 0.0, atol=1e-6)
    np.testing.assert_allclose(vec(o.twist.twist.angular), 0.0, atol=1e-6)
    assert i.header.frame_id == "base"
    np.testing.assert_allclose(vec(i.linear_acceleration), [0.0, 0.0, G], atol=1e-4)
    np.testing.assert_allclose(vec(i.angular_velocity), 0.0, atol=1e-6)
    assert not any(tr.child_frame_id == "world" or tr.header.frame_id == "world"
                   for _, m in tf_static for tr in m.transforms)
    edges = {(tr.header.frame_id, tr.child_frame_id) for _, m in tf for tr in m.transforms}
    assert edges == {("world", "base")}
    assert sim.stop() == 0 and "Traceback" not in sim.output


def test_urdf_rooted_at_a_world_link_has_no_self_transform(start_sim: Any, probe: Any) -> None:
    """Many URDFs hang a fixed-base robot from a `world` link: that link is world_frame, so
    /tf_static has no world -> world transform (tf2 refuses self transforms)."""
    xml = IMU_ARM.read_text().replace(
        '<robot name="imu_arm">',
        '<robot name="imu_arm">\n  <link name="world"/>\n  <joint name="mount" type="fixed">\n'
        '    <parent link="world"/>\n    <child link="base_link"/>\n'
        '    <origin xyz="0 0 0.5" rpy="0 0 0"/>\n  </joint>')
    sim = start_sim({"robot_description": xml, "status_period": 0.0}, node="sim_world_root")
    tf_static = probe.collect(TFMessage, "/tf_static", LATCHED)
    assert wait_until(lambda: bool(tf_static) or sim.proc.poll() is not None, STARTUP_TIMEOUT), \
        sim.output
    edges = {(tr.header.frame_id, tr.child_frame_id): tr.transform
             for _, m in tf_static for tr in m.transforms}
    assert ("world", "world") not in edges
    assert edges[("world", "base_link")].translation.z == 0.5
    assert ("column", "imu_mount") in edges
    assert "world file places it" not in sim.output
